/*
 * An FFmpeg filter graph between a video and its pictures
 * (quale_video_filter(), the tool's --vf, --ref-vf and --dist-vf): the
 * filtered video is a reader of its own whose frames come out of a
 * libavfilter graph (buffer -> the user's graph -> buffersink) fed with
 * the frames of the original reader, which it owns.  Everything after it
 * (quale_video_set_size(), set_bitdepth(), skipping, the tool's format
 * matching) sees the graph's output, as it would see the frames of
 * `ffmpeg -vf GRAPH -f yuv4mpegpipe -`.
 *
 * The frames enter the graph as the ffmpeg tool hands those of a y4m or
 * raw file to it: timed by their order at the video's frame rate (25 fps
 * where it is not known, as FFmpeg's rawvideo reader assumes), the end of
 * the stream where a frame after the last would begin, interlaced as the
 * y4m header's I tag or the decoder says, scale filters with swscale's
 * bicubic flags (the tool's default sws_flags).
 * libavfilter is loaded at the first graph (dlopen, as the decoder's
 * libraries are), so quale runs without it until a graph is asked for.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"

#if QUALE_HAVE_FFMPEG && QUALE_HAVE_AVFILTER

#include <dlfcn.h>
#include <pthread.h>

#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>

#include "decode_private.h"

#define STR2(x) #x
#define STR(x) STR2(x)

/* libavfilter's functions, and libavutil's that the decoder does not use. */
static struct FilterFunctions {
    AVFilterGraph *(*avfilter_graph_alloc)(void);
    void (*avfilter_graph_free)(AVFilterGraph **);
    const AVFilter *(*avfilter_get_by_name)(const char *);
    int (*avfilter_graph_create_filter)(AVFilterContext **, const AVFilter *, const char *,
                                        const char *, void *, AVFilterGraph *);
    AVFilterInOut *(*avfilter_inout_alloc)(void);
    void (*avfilter_inout_free)(AVFilterInOut **);
    int (*avfilter_graph_parse_ptr)(AVFilterGraph *, const char *, AVFilterInOut **,
                                    AVFilterInOut **, void *);
    int (*avfilter_graph_config)(AVFilterGraph *, void *);
    int (*av_buffersrc_add_frame_flags)(AVFilterContext *, AVFrame *, int);
    int (*av_buffersrc_close)(AVFilterContext *, int64_t, unsigned);
    int (*av_buffersink_get_frame)(AVFilterContext *, AVFrame *);
    int (*av_buffersink_get_format)(const AVFilterContext *);
    int (*av_buffersink_get_w)(const AVFilterContext *);
    int (*av_buffersink_get_h)(const AVFilterContext *);
    AVRational (*av_buffersink_get_frame_rate)(const AVFilterContext *);
    char *(*av_strdup)(const char *);
    void (*av_log_set_callback)(void (*)(void *, int, const char *, va_list));
    void (*av_log_default_callback)(void *, int, const char *, va_list);
    void (*av_log_format_line2)(void *, int, const char *, va_list, char *, int, int *);
} af;

static const struct {
    const char *library;
    const char *const *symbols;
} af_libraries[] = {
    { "libavfilter.so." STR(LIBAVFILTER_VERSION_MAJOR), (const char *const[]){ "avfilter_graph_alloc", "avfilter_graph_free", "avfilter_get_by_name", "avfilter_graph_create_filter", "avfilter_inout_alloc", "avfilter_inout_free", "avfilter_graph_parse_ptr", "avfilter_graph_config", "av_buffersrc_add_frame_flags", "av_buffersrc_close", "av_buffersink_get_frame", "av_buffersink_get_format", "av_buffersink_get_w", "av_buffersink_get_h", "av_buffersink_get_frame_rate", NULL } },
    { "libavutil.so." STR(LIBAVUTIL_VERSION_MAJOR), (const char *const[]){ "av_strdup", "av_log_set_callback", "av_log_default_callback", "av_log_format_line2", NULL } },
};

static pthread_once_t af_once = PTHREAD_ONCE_INIT;
static char af_error[256]; /* empty once loaded */

/* FFmpeg's error messages while this thread builds or runs a graph: they
 * say what is wrong with the graph ("No such filter: 'cropp'") where the
 * return code says only "Invalid argument". */
static _Thread_local char *log_capture;
static _Thread_local size_t log_capture_size;

static void capture_log(void *object, int level, const char *fmt, va_list args)
{
    if (!log_capture) {
        af.av_log_default_callback(object, level, fmt, args);
        return;
    }
    if (level > AV_LOG_ERROR) return;
    char line[512];
    int print_prefix = 0; /* the message alone, without "[crop @ 0x...]" */
    af.av_log_format_line2(object, level, fmt, args, line, sizeof(line), &print_prefix);
    line[strcspn(line, "\n")] = '\0';
    const size_t used = strlen(log_capture);
    if (!line[0] || used + 3 >= log_capture_size) return;
    snprintf(log_capture + used, log_capture_size - used, "%s%s", used ? "; " : "", line);
}

/* Fills af in the order of its fields, which is af_libraries' order. */
static void af_load(void)
{
    const char *ffmpeg = ffmpeg_load();
    if (ffmpeg) {
        snprintf(af_error, sizeof(af_error), "%s", ffmpeg);
        return;
    }
    void **slot = (void **)(void *)&af;
    for (size_t l = 0; l < sizeof(af_libraries) / sizeof(af_libraries[0]); l++) {
        void *lib = dlopen(af_libraries[l].library, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            snprintf(af_error, sizeof(af_error), "FFmpeg's %s could not be loaded (install "
                     "Debian's package of it, libavfilter%d)", af_libraries[l].library,
                     LIBAVFILTER_VERSION_MAJOR);
            return;
        }
        for (const char *const *name = af_libraries[l].symbols; *name; name++) {
            *slot = dlsym(lib, *name);
            if (!*slot++) {
                snprintf(af_error, sizeof(af_error), "%s lacks %s", af_libraries[l].library,
                         *name);
                return;
            }
        }
    }
    /* As decoder_open(): FFmpeg's own chatter only when asked for. */
    const char *ffmpeg_log = getenv("QUALE_FFMPEG_LOG");
    ff.av_log_set_level(ffmpeg_log && *ffmpeg_log == '1' ? AV_LOG_VERBOSE : AV_LOG_QUIET);
    af.av_log_set_callback(capture_log);
}

struct Filter {
    struct QualeVideoReader *source; /* the video filtered, owned */
    AVFilterGraph *graph;
    AVFilterContext *buffer, *sink;
    AVFrame *in, *out;
    int64_t pts;       /* of the next frame in: its index */
    bool source_ended; /* the graph has been told */
};

static void filter_free(struct Filter *f)
{
    if (!f) return;
    af.avfilter_graph_free(&f->graph);
    ff.av_frame_free(&f->in);
    ff.av_frame_free(&f->out);
    quale_video_close(&f->source);
    free(f);
}

void filter_close(struct QualeVideoReader *r)
{
    filter_free(r->filter);
    r->filter = NULL;
}

struct QualeVideoReader *filter_source(const struct QualeVideoReader *r)
{
    return r->filter ? r->filter->source : NULL;
}

/* buffer (the source's frames) -> text -> buffersink, configured: 0, or
 * a negative errno with the reason in why. */
static int build_graph(struct Filter *f, const char *text, char *why, size_t why_size)
{
    const struct QualeVideoReader *s = f->source;
    const enum AVPixelFormat pix_fmt = ffmpeg_layout_of(&s->format);
    if (pix_fmt == AV_PIX_FMT_NONE) {
        snprintf(why, why_size, "%u-bit video cannot be filtered (8, 9, 10, 12, 14 and 16 "
                 "bits can be)", s->format.bitdepth);
        return -ENOTSUP;
    }
    /* FFmpeg's rawvideo reader takes 25 fps where nothing says. */
    const unsigned rate_num = s->rate_num ? s->rate_num : 25, rate_den = s->rate_num ? s->rate_den : 1;
    char args[256];
    snprintf(args, sizeof(args), "video_size=%ux%u:pix_fmt=%d:time_base=%u/%u:"
             "pixel_aspect=0/1:frame_rate=%u/%u", s->format.width, s->format.height,
             (int)pix_fmt, rate_den, rate_num, rate_num, rate_den);
    f->graph = af.avfilter_graph_alloc();
    if (!f->graph) return -ENOMEM;
    /* the ffmpeg tool's default sws_flags, for the graph's scale filters */
    f->graph->scale_sws_opts = af.av_strdup("flags=bicubic");
    int err = af.avfilter_graph_create_filter(&f->buffer, af.avfilter_get_by_name("buffer"),
                                              "in", args, NULL, f->graph);
    if (err >= 0)
        err = af.avfilter_graph_create_filter(&f->sink, af.avfilter_get_by_name("buffersink"),
                                              "out", NULL, NULL, f->graph);
    if (err < 0 || !f->graph->scale_sws_opts) return -ENOMEM;
    AVFilterInOut *outputs = af.avfilter_inout_alloc(), *inputs = af.avfilter_inout_alloc();
    if (outputs && inputs) {
        outputs->name = af.av_strdup("in");
        outputs->filter_ctx = f->buffer;
        inputs->name = af.av_strdup("out");
        inputs->filter_ctx = f->sink;
    }
    err = !outputs || !inputs || !outputs->name || !inputs->name ? AVERROR(ENOMEM)
          : af.avfilter_graph_parse_ptr(f->graph, text, &inputs, &outputs, NULL);
    af.avfilter_inout_free(&inputs);
    af.avfilter_inout_free(&outputs);
    if (err >= 0) err = af.avfilter_graph_config(f->graph, NULL);
    if (err == AVERROR(ENOMEM)) return -ENOMEM;
    if (err < 0) {
        if (!why[0]) error_text(err, why, why_size);
        return -EINVAL;
    }
    return 0;
}

/* The graph's output as a quale format: 0, or -ENOTSUP with why. */
static int output_format(struct Filter *f, QualeVideoFormat *format, char *why, size_t why_size)
{
    const enum AVPixelFormat pix_fmt = (enum AVPixelFormat)af.av_buffersink_get_format(f->sink);
    const AVPixFmtDescriptor *d = ff.av_pix_fmt_desc_get(pix_fmt);
    if (!d || !ffmpeg_readable_as_is(d)) {
        snprintf(why, why_size, "the graph puts out %s, which quale does not score: end it in "
                 "format=yuv420p (or another planar YUV or gray layout, 8 to 16 bits, "
                 "little-endian)", d ? d->name : "pictures of no pixel format");
        return -ENOTSUP;
    }
    format->chroma = d->nb_components == 1 ? QUALE_CHROMA_400
                     : d->log2_chroma_w == 0 ? QUALE_CHROMA_444
                     : d->log2_chroma_h == 1 ? QUALE_CHROMA_420 : QUALE_CHROMA_422;
    format->bitdepth = (unsigned)d->comp[0].depth;
    format->width = (unsigned)af.av_buffersink_get_w(f->sink);
    format->height = (unsigned)af.av_buffersink_get_h(f->sink);
    if (quale_video_format_check(format, why, why_size)) return -ENOTSUP;
    return 0;
}

/* The filtered reader around f, its format the graph's output. */
static int wrap(struct Filter *f, struct QualeVideoReader **out, char *why, size_t why_size)
{
    QualeVideoFormat format;
    int err = output_format(f, &format, why, why_size);
    if (err) return err;
    struct QualeVideoReader *r = calloc(1, sizeof(*r));
    if (!r || !(r->name = strdup(f->source->name))) {
        free(r);
        return -ENOMEM;
    }
    if ((err = video_reader_set_layout(r, &format, 0))) {
        const size_t n = strnlen(r->error, why_size - 1);
        memcpy(why, r->error, n);
        why[n] = '\0';
        free(r->name);
        free(r);
        return err;
    }
    const AVRational rate = af.av_buffersink_get_frame_rate(f->sink);
    if (rate.num > 0 && rate.den > 0) {
        r->rate_num = (unsigned)rate.num;
        r->rate_den = (unsigned)rate.den;
    }
    r->bit_rate = f->source->bit_rate;
    r->filter = f;
    r->error[0] = '\0';
    *out = r;
    return 0;
}


/* Why a source cannot take a graph now, or NULL. */
static const char *not_now(const struct QualeVideoReader *s)
{
    if (s->frame || s->state != READER_OK) return "before the first read";
    if (s->scaler || s->shift || s->decodes_on_gpu)
        return "before its size, depth or GPU decoding are set";
    return NULL;
}

int quale_video_filter(QualeVideoReader **reader, const char *graph, char *error,
                       size_t error_size)
{
    char why[1024] = "";
    if (!reader || !*reader || !graph) {
        video_set_error(error, error_size, "quale_video_filter: no %s given", graph ? "reader" : "graph");
        return -EINVAL;
    }
    struct QualeVideoReader *source = *reader;
    const char *when = not_now(source);
    if (when) {
        video_set_error(error, error_size, "%s: a filter graph is set %s", source->name, when);
        return -EBUSY;
    }
    pthread_once(&af_once, af_load);
    if (af_error[0]) {
        video_set_error(error, error_size, "%s: cannot filter: %s", source->name, af_error);
        return -EPROTONOSUPPORT;
    }
    struct Filter *f = calloc(1, sizeof(*f));
    if (!f) {
        video_set_error(error, error_size, "%s: out of memory", source->name);
        return -ENOMEM;
    }
    f->source = source;
    log_capture = why;
    log_capture_size = sizeof(why);
    int err = build_graph(f, graph, why, sizeof(why));
    log_capture = NULL;
    f->in = ff.av_frame_alloc();
    f->out = ff.av_frame_alloc();
    if (!err && (!f->in || !f->out)) err = -ENOMEM;
    if (!err) err = wrap(f, reader, why, sizeof(why));
    if (err) {
        f->source = NULL; /* still the caller's */
        filter_free(f);
        if (err == -ENOMEM) snprintf(why, sizeof(why), "out of memory");
        video_set_error(error, error_size, "%s: %s '%s': %s", source->name,
                 err == -EINVAL ? "FFmpeg refuses the filter graph" : "the filter graph",
                 graph, why);
        return err;
    }
    quale_video_set_planes(source, ~0u); /* the graph reads every plane */
    return 0;
}

/* The graph's frame f into pic as the reader's layout, shifted left by
 * r->shift (set_bitdepth), the planes of r->plane_mask. */
static int copy_out(struct QualeVideoReader *r, const AVFrame *f, QualePicture *pic)
{
    if (f->width != (int)r->format.width || f->height != (int)r->format.height ||
        f->format != af.av_buffersink_get_format(r->filter->sink))
        return video_reader_fail(r, -EPROTO, "frame %llu: the filter graph put out %dx%d "
                                 "where it began at %ux%u (its size or format changed)",
                                 (unsigned long long)r->frame, f->width, f->height,
                                 r->format.width, r->format.height);
    const unsigned bytes = r->file_bitdepth > 8 ? 2 : 1;
    for (unsigned p = 0; p < r->plane_count; p++) {
        if (!(r->plane_mask >> p & 1)) continue;
        for (unsigned y = 0; y < r->plane_height[p]; y++) {
            const uint8_t *src = f->data[p] + (size_t)y * (size_t)f->linesize[p];
            uint8_t *dst = (uint8_t *)pic->data[p] + (size_t)y * (size_t)pic->stride[p];
            if (!r->shift) {
                memcpy(dst, src, (size_t)r->plane_width[p] * bytes);
                continue;
            }
            uint16_t *d = (uint16_t *)(void *)dst;
            for (unsigned x = 0; x < r->plane_width[p]; x++)
                d[x] = (uint16_t)((bytes == 1 ? src[x]
                                   : ((const uint16_t *)(const void *)src)[x]) << r->shift);
        }
    }
    return 0;
}

/* The source's next frame into the graph (the end of the stream when it
 * has none): 0, or a negative errno with the reason in r->error. */
static int feed(struct QualeVideoReader *r)
{
    struct Filter *f = r->filter;
    struct QualeVideoReader *s = f->source;
    AVFrame *in = f->in;
    in->format = ffmpeg_layout_of(&s->format);
    in->width = (int)s->format.width;
    in->height = (int)s->format.height;
    if (ff.av_frame_get_buffer(in, 0) < 0) return video_reader_fail(r, -ENOMEM, "out of memory");
    /* The source reads straight into the frame's planes. */
    QualePicture view = { .format = s->format, .plane_count = s->plane_count };
    for (unsigned p = 0; p < s->plane_count; p++) {
        view.plane_width[p] = s->plane_width[p];
        view.plane_height[p] = s->plane_height[p];
        view.stride[p] = in->linesize[p];
        view.data[p] = in->data[p];
    }
    const int got = quale_video_read(s, &view);
    int err = 0;
    if (got > 0) {
        in->pts = f->pts++;
        /* what yadif's parity=auto reads (progressive: top field first) */
        in->interlaced_frame = s->field_order != READER_PROGRESSIVE;
        in->top_field_first = s->field_order == READER_FIELDS_TOP_FIRST;
        err = af.av_buffersrc_add_frame_flags(f->buffer, in, 0);
    } else if (got == 0) {
        /* The stream ends where a frame after the last would begin, as the
         * ffmpeg tool tells its graph: fps fills the last frame's time. */
        f->source_ended = true;
        err = af.av_buffersrc_close(f->buffer, f->pts, 0);
    }
    ff.av_frame_unref(in);
    if (got < 0) {
        snprintf(r->error, sizeof(r->error), "%s", quale_video_error(s));
        return got;
    }
    return err < 0 ? err : 0;
}

int filter_read(struct QualeVideoReader *r, QualePicture *pic)
{
    struct Filter *f = r->filter;
    char why[1024] = "";
    r->error[0] = '\0'; /* set again only by this read's failure */
    log_capture = why;
    log_capture_size = sizeof(why);
    int ret;
    for (;;) {
        ret = af.av_buffersink_get_frame(f->sink, f->out);
        if (ret >= 0) {
            ret = pic ? copy_out(r, f->out, pic) : 0;
            ff.av_frame_unref(f->out);
            ret = ret < 0 ? ret : 1;
            break;
        }
        if (ret == AVERROR_EOF) {
            ret = 0;
            break;
        }
        if (ret != AVERROR(EAGAIN) || f->source_ended) break;
        ret = feed(r);
        if (ret < 0) break;
    }
    log_capture = NULL;
    if (ret < 0 && !r->error[0]) {
        if (!why[0]) error_text(ret, why, sizeof(why));
        return video_reader_fail(r, ret == AVERROR(ENOMEM) ? -ENOMEM : -EPROTO,
                                 "frame %llu: the filter graph failed (%s)",
                                 (unsigned long long)r->frame, why);
    }
    return ret;
}

#else /* no FFmpeg or no libavfilter headers at build time */

int quale_video_filter(QualeVideoReader **reader, const char *graph, char *error,
                       size_t error_size)
{
    (void)graph;
    if (!error || !error_size) return -EPROTONOSUPPORT;
    snprintf(error, error_size, "%s: cannot filter: this build of quale has no libavfilter "
             "(its headers were not found when it was built)",
             reader && *reader ? (*reader)->name : "quale_video_filter");
    return -EPROTONOSUPPORT;
}

void filter_close(struct QualeVideoReader *r)
{
    (void)r;
}

struct QualeVideoReader *filter_source(const struct QualeVideoReader *r)
{
    (void)r;
    return NULL;
}

int filter_read(struct QualeVideoReader *r, QualePicture *pic)
{
    (void)pic;
    return video_reader_fail(r, -EPROTONOSUPPORT, "no filter graphs in this build");
}

#endif
