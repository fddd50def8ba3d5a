/*
 * Compressed video through FFmpeg's libraries (libavformat, libavcodec,
 * libswscale): the reader behind a file whose first bytes name a container
 * (video.c's sniff()), or that FFmpeg recognises where YUV4MPEG2 was
 * expected.  The bytes come through the reader's own stream (an AVIO
 * context over reader_read()), so files, pipes and stdin all work; a
 * regular file can seek (an MP4 whose index is at its end needs that).
 *
 * Frames are the decoder's output order (presentation order).  Planar YUV
 * of 8 to 16 bits, little-endian, is copied as it is; any other layout
 * (NV12, P010, packed or RGB) is converted by swscale to planar YUV of the
 * same chroma subsampling and depth.  The libraries are loaded at the
 * first compressed file (dlopen), so quale starts without them and runs
 * where they are not installed; without FFmpeg's headers at build time
 * (the meson feature "ffmpeg"), decoder_open() says there is no decoder.
 * QUALE_DECODE_SESSIONS=N decodes a regular file on the CPU in N sessions
 * at once (decode_sessions.c); on the CUDA backend NVDEC decodes where the
 * codec allows (decode_gpu.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader.h"
#include "scale.h"

#if QUALE_HAVE_FFMPEG

#include "decode_private.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>


/* FFmpeg's libraries are loaded when the first compressed file is opened,
 * not linked: they bring in a hundred more libraries, whose loading would
 * slow every start of the tool by a tenth of a second.  The sonames are
 * those of the headers quale was built with. */
#define STR2(x) #x
#define STR(x) STR2(x)
struct FFmpegFunctions ff;

static const struct {
    const char *library;
    const char *const *symbols;
} ff_libraries[] = {
    { "libavformat.so." STR(LIBAVFORMAT_VERSION_MAJOR), (const char *const[]){ "avformat_alloc_context", "avformat_open_input", "avformat_find_stream_info", "av_find_best_stream", "avformat_close_input", "av_read_frame", "avformat_index_get_entries_count", "avformat_index_get_entry", "avio_alloc_context", "avio_context_free", NULL } },
    { "libavcodec.so." STR(LIBAVCODEC_VERSION_MAJOR), (const char *const[]){ "avcodec_alloc_context3", "avcodec_parameters_to_context", "avcodec_open2", "avcodec_free_context", "avcodec_send_packet", "avcodec_receive_frame", "avcodec_flush_buffers", "avcodec_find_decoder_by_name", "av_packet_alloc", "av_packet_free", "av_packet_unref", "avcodec_get_hw_config", NULL } },
    { "libavutil.so." STR(LIBAVUTIL_VERSION_MAJOR), (const char *const[]){ "av_log_set_level", "av_malloc", "av_free", "av_freep", "av_strerror", "av_frame_alloc", "av_frame_free", "av_frame_unref", "av_frame_move_ref", "av_frame_get_buffer", "av_frame_get_side_data", "av_pix_fmt_desc_get", "av_hwdevice_ctx_alloc", "av_hwdevice_ctx_init", "av_buffer_ref", "av_buffer_unref", NULL } },
    { "libswscale.so." STR(LIBSWSCALE_VERSION_MAJOR), (const char *const[]){ "sws_getCachedContext", "sws_scale", "sws_freeContext", NULL } },
};

static pthread_once_t ff_once = PTHREAD_ONCE_INIT;
static char ff_error[256]; /* empty once loaded */

/* Fills ff in the order of its fields, which is ff_libraries' order. */
static void ff_load(void)
{
    void **slot = (void **)(void *)&ff;
    for (size_t l = 0; l < sizeof(ff_libraries) / sizeof(ff_libraries[0]); l++) {
        void *lib = dlopen(ff_libraries[l].library, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            snprintf(ff_error, sizeof(ff_error), "FFmpeg's %s could not be loaded (install "
                     "Debian's package of it)", ff_libraries[l].library);
            return;
        }
        for (const char *const *name = ff_libraries[l].symbols; *name; name++) {
            *slot = dlsym(lib, *name);
            if (!*slot++) {
                snprintf(ff_error, sizeof(ff_error), "%s lacks %s", ff_libraries[l].library,
                         *name);
                return;
            }
        }
    }
}


const char *ffmpeg_load(void)
{
    pthread_once(&ff_once, ff_load);
    return ff_error[0] ? ff_error : NULL;
}

static int io_read(void *opaque, uint8_t *buf, int size)
{
    struct QualeVideoReader *r = opaque;
    const size_t n = reader_read(r, buf, (size_t)size);
    if (n) return (int)n;
    return ferror(r->file) ? AVERROR(EIO) : AVERROR_EOF;
}

static int64_t io_seek(void *opaque, int64_t offset, int whence)
{
    struct QualeVideoReader *r = opaque;
    if (whence & AVSEEK_SIZE) {
        struct stat st;
        return fstat(fileno(r->file), &st) ? AVERROR(errno) : (int64_t)st.st_size;
    }
    whence &= ~AVSEEK_FORCE;
    if (fseeko(r->file, (off_t)offset, whence)) return AVERROR(errno);
    return (int64_t)ftello(r->file);
}

const char *error_text(int err, char *buf, size_t size)
{
    ff.av_strerror(err, buf, size);
    return buf;
}

/* The planar little-endian layout of a quale format (NONE: no such). */
enum AVPixelFormat ffmpeg_layout_of(const QualeVideoFormat *f)
{
    static const enum AVPixelFormat by_chroma[4][6] = {
        /* 8, 9, 10, 12, 14, 16 bits */
        { AV_PIX_FMT_GRAY8, AV_PIX_FMT_GRAY9LE, AV_PIX_FMT_GRAY10LE, AV_PIX_FMT_GRAY12LE,
          AV_PIX_FMT_GRAY14LE, AV_PIX_FMT_GRAY16LE },
        { AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P9LE, AV_PIX_FMT_YUV420P10LE,
          AV_PIX_FMT_YUV420P12LE, AV_PIX_FMT_YUV420P14LE, AV_PIX_FMT_YUV420P16LE },
        { AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV422P9LE, AV_PIX_FMT_YUV422P10LE,
          AV_PIX_FMT_YUV422P12LE, AV_PIX_FMT_YUV422P14LE, AV_PIX_FMT_YUV422P16LE },
        { AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P9LE, AV_PIX_FMT_YUV444P10LE,
          AV_PIX_FMT_YUV444P12LE, AV_PIX_FMT_YUV444P14LE, AV_PIX_FMT_YUV444P16LE },
    };
    const int c = f->chroma == QUALE_CHROMA_400 ? 0 : f->chroma == QUALE_CHROMA_420 ? 1
                  : f->chroma == QUALE_CHROMA_422 ? 2 : f->chroma == QUALE_CHROMA_444 ? 3 : -1;
    const int d = f->bitdepth == 8 ? 0 : f->bitdepth == 9 ? 1 : f->bitdepth == 10 ? 2
                  : f->bitdepth == 12 ? 3 : f->bitdepth == 14 ? 4 : f->bitdepth == 16 ? 5 : -1;
    return c < 0 || d < 0 ? AV_PIX_FMT_NONE : by_chroma[c][d];
}

/* The planar little-endian YUV layout of a descriptor's subsampling and
 * depth (rounded up to 8, 10, 12 or 16 bits; RGB as 4:4:4), and its chroma
 * format; AV_PIX_FMT_NONE for a subsampling quale does not score. */
static enum AVPixelFormat planar_layout(const AVPixFmtDescriptor *d, enum QualeChroma *chroma)
{
    const unsigned depth = (unsigned)d->comp[0].depth;
    const bool rgb = d->flags & AV_PIX_FMT_FLAG_RGB;
    if (d->nb_components <= 2 && !rgb) {
        *chroma = QUALE_CHROMA_400;
    } else if (d->nb_components < 3 || rgb || (d->log2_chroma_w == 0 && d->log2_chroma_h == 0)) {
        *chroma = QUALE_CHROMA_444;
    } else if (d->log2_chroma_w == 1 && d->log2_chroma_h == 1) {
        *chroma = QUALE_CHROMA_420;
    } else if (d->log2_chroma_w == 1 && d->log2_chroma_h == 0) {
        *chroma = QUALE_CHROMA_422;
    } else {
        return AV_PIX_FMT_NONE;
    }
    const QualeVideoFormat f = {
        .chroma = *chroma,
        .bitdepth = depth <= 8 ? 8 : depth <= 10 ? 10 : depth <= 12 ? 12 : 16,
    };
    return ffmpeg_layout_of(&f);
}

/* Whether quale reads this layout as it is: planar YUV (or gray), one
 * sample per element, little-endian, 8 to 16 bits. */
bool ffmpeg_readable_as_is(const AVPixFmtDescriptor *d)
{
    if ((d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_BE | AV_PIX_FMT_FLAG_PAL |
                     AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_FLOAT)))
        return false;
    if (!(d->flags & AV_PIX_FMT_FLAG_PLANAR) && d->nb_components > 1) return false;
    if (d->nb_components != 1 && d->nb_components != 3) return false; /* no alpha */
    const unsigned depth = d->comp[0].depth;
    for (int c = 0; c < d->nb_components; c++) {
        if (d->comp[c].depth != (int)depth || d->comp[c].shift || d->comp[c].offset ||
            d->comp[c].plane != c || d->comp[c].step != (depth > 8 ? 2 : 1))
            return false;
    }
    if (depth < 8 || depth > 16) return false;
    if (d->nb_components == 3 && !((d->log2_chroma_w == 1 && d->log2_chroma_h <= 1) ||
                                   (d->log2_chroma_w == 0 && d->log2_chroma_h == 0)))
        return false;
    return true;
}

void decoder_close(struct QualeVideoReader *r)
{
    struct Decoder *d = r->decoder;
    if (!d) return;
    parallel_stop(d);
    ff.sws_freeContext(d->sws);
    ff.av_frame_free(&d->converted);
    ff.av_frame_free(&d->frame);
    ff.av_packet_free(&d->packet);
    ff.avcodec_free_context(&d->codec);
    ff.av_buffer_unref(&d->hw_device);
    if (d->gpu_scale) {
        if (d->gpu.ops && d->gpu_scale_state)
            d->gpu.ops->device.import_release(d->gpu.gpu, d->gpu_scale_state);
        scale_plan_free(d->gpu_scale);
        free(d->gpu_scale);
    }
    ff.avformat_close_input(&d->format);
    if (d->io) ff.av_freep(&d->io->buffer);
    ff.avio_context_free(&d->io);
    free(d);
    r->decoder = NULL;
}

int decoder_open(struct QualeVideoReader *r, bool seekable)
{
    pthread_once(&ff_once, ff_load);
    if (ff_error[0])
        return video_reader_fail(r, -EPROTONOSUPPORT, "%s", ff_error);
    struct Decoder *d = calloc(1, sizeof(*d));
    if (!d) return video_reader_fail(r, -ENOMEM, "out of memory");
    r->decoder = d;
    d->seekable = seekable;
    char text[128];
    /* FFmpeg's own messages would repeat ours, less clearly. */
    /* (QUALE_FFMPEG_LOG=1 lets them through, for a decoder's own reasons) */
    const char *ffmpeg_log = getenv("QUALE_FFMPEG_LOG");
    ff.av_log_set_level(ffmpeg_log && *ffmpeg_log == '1' ? AV_LOG_VERBOSE : AV_LOG_QUIET);
    unsigned char *buffer = ff.av_malloc(IO_BUFFER_SIZE);
    d->io = buffer ? ff.avio_alloc_context(buffer, IO_BUFFER_SIZE, 0, r, io_read, NULL,
                                        seekable ? io_seek : NULL)
                   : NULL;
    if (!d->io) {
        ff.av_free(buffer);
        return video_reader_fail(r, -ENOMEM, "out of memory");
    }
    d->format = ff.avformat_alloc_context();
    if (!d->format) return video_reader_fail(r, -ENOMEM, "out of memory");
    d->format->pb = d->io;
    int err = ff.avformat_open_input(&d->format, NULL, NULL, NULL);
    if (err < 0)
        return video_reader_fail(r, -EPROTO, "not a video FFmpeg can open (%s)",
                                 error_text(err, text, sizeof(text)));
    if ((err = ff.avformat_find_stream_info(d->format, NULL)) < 0)
        return video_reader_fail(r, -EPROTO, "FFmpeg cannot read its streams (%s)",
                                 error_text(err, text, sizeof(text)));
    const AVCodec *codec = NULL;
    d->stream = ff.av_find_best_stream(d->format, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (d->stream < 0)
        return video_reader_fail(r, -EPROTO, "%s", d->stream == AVERROR_DECODER_NOT_FOUND
                                 ? "its video's codec is not one this FFmpeg decodes"
                                 : "it has no video stream");
    const AVStream *st = d->format->streams[d->stream];
    d->codec = ff.avcodec_alloc_context3(codec);
    if (!d->codec) return video_reader_fail(r, -ENOMEM, "out of memory");
    ff.avcodec_parameters_to_context(d->codec, st->codecpar);
    d->codec->thread_count = 0; /* FFmpeg's choice: a thread per core */
    if ((err = ff.avcodec_open2(d->codec, codec, NULL)) < 0)
        return video_reader_fail(r, -EPROTO, "FFmpeg cannot open its %s decoder (%s)",
                                 codec->name, error_text(err, text, sizeof(text)));
    d->packet = ff.av_packet_alloc();
    d->frame = ff.av_frame_alloc();
    if (!d->packet || !d->frame) return video_reader_fail(r, -ENOMEM, "out of memory");
    snprintf(d->description, sizeof(d->description), "%s in %s", codec->name,
             d->format->iformat->name);
    /* The frame rate: the stream's average; where the container's base rate
     * differs from it, the timing varies (VFR). */
    /* the stream's own rate, else the whole file's (Matroska gives only
     * that) */
    r->bit_rate = st->codecpar->bit_rate > 0 ? st->codecpar->bit_rate
                : d->format->bit_rate > 0 ? d->format->bit_rate : 0;
    const AVRational avg = st->avg_frame_rate, base = st->r_frame_rate;
    if (avg.num > 0 && avg.den > 0) {
        r->rate_num = (unsigned)avg.num;
        r->rate_den = (unsigned)avg.den;
        r->variable_rate = base.num > 0 && base.den > 0 &&
                           (int64_t)avg.num * base.den != (int64_t)base.num * avg.den;
    }

    const AVPixFmtDescriptor *desc = ff.av_pix_fmt_desc_get(d->codec->pix_fmt);
    if ((!desc || d->codec->width <= 0) && !seekable && strstr(d->format->iformat->name, "mp4"))
        return video_reader_fail(r, -ESPIPE, "an MP4/MOV file whose index comes after its "
                                 "frames cannot be read from a pipe: give its path, or write "
                                 "it with -movflags +faststart (or as Matroska, or y4m)");
    if (!desc || d->codec->width <= 0 || d->codec->height <= 0)
        return video_reader_fail(r, -EPROTO, "its video (%s) has no picture size or format",
                                 d->description);
    enum QualeChroma chroma;
    d->target = planar_layout(desc, &chroma);
    if (d->target == AV_PIX_FMT_NONE)
        return video_reader_fail(r, -ENOTSUP, "its pictures (%s, %s) have a chroma layout "
                                 "quale does not score", d->description, desc->name);
    const unsigned depth = ffmpeg_readable_as_is(desc) ? (unsigned)desc->comp[0].depth
                           : (unsigned)ff.av_pix_fmt_desc_get(d->target)->comp[0].depth;
    r->format = (QualeVideoFormat){ .chroma = chroma, .bitdepth = depth,
                                    .width = (unsigned)d->codec->width,
                                    .height = (unsigned)d->codec->height };
    char why[256];
    if (quale_video_format_check(&r->format, why, sizeof(why)))
        return video_reader_fail(r, -ENOTSUP, "its pictures (%s) cannot be scored: %s",
                                 d->description, why);
    /* The planes of the pictures it fills, as for raw yuv. */
    const QualeVideoFormat format = r->format;
    return video_reader_set_layout(r, &format, 0);
}

const char *decoder_description(const struct QualeVideoReader *r)
{
    return r->decoder ? r->decoder->description : NULL;
}

/* The next decoded frame into d->frame: 1, 0 at the end, or an error. */
static int decode_next(struct QualeVideoReader *r)
{
    struct Decoder *d = r->decoder;
    char text[128];
    for (;;) {
        int err = ff.avcodec_receive_frame(d->codec, d->frame);
        if (err == 0) return 1;
        if (err == AVERROR_EOF) return 0;
        if (err != AVERROR(EAGAIN))
            return video_reader_fail(r, -EPROTO, "frame %llu: decoding failed (%s)%s",
                                     (unsigned long long)r->frame,
                                     error_text(err, text, sizeof(text)),
                                     d->gpu.ops ? "; NVDEC decoded it: QUALE_DECODE_ON_CPU=1 decodes "
                                     "on the CPU" : "");
        if (d->draining) return 0;
        err = ff.av_read_frame(d->format, d->packet);
        if (err == AVERROR_EOF) {
            d->draining = true;
            ff.avcodec_send_packet(d->codec, NULL);
            continue;
        }
        if (err < 0)
            return video_reader_fail(r, err == AVERROR(EIO) ? -EIO : -EPROTO,
                                     "frame %llu: reading the file failed (%s)",
                                     (unsigned long long)r->frame,
                                     error_text(err, text, sizeof(text)));
        if (d->packet->stream_index == d->stream) err = ff.avcodec_send_packet(d->codec, d->packet);
        ff.av_packet_unref(d->packet);
        if (err < 0 && err != AVERROR(EAGAIN))
            return video_reader_fail(r, -EPROTO, "frame %llu: the decoder refused a packet (%s)",
                                     (unsigned long long)r->frame,
                                     error_text(err, text, sizeof(text)));
    }
}

/* 0, or -EPROTO when f's size is not the one the video began with. */
int check_frame_size(struct QualeVideoReader *r, const AVFrame *f)
{
    if (f->width == (int)r->format.width && f->height == (int)r->format.height) return 0;
    return video_reader_fail(r, -EPROTO, "frame %llu is %dx%d where the video began at %ux%u "
                             "(a change of size inside the stream)", (unsigned long long)r->frame,
                             f->width, f->height, r->format.width, r->format.height);
}

/* f's picture as planar YUV of the reader's layout. */
static const AVFrame *planar_frame(struct QualeVideoReader *r, const AVFrame *f)
{
    struct Decoder *d = r->decoder;
    if (check_frame_size(r, f)) return NULL;
    const AVPixFmtDescriptor *desc = ff.av_pix_fmt_desc_get((enum AVPixelFormat)f->format);
    if (desc && ffmpeg_readable_as_is(desc) && (unsigned)desc->comp[0].depth == r->file_bitdepth)
        return f;
    if (!d->converted) {
        d->converted = ff.av_frame_alloc();
        if (!d->converted) return NULL;
        d->converted->format = d->target;
        d->converted->width = f->width;
        d->converted->height = f->height;
        if (ff.av_frame_get_buffer(d->converted, 64) < 0) return NULL;
    }
    d->sws = ff.sws_getCachedContext(d->sws, f->width, f->height, (enum AVPixelFormat)f->format,
                                  f->width, f->height, d->target,
                                  SWS_POINT | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL,
                                  NULL);
    if (!d->sws ||
        ff.sws_scale(d->sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height,
                  d->converted->data, d->converted->linesize) != f->height) {
        video_reader_fail(r, -EPROTO, "frame %llu: converting %s to planar YUV failed",
                          (unsigned long long)r->frame, desc ? desc->name : "its layout");
        return NULL;
    }
    return d->converted;
}

/* A damaged bitstream decodes with concealment: counted, so that the
 * caller can say the scores are of repaired pictures. */
static void count_damage(struct QualeVideoReader *r, const AVFrame *f)
{
    if ((f->flags & AV_FRAME_FLAG_CORRUPT) || f->decode_error_flags) r->damaged++;
}

/* The decoded frame f into pic (NULL: dropped), on the host or the GPU. */
int deliver_frame(struct QualeVideoReader *r, const AVFrame *f, QualePicture *pic)
{
    count_damage(r, f);
    r->field_order = !f->interlaced_frame ? READER_PROGRESSIVE
                     : f->top_field_first ? READER_FIELDS_TOP_FIRST : READER_FIELDS_BOTTOM_FIRST;
    if (r->decoder->gpu.ops) return gpu_frame(r, f, pic);
    if (!pic) return 0;
    const AVFrame *planar = planar_frame(r, f);
    if (!planar) return r->error[0] ? -EPROTO : -ENOMEM;
    const unsigned bytes = r->file_bitdepth > 8 ? 2 : 1;
    for (unsigned p = 0; p < r->plane_count; p++) {
        if (!(r->plane_mask >> p & 1)) continue;
        const size_t row = (size_t)pic->plane_width[p] * bytes;
        for (unsigned y = 0; y < pic->plane_height[p]; y++) {
            uint8_t *dst = (uint8_t *)pic->data[p] + (size_t)y * (size_t)pic->stride[p];
            memcpy(dst, planar->data[p] + (size_t)y * (size_t)planar->linesize[p], row);
            if (r->shift) {
                /* --score-bitdepth: deeper samples, shifted left. */
                uint16_t *s = (uint16_t *)(void *)dst;
                if (bytes == 1) {
                    for (unsigned x = pic->plane_width[p]; x-- > 0;)
                        s[x] = (uint16_t)(dst[x] << r->shift);
                } else {
                    for (unsigned x = 0; x < pic->plane_width[p]; x++)
                        s[x] = (uint16_t)(s[x] << r->shift);
                }
            }
        }
    }
    return 0;
}

int decoder_read(struct QualeVideoReader *r, QualePicture *pic)
{
    struct Decoder *d = r->decoder;
    if (!d->parallel_checked) {
        /* Decoding in several sessions (QUALE_DECODE_SESSIONS), on the
         * CPU only. */
        d->parallel_checked = true;
        const int err = parallel_start(r);
        if (err < 0) return err;
    }
    if (d->parallel) return parallel_read(r, pic);
    int ret = decode_next(r);
    if (ret <= 0) return ret;
    ret = deliver_frame(r, d->frame, pic);
    ff.av_frame_unref(d->frame);
    return ret < 0 ? ret : 1;
}


/* ---- scaling (quale_video_set_size) ------------------------------------ */

static const struct {
    const char *name;
    int flags;
} scalers[] = {
    { "bicubic", SWS_BICUBIC }, { "bilinear", SWS_BILINEAR }, { "lanczos", SWS_LANCZOS },
    { "neighbor", SWS_POINT },  { "area", SWS_AREA },         { "spline", SWS_SPLINE },
};


int scaler_open(struct QualeVideoReader *r, const QualeVideoFormat *from,
                const QualeVideoFormat *to, const char *name)
{
    pthread_once(&ff_once, ff_load);
    if (ff_error[0])
        return video_reader_fail(r, -EPROTONOSUPPORT, "cannot scale: %s", ff_error);
    int flags = -1;
    for (unsigned i = 0; i < sizeof(scalers) / sizeof(scalers[0]); i++)
        if (!strcmp(name, scalers[i].name)) flags = scalers[i].flags;
    if (flags < 0)
        return video_reader_fail(r, -EINVAL, "unknown scaler '%s' (bicubic, bilinear, lanczos, "
                                 "neighbor, area, spline)", name);
    const enum AVPixelFormat fmt = ffmpeg_layout_of(from), out = ffmpeg_layout_of(to);
    if (fmt == AV_PIX_FMT_NONE || out == AV_PIX_FMT_NONE)
        return video_reader_fail(r, -ENOTSUP, "cannot scale %u-bit video (8, 9, 10, 12, 14 "
                                 "and 16 bits can be)", from->bitdepth);
    struct Scaler *sc = calloc(1, sizeof(*sc));
    if (!sc) return video_reader_fail(r, -ENOMEM, "out of memory");
    /* The flags FFmpeg's scale filter passes for
     * flags=NAME+accurate_rnd+bitexact, so that the frames equal
     * `ffmpeg -vf scale=W:H:flags=NAME+accurate_rnd+bitexact[,format=F]`'s
     * (one swscale context does both, as in FFmpeg's filter graph).  These
     * two flags make swscale's result its portable C path's on every CPU:
     * without them its x86 vertical filter rounds each tap's product down
     * (a sample in a few comes out one lower), and the GPU's resampling
     * (scale.h), which is that C path, could not equal it. */
    sc->sws = ff.sws_getCachedContext(NULL, (int)from->width, (int)from->height, fmt,
                                      (int)to->width, (int)to->height, out,
                                      flags | SWS_ACCURATE_RND | SWS_BITEXACT, NULL, NULL, NULL);
    snprintf(sc->name, sizeof(sc->name), "%s", name);
    sc->pix_fmt = fmt;
    if (!sc->sws) {
        free(sc);
        return video_reader_fail(r, -EINVAL, "cannot scale %ux%u to %ux%u", from->width,
                                 from->height, to->width, to->height);
    }
    r->scaler = sc;
    return 0;
}

int scaler_run(struct QualeVideoReader *r, const QualePicture *from, QualePicture *to)
{
    const uint8_t *src[4] = { 0 };
    uint8_t *dst[4] = { 0 };
    int src_stride[4] = { 0 }, dst_stride[4] = { 0 };
    for (unsigned p = 0; p < from->plane_count; p++) {
        src[p] = from->data[p];
        src_stride[p] = (int)from->stride[p];
        dst[p] = to->data[p];
        dst_stride[p] = (int)to->stride[p];
    }
    const int h = ff.sws_scale(r->scaler->sws, src, src_stride, 0, (int)from->format.height, dst,
                               dst_stride);
    if (h != (int)to->format.height)
        return video_reader_fail(r, -EIO, "frame %llu: scaling failed",
                                 (unsigned long long)r->frame);
    return 0;
}

void scaler_close(struct QualeVideoReader *r)
{
    if (!r->scaler) return;
    ff.sws_freeContext(r->scaler->sws);
    free(r->scaler);
    r->scaler = NULL;
}

#else /* !QUALE_HAVE_FFMPEG */

int decoder_open(struct QualeVideoReader *r, bool seekable)
{
    (void)seekable;
    return video_reader_fail(r, -EPROTONOSUPPORT, "this build of quale has no decoder "
                             "(FFmpeg's headers were not found when it was built)");
}

void decoder_close(struct QualeVideoReader *r)
{
    (void)r;
}

const char *decoder_description(const struct QualeVideoReader *r)
{
    (void)r;
    return NULL;
}

int decoder_use_gpu(struct QualeVideoReader *r, const GpuImporter *importer,
                    const char *unavailable)
{
    (void)importer;
    (void)unavailable;
    video_reader_fail(r, 0, "this build of quale has no decoder");
    return 0;
}

int64_t decoder_frames(const struct QualeVideoReader *r)
{
    (void)r;
    return -1;
}

int64_t decoder_count_frames(const struct QualeVideoReader *r)
{
    (void)r;
    return -1;
}

int decoder_read(struct QualeVideoReader *r, QualePicture *pic)
{
    (void)pic;
    return video_reader_fail(r, -EPROTONOSUPPORT, "no decoder in this build");
}

int scaler_open(struct QualeVideoReader *r, const QualeVideoFormat *from,
                const QualeVideoFormat *to, const char *name)
{
    (void)from;
    (void)to;
    (void)name;
    return video_reader_fail(r, -EPROTONOSUPPORT, "cannot scale: this build of quale has no "
                             "FFmpeg (its headers were not found when it was built)");
}

int scaler_run(struct QualeVideoReader *r, const QualePicture *from, QualePicture *to)
{
    (void)from;
    (void)to;
    return video_reader_fail(r, -EPROTONOSUPPORT, "no scaler in this build");
}

void scaler_close(struct QualeVideoReader *r)
{
    (void)r;
}

#endif
