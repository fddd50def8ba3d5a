/*
 * Floating-point PSNR ("float_psnr"): libvmaf's float PSNR of the luma
 * plane, on samples converted to the 8-bit float scale (picture_float.h):
 *   noise = sum of (float)(ref - dist)^2, in double, / (w h)
 *   float_psnr = min(10 log10(peak^2 / max(noise, 1e-10)), psnr_max)
 * with peak = (2^bitdepth - 1) / 2^(bitdepth - 8) (255, 255.75, 255.9375,
 * 255.99609375) and psnr_max = 60, 72, 84 or 108 dB.
 *
 * Up to 12 bits every float square and every partial double sum is exact
 * (picture_float_sums_exact), so the sum is the integer SSE scaled by
 * 2^-2(bitdepth - 8): it is computed so.  At 16 bits the squares round in
 * float, and the sum follows libvmaf's order, sample by sample.
 *
 * The state and the steps its GPU twins share: float_psnr.h.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "float_psnr.h"
#include "metric.h"
#include "metrics/common/picture_float.h"

static const char *const float_psnr_keys[] = { "float_psnr", NULL };

static const MetricOption float_psnr_options[] = { { 0 } };

int float_psnr_check(const QualeVideoFormat *f, FeatureSink *sink)
{
    return picture_float_check(f, "float_psnr", sink);
}

double float_psnr_noise(const FloatPsnrState *s, uint64_t units)
{
    return (double)units / ((double)s->scaler * s->scaler);
}

int float_psnr_write(const FloatPsnrState *s, FeatureSink *sink, const MetricFrame *frame,
                     double noise)
{
    noise /= (double)frame->ref->plane_width[0] * frame->ref->plane_height[0];
    const double psnr = QUALE_MIN(10. * log10(s->peak * s->peak / QUALE_MAX(noise, 1e-10)),
                                  s->psnr_max);
    return feature_sink_put(sink, s->key, frame->index, psnr);
}

static int float_psnr_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    FloatPsnrState *s = state;
    int err = float_psnr_check(f, sink);
    if (err) return err;
    s->peak = picture_float_peak(f->bitdepth);
    s->psnr_max = picture_float_psnr_max(f->bitdepth);
    s->scaler = picture_float_scaler(f->bitdepth);
    s->exact_sums = picture_float_sums_exact(f);
    return feature_sink_declare(sink, float_psnr_keys[0], &s->key);
}

/* The integer SSE of the luma planes. */
PICTURE_FLOAT_INLINE uint64_t luma_sse(const QualePicture *a, const QualePicture *b, bool hbd)
{
    uint64_t sse = 0;
    for (unsigned y = 0; y < a->plane_height[0]; y++) {
        const void *ra = picture_row(a, 0, y), *rb = picture_row(b, 0, y);
        uint64_t row = 0;
        for (unsigned x = 0; x < a->plane_width[0]; x++) {
            const int64_t e = (int64_t)picture_sample(ra, x, hbd) - picture_sample(rb, x, hbd);
            row += (uint64_t)(e * e);
        }
        sse += row;
    }
    return sse;
}

/* libvmaf's sum, in its order: float differences and squares, double sum. */
PICTURE_FLOAT_INLINE double luma_noise_float(const QualePicture *a, const QualePicture *b,
                                             float scaler, bool hbd)
{
    double noise = 0.0;
    for (unsigned y = 0; y < a->plane_height[0]; y++) {
        const void *ra = picture_row(a, 0, y), *rb = picture_row(b, 0, y);
        for (unsigned x = 0; x < a->plane_width[0]; x++) {
            const float diff = (float)picture_sample(ra, x, hbd) / scaler -
                               (float)picture_sample(rb, x, hbd) / scaler;
            noise += (double)(diff * diff);
        }
    }
    return noise;
}

static int float_psnr_extract(const void *state, void *scratch, const MetricFrame *frame,
                              FeatureSink *sink)
{
    const FloatPsnrState *s = state;
    const QualePicture *ref = frame->ref, *dist = frame->dist;
    const bool hbd = ref->format.bitdepth > 8;

    double noise;
    if (s->exact_sums) {
        const uint64_t sse = hbd ? luma_sse(ref, dist, true) : luma_sse(ref, dist, false);
        noise = float_psnr_noise(s, sse);
    } else {
        noise = hbd ? luma_noise_float(ref, dist, s->scaler, true)
                    : luma_noise_float(ref, dist, s->scaler, false);
    }
    return float_psnr_write(s, sink, frame, noise);
}

static const MetricModelFeature float_psnr_model_features[] = {
    { "float_psnr", "float_psnr" },
    { NULL, NULL },
};

const Metric metric_float_psnr = {
    .name = "float_psnr",
    .keys = float_psnr_keys,
    .model_features = float_psnr_model_features,
    .options = float_psnr_options,
    .state_size = sizeof(FloatPsnrState),
    .flags = METRIC_LUMA_ONLY,
    .init = float_psnr_init,
    .extract = float_psnr_extract,
};
