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
 * at once ("several decoding sessions over one file" below).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpu/gpu.h"
#include "input/av1_header.h"
#include "reader.h"
#include "scale.h"

#if QUALE_HAVE_FFMPEG

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>


/* FFmpeg's libraries are loaded when the first compressed file is opened,
 * not linked: they bring in a hundred more libraries, whose loading would
 * slow every start of the tool by a tenth of a second.  The sonames are
 * those of the headers quale was built with. */
#define STR2(x) #x
#define STR(x) STR2(x)

static struct {
    AVFormatContext *(*avformat_alloc_context)(void);
    int (*avformat_open_input)(AVFormatContext **, const char *, const AVInputFormat *, AVDictionary **);
    int (*avformat_find_stream_info)(AVFormatContext *, AVDictionary **);
    int (*av_find_best_stream)(AVFormatContext *, enum AVMediaType, int, int, const AVCodec **, int);
    void (*avformat_close_input)(AVFormatContext **);
    int (*av_read_frame)(AVFormatContext *, AVPacket *);
    int (*avformat_index_get_entries_count)(const AVStream *);
    const AVIndexEntry *(*avformat_index_get_entry)(AVStream *, int);
    AVIOContext *(*avio_alloc_context)(unsigned char *, int, int, void *, int (*)(void *, uint8_t *, int), int (*)(void *, uint8_t *, int), int64_t (*)(void *, int64_t, int));
    void (*avio_context_free)(AVIOContext **);
    AVCodecContext *(*avcodec_alloc_context3)(const AVCodec *);
    int (*avcodec_parameters_to_context)(AVCodecContext *, const AVCodecParameters *);
    int (*avcodec_open2)(AVCodecContext *, const AVCodec *, AVDictionary **);
    void (*avcodec_free_context)(AVCodecContext **);
    int (*avcodec_send_packet)(AVCodecContext *, const AVPacket *);
    int (*avcodec_receive_frame)(AVCodecContext *, AVFrame *);
    void (*avcodec_flush_buffers)(AVCodecContext *);
    const AVCodec *(*avcodec_find_decoder_by_name)(const char *);
    AVPacket *(*av_packet_alloc)(void);
    void (*av_packet_free)(AVPacket **);
    void (*av_packet_unref)(AVPacket *);
    const AVCodecHWConfig *(*avcodec_get_hw_config)(const AVCodec *, int);
    void (*av_log_set_level)(int);
    void *(*av_malloc)(size_t);
    void (*av_free)(void *);
    void (*av_freep)(void *);
    int (*av_strerror)(int, char *, size_t);
    AVFrame *(*av_frame_alloc)(void);
    void (*av_frame_free)(AVFrame **);
    void (*av_frame_unref)(AVFrame *);
    void (*av_frame_move_ref)(AVFrame *, AVFrame *);
    int (*av_frame_get_buffer)(AVFrame *, int);
    AVFrameSideData *(*av_frame_get_side_data)(const AVFrame *, enum AVFrameSideDataType);
    const AVPixFmtDescriptor *(*av_pix_fmt_desc_get)(enum AVPixelFormat);
    AVBufferRef *(*av_hwdevice_ctx_alloc)(enum AVHWDeviceType);
    int (*av_hwdevice_ctx_init)(AVBufferRef *);
    AVBufferRef *(*av_buffer_ref)(const AVBufferRef *);
    void (*av_buffer_unref)(AVBufferRef **);
    struct SwsContext *(*sws_getCachedContext)(struct SwsContext *, int, int, enum AVPixelFormat, int, int, enum AVPixelFormat, int, SwsFilter *, SwsFilter *, const double *);
    int (*sws_scale)(struct SwsContext *, const uint8_t *const[], const int[], int, int, uint8_t *const[], const int[]);
    void (*sws_freeContext)(struct SwsContext *);
} ff;

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

#define IO_BUFFER_SIZE (1 << 16)

/* quale_video_set_size()'s swscale context (scaler_open()). */
struct Scaler {
    struct SwsContext *sws;
    enum AVPixelFormat pix_fmt;
    char name[16];
};

struct Decoder {
    AVFormatContext *format;
    AVIOContext *io;
    AVCodecContext *codec;
    int stream;
    AVPacket *packet;
    AVFrame *frame;
    bool draining;
    bool seekable; /* a regular file */
    /* Conversion of a layout quale does not read to planar YUV. */
    struct SwsContext *sws;
    enum AVPixelFormat target;
    AVFrame *converted;
    char description[160]; /* "h264 in mov,mp4,m4a,3gp,3g2,mj2" */
    /* Decoding on the GPU (decoder_use_gpu()): frames stay in device
     * memory and go into the context's device pictures. */
    AVBufferRef *hw_device;
    GpuImporter gpu; /* gpu.ops set: decoding on the GPU */
    unsigned gpu_bytes, gpu_shift;
    /* A scaled or deepened video resamples on the GPU as it is imported:
     * the plan of the CPU's swscale arithmetic, and the backend's copy of
     * its tables. */
    ScalePlan *gpu_scale;
    void *gpu_scale_state;
    /* Several decoding sessions over the file at once (parallel_start(),
     * tried at the first read). */
    struct Parallel *parallel;
    bool parallel_checked;
};

static void parallel_stop(struct Decoder *d);
static int parallel_start(struct QualeVideoReader *r);
static int parallel_read(struct QualeVideoReader *r, QualePicture *pic);

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

static const char *error_text(int err, char *buf, size_t size)
{
    ff.av_strerror(err, buf, size);
    return buf;
}

/* The planar little-endian layout of a quale format (NONE: no such). */
static enum AVPixelFormat layout_of(const QualeVideoFormat *f)
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
    return layout_of(&f);
}

/* Whether quale reads this layout as it is: planar YUV (or gray), one
 * sample per element, little-endian, 8 to 16 bits. */
static bool readable_as_is(const AVPixFmtDescriptor *d)
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
    const unsigned depth = readable_as_is(desc) ? (unsigned)desc->comp[0].depth
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

static enum AVPixelFormat pick_cuda(AVCodecContext *c, const enum AVPixelFormat *formats)
{
    (void)c;
    for (const enum AVPixelFormat *f = formats; *f != AV_PIX_FMT_NONE; f++)
        if (*f == AV_PIX_FMT_CUDA) return *f;
    /* NVDEC refused the stream: the software format, which the reader
     * then reports (gpu_frame()) */
    return formats[0];
}

/* Says why the reader stays on the CPU: 0, the reason in r->error. */
#define STAY_ON_CPU(...) (video_reader_fail(r, 0, __VA_ARGS__), 0)

/* Codecs whose standard defines the decoded picture to the bit, so that
 * NVDEC's pictures are the CPU decoder's.  MPEG-1/2, MPEG-4 Part 2, VC-1,
 * H.263 and MJPEG define their inverse transform only within a tolerance
 * (IEEE 1180 and its successors): a GPU decoder's pictures differ from
 * FFmpeg's software decoder's in low bits, which moves the scores (an
 * MPEG-2 clip on an H200: vmaf by up to 0.0096, float moments by 0.93).
 * Those decode on the CPU on every backend. */
static bool decodes_exactly(enum AVCodecID id)
{
    return id == AV_CODEC_ID_H264 || id == AV_CODEC_ID_HEVC || id == AV_CODEC_ID_VP8 ||
           id == AV_CODEC_ID_VP9 || id == AV_CODEC_ID_AV1;
}

static bool has_nvdec(const AVCodec *codec)
{
    for (int i = 0;; i++) {
        const AVCodecHWConfig *config = ff.avcodec_get_hw_config(codec, i);
        if (!config) return false;
        if (config->device_type == AV_HWDEVICE_TYPE_CUDA &&
            (config->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX))
            return true;
    }
}

static const char *nvdec_probe(struct QualeVideoReader *r, const AVCodec *codec,
                               AVBufferRef *device, char *why, size_t size);

int decoder_use_gpu(struct QualeVideoReader *r, const GpuImporter *importer,
                    const char *unavailable)
{
    struct Decoder *d = r->decoder;
    if (d->gpu.ops) return 1;
    if (r->frame || d->draining)
        return video_reader_fail(r, -EINVAL, "decoding on the GPU is chosen before the first "
                                 "frame is read");
    /* What the stream allows first: the reason a note gives then holds
     * on every machine. */
    if (r->format.chroma != QUALE_CHROMA_420 || r->format.bitdepth > 12)
        return STAY_ON_CPU("NVDEC's frames are 4:2:0 of 8 to 12 bits here, not %s %u-bit",
                           r->format.chroma == QUALE_CHROMA_422 ? "4:2:2"
                           : r->format.chroma == QUALE_CHROMA_444 ? "4:4:4" : "4:0:0",
                           r->format.bitdepth);
    const AVCodec *codec = d->codec->codec;
    const AVCodecParameters *par = d->format->streams[d->stream]->codecpar;
    if (!decodes_exactly(codec->id))
        return STAY_ON_CPU("%s does not define its decoded pictures to the bit (decoders' "
                           "inverse transforms may differ within a tolerance), so it decodes "
                           "on the CPU on every backend: the scores do not depend on the GPU",
                           codec->name);
    /* H.264's Baseline, Main, Extended and High profiles: not High 10,
     * 4:2:2, or the lossless High 4:4:4 Predictive */
    const int profile = par->profile & 0xff;
    if (codec->id == AV_CODEC_ID_H264 && profile != 66 && profile != 77 && profile != 88 &&
        profile != 100)
        return STAY_ON_CPU("NVDEC lacks this H.264 profile (%d)", profile);
    if (codec->id == AV_CODEC_ID_AV1) {
        /* Film grain is synthesised after decoding, by a process NVDEC need
         * not carry out as dav1d does; the grain-free pictures are exact. */
        const int grain = av1_film_grain_present(par->extradata, (size_t)par->extradata_size);
        if (grain != 0)
            return STAY_ON_CPU(grain > 0 ? "its AV1 stream carries film grain, whose synthesis "
                               "NVDEC need not do as the CPU decoder does"
                               : "its AV1 sequence header was not found before the first frame");
        /* Debian's FFmpeg decodes AV1 with libdav1d, which has no NVDEC:
         * FFmpeg's own AV1 decoder has it (and decodes only through a
         * hwaccel). */
        if (!has_nvdec(codec)) {
            const AVCodec *native = ff.avcodec_find_decoder_by_name("av1");
            if (native && has_nvdec(native)) codec = native;
        }
    }
    if (!has_nvdec(codec)) return STAY_ON_CPU("this FFmpeg has no NVDEC for %s", codec->name);
    if (!importer) return STAY_ON_CPU("%s", unavailable);
    char why[256];
    void *cu_context = importer->ops->device.native_context(importer->gpu);

    /* Another size or depth than the pictures': resampled as it is
     * imported, with the tables of the CPU's swscale arithmetic (a depth
     * alone through the identity, which is exact).  The plan is the
     * decoder's from here on (decoder_close() frees it). */
    if ((r->scaler || r->shift) && !d->gpu_scale) {
        QualeVideoFormat from = r->format, to = r->scaler ? r->scaled_format : r->format;
        from.bitdepth = to.bitdepth = r->file_bitdepth;
        ScalePlan *plan = malloc(sizeof(*plan));
        if (!plan) return video_reader_fail(r, -ENOMEM, "out of memory");
        char refusal[256];
        const int made = scale_plan_make(plan, &from, &to, r->scaler ? r->scaler->name : "bicubic",
                                         refusal, sizeof(refusal));
        if (made) {
            free(plan);
            if (made == -ENOMEM) return video_reader_fail(r, made, "out of memory");
            return STAY_ON_CPU("its pictures are converted on the CPU: %s", refusal);
        }
        d->gpu_scale = plan;
    }

    /* FFmpeg's CUDA device in the backend's own CUDA context.  The context
     * is the first member of hwcontext_cuda.h's AVCUDADeviceContext (a
     * CUcontext; the stream after it stays NULL, the default stream), set
     * here without that header, which needs CUDA's. */
    d->hw_device = ff.av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
    if (!d->hw_device) return STAY_ON_CPU("this FFmpeg has no CUDA device support");
    *(void **)((AVHWDeviceContext *)(void *)d->hw_device->data)->hwctx = cu_context;
    int err = ff.av_hwdevice_ctx_init(d->hw_device);
    char text[128];
    if (err < 0) {
        ff.av_buffer_unref(&d->hw_device);
        return STAY_ON_CPU("FFmpeg cannot use the CUDA context (%s)",
                           error_text(err, text, sizeof(text)));
    }
    const char *refused = nvdec_probe(r, codec, d->hw_device, why, sizeof(why));
    if (refused) {
        ff.av_buffer_unref(&d->hw_device);
        return STAY_ON_CPU("%s", refused);
    }
    AVCodecContext *c = ff.avcodec_alloc_context3(codec);
    if (!c) return video_reader_fail(r, -ENOMEM, "out of memory");
    ff.avcodec_parameters_to_context(c, d->format->streams[d->stream]->codecpar);
    c->hw_device_ctx = ff.av_buffer_ref(d->hw_device);
    c->get_format = pick_cuda;
    /* FFmpeg's H.264 and HEVC decoders add the grain an H.274 film grain
     * SEI describes on the CPU, never with a hwaccel: exported, its
     * parameters tell gpu_frame() that the CPU's picture would differ. */
    c->export_side_data |= AV_CODEC_EXPORT_DATA_FILM_GRAIN;
    if (!c->hw_device_ctx || (err = ff.avcodec_open2(c, codec, NULL)) < 0) {
        ff.avcodec_free_context(&c);
        ff.av_buffer_unref(&d->hw_device);
        return STAY_ON_CPU("FFmpeg cannot open its %s decoder with NVDEC", codec->name);
    }
    ff.avcodec_free_context(&d->codec);
    d->codec = c;
    d->gpu = *importer;
    /* the decoder that runs now (FFmpeg's own, for AV1) */
    snprintf(d->description, sizeof(d->description), "%s in %s", codec->name,
             d->format->iformat->name);
    /* NV12, or P010 / P016 with the samples in the top bits */
    d->gpu_bytes = r->file_bitdepth > 8 ? 2 : 1;
    d->gpu_shift = r->file_bitdepth > 8 ? 16 - r->file_bitdepth : 0;
    r->decodes_on_gpu = true;
    r->error[0] = '\0';
    return 1;
}

/* Reading a file through a position of one's own (pread), so that several
 * demuxers share one descriptor: the sessions, and the frame count. */
static int cursor_read(int fd, int64_t *position, uint8_t *buf, int size)
{
    ssize_t n;
    do n = pread(fd, buf, (size_t)size, (off_t)*position);
    while (n < 0 && errno == EINTR);
    if (n < 0) return AVERROR(errno);
    if (n == 0) return AVERROR_EOF;
    *position += n;
    return (int)n;
}

static int64_t cursor_seek(int fd, int64_t *position, int64_t offset, int whence)
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
struct PrivateDemuxer {
    int fd;
    int64_t position;
    AVIOContext *io;
    AVFormatContext *format;
    AVPacket *packet;
};

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

static void private_demuxer_close(struct PrivateDemuxer *m)
{
    ff.av_packet_free(&m->packet);
    /* frees format (also one not opened: it has no io yet), not the io */
    ff.avformat_close_input(&m->format);
    if (m->io) ff.av_freep(&m->io->buffer);
    ff.avio_context_free(&m->io);
}

/* 0, or -1 (close it all the same) when the file cannot be opened or has
 * no stream `stream`. */
static int private_demuxer_open(struct PrivateDemuxer *m, int fd, int stream)
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

/* Whether NVDEC decodes the stream's first picture, with a decoder of its
 * own over a demuxer of its own: a GPU whose NVDEC lacks the codec (the
 * H200 has no AV1), or a stream it refuses only when it sees it (a
 * profile FFmpeg's checks let through), then stays on the CPU instead of
 * failing at frame 0.  NULL, or why not. */
static const char *nvdec_probe(struct QualeVideoReader *r, const AVCodec *codec,
                               AVBufferRef *device, char *why, size_t size)
{
    struct Decoder *d = r->decoder;
    struct stat st;
    /* a pipe cannot be read twice: its first picture is the run's */
    if (!d->seekable || fstat(fileno(r->file), &st) || !S_ISREG(st.st_mode)) return NULL;
    struct PrivateDemuxer m = { 0 };
    AVCodecContext *c = NULL;
    AVFrame *frame = ff.av_frame_alloc();
    const char *refused = NULL;
    char text[128];
    int err = frame && !private_demuxer_open(&m, fileno(r->file), d->stream) ? 0 : -1;
    if (!err) {
        c = ff.avcodec_alloc_context3(codec);
        err = c ? ff.avcodec_parameters_to_context(c, d->format->streams[d->stream]->codecpar)
                : -1;
    }
    if (!err) {
        c->hw_device_ctx = ff.av_buffer_ref(device);
        c->get_format = pick_cuda;
        err = c->hw_device_ctx ? ff.avcodec_open2(c, codec, NULL) : -1;
        if (err) {
            snprintf(why, size, "FFmpeg cannot open its %s decoder with NVDEC", codec->name);
            refused = why;
        }
    }
    /* the first frame out, within the packets a decoder may hold back */
    bool draining = false;
    for (int packets = 0; !err && !refused && packets < 64;) {
        const int got = ff.avcodec_receive_frame(c, frame);
        if (got == 0) {
            if (frame->format != AV_PIX_FMT_CUDA)
                refused = "NVDEC could not decode it (FFmpeg fell back to its software decoder)";
            break;
        }
        if (got == AVERROR_EOF || (got == AVERROR(EAGAIN) && draining))
            break; /* no picture at all: the run says so */
        if (got != AVERROR(EAGAIN)) {
            snprintf(why, size, "NVDEC refused its first picture (%s)",
                     error_text(got, text, sizeof(text)));
            refused = why;
            break;
        }
        if (ff.av_read_frame(m.format, m.packet) < 0) {
            draining = true;
            ff.avcodec_send_packet(c, NULL);
            continue;
        }
        if (m.packet->stream_index == d->stream) {
            const int sent = ff.avcodec_send_packet(c, m.packet);
            packets++;
            if (sent < 0 && sent != AVERROR(EAGAIN)) {
                snprintf(why, size, "NVDEC refused its first picture (%s)",
                         error_text(sent, text, sizeof(text)));
                refused = why;
            }
        }
        ff.av_packet_unref(m.packet);
    }
    ff.avcodec_free_context(&c);
    ff.av_frame_free(&frame);
    private_demuxer_close(&m);
    return refused;
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
static int check_frame_size(struct QualeVideoReader *r, const AVFrame *f)
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
    if (desc && readable_as_is(desc) && (unsigned)desc->comp[0].depth == r->file_bitdepth)
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

/* A frame decoded on the GPU into the device picture pic. */
static int gpu_frame(struct QualeVideoReader *r, const AVFrame *f, QualePicture *pic)
{
    struct Decoder *d = r->decoder;
    if (f->format != AV_PIX_FMT_CUDA)
        return video_reader_fail(r, -EPROTO, "frame %llu: NVDEC could not decode this stream "
                                 "(FFmpeg fell back to its software decoder); score it with "
                                 "--backend cpu", (unsigned long long)r->frame);
    const int err = check_frame_size(r, f);
    if (err || !pic) return err;
    if (ff.av_frame_get_side_data(f, AV_FRAME_DATA_FILM_GRAIN_PARAMS))
        return video_reader_fail(r, -ENOTSUP, "frame %llu carries film grain (an H.274 film "
                                 "grain SEI), which FFmpeg adds to the picture on the CPU and "
                                 "NVDEC does not: decode it on the CPU (QUALE_DECODE_ON_CPU=1, "
                                 "or --backend cpu)", (unsigned long long)r->frame);
    const QualeVideoFormat *want = r->scaler ? &r->scaled_format : &r->format;
    if (pic->format.width != want->width || pic->format.height != want->height ||
        pic->format.bitdepth != want->bitdepth || pic->format.chroma != want->chroma)
        return video_reader_fail(r, -EINVAL, "a picture of another format than the video's");
    const GpuFrameImport in = {
        .planes = { f->data[0], f->data[1] },
        .pitch = { f->linesize[0], f->linesize[1] },
        .bytes = d->gpu_bytes,
        .shift = d->gpu_shift,
        .scale = d->gpu_scale,
        .deepen = r->shift,
        .state = &d->gpu_scale_state,
    };
    char why[512];
    const int imported = d->gpu.ops->device.import_frame(d->gpu.gpu, &in, pic, why, sizeof(why));
    if (imported)
        return video_reader_fail(r, imported, "frame %llu: %s", (unsigned long long)r->frame, why);
    return 0;
}

/* A damaged bitstream decodes with concealment: counted, so that the
 * caller can say the scores are of repaired pictures. */
static void count_damage(struct QualeVideoReader *r, const AVFrame *f)
{
    if ((f->flags & AV_FRAME_FLAG_CORRUPT) || f->decode_error_flags) r->damaged++;
}

/* The decoded frame f into pic (NULL: dropped), on the host or the GPU. */
static int deliver_frame(struct QualeVideoReader *r, const AVFrame *f, QualePicture *pic)
{
    count_damage(r, f);
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

static void parallel_stop(struct Decoder *d)
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
static int parallel_start(struct QualeVideoReader *r)
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

static int parallel_read(struct QualeVideoReader *r, QualePicture *pic)
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
    const enum AVPixelFormat fmt = layout_of(from), out = layout_of(to);
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
