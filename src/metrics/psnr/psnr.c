/*
 * PSNR per plane (psnr_y, psnr_cb, psnr_cr), as libvmaf's integer "psnr"
 * extractor computes it:
 *   mse  = sum of squared differences / (plane width * plane height)
 *   psnr = min(10 * log10(peak^2 / max(mse, 1e-16)), psnr_max)
 * with peak = 2^bitdepth - 1 (or 255 << (bitdepth - 8) with
 * reduced_hbd_peak) and psnr_max = 6 * bitdepth + 12 dB, or, with min_sse,
 * the ceiling of the PSNR that min_sse would give.  The sums are exact
 * integers, so the result does not depend on the order of the reduction.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "metric.h"
#include "psnr.h"


static const MetricOption psnr_options[] = {
    { .name = "enable_chroma", .help = "also score the chroma planes",
      .offset = offsetof(PsnrState, enable_chroma), .type = QUALE_OPTION_BOOL,
      .default_value.b = true },
    { .name = "enable_mse", .help = "also write the MSE of each plane (mse_y, ...)",
      .offset = offsetof(PsnrState, enable_mse), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { .name = "enable_apsnr", .help = "write the aggregate PSNR of the whole run (apsnr_y, ...)",
      .offset = offsetof(PsnrState, enable_apsnr), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { .name = "reduced_hbd_peak",
      .help = "use 255 << (bitdepth - 8) as the peak, to compare with scaled 8-bit content",
      .offset = offsetof(PsnrState, reduced_hbd_peak), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { .name = "min_sse", .help = "the smallest SSE, which caps the PSNR",
      .offset = offsetof(PsnrState, min_sse), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.0, .min = 0.0, .max = DBL_MAX },
    { 0 },
};

static const char *const psnr_keys[] = {
    "psnr_y", "psnr_cb", "psnr_cr", "mse_y", "mse_cb", "mse_cr", NULL,
};

static int psnr_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    PsnrState *s = state;
    s->planes = (s->enable_chroma && f->chroma != QUALE_CHROMA_400) ? 3 : 1;
    s->peak = s->reduced_hbd_peak ? 255u << (f->bitdepth - 8) : (1u << f->bitdepth) - 1;

    for (unsigned p = 0; p < 3; p++) {
        if (s->min_sse != 0.0) {
            /* libvmaf sizes chroma here with w / 2 and h / 2 (rounding
             * down), unlike the picture planes; keep its numbers. */
            const bool ss_x = f->chroma != QUALE_CHROMA_444;
            const bool ss_y = f->chroma == QUALE_CHROMA_420;
            const unsigned w = (p && ss_x) ? f->width / 2 : f->width;
            const unsigned h = (p && ss_y) ? f->height / 2 : f->height;
            const double mse = s->min_sse / ((double)w * h);
            s->psnr_max[p] = ceil(10. * log10((double)s->peak * s->peak / mse));
        } else {
            s->psnr_max[p] = 6. * f->bitdepth + 12.;
        }
    }

    int err = 0;
    for (unsigned p = 0; p < s->planes && !err; p++) {
        err = feature_sink_declare(sink, psnr_keys[p], &s->psnr_key[p]);
        if (!err && s->enable_mse) err = feature_sink_declare(sink, psnr_keys[3 + p], &s->mse_key[p]);
    }
    for (unsigned p = 0; p < 3; p++) {
        atomic_init(&s->apsnr_sse[p], 0);
        atomic_init(&s->apsnr_pixels[p], 0);
    }
    return err;
}

static uint64_t sse_8bit(const uint8_t *a, ptrdiff_t a_stride, const uint8_t *b,
                         ptrdiff_t b_stride, unsigned w, unsigned h)
{
    uint64_t sse = 0;
    for (unsigned y = 0; y < h; y++) {
        /* A row of 8-bit differences fits 32 bits up to 66051 samples, and
         * our widths stop at 32768: the inner sum vectorises in 32 bits. */
        uint32_t row = 0;
        for (unsigned x = 0; x < w; x++) {
            const int e = a[x] - b[x];
            row += (uint32_t)(e * e);
        }
        sse += row;
        a += a_stride;
        b += b_stride;
    }
    return sse;
}

static uint64_t sse_16bit(const uint16_t *a, ptrdiff_t a_stride, const uint16_t *b,
                          ptrdiff_t b_stride, unsigned w, unsigned h)
{
    uint64_t sse = 0;
    for (unsigned y = 0; y < h; y++) {
        for (unsigned x = 0; x < w; x++) {
            const int64_t e = (int64_t)a[x] - b[x];
            sse += (uint64_t)(e * e);
        }
        a = (const uint16_t *)((const uint8_t *)a + a_stride);
        b = (const uint16_t *)((const uint8_t *)b + b_stride);
    }
    return sse;
}

int psnr_write_plane(const PsnrState *state, FeatureSink *sink, const MetricFrame *frame,
                     unsigned p, uint64_t sse)
{
    PsnrState *s = (PsnrState *)state; /* only the atomics are written */
    const QualePicture *ref = frame->ref;
    const unsigned w = ref->plane_width[p], h = ref->plane_height[p];
    /* libvmaf's 8-bit path hard-codes 255, whatever reduced_hbd_peak says. */
    const double peak = ref->format.bitdepth > 8 ? s->peak : 255.;

    if (s->enable_apsnr) {
        atomic_fetch_add_explicit(&s->apsnr_sse[p], sse, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->apsnr_pixels[p], (uint64_t)w * h, memory_order_relaxed);
    }
    const double mse = (double)sse / ((double)w * h);
    const double psnr = QUALE_MIN(10. * log10(peak * peak / QUALE_MAX(mse, 1e-16)),
                                  s->psnr_max[p]);
    int err = feature_sink_put(sink, s->psnr_key[p], frame->index, psnr);
    if (!err && s->enable_mse) err = feature_sink_put(sink, s->mse_key[p], frame->index, mse);
    return err;
}

static int psnr_extract(const void *state, void *scratch, const MetricFrame *frame,
                        FeatureSink *sink)
{
    const PsnrState *s = state;
    const QualePicture *ref = frame->ref, *dist = frame->dist;
    const bool hbd = ref->format.bitdepth > 8;
    for (unsigned p = 0; p < s->planes; p++) {
        const unsigned w = ref->plane_width[p], h = ref->plane_height[p];
        const uint64_t sse = hbd
            ? sse_16bit(ref->data[p], ref->stride[p], dist->data[p], dist->stride[p], w, h)
            : sse_8bit(ref->data[p], ref->stride[p], dist->data[p], dist->stride[p], w, h);
        int err = psnr_write_plane(s, sink, frame, p, sse);
        if (err) return err;
    }
    return 0;
}

static int psnr_flush(void *state, FeatureSink *sink, unsigned frame_count)
{
    PsnrState *s = state;
    static const char *const apsnr_keys[3] = { "apsnr_y", "apsnr_cb", "apsnr_cr" };
    if (!s->enable_apsnr) return 0;
    const double peak2 = (double)s->peak * s->peak;
    for (unsigned p = 0; p < s->planes; p++) {
        const uint64_t sse = atomic_load(&s->apsnr_sse[p]);
        const uint64_t n = atomic_load(&s->apsnr_pixels[p]);
        const double apsnr = 10. * (log10(peak2) + log10((double)n) - log10((double)sse));
        /* libvmaf forms this product in 64-bit integers before the log. */
        const uint64_t cap = (uint64_t)s->peak * s->peak * n * 2;
        const double apsnr_max = ceil(10. * log10((double)cap));
        int err = feature_sink_set_aggregate(sink, apsnr_keys[p], QUALE_MIN(apsnr, apsnr_max));
        if (err) return err;
    }
    return 0;
}

static int psnr_restart(void *state, FeatureSink *sink)
{
    PsnrState *s = state;
    for (unsigned p = 0; p < 3; p++) {
        atomic_store(&s->apsnr_sse[p], 0);
        atomic_store(&s->apsnr_pixels[p], 0);
    }
    return 0;
}

static const MetricModelFeature psnr_model_features[] = {
    { "psnr_y", "psnr_y" },
    { "psnr_cb", "psnr_cb" },
    { "psnr_cr", "psnr_cr" },
    { NULL, NULL },
};

/* Luma alone without enable_chroma: readers may skip the chroma. */
static unsigned psnr_planes(const void *state)
{
    const PsnrState *s = state;
    return s->enable_chroma ? 7u : 1u;
}

const Metric metric_psnr = {
    .name = "psnr",
    .keys = psnr_keys,
    .model_features = psnr_model_features,
    .options = psnr_options,
    .state_size = sizeof(PsnrState),
    /* libvmaf runs psnr on every frame, subsampled or not: its aggregate
     * PSNR counts them all. */
    .flags = METRIC_EVERY_FRAME | METRIC_WRITES_FIRST,
    .planes = psnr_planes,
    .init = psnr_init,
    .extract = psnr_extract,
    .flush = psnr_flush,
    .restart = psnr_restart,
};
