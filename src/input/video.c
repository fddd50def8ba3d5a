/*
 * The public video reader API: opening files and streams (after a look at
 * their first bytes), and the read / skip loop that dispatches to the
 * format's frame header parser (y4m.c), the common payload reader (yuv.c)
 * or the decoder (decode.c), and to the scaler.  What those share (the
 * frame layout, error messages, reading past the sniffed bytes) is in
 * reader.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <fcntl.h>
#include <unistd.h>

#include "common.h"
#include "input/reader.h"
#include "input/video_gpu.h"
#include "quale/quale.h"

/* Small frames cost one read(2) per several frames.  Kept well below a
 * plane's size: glibc reads the whole multiples of the buffer size of a big
 * request straight into the plane and only the remainder through the
 * buffer (a second copy), so a larger buffer copies more bytes twice;
 * measured, 256 KiB is as fast as 1 MiB on small frames and faster on
 * 1080p. */
#define READER_STDIO_BUFFER (256u << 10)

void video_set_error(char *error, size_t error_size, const char *fmt, ...)
{
    if (!error || !error_size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, error_size, fmt, ap);
    va_end(ap);
}

/* What a file's first bytes say it is. */
typedef enum Kind {
    KIND_UNKNOWN, /* raw yuv, or something else without a signature */
    KIND_EMPTY,
    KIND_Y4M,
    KIND_MP4,
    KIND_MATROSKA,
    KIND_IVF,
    KIND_AVI,
    KIND_MPEG_TS,
} Kind;

static const char *const kind_names[] = {
    [KIND_MP4] = "an MP4/MOV file",
    [KIND_MATROSKA] = "a Matroska/WebM file",
    [KIND_IVF] = "an IVF file",
    [KIND_AVI] = "an AVI file",
    [KIND_MPEG_TS] = "an MPEG transport stream",
};

static Kind sniff(const unsigned char *b, size_t n)
{
    if (n == 0) return KIND_EMPTY;
    if (n >= 10 && !memcmp(b, "YUV4MPEG2", 9) && (b[9] == ' ' || b[9] == '\n')) return KIND_Y4M;
    if (n >= 12 && !memcmp(b + 4, "ftyp", 4)) return KIND_MP4;
    if (n >= 4 && b[0] == 0x1a && b[1] == 0x45 && b[2] == 0xdf && b[3] == 0xa3)
        return KIND_MATROSKA;
    if (n >= 32 && !memcmp(b, "DKIF", 4)) return KIND_IVF;
    if (n >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "AVI ", 4)) return KIND_AVI;
    /* 188-byte packets, each starting 0x47; a raw picture whose samples
     * are all 71 would have that too, so the packet headers must not be
     * all 0x47 as well. */
    if (n >= 2 * 188 + 4 && b[0] == 0x47 && b[188] == 0x47 && b[376] == 0x47) {
        for (size_t i = 1; i < 4; i++)
            if (b[i] != 0x47) return KIND_MPEG_TS;
    }
    return KIND_UNKNOWN;
}

/* Reads the first bytes to tell the file's kind: a regular file is read
 * from its start again, a stream keeps them in r->prefix. */
static Kind sniff_start(struct QualeVideoReader *r, bool *regular_file)
{
    const int fd = fileno(r->file);
    struct stat st;
    const bool regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    *regular_file = regular;
    const off_t start = regular ? ftello(r->file) : -1;
    errno = 0;
    r->prefix_len = fread(r->prefix, 1, sizeof(r->prefix), r->file);
    r->prefix_pos = 0;
    const Kind kind = sniff(r->prefix, r->prefix_len);
    if (start >= 0 && fseeko(r->file, start, SEEK_SET) == 0) {
        r->prefix_len = 0;
        clearerr(r->file);
    }
    return kind;
}

/* Seeking is worth it (and safe) only on regular files: their size is
 * known, so skipping past a truncated end is caught instead of fseek()
 * quietly moving beyond it.  Pipes, terminals, devices and memory streams
 * (fileno() == -1) skip by reading. */
static void probe_seekable(struct QualeVideoReader *r)
{
    const int fd = fileno(r->file);
    struct stat st;
    if (r->prefix_len || fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    const off_t pos = ftello(r->file);
    if (pos < 0) return;
    r->seekable = 1;
    r->position = (uint64_t)pos;
    r->file_size = (uint64_t)st.st_size;
}

/* Whether FFmpeg opens a regular file that has no signature sniff()
 * knows (an elementary H.264 stream, say); when not, the file is read
 * again from its start, as if nothing had been tried. */
static bool try_decoder(struct QualeVideoReader *r)
{
    const off_t start = ftello(r->file);
    if (start < 0) return false;
    /* A still image (FFmpeg's *_pipe and image2 demuxers) is no video, and
     * YUV4MPEG2 is quale's own to judge (FFmpeg's reader is lenient): both
     * are left to the message for files quale does not read. */
    const char *what = NULL;
    if (decoder_open(r, true) == 0 && (what = decoder_description(r)) &&
        !strstr(what, "pipe") && !strstr(what, "image2"))
        return true;
    decoder_close(r);
    r->error[0] = '\0';
    clearerr(r->file);
    if (fseeko(r->file, start, SEEK_SET)) r->state = READER_FAILED;
    return false;
}

static void reader_free(struct QualeVideoReader *r)
{
    if (!r) return;
    decoder_close(r);
    filter_close(r);
    scaler_close(r);
    quale_picture_unref(&r->native);
    quale_picture_unref(&r->scaled_tmp);
    if (r->own_file && r->file) fclose(r->file);
    free(r->stdio_buffer); /* only after fclose(): stdio uses it until then */
    free(r->scratch);
    free(r->name);
    free(r);
}

/* Takes over file (and closes it on failure when own_file is set). */
static int open_common(QualeVideoReader **reader, FILE *file, int own_file,
                       char *stdio_buffer, const char *name,
                       const QualeVideoFormat *raw,
                       char *error, size_t error_size)
{
    struct QualeVideoReader *r = calloc(1, sizeof(*r));
    char *name_copy = r ? strdup(name) : NULL;
    if (!r || !name_copy) {
        free(r);
        if (own_file) fclose(file);
        free(stdio_buffer);
        video_set_error(error, error_size, "%s: out of memory", name);
        return -ENOMEM;
    }
    r->file = file;
    r->own_file = own_file;
    r->stdio_buffer = stdio_buffer;
    r->name = name_copy;

    /* A YUV4MPEG2 file is read as one whatever was asked; a compressed
     * one is decoded (or, without a decoder, refused with what it is),
     * never read as raw samples. */
    bool regular = false;
    const Kind kind = sniff_start(r, &regular);
    int err = 0;
    if (kind >= KIND_MP4) {
        err = decoder_open(r, regular);
        if (err && err != -ENOMEM) {
            /* Say what the file is, then why it is not decoded. */
            char reason[sizeof(r->error)];
            const size_t skip = strlen(r->name) + 2; /* "<name>: " */
            snprintf(reason, sizeof(reason), "%s", strlen(r->error) > skip ? r->error + skip : "");
            err = video_reader_fail(r, err, err == -EPROTONOSUPPORT
                                    ? "%s (compressed video), but %s: decode it first"
                                    : "%s (compressed video) that cannot be decoded: %s",
                                    kind_names[kind], reason);
        }
    } else if (kind == KIND_UNKNOWN && !raw && regular && try_decoder(r)) {
        err = 0; /* a container without a signature we know (FFmpeg's probe) */
    } else if (kind == KIND_EMPTY && !raw) {
        err = video_reader_fail(r, -ENODATA, "%s", regular ? "empty file" : "no data: the "
                                "stream ended before its first byte (did the program writing "
                                "it fail?)");
    } else {
        r->is_y4m = raw == NULL || kind == KIND_Y4M;
        err = r->is_y4m ? y4m_open(r) : yuv_open(r, raw);
    }
    if (!err && !r->decoder) probe_seekable(r);
    r->data_start = r->position;
    /* A raw file is whole frames; anything else means the format given
     * is not the file's. */
    if (!err && !r->is_y4m && r->seekable && r->frame_bytes &&
        (r->file_size - r->position) % r->frame_bytes) {
        char format[64];
        snprintf(format, sizeof(format), "%ux%u %s %u-bit", r->format.width, r->format.height,
                 quale_chroma_name(r->format.chroma), r->file_bitdepth);
        const uint64_t size = r->file_size - r->position;
        err = video_reader_fail(r, -EBADMSG, "%llu bytes are not a whole number of %s frames "
                                "of %llu bytes (%llu frames and %llu bytes over)",
                                (unsigned long long)size, format,
                                (unsigned long long)r->frame_bytes,
                                (unsigned long long)(size / r->frame_bytes),
                                (unsigned long long)(size % r->frame_bytes));
    }
    if (err < 0) {
        video_set_error(error, error_size, "%s", r->error);
        reader_free(r);
        return err;
    }
    r->error[0] = '\0';
    if (error && error_size) error[0] = '\0';
    *reader = r;
    return 0;
}

int quale_video_open(QualeVideoReader **reader, const char *path,
                     const QualeVideoFormat *raw,
                     char *error, size_t error_size)
{
    if (reader) *reader = NULL;
    if (!reader || !path) {
        video_set_error(error, error_size, "quale_video_open: no %s given",
                  reader ? "path" : "reader");
        return -EINVAL;
    }

    /* stdin is used as it is: replacing its buffer would leave stdio
     * pointing at memory we free on close. */
    if (!strcmp(path, "-"))
        return open_common(reader, stdin, 0, NULL, "standard input", raw, error, error_size);

    FILE *file = fopen(path, "rb");
    if (!file) {
        const int e = errno ? errno : EIO;
        video_set_error(error, error_size, "cannot open '%s': %s", path, strerror(e));
        return -e;
    }
    /* fopen() of a directory succeeds on Linux; fail here with a clear
     * message rather than with EISDIR on the first read. */
    struct stat st;
    const int fd = fileno(file);
    if (fd >= 0 && fstat(fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            fclose(file);
            video_set_error(error, error_size, "cannot open '%s': %s", path, strerror(EISDIR));
            return -EISDIR;
        }
#if defined(POSIX_FADV_SEQUENTIAL)
        /* We read front to back once: ask for aggressive read-ahead. */
        if (S_ISREG(st.st_mode))
            (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    }
    /* Must come before the first read.  Without a buffer of our own glibc
     * picks st_blksize (4 KiB), a read(2) per 4 KiB of small frames. */
    char *buffer = malloc(READER_STDIO_BUFFER);
    if (buffer && setvbuf(file, buffer, _IOFBF, READER_STDIO_BUFFER) != 0) {
        free(buffer);
        buffer = NULL;
    }
    return open_common(reader, file, 1, buffer, path, raw, error, error_size);
}

int quale_video_open_stream(QualeVideoReader **reader, FILE *stream,
                            const char *name, const QualeVideoFormat *raw,
                            char *error, size_t error_size)
{
    if (reader) *reader = NULL;
    if (!reader || !stream) {
        video_set_error(error, error_size, "quale_video_open_stream: no %s given",
                  reader ? "stream" : "reader");
        return -EINVAL;
    }
    /* The stream and its buffering stay the caller's. */
    return open_common(reader, stream, 0, NULL, name ? name : "stream", raw,
                       error, error_size);
}

/* A filtered video is its source's kind: YUV4MPEG2, raw or compressed. */
int quale_video_is_y4m(const QualeVideoReader *reader)
{
    if (reader && reader->filter) return quale_video_is_y4m(filter_source(reader));
    return reader && reader->is_y4m;
}

int video_reader_use_gpu(QualeVideoReader *reader, const GpuImporter *importer,
                         const char *unavailable)
{
    if (reader->filter) {
        /* The graph runs on the CPU, so the frames are decoded there. */
        video_reader_fail(reader, 0, "its frames go through a filter graph, on the CPU");
        return 0;
    }
    if (!reader->decoder) {
        video_reader_fail(reader, 0, "not a compressed video (only those decode on the GPU)");
        return 0;
    }
    return decoder_use_gpu(reader, importer, unavailable);
}

const char *quale_video_codec(const QualeVideoReader *reader)
{
    if (reader && reader->filter) return quale_video_codec(filter_source(reader));
    return reader ? decoder_description(reader) : NULL;
}

int64_t quale_video_frames_in_file(const QualeVideoReader *reader)
{
    if (reader && reader->decoder) return decoder_frames(reader);
    if (!reader || !reader->seekable || !reader->frame_bytes) return -1;
    const uint64_t size = reader->file_size > reader->data_start
                              ? reader->file_size - reader->data_start : 0;
    /* y4m: each frame after a "FRAME\n", the line nearly every writer
     * uses. */
    const uint64_t per_frame = reader->frame_bytes + (reader->is_y4m ? 6 : 0);
    return (int64_t)(size / per_frame);
}

void quale_video_get_format(const QualeVideoReader *reader, QualeVideoFormat *format)
{
    if (!format) return;
    if (!reader) {
        memset(format, 0, sizeof(*format));
        return;
    }
    *format = reader->scaler ? reader->scaled_format : reader->format;
}

int quale_video_set_size(QualeVideoReader *reader, unsigned width, unsigned height,
                         const char *scaler)
{
    if (!reader) return -EINVAL;
    return quale_video_convert(reader, width, height, reader->format.chroma, scaler);
}

int quale_video_convert(QualeVideoReader *reader, unsigned width, unsigned height,
                        enum QualeChroma chroma, const char *scaler)
{
    if (!reader) return -EINVAL;
    if (reader->frame || reader->state != READER_OK)
        return video_reader_fail(reader, -EBUSY, "the size is set before the first read");
    if (reader->scaler)
        return video_reader_fail(reader, -EBUSY, "the size is set once");
    if (reader->decodes_on_gpu)
        return video_reader_fail(reader, -EBUSY, "the size is set before decoding on the GPU "
                                 "is chosen");
    /* Scaled at the file's depth; a deeper picture (set_bitdepth) is
     * shifted after. */
    QualeVideoFormat from = reader->format, to;
    from.bitdepth = reader->file_bitdepth;
    to = from;
    to.width = width;
    to.height = height;
    to.chroma = chroma;
    char why[256];
    if (quale_video_format_check(&to, why, sizeof(why)))
        return video_reader_fail(reader, -EINVAL, "cannot scale to %ux%u %s: %s", width, height,
                                 quale_chroma_name(chroma), why);
    if ((chroma == QUALE_CHROMA_400) != (from.chroma == QUALE_CHROMA_400))
        return video_reader_fail(reader, -ENOTSUP, "cannot convert %s video to %s (only between "
                                 "4:2:0, 4:2:2 and 4:4:4)", quale_chroma_name(from.chroma),
                                 quale_chroma_name(chroma));
    int err = scaler_open(reader, &from, &to, scaler ? scaler : "bicubic");
    if (!err) err = quale_picture_alloc(&reader->native, &from);
    if (!err && reader->shift) err = quale_picture_alloc(&reader->scaled_tmp, &to);
    if (err) {
        scaler_close(reader);
        quale_picture_unref(&reader->native);
        return err == -ENOMEM ? video_reader_fail(reader, err, "out of memory") : err;
    }
    reader->scaled_format = to;
    reader->scaled_format.bitdepth = reader->format.bitdepth;
    return 0;
}

int quale_video_set_bitdepth(QualeVideoReader *reader, unsigned bitdepth)
{
    if (!reader) return -EINVAL;
    if (bitdepth < reader->file_bitdepth || bitdepth > 16)
        return video_reader_fail(reader, -EINVAL, "cannot deliver %u-bit pictures of a %u-bit "
                                 "video (only deeper ones, up to 16 bits)", bitdepth,
                                 reader->file_bitdepth);
    if (reader->frame)
        return video_reader_fail(reader, -EBUSY, "the bit depth is set before the first read");
    if (reader->scaler)
        return video_reader_fail(reader, -EBUSY, "the bit depth is set before the size");
    if (reader->decodes_on_gpu)
        return video_reader_fail(reader, -EBUSY, "the bit depth is set before decoding on the "
                                 "GPU is chosen");
    reader->format.bitdepth = bitdepth;
    reader->shift = bitdepth - reader->file_bitdepth;
    return 0;
}

void quale_video_set_planes(QualeVideoReader *reader, unsigned plane_mask)
{
    if (!reader) return;
    /* Bits for planes the picture does not have mean nothing. */
    reader->plane_mask = plane_mask & ((1u << reader->plane_count) - 1);
}

/* The payload is read straight into the planes, so a picture that does not
 * match the layout would be written out of bounds: check it fully. */
static int check_picture(struct QualeVideoReader *r, const QualePicture *pic)
{
    if (!pic) return video_reader_fail(r, -EINVAL, "no picture given");
    if (r->scaler) {
        /* Scaled frames: the picture must be one of the scaled format, as
         * quale_picture_alloc() lays it out or compatibly. */
        const QualeVideoFormat *f = &pic->format, *w = &r->scaled_format;
        if (f->chroma != w->chroma || f->bitdepth != w->bitdepth || f->width != w->width ||
            f->height != w->height || pic->plane_count != r->native.plane_count)
            return video_reader_fail(r, -EINVAL, "picture is %ux%u %s %u-bit, the scaled video "
                                     "is %ux%u %s %u-bit", f->width, f->height,
                                     quale_chroma_name(f->chroma), f->bitdepth, w->width,
                                     w->height, quale_chroma_name(w->chroma), w->bitdepth);
        for (unsigned p = 0; p < pic->plane_count; p++)
            if (!pic->data[p] || pic->stride[p] <= 0)
                return video_reader_fail(r, -EINVAL, "picture plane %u has no data", p);
        return 0;
    }
    const QualeVideoFormat *f = &pic->format;
    if (f->chroma != r->format.chroma || f->bitdepth != r->format.bitdepth ||
        f->width != r->format.width || f->height != r->format.height ||
        pic->plane_count != r->plane_count)
        return video_reader_fail(r, -EINVAL,
            "picture is %ux%u %s %u-bit, the video is %ux%u %s %u-bit",
            f->width, f->height, quale_chroma_name(f->chroma), f->bitdepth,
            r->format.width, r->format.height, quale_chroma_name(r->format.chroma),
            r->format.bitdepth);
    for (unsigned p = 0; p < r->plane_count; p++) {
        if (pic->plane_width[p] != r->plane_width[p] ||
            pic->plane_height[p] != r->plane_height[p])
            return video_reader_fail(r, -EINVAL, "picture plane %u is %ux%u, expected %ux%u",
                                     p, pic->plane_width[p], pic->plane_height[p],
                                     r->plane_width[p], r->plane_height[p]);
        if (!(r->plane_mask >> p & 1)) continue;
        const size_t row = (size_t)r->plane_width[p] * (r->format.bitdepth > 8 ? 2 : 1);
        if (!pic->data[p] || pic->stride[p] < 0 || (size_t)pic->stride[p] < row)
            return video_reader_fail(r, -EINVAL,
                                     "picture plane %u has no data or a stride below its row size", p);
    }
    return 0;
}

/* Reads (pic != NULL) or skips one frame and records how it ended. */
/* Shifts a picture's samples left into a deeper one of the same size. */
static void shift_into(const QualePicture *from, QualePicture *to, unsigned shift)
{
    for (unsigned p = 0; p < from->plane_count; p++) {
        for (unsigned y = 0; y < from->plane_height[p]; y++) {
            const unsigned char *s = (const unsigned char *)from->data[p] +
                                     (size_t)y * (size_t)from->stride[p];
            uint16_t *d = (uint16_t *)(void *)((unsigned char *)to->data[p] +
                                               (size_t)y * (size_t)to->stride[p]);
            for (unsigned x = 0; x < from->plane_width[p]; x++)
                d[x] = (uint16_t)((from->format.bitdepth > 8 ? ((const uint16_t *)(const void *)s)[x]
                                                             : s[x]) << shift);
        }
    }
}

static int read_payload(struct QualeVideoReader *r, QualePicture *pic)
{
    int ret = 1;
    if (r->filter) {
        ret = filter_read(r, pic);
    } else if (r->decoder) {
        ret = decoder_read(r, pic);
    } else {
        if (r->is_y4m) ret = y4m_read_frame_header(r);
        if (ret > 0) ret = yuv_read_payload(r, pic, !r->is_y4m);
    }
    return ret;
}

static int next_frame(struct QualeVideoReader *r, QualePicture *pic)
{
    int ret;
    if (r->scaler && !r->decodes_on_gpu) {
        /* Read at the file's own size and depth (every plane: the scaler
         * makes them all), scale, then shift. */
        const unsigned shift = r->shift, mask = r->plane_mask;
        r->shift = 0;
        r->plane_mask = (1u << r->plane_count) - 1;
        const unsigned depth = r->format.bitdepth;
        r->format.bitdepth = r->file_bitdepth;
        ret = read_payload(r, pic ? &r->native : NULL);
        r->format.bitdepth = depth;
        r->shift = shift;
        r->plane_mask = mask;
        if (ret > 0 && pic) {
            QualePicture *out = shift ? &r->scaled_tmp : pic;
            int err = scaler_run(r, &r->native, out);
            if (!err && shift) shift_into(out, pic, shift);
            if (err) ret = err;
        }
    } else {
        ret = read_payload(r, pic);
    }
    if (ret > 0) {
        r->frame++;
    } else if (ret == 0) {
        r->state = READER_END;
    } else {
        /* The position inside the stream is unknown now: every later call
         * repeats this error instead of reading garbage as a frame. */
        r->state = READER_FAILED;
        r->failure = ret;
    }
    return ret;
}

int quale_video_read(QualeVideoReader *reader, QualePicture *pic)
{
    if (!reader) return -EINVAL;
    if (reader->state == READER_END) return 0;
    if (reader->state == READER_FAILED) return reader->failure;
    /* A bad picture is the caller's mistake, not the stream's: report it
     * without failing the reader. */
    const int err = check_picture(reader, pic);
    if (err) return err;
    return next_frame(reader, pic);
}

int quale_video_skip(QualeVideoReader *reader, unsigned n)
{
    if (!reader) return -EINVAL;
    if (reader->state == READER_END) return 0;
    if (reader->state == READER_FAILED) return reader->failure;
    for (unsigned i = 0; i < n; i++) {
        const int ret = next_frame(reader, NULL);
        if (ret <= 0) return ret;
    }
    return 1;
}

const char *quale_video_error(const QualeVideoReader *reader)
{
    return reader ? reader->error : "";
}

uint64_t quale_video_clamped_samples(const QualeVideoReader *reader)
{
    if (reader && reader->filter)
        return reader->clamped + quale_video_clamped_samples(filter_source(reader));
    return reader ? reader->clamped : 0;
}

int quale_video_frame_rate(const QualeVideoReader *reader, unsigned *num, unsigned *den)
{
    if (num) *num = reader ? reader->rate_num : 0;
    if (den) *den = reader ? reader->rate_den : 0;
    if (!reader || !reader->rate_num) return -1;
    return reader->variable_rate ? 1 : 0;
}

/* A y4m file's whole frames, each FRAME line read where it is (pread): a
 * line with parameters ("FRAME Ixyz") is longer than the "FRAME\n" the
 * size alone assumes. */
static int64_t y4m_count_frames(const QualeVideoReader *r)
{
    const int fd = fileno(r->file);
    if (fd < 0 || !r->frame_bytes) return -1;
    struct stat st;
    if (fstat(fd, &st) || st.st_size < 0) return -1;
    const uint64_t size = (uint64_t)st.st_size;
    /* every line "FRAME\n": the size tells (a line with parameters would
     * have to be made up for by others to the byte, which no writer does) */
    const uint64_t plain = r->frame_bytes + 6;
    if (size >= r->data_start && (size - r->data_start) % plain == 0)
        return (int64_t)((size - r->data_start) / plain);
    int64_t count = 0;
    for (uint64_t at = r->data_start; at < size; count++) {
        char line[Y4M_MAX_LINE];
        const uint64_t want = size - at < sizeof(line) ? size - at : sizeof(line);
        ssize_t got;
        do got = pread(fd, line, (size_t)want, (off_t)at);
        while (got < 0 && errno == EINTR);
        if (got < 6 || memcmp(line, "FRAME", 5)) break; /* the read will say what is wrong */
        const char *newline = memchr(line, '\n', (size_t)got);
        if (!newline) break;
        at += (uint64_t)(newline - line) + 1;
        if (size - at < r->frame_bytes) break; /* a cut last frame: not a frame */
        at += r->frame_bytes;
    }
    return count;
}

int64_t quale_video_count_frames(QualeVideoReader *reader)
{
    if (reader && reader->decoder) return decoder_count_frames(reader);
    if (reader && reader->is_y4m && reader->seekable) return y4m_count_frames(reader);
    return quale_video_frames_in_file(reader);
}

int64_t quale_video_bit_rate(const QualeVideoReader *reader)
{
    return reader && reader->bit_rate > 0 ? reader->bit_rate : -1;
}

uint64_t quale_video_damaged_frames(const QualeVideoReader *reader)
{
    if (reader && reader->filter) return quale_video_damaged_frames(filter_source(reader));
    return reader ? reader->damaged : 0;
}

void quale_video_close(QualeVideoReader **reader)
{
    if (!reader) return;
    reader_free(*reader);
    *reader = NULL;
}
