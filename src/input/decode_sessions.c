/*
 * Several decoding sessions over one file (QUALE_DECODE_SESSIONS).
 */
#if QUALE_HAVE_FFMPEG

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode_private.h"

/* ---- several decoding sessions over one file ----------------------------- */

/*
 * QUALE_DECODE_SESSIONS=N (2 to 8): a regular MP4 or Matroska file is cut
 * into chunks at its keyframes and decoded by N sessions at once, each in
 * a thread of its own with its own demuxer over the same file (pread),
 * chunk j by session j mod N.  The reader hands the frames out chunk after
 * chunk: the order is the file's.  FFmpeg's software decoders use every
 * core already, so this is off by default; it gains where a decoder's
 * frame threads leave cores idle (docs/input.md, with the measurements,
 * and why it stays off on the GPU).
 *
 * Which frames a chunk owns is decided by presentation time: chunk j owns
 * the frames whose pts lies in [P(j), P(j+1)), P(j) being the pts of its
 * first (key) packet.  A session decodes chunk j's packets and goes on into
 * the next chunk's until a frame at or past P(j+1) comes out.  The leading
 * pictures of an open GOP (HEVC's RASL after a CRA, H.264's open-GOP
 * B-frames) are shown before their keyframe but sent after it and refer to
 * the chunk before: they belong to chunk j, which decodes them with their
 * references, exactly as one session over the whole file does.  The session
 * that starts at P(j+1) drops whatever comes out before P(j+1).
 */

#define SESSION_MAX 8
/* A chunk begins at the first keyframe this many packets after the start
 * of the one before: the few frames a session decodes past its chunk's end
 * stay a small part of its work. */
#define CHUNK_MIN_PACKETS 48
/* Decoded frames waiting for the reader, all sessions of an input
 * together: the sessions ahead of the reader fill their queues while it
 * takes the chunk before. */
#define QUEUE_BYTES ((size_t)1 << 30)

enum EntryKind { ENTRY_FRAME, ENTRY_CHUNK_END, ENTRY_STREAM_END, ENTRY_ERROR };

struct Entry {
    enum EntryKind kind;
    AVFrame *frame;
};

struct Session {
    struct Parallel *p;
    unsigned index;
    pthread_t thread;
    bool running;
    AVFormatContext *format;
    AVIOContext *io;
    int64_t position; /* of the next byte read */
    AVCodecContext *codec;
    AVPacket *packet;
    AVFrame *frame;
    /* The chunk decoded now, the pts that begin it and the next one
     * (INT64_MIN / INT64_MAX while unknown), and whether a frame at or past
     * the next one came out. */
    int64_t chunk, lower, upper;
    bool chunk_done;
    /* Frames and marks for the reader, in order. */
    struct Entry *queue;
    unsigned capacity, head, count;
    int failure;
    char error[384];
};

struct Parallel {
    int fd;
    int stream;
    unsigned sessions;
    const AVCodecParameters *parameters;
    const AVCodec *codec;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    atomic_bool stop; /* read without the lock while a session skips packets */
    int64_t reading;  /* the chunk the reader takes frames from */
    int finished;     /* 1: the reader saw the end; < 0: an error */
    struct Session session[SESSION_MAX];
};

static int session_io_read(void *opaque, uint8_t *buf, int size)
{
    struct Session *s = opaque;
    return cursor_read(s->p->fd, &s->position, buf, size);
}

static int64_t session_io_seek(void *opaque, int64_t offset, int whence)
{
    struct Session *s = opaque;
    return cursor_seek(s->p->fd, &s->position, offset, whence);
}

/* Puts an entry in the session's queue, waiting for room: false when the
 * reader stops the sessions. */
static bool session_push(struct Session *s, enum EntryKind kind, AVFrame *frame)
{
    struct Parallel *p = s->p;
    pthread_mutex_lock(&p->lock);
    while (s->count == s->capacity && !p->stop) pthread_cond_wait(&p->changed, &p->lock);
    const bool stop = p->stop;
    if (!stop) {
        s->queue[(s->head + s->count) % s->capacity] = (struct Entry){ kind, frame };
        s->count++;
        pthread_cond_broadcast(&p->changed);
    }
    pthread_mutex_unlock(&p->lock);
    return !stop;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int session_fail(struct Session *s, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof(s->error), fmt, ap);
    va_end(ap);
    s->failure = err;
    return err;
}

/* The frames the decoder has ready: those of the chunk queued, the ones
 * before it dropped, and the first one past it ends the chunk.  0, 1 when
 * the reader stopped the sessions, or an error. */
static int session_collect(struct Session *s)
{
    char text[128];
    while (!s->chunk_done) {
        int err = ff.avcodec_receive_frame(s->codec, s->frame);
        if (err == AVERROR(EAGAIN) || err == AVERROR_EOF) return 0;
        if (err < 0)
            return session_fail(s, -EPROTO, "decoding failed (%s)",
                                error_text(err, text, sizeof(text)));
        const int64_t pts = s->frame->pts;
        if (pts == AV_NOPTS_VALUE) {
            ff.av_frame_unref(s->frame);
            return session_fail(s, -EPROTO, "a frame without a presentation time: decode it "
                                "in one session (QUALE_DECODE_SESSIONS=1)");
        }
        if (pts >= s->upper) {
            s->chunk_done = true;
        } else if (pts >= s->lower) {
            AVFrame *keep = ff.av_frame_alloc();
            if (!keep) {
                ff.av_frame_unref(s->frame);
                return session_fail(s, -ENOMEM, "out of memory");
            }
            ff.av_frame_move_ref(keep, s->frame);
            if (!session_push(s, ENTRY_FRAME, keep)) {
                ff.av_frame_free(&keep);
                return 1;
            }
        }
        ff.av_frame_unref(s->frame);
    }
    return 0;
}

/* Sends a packet (NULL: the end) and takes what comes out. */
static int session_send(struct Session *s, const AVPacket *packet)
{
    char text[128];
    for (;;) {
        const int err = ff.avcodec_send_packet(s->codec, packet);
        if (err == AVERROR(EAGAIN)) {
            const int taken = session_collect(s);
            if (taken || s->chunk_done) return taken;
            continue;
        }
        if (err < 0 && err != AVERROR_EOF)
            return session_fail(s, -EPROTO, "the decoder refused a packet (%s)",
                                error_text(err, text, sizeof(text)));
        return session_collect(s);
    }
}

/* The chunk this session decodes has ended: its mark for the reader, and
 * the decoder made ready for its next chunk. */
static bool session_next_chunk(struct Session *s)
{
    if (!session_push(s, ENTRY_CHUNK_END, NULL)) return false;
    ff.avcodec_flush_buffers(s->codec);
    s->chunk += s->p->sessions;
    s->lower = INT64_MIN;
    s->upper = INT64_MAX;
    s->chunk_done = false;
    return true;
}

/* Reads the whole file's packets, decoding those of this session's chunks
 * (and the tails after them).  0, 1 when stopped, or an error. */
static int session_run(struct Session *s)
{
    struct Parallel *p = s->p;
    char text[128];
    int64_t packets = 0, chunk = -1, chunk_first = 0;
    int err;
    for (;;) {
        err = ff.av_read_frame(s->format, s->packet);
        if (err == AVERROR_EOF) break;
        if (err < 0)
            return session_fail(s, err == AVERROR(EIO) ? -EIO : -EPROTO, "reading the file "
                                "failed (%s)", error_text(err, text, sizeof(text)));
        if (atomic_load(&p->stop)) {
            ff.av_packet_unref(s->packet);
            return 1;
        }
        if (s->packet->stream_index != p->stream) {
            ff.av_packet_unref(s->packet);
            continue;
        }
        const bool key = s->packet->flags & AV_PKT_FLAG_KEY;
        if (chunk < 0 || (key && packets - chunk_first >= CHUNK_MIN_PACKETS)) {
            chunk++;
            chunk_first = packets;
            if (s->packet->pts == AV_NOPTS_VALUE) {
                ff.av_packet_unref(s->packet);
                return session_fail(s, -EPROTO, "a keyframe without a presentation time: "
                                    "decode it in one session (QUALE_DECODE_SESSIONS=1)");
            }
            if (chunk == s->chunk && chunk > 0) s->lower = s->packet->pts;
            if (chunk == s->chunk + 1) s->upper = s->packet->pts;
        }
        packets++;
        if (chunk >= s->chunk + p->sessions) {
            /* The tail of a chunk has run into this session's next one:
             * its frames never passed the next chunk's start. */
            ff.av_packet_unref(s->packet);
            return session_fail(s, -EPROTO, "frames out of presentation order: decode it in "
                                "one session (QUALE_DECODE_SESSIONS=1)");
        }
        if (chunk >= s->chunk) {
            err = session_send(s, s->packet);
            ff.av_packet_unref(s->packet);
            if (err) return err;
            if (s->chunk_done && !session_next_chunk(s)) return 1;
        } else {
            ff.av_packet_unref(s->packet);
        }
    }
    if (chunk >= s->chunk) {
        /* The last chunk this session decodes: what the decoder holds. */
        if ((err = session_send(s, NULL))) return err;
        if (!session_next_chunk(s)) return 1;
    }
    return 0;
}

static void *session_main(void *arg)
{
    struct Session *s = arg;
    const int err = session_run(s);
    if (err < 0)
        session_push(s, ENTRY_ERROR, NULL);
    else if (err == 0)
        session_push(s, ENTRY_STREAM_END, NULL);
    return NULL;
}

static void session_close(struct Session *s)
{
    for (unsigned i = 0; i < s->count; i++)
        ff.av_frame_free(&s->queue[(s->head + i) % s->capacity].frame);
    free(s->queue);
    ff.av_frame_free(&s->frame);
    ff.av_packet_free(&s->packet);
    ff.avcodec_free_context(&s->codec);
    ff.avformat_close_input(&s->format);
    if (s->io) ff.av_freep(&s->io->buffer);
    ff.avio_context_free(&s->io);
}

/* A session's demuxer and decoder: 0, or < 0. */
static int session_open(struct Session *s, unsigned capacity)
{
    struct Parallel *p = s->p;
    s->lower = INT64_MIN;
    s->upper = INT64_MAX;
    s->chunk = s->index;
    s->capacity = capacity;
    s->queue = calloc(capacity, sizeof(*s->queue));
    unsigned char *buffer = ff.av_malloc(IO_BUFFER_SIZE);
    s->io = buffer ? ff.avio_alloc_context(buffer, IO_BUFFER_SIZE, 0, s, session_io_read, NULL,
                                           session_io_seek)
                   : NULL;
    if (!s->io) ff.av_free(buffer);
    s->format = ff.avformat_alloc_context();
    s->packet = ff.av_packet_alloc();
    s->frame = ff.av_frame_alloc();
    s->codec = ff.avcodec_alloc_context3(p->codec);
    if (!s->queue || !s->io || !s->format || !s->packet || !s->frame || !s->codec) return -ENOMEM;
    s->format->pb = s->io;
    /* The streams are the main demuxer's: the same file, read the same way. */
    if (ff.avformat_open_input(&s->format, NULL, NULL, NULL) < 0 ||
        (unsigned)p->stream >= s->format->nb_streams)
        return -EPROTO;
    if (ff.avcodec_parameters_to_context(s->codec, p->parameters) < 0) return -ENOMEM;
    s->codec->thread_count = 0; /* FFmpeg's choice, as for one session */
    if (ff.avcodec_open2(s->codec, p->codec, NULL) < 0) return -EPROTO;
    return 0;
}

void parallel_stop(struct Decoder *d)
{
    struct Parallel *p = d->parallel;
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->sessions; i++) {
        if (p->session[i].running) pthread_join(p->session[i].thread, NULL);
        session_close(&p->session[i]);
    }
    pthread_cond_destroy(&p->changed);
    pthread_mutex_destroy(&p->lock);
    if (p->fd >= 0) close(p->fd);
    free(p);
    d->parallel = NULL;
}

/* How many sessions: QUALE_DECODE_SESSIONS (1 to 8), else one. */
static unsigned session_count(void)
{
    const char *env = getenv("QUALE_DECODE_SESSIONS");
    if (!env || !*env) return 1;
    char *end;
    const long n = strtol(env, &end, 10);
    return *end || n < 1 ? 1 : n > SESSION_MAX ? SESSION_MAX : (unsigned)n;
}

/* Starts the sessions when asked for and the video is a regular MP4 or
 * Matroska file (whose packets carry presentation times), decoded on the
 * CPU: 0 also when it stays with one session, < 0 only for a lack of
 * memory.  On the GPU it stays with one: several NVDEC sessions in one
 * CUDA context decoded no faster, and FFmpeg 5's NVDEC frames, kept in a
 * queue, need a copy whose ordering against the decoder's reuse of its
 * surfaces did not hold (docs/input.md). */
int parallel_start(struct QualeVideoReader *r)
{
    struct Decoder *d = r->decoder;
    if (d->gpu.ops) return 0;
    const unsigned sessions = session_count();
    struct stat st;
    const char *container = d->format->iformat->name;
    if (sessions < 2 || !d->seekable || fstat(fileno(r->file), &st) || !S_ISREG(st.st_mode) ||
        (!strstr(container, "mp4") && !strstr(container, "matroska")))
        return 0;
    struct Parallel *p = calloc(1, sizeof(*p));
    if (!p) return video_reader_fail(r, -ENOMEM, "out of memory");
    p->fd = fcntl(fileno(r->file), F_DUPFD_CLOEXEC, 0);
    p->stream = d->stream;
    p->sessions = sessions;
    p->parameters = d->format->streams[d->stream]->codecpar;
    p->codec = d->codec->codec;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->changed, NULL);
    d->parallel = p;
    const uint64_t frame_bytes = r->frame_bytes ? r->frame_bytes : 1;
    uint64_t frames = QUEUE_BYTES / sessions / frame_bytes;
    frames = frames < 8 ? 8 : frames > 1024 ? 1024 : frames;
    int err = p->fd < 0 ? -errno : 0;
    for (unsigned i = 0; i < sessions && !err; i++) {
        p->session[i].p = p;
        p->session[i].index = i;
        err = session_open(&p->session[i], (unsigned)frames + 2);
    }
    for (unsigned i = 0; i < sessions && !err; i++) {
        if (pthread_create(&p->session[i].thread, NULL, session_main, &p->session[i]))
            err = -EAGAIN;
        else
            p->session[i].running = true;
    }
    if (err) {
        /* One session, as before: the decoder opened in decoder_open(). */
        parallel_stop(d);
        return err == -ENOMEM ? video_reader_fail(r, -ENOMEM, "out of memory") : 0;
    }
    return 0;
}

int parallel_read(struct QualeVideoReader *r, QualePicture *pic)
{
    struct Parallel *p = r->decoder->parallel;
    if (p->finished) return p->finished > 0 ? 0 : p->finished;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        struct Session *s = &p->session[p->reading % p->sessions];
        while (!s->count) pthread_cond_wait(&p->changed, &p->lock);
        const struct Entry e = s->queue[s->head];
        s->head = (s->head + 1) % s->capacity;
        s->count--;
        pthread_cond_broadcast(&p->changed);
        if (e.kind == ENTRY_CHUNK_END) {
            p->reading++;
            continue;
        }
        pthread_mutex_unlock(&p->lock);
        if (e.kind == ENTRY_STREAM_END) {
            p->finished = 1;
            return 0;
        }
        if (e.kind == ENTRY_ERROR) {
            p->finished = video_reader_fail(r, s->failure, "frame %llu: %s",
                                            (unsigned long long)r->frame, s->error);
            return p->finished;
        }
        AVFrame *f = e.frame;
        const int err = deliver_frame(r, f, pic);
        ff.av_frame_free(&f);
        if (err < 0) p->finished = err;
        return err < 0 ? err : 1;
    }
}

#endif /* QUALE_HAVE_FFMPEG */
