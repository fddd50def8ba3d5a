/*
 * Decoding on the GPU (NVDEC, through FFmpeg's CUDA hwaccel): which videos
 * may (the codecs whose decoding is bit-exact, a first picture NVDEC
 * takes), opening the decoder in the backend's context, and each decoded
 * surface imported into a device picture (GpuImporter).
 */
#if QUALE_HAVE_FFMPEG

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode_private.h"
#include "input/av1_header.h"

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

/* ---- what one process learns once ----------------------------------------- */

/* FFmpeg loads NVIDIA's decoder library, libnvcuvid, as it opens an NVDEC
 * decoder and unloads it as the last one closes: between every two pairs
 * of a batch, and each load starts the library again.  Held from the first
 * GPU decoder to the process's end, it starts once.  (Nothing is called
 * through this handle: FFmpeg loads its own, which then finds it there.) */
static pthread_once_t nvcuvid_once = PTHREAD_ONCE_INIT;

static void hold_nvcuvid_loaded(void)
{
    (void)dlopen("libnvcuvid.so.1", RTLD_LAZY | RTLD_LOCAL);
}

/* The streams NVDEC took in this process (nvdec_probe()), by what its
 * acceptance depends on: the codec, profile and level, the picture's size
 * and sample format, and the CUDA context (the device).  A batch's pairs
 * of one ladder then probe once, not each. */
typedef struct ProbedStream {
    int codec, profile, level, width, height, format;
    const void *cu_context;
} ProbedStream;

enum { PROBED_STREAMS = 32 };
static pthread_mutex_t probed_lock = PTHREAD_MUTEX_INITIALIZER;
static ProbedStream probed[PROBED_STREAMS];
static unsigned probed_count, probed_next;

static ProbedStream probed_key(const AVCodecParameters *par, const void *cu_context)
{
    return (ProbedStream){ (int)par->codec_id, par->profile, par->level, par->width,
                           par->height, par->format, cu_context };
}

static bool same_stream(const ProbedStream *a, const ProbedStream *b)
{
    return a->codec == b->codec && a->profile == b->profile && a->level == b->level &&
           a->width == b->width && a->height == b->height && a->format == b->format &&
           a->cu_context == b->cu_context;
}

static bool probed_before(const ProbedStream *key)
{
    bool found = false;
    pthread_mutex_lock(&probed_lock);
    for (unsigned i = 0; i < probed_count && !found; i++) found = same_stream(&probed[i], key);
    pthread_mutex_unlock(&probed_lock);
    return found;
}

static void remember_probed(const ProbedStream *key)
{
    pthread_mutex_lock(&probed_lock);
    probed[probed_next] = *key; /* the oldest goes when full */
    probed_next = (probed_next + 1) % PROBED_STREAMS;
    if (probed_count < PROBED_STREAMS) probed_count++;
    pthread_mutex_unlock(&probed_lock);
}

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
    pthread_once(&nvcuvid_once, hold_nvcuvid_loaded);
    const ProbedStream key = probed_key(par, cu_context);
    const bool known = probed_before(&key);
    const char *refused = known ? NULL : nvdec_probe(r, codec, d->hw_device, why, sizeof(why));
    if (refused) {
        ff.av_buffer_unref(&d->hw_device);
        return STAY_ON_CPU("%s", refused);
    }
    if (!known) remember_probed(&key);
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

/* A frame decoded on the GPU into the device picture pic. */
int gpu_frame(struct QualeVideoReader *r, const AVFrame *f, QualePicture *pic)
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

#endif /* QUALE_HAVE_FFMPEG */
