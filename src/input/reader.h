/*
 * Internals of the video readers (video.c, y4m.c, yuv.c).
 *
 * A reader is a FILE plus the layout of one frame's payload: the planes in
 * file order, each a packed run of rows.  y4m.c only parses the stream
 * header and the FRAME markers; the payload of both y4m and raw yuv is read
 * by the same code in yuv.c, so the two formats cannot drift apart in how
 * they handle truncation, skipping, clamping or byte order.
 */
#ifndef QUALE_SRC_INPUT_READER_H
#define QUALE_SRC_INPUT_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu/gpu.h"
#include "quale/quale.h"

/* The longest y4m stream header or FRAME line we accept, newline included.
 * Real headers are well under 200 bytes; the bound turns a file that is not
 * y4m at all (or a corrupt one) into an error instead of an endless scan. */
#define Y4M_MAX_LINE 4096

/* Planes stored per frame in a file: Y, U, V and, for y4m 444alpha, A. */
#define READER_MAX_FILE_PLANES 4

/* How the pictures read are interlaced: what a filter graph's
 * deinterlacer (yadif) is told of each frame. */
enum ReaderFieldOrder {
    READER_PROGRESSIVE = 0, /* or not known */
    READER_FIELDS_TOP_FIRST,
    READER_FIELDS_BOTTOM_FIRST,
};

enum ReaderState {
    READER_OK = 0,
    READER_END,   /* the clean end was reached: reads return 0 from now on */
    READER_FAILED /* the stream is damaged: reads return `failure` again */
};

/* Bytes read at open to tell a file's kind: enough for an MPEG-TS packet
 * sync at 0, 188 and 376. */
#define READER_SNIFF_BYTES 512

struct QualeVideoReader {
    FILE *file;
    int own_file;         /* fclose() it in quale_video_close() */
    char *stdio_buffer;   /* our setvbuf() buffer, freed after fclose() */
    char *name;           /* for messages: the path, "standard input" or the caller's */

    int is_y4m;
    QualeVideoFormat format;            /* of the pictures read (bit depth: see below) */
    unsigned file_bitdepth;             /* of the samples in the file */
    unsigned shift;                     /* format.bitdepth - file_bitdepth */
    unsigned plane_count;               /* planes of the picture: 1 or 3 */
    unsigned file_planes;               /* planes per frame in the file */
    unsigned bytes_per_sample;          /* 1 or 2, in the file */
    unsigned plane_width[READER_MAX_FILE_PLANES];  /* in samples */
    unsigned plane_height[READER_MAX_FILE_PLANES];
    size_t row_bytes[READER_MAX_FILE_PLANES];  /* in the file */
    uint64_t plane_bytes[READER_MAX_FILE_PLANES];
    uint64_t frame_bytes;               /* payload of one frame, no marker */
    unsigned plane_mask;                /* planes quale_video_read() fills */

    /* Seeking is used only on regular files, where the size is known and a
     * seek past the end can be caught before it silently "succeeds". */
    int seekable;
    uint64_t position;    /* offset of the next byte in the file */
    uint64_t file_size;   /* refreshed with fstat() when a frame runs past it */
    uint64_t data_start;  /* offset of the first frame */

    uint64_t frame;       /* index of the next frame, from 0 */
    uint64_t clamped;     /* samples clamped to the bit depth's maximum */
    uint64_t damaged;     /* decoded frames the decoder flagged as damaged */
    unsigned rate_num, rate_den; /* frame rate (y4m F tag, container); 0: unknown */
    bool variable_rate;   /* the container says the rate varies */
    enum ReaderFieldOrder field_order; /* y4m's I tag; a decoded frame's flags */
    int64_t bit_rate;     /* bits per second the container or stream gives; 0: unknown */
    enum ReaderState state;
    int failure;          /* negative errno returned while READER_FAILED */

    unsigned char *scratch; /* where skipped bytes of a pipe are read to */
    size_t scratch_size;

    /* The first bytes of a stream that cannot seek back, read to tell its
     * kind (sniff()): they are read again from here before the stream. */
    unsigned char prefix[READER_SNIFF_BYTES];
    size_t prefix_len, prefix_pos;

    /* Compressed video: FFmpeg's decoder (decode.c), NULL otherwise. */
    struct Decoder *decoder;
    /* A filtered video (quale_video_filter(), filter.c): its frames come
     * out of an FFmpeg filter graph fed by the reader it owns, and its
     * format is the graph's output; NULL otherwise. */
    struct Filter *filter;

    /* quale_video_set_size(): frames are read as `format` into `native`,
     * then scaled to `scaled_format` (and shifted by `shift` after). */
    struct Scaler *scaler;
    QualeVideoFormat scaled_format;
    /* Decoding on the GPU (decoder_use_gpu()): the decoder scales and
     * deepens there too, not with the CPU's scaler and shift, and neither
     * may change after. */
    bool decodes_on_gpu;
    QualePicture native, scaled_tmp;

    /* Room for a path of PATH_MAX (4096) bytes and the reason after it. */
    char error[4096 + 512];
};

/* decode.c: opens the decoder over the reader's stream (which can seek
 * when seekable), reads a frame into pic (NULL: decoded and dropped) as
 * next_frame() does, and closes it. */
int decoder_open(struct QualeVideoReader *r, bool seekable);
int decoder_read(struct QualeVideoReader *r, QualePicture *pic);
void decoder_close(struct QualeVideoReader *r);
const char *decoder_description(const struct QualeVideoReader *r);
/* Decoding on ctx's GPU from the first frame on (NVDEC through FFmpeg's
 * CUDA hwaccel): 1, or 0 with the reason in r->error when the video stays
 * on the CPU, or a negative errno.  Then decoder_read() takes device
 * pictures of ctx. */
int decoder_use_gpu(struct QualeVideoReader *r, const GpuImporter *importer,
                    const char *unavailable);
/* decode.c too: swscale between two sizes of one layout. */
int scaler_open(struct QualeVideoReader *r, const QualeVideoFormat *from,
                const QualeVideoFormat *to, const char *name);
int scaler_run(struct QualeVideoReader *r, const QualePicture *from, QualePicture *to);
void scaler_close(struct QualeVideoReader *r);
int64_t decoder_frames(const struct QualeVideoReader *r);
/* The frames of a compressed file, from its header or counted (its video
 * packets, read once); -1 when it cannot be (a pipe). */
int64_t decoder_count_frames(const struct QualeVideoReader *r);

/* filter.c: the filtered video's next frame into pic (NULL: dropped), as
 * decoder_read() does; its end; the reader it filters (NULL: none). */
int filter_read(struct QualeVideoReader *r, QualePicture *pic);
void filter_close(struct QualeVideoReader *r);
struct QualeVideoReader *filter_source(const struct QualeVideoReader *r);

/* fread() and getc() of the reader's stream, its sniffed prefix first. */
size_t reader_read(struct QualeVideoReader *r, void *dst, size_t n);
int reader_getc(struct QualeVideoReader *r);

/* Sets the message "<name>: <formatted text>" and returns err (negative). */
int video_reader_fail(struct QualeVideoReader *r, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Copies up to max bytes of s (stopping at NUL) into out (out_size > max),
 * replacing bytes that are not printable ASCII with '?', so that quoting a
 * damaged file in a message cannot emit control characters. */
void video_reader_quote(char *out, size_t out_size, const char *s, size_t len);

/* Fills the plane layout for format, plus `extra_planes` planes of luma
 * size that are stored in the file but never returned (y4m alpha).
 * Checks the format and that the frame size fits 64-bit and size_t. */
int video_reader_set_layout(struct QualeVideoReader *r,
                            const QualeVideoFormat *format,
                            unsigned extra_planes);

/* y4m.c: parses the stream header (the stream is at its first byte) and
 * sets the layout. */
int y4m_open(struct QualeVideoReader *r);

/* y4m.c: reads one FRAME line.  1: a frame follows, 0: clean end of file,
 * < 0: error (message set). */
int y4m_read_frame_header(struct QualeVideoReader *r);

/* yuv.c: checks a raw format and sets the layout. */
int yuv_open(struct QualeVideoReader *r, const QualeVideoFormat *format);

/* yuv.c: reads one frame's planar payload into pic (planes outside the
 * mask, and every plane when pic is NULL, are skipped).  `at_frame_start`
 * says no byte of this frame has been consumed yet, so that an end of file
 * right here is the clean end (raw yuv) rather than a truncation (y4m,
 * whose FRAME marker was already read).  Returns 1, 0 or a negative errno. */
int yuv_read_payload(struct QualeVideoReader *r, QualePicture *pic,
                     int at_frame_start);

/* video.c: a message into a caller's buffer (error may be NULL, or
 * error_size 0: none is wanted). */
void video_set_error(char *error, size_t error_size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif /* QUALE_SRC_INPUT_READER_H */
