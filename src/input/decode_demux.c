/*
 * A demuxer of the reader's file of its own, from its start, through its
 * own position (pread), so that it reads the file without moving the
 * reader: the frame count (decoder_count_frames()) and NVDEC's probe.
 */
#if QUALE_HAVE_FFMPEG

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode_private.h"

/* Reading a file through a position of one's own (pread), so that several
 * demuxers share one descriptor: the sessions, and the frame count. */
int cursor_read(int fd, int64_t *position, uint8_t *buf, int size)
{
    ssize_t n;
    do n = pread(fd, buf, (size_t)size, (off_t)*position);
    while (n < 0 && errno == EINTR);
    if (n < 0) return AVERROR(errno);
    if (n == 0) return AVERROR_EOF;
    *position += n;
    return (int)n;
}

int64_t cursor_seek(int fd, int64_t *position, int64_t offset, int whence)
{
    struct stat st;
    if ((whence & AVSEEK_SIZE) || (whence & ~AVSEEK_FORCE) == SEEK_END) {
        if (fstat(fd, &st)) return AVERROR(errno);
        if (whence & AVSEEK_SIZE) return (int64_t)st.st_size;
        offset += (int64_t)st.st_size;
    } else if ((whence & ~AVSEEK_FORCE) == SEEK_CUR) {
        offset += *position;
    } else if ((whence & ~AVSEEK_FORCE) != SEEK_SET) {
        return AVERROR(EINVAL);
    }
    if (offset < 0) return AVERROR(EINVAL);
    *position = offset;
    return offset;
}

int64_t decoder_frames(const struct QualeVideoReader *r)
{
    const struct Decoder *d = r->decoder;
    const int64_t n = d ? d->format->streams[d->stream]->nb_frames : 0;
    return n > 0 ? n : -1;
}

/* A demuxer of the reader's file of its own, from its start, through its
 * own position (pread): the frame count, and the NVDEC probe, read the
 * file without moving the reader. */
static int private_io_read(void *opaque, uint8_t *buf, int size)
{
    struct PrivateDemuxer *m = opaque;
    return cursor_read(m->fd, &m->position, buf, size);
}

static int64_t private_io_seek(void *opaque, int64_t offset, int whence)
{
    struct PrivateDemuxer *m = opaque;
    return cursor_seek(m->fd, &m->position, offset, whence);
}

void private_demuxer_close(struct PrivateDemuxer *m)
{
    ff.av_packet_free(&m->packet);
    /* frees format (also one not opened: it has no io yet), not the io */
    ff.avformat_close_input(&m->format);
    if (m->io) ff.av_freep(&m->io->buffer);
    ff.avio_context_free(&m->io);
}

int private_demuxer_open(struct PrivateDemuxer *m, int fd, int stream)
{
    *m = (struct PrivateDemuxer){ .fd = fd };
    unsigned char *buffer = ff.av_malloc(IO_BUFFER_SIZE);
    m->io = buffer ? ff.avio_alloc_context(buffer, IO_BUFFER_SIZE, 0, m, private_io_read, NULL,
                                           private_io_seek)
                   : NULL;
    if (!m->io) ff.av_free(buffer);
    m->format = m->io ? ff.avformat_alloc_context() : NULL;
    m->packet = m->format ? ff.av_packet_alloc() : NULL;
    if (!m->packet) return -1;
    m->format->pb = m->io;
    if (ff.avformat_open_input(&m->format, NULL, NULL, NULL) < 0) return -1;
    return (unsigned)stream < m->format->nb_streams ? 0 : -1;
}

/* Whether an MP4/MOV file has movie fragments ('moof' boxes among its
 * top-level ones): their samples are not in the index the demuxer read at
 * open, which then holds only those its 'moov' declares. */
static bool mp4_has_fragments(int fd)
{
    struct stat st;
    if (fstat(fd, &st)) return true;
    int64_t at = 0;
    /* a file of a few boxes (ftyp, moov, mdat, free); fragmented ones meet
     * their first 'moof' after the 'moov' */
    for (unsigned boxes = 0; at + 8 <= (int64_t)st.st_size && boxes < 4096; boxes++) {
        uint8_t head[16];
        int64_t position = at;
        if (cursor_read(fd, &position, head, 16) < 8) return true;
        uint64_t size = (uint64_t)head[0] << 24 | (uint64_t)head[1] << 16 |
                        (uint64_t)head[2] << 8 | head[3];
        if (!memcmp(head + 4, "moof", 4)) return true;
        if (size == 1) { /* a 64-bit size follows the type */
            if (position - at < 16) return true;
            size = 0;
            for (int i = 8; i < 16; i++) size = size << 8 | head[i];
        } else if (size == 0) { /* to the end of the file */
            return false;
        }
        if (size < 8 || size > (uint64_t)st.st_size - (uint64_t)at) return true;
        at += (int64_t)size;
    }
    return at + 8 <= (int64_t)st.st_size; /* too many boxes to look at: count */
}

int64_t decoder_count_frames(const struct QualeVideoReader *r)
{
    const struct Decoder *d = r->decoder;
    if (!d || !d->seekable || !r->file) return -1;
    /* A container's own frame count is not the frames decoded: a fragmented
     * MP4 declares those of its first fragment, an edit list hides frames
     * the packets still hold.  What is decoded is what is counted: the
     * video packets the demuxer does not mark to discard (those before an
     * edit list's start, which the decoder drops). */
    AVStream *st = d->format->streams[d->stream];
    if (strstr(d->format->iformat->name, "mp4") && !mp4_has_fragments(fileno(r->file))) {
        /* An unfragmented MP4 indexes every sample in its 'moov', which
         * the demuxer read at open: counted there, without reading the
         * file (the discarded entries are flagged as their packets are). */
        const int entries = ff.avformat_index_get_entries_count(st);
        int64_t count = 0;
        for (int i = 0; i < entries; i++) {
            const AVIndexEntry *e = ff.avformat_index_get_entry(st, i);
            if (e && !(e->flags & AVINDEX_DISCARD_FRAME)) count++;
        }
        if (entries > 0) return count;
    }
    /* Other containers: the video packets, demuxed from the start by a
     * demuxer of its own (one packet a frame in the containers FFmpeg
     * reads; nothing is decoded). */
    struct PrivateDemuxer m;
    if (private_demuxer_open(&m, fileno(r->file), d->stream)) {
        private_demuxer_close(&m);
        return -1;
    }
    int64_t count = 0;
    int err;
    while ((err = ff.av_read_frame(m.format, m.packet)) >= 0) {
        if (m.packet->stream_index == d->stream && !(m.packet->flags & AV_PKT_FLAG_DISCARD))
            count++;
        ff.av_packet_unref(m.packet);
    }
    private_demuxer_close(&m);
    return err == AVERROR_EOF ? count : -1;
}

#endif /* QUALE_HAVE_FFMPEG */
