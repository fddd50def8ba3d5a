/*
 * Moments ("float_moment"): libvmaf's first and second moments of the luma
 * planes on the 8-bit float scale (picture_float.h):
 *   float_moment_ref1st = sum of ref / (w h), float_moment_dis1st likewise,
 *   float_moment_ref2nd = sum of (float)(ref * ref) / (w h), ..._dis2nd,
 * each sum in double.
 *
 * Up to 12 bits every sample, float square and partial double sum is exact
 * (picture_float_sums_exact), so the sums are integer sums scaled by a
 * power of two: they are computed so.  At 16 bits the squares round in
 * float, and the sums follow libvmaf's order, sample by sample.
 *
 * The state and the steps its GPU twins share: float_moment.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "float_moment.h"
#include "metric.h"
#include "metrics/common/picture_float.h"

/* In libvmaf's order of writing. */
static const char *const moment_keys[FLOAT_MOMENT_KEYS + 1] = {
    "float_moment_ref1st", "float_moment_dis1st",
    "float_moment_ref2nd", "float_moment_dis2nd", NULL,
};

static const MetricOption moment_options[] = { { 0 } };

int float_moment_check(const QualeVideoFormat *f, FeatureSink *sink)
{
    return picture_float_check(f, "float_moment", sink);
}

FloatMomentSums float_moment_sums(const FloatMomentState *s, uint64_t first, uint64_t second)
{
    const double sc = s->scaler;
    return (FloatMomentSums){ (double)first / sc, (double)second / (sc * sc) };
}

int float_moment_write(const FloatMomentState *s, FeatureSink *sink, const MetricFrame *frame,
                       FloatMomentSums ref, FloatMomentSums dis)
{
    const double n = (double)frame->ref->plane_width[0] * frame->ref->plane_height[0];
    const double value[FLOAT_MOMENT_KEYS] = {
        [FLOAT_MOMENT_REF1] = ref.first / n, [FLOAT_MOMENT_DIS1] = dis.first / n,
        [FLOAT_MOMENT_REF2] = ref.second / n, [FLOAT_MOMENT_DIS2] = dis.second / n,
    };
    int err = 0;
    for (unsigned k = 0; k < FLOAT_MOMENT_KEYS && !err; k++)
        err = feature_sink_put(sink, s->key[k], frame->index, value[k]);
    return err;
}

static int moment_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    FloatMomentState *s = state;
    int err = float_moment_check(f, sink);
    if (err) return err;
    s->scaler = picture_float_scaler(f->bitdepth);
    s->exact_sums = picture_float_sums_exact(f);
    return feature_sink_declare_keys(sink, moment_keys, FLOAT_MOMENT_KEYS, s->key);
}

/* Exact: integer sums, scaled. */
PICTURE_FLOAT_INLINE FloatMomentSums luma_sums_exact(const FloatMomentState *s,
                                                     const QualePicture *pic, bool hbd)
{
    uint64_t first = 0, second = 0;
    for (unsigned y = 0; y < pic->plane_height[0]; y++) {
        const void *row = picture_row(pic, 0, y);
        for (unsigned x = 0; x < pic->plane_width[0]; x++) {
            const uint64_t d = picture_sample(row, x, hbd);
            first += d;
            second += d * d;
        }
    }
    return float_moment_sums(s, first, second);
}

/* libvmaf's sums, in its order. */
PICTURE_FLOAT_INLINE FloatMomentSums luma_sums_float(const QualePicture *pic, float scaler,
                                                     bool hbd)
{
    double first = 0.0, second = 0.0;
    for (unsigned y = 0; y < pic->plane_height[0]; y++) {
        const void *row = picture_row(pic, 0, y);
        for (unsigned x = 0; x < pic->plane_width[0]; x++) {
            const float v = (float)picture_sample(row, x, hbd) / scaler;
            first += v;
            second += (double)(v * v);
        }
    }
    return (FloatMomentSums){ first, second };
}

static FloatMomentSums luma_sums(const FloatMomentState *s, const QualePicture *pic)
{
    const bool hbd = pic->format.bitdepth > 8;
    if (s->exact_sums)
        return hbd ? luma_sums_exact(s, pic, true) : luma_sums_exact(s, pic, false);
    return hbd ? luma_sums_float(pic, s->scaler, true) : luma_sums_float(pic, s->scaler, false);
}

static int moment_extract(const void *state, void *scratch, const MetricFrame *frame,
                          FeatureSink *sink)
{
    const FloatMomentState *s = state;
    return float_moment_write(s, sink, frame, luma_sums(s, frame->ref), luma_sums(s, frame->dist));
}

static const MetricModelFeature float_moment_model_features[] = {
    { "float_moment_ref1st", "float_moment_ref1st" },
    { "float_moment_dis1st", "float_moment_dis1st" },
    { "float_moment_ref2nd", "float_moment_ref2nd" },
    { "float_moment_dis2nd", "float_moment_dis2nd" },
    { NULL, NULL },
};

const Metric metric_float_moment = {
    .name = "float_moment",
    .keys = moment_keys,
    .model_features = float_moment_model_features,
    .options = moment_options,
    .state_size = sizeof(FloatMomentState),
    .flags = METRIC_LUMA_ONLY,
    .init = moment_init,
    .extract = moment_extract,
};
