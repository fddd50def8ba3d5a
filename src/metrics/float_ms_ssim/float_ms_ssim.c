/*
 * Multi-scale SSIM ("float_ms_ssim"): libvmaf's floating-point MS-SSIM of
 * the luma plane (Wang's, with IQA's SSIM of iqa.c at every scale).
 *
 * Scale 0 is the luma on the 8-bit float scale (picture_float.h); each next
 * scale is the previous one filtered with the 9 x 9 low-pass of the 9/7
 * biorthogonal wavelet (libvmaf's 2-D table, float products in a double
 * sum, borders mirrored) at every other sample, w / 2 (+1 if w is odd) by
 * h / 2 (+1 if h is odd).  At each of the 5 scales the mean luminance l,
 * contrast c and structure s of SSIM (float) give
 *   ms_ssim = prod over scales of l^alpha c^beta s^gamma
 * (double), alpha = 0 except 0.1333 at scale 4, beta = gamma = 0.0448,
 * 0.2856, 0.3001, 0.2363, 0.1333.  enable_lcs also writes l, c and s of
 * every scale (float_ms_ssim_l_scale0 ...); enable_db and clip_db as for
 * float_ssim.
 *
 * libvmaf refuses a picture whose sides, halved 4 times (rounding down),
 * fall below the 11-sample window: both sides must be at least 176.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "float_ms_ssim.h"
#include "metrics/common/iqa.h"
#include "metrics/common/picture_float.h"
#include "metrics/common/scratch.h"

static const float ms_ssim_lpf[MS_SSIM_LPF_TAPS * MS_SSIM_LPF_TAPS] = { MS_SSIM_LPF };

/* Wang's exponents per scale. */
static const float ms_ssim_alpha[MS_SSIM_SCALES] = { 0.0000f, 0.0000f, 0.0000f, 0.0000f, 0.1333f };
static const float ms_ssim_beta[MS_SSIM_SCALES] = { 0.0448f, 0.2856f, 0.3001f, 0.2363f, 0.1333f };
static const float ms_ssim_gamma[MS_SSIM_SCALES] = { 0.0448f, 0.2856f, 0.3001f, 0.2363f, 0.1333f };

/* In libvmaf's order of writing. */
static const char *const ms_ssim_keys[FLOAT_MS_SSIM_KEY_COUNT + 1] = {
    "float_ms_ssim",
    "float_ms_ssim_l_scale0", "float_ms_ssim_l_scale1", "float_ms_ssim_l_scale2",
    "float_ms_ssim_l_scale3", "float_ms_ssim_l_scale4",
    "float_ms_ssim_c_scale0", "float_ms_ssim_c_scale1", "float_ms_ssim_c_scale2",
    "float_ms_ssim_c_scale3", "float_ms_ssim_c_scale4",
    "float_ms_ssim_s_scale0", "float_ms_ssim_s_scale1", "float_ms_ssim_s_scale2",
    "float_ms_ssim_s_scale3", "float_ms_ssim_s_scale4",
    NULL,
};

static const MetricOption ms_ssim_options[] = {
    IQA_SSIM_OUTPUT_OPTIONS(FloatMsSsimState, "MS-SSIM"),
    { 0 },
};

int float_ms_ssim_setup(FloatMsSsimState *s, const QualeVideoFormat *f, char *error,
                        size_t error_size)
{
    if (f->width < MS_SSIM_MIN_SIDE || f->height < MS_SSIM_MIN_SIDE) {
        snprintf(error, error_size,
                 "float_ms_ssim: cannot score %ux%u video: its %d scales need "
                 "both sides at least %d luma samples (the %dx%d SSIM window "
                 "at a sixteenth of the size)",
                 f->width, f->height, MS_SSIM_SCALES, MS_SSIM_MIN_SIDE,
                 IQA_GAUSSIAN_TAPS, IQA_GAUSSIAN_TAPS);
        return -EINVAL;
    }
    s->bitdepth = f->bitdepth;
    s->w[0] = (int)f->width;
    s->h[0] = (int)f->height;
    for (int i = 1; i < MS_SSIM_SCALES; i++) {
        s->w[i] = iqa_decimated_size(s->w[i - 1], 2);
        s->h[i] = iqa_decimated_size(s->h[i - 1], 2);
    }

    s->max_db = iqa_db_cap(s->clip_db, f->bitdepth, f->width, f->height);
    return 0;
}

static int ms_ssim_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    FloatMsSsimState *s = state;
    int err = picture_float_check(f, "float_ms_ssim", sink);
    if (err) return err;
    char error[256];
    if ((err = float_ms_ssim_setup(s, f, error, sizeof(error)))) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s", error);
        return err;
    }
    iqa_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));
    return feature_sink_declare_keys(sink, ms_ssim_keys,
                                     s->enable_lcs ? FLOAT_MS_SSIM_KEY_COUNT : 1, s->key);
}

unsigned float_ms_ssim_values(const FloatMsSsimState *s, const IqaSsimMeans m[MS_SSIM_SCALES],
                              double value[FLOAT_MS_SSIM_KEY_COUNT])
{
    double ms_ssim = 1.0;
    for (int i = 0; i < MS_SSIM_SCALES; i++)
        ms_ssim *= pow(m[i].l, ms_ssim_alpha[i]) * pow(m[i].c, ms_ssim_beta[i]) *
                   pow(m[i].s, ms_ssim_gamma[i]);

    value[FLOAT_MS_SSIM_KEY_MS_SSIM] = iqa_db_score(ms_ssim, s->enable_db, s->max_db);
    if (!s->enable_lcs) return 1;
    for (int i = 0; i < MS_SSIM_SCALES; i++) {
        value[FLOAT_MS_SSIM_KEY_L0 + i] = m[i].l;
        value[FLOAT_MS_SSIM_KEY_L0 + MS_SSIM_SCALES + i] = m[i].c;
        value[FLOAT_MS_SSIM_KEY_L0 + 2 * MS_SSIM_SCALES + i] = m[i].s;
    }
    return FLOAT_MS_SSIM_KEY_COUNT;
}

int float_ms_ssim_write(const FloatMsSsimState *s, FeatureSink *sink, unsigned index,
                        const IqaSsimMeans m[MS_SSIM_SCALES])
{
    double value[FLOAT_MS_SSIM_KEY_COUNT];
    const unsigned count = float_ms_ssim_values(s, m, value);
    /* libvmaf's order of writing: ms_ssim, then l, c and s of each scale */
    int err = feature_sink_put(sink, s->key[FLOAT_MS_SSIM_KEY_MS_SSIM], index,
                               value[FLOAT_MS_SSIM_KEY_MS_SSIM]);
    for (unsigned i = 0; i < MS_SSIM_SCALES && !err && count > 1; i++) {
        for (unsigned q = 0; q < 3 && !err; q++) {
            const unsigned k = FLOAT_MS_SSIM_KEY_L0 + q * MS_SSIM_SCALES + i;
            err = feature_sink_put(sink, s->key[k], index, value[k]);
        }
    }
    return err;
}

/* A padded float picture of one scale. */
typedef struct ScaleImage {
    float *data;     /* sample 0 of row 0 */
    size_t stride;   /* in floats */
} ScaleImage;

/* Per worker: both pictures at every scale, the SSIM rows, the
 * decimation's work memory. */
typedef struct FloatMsSsimScratch {
    float *memory;
    ScaleImage ref[MS_SSIM_SCALES], dist[MS_SSIM_SCALES];
    IqaSsim ssim;
    void *decimate_work;
} FloatMsSsimScratch;

static void ms_ssim_scratch_free(void *scratch)
{
    FloatMsSsimScratch *t = scratch;
    if (t) iqa_ssim_free(&t->ssim);
    SCRATCH_FREE(t, t->memory, t->decimate_work);
}

static int ms_ssim_scratch_alloc(const void *state, void **scratch)
{
    const FloatMsSsimState *s = state;
    FloatMsSsimScratch *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;

    size_t total = 0;
    size_t stride[MS_SSIM_SCALES];
    for (int i = 0; i < MS_SSIM_SCALES; i++) {
        stride[i] = quale_align((size_t)s->w[i] + 2 * IQA_PAD, QUALE_ALIGNMENT / sizeof(float));
        total += 2 * stride[i] * (size_t)s->h[i];
    }
    t->memory = quale_aligned_alloc(total * sizeof(float));
    t->decimate_work =
        quale_aligned_alloc(iqa_decimate_work_size(s->w[1], MS_SSIM_LPF_TAPS, 2));
    int err = iqa_ssim_alloc(&t->ssim, s->w[0], &s->dsp);
    if (err || !t->memory || !t->decimate_work) {
        ms_ssim_scratch_free(t);
        return -ENOMEM;
    }
    float *p = t->memory;
    for (int i = 0; i < MS_SSIM_SCALES; i++) {
        t->ref[i] = (ScaleImage){ p + IQA_PAD, stride[i] };
        p += stride[i] * (size_t)s->h[i];
        t->dist[i] = (ScaleImage){ p + IQA_PAD, stride[i] };
        p += stride[i] * (size_t)s->h[i];
    }
    *scratch = t;
    return 0;
}

static float *image_row(const ScaleImage *img, int y)
{
    return img->data + (size_t)y * img->stride;
}

/* Scale i + 1 of a picture from scale i. */
static void ms_ssim_decimate(const FloatMsSsimState *s, FloatMsSsimScratch *t,
                             const ScaleImage *src, const ScaleImage *dst, int i)
{
    const int centre = MS_SSIM_LPF_TAPS / 2;
    const float *rows[MS_SSIM_LPF_TAPS];
    for (int y = 0; y < s->h[i + 1]; y++) {
        for (int v = 0; v < MS_SSIM_LPF_TAPS; v++)
            rows[v] = image_row(src, iqa_mirror(2 * y + v - centre, s->h[i]));
        float *out = image_row(dst, y);
        s->dsp.decimate_row(rows, ms_ssim_lpf, MS_SSIM_LPF_TAPS, 2, s->w[i + 1], out,
                            t->decimate_work);
        iqa_pad_row(out, s->w[i + 1], centre);
    }
}

static int ms_ssim_extract(const void *state, void *scratch, const MetricFrame *frame,
                           FeatureSink *sink)
{
    const FloatMsSsimState *s = state;
    FloatMsSsimScratch *t = scratch;
    const int pad = MS_SSIM_LPF_TAPS / 2;

    for (int y = 0; y < s->h[0]; y++) {
        float *ref = image_row(&t->ref[0], y), *dist = image_row(&t->dist[0], y);
        picture_float_row(frame->ref, 0, (unsigned)y, 0.0f, ref);
        picture_float_row(frame->dist, 0, (unsigned)y, 0.0f, dist);
        iqa_pad_row(ref, s->w[0], pad);
        iqa_pad_row(dist, s->w[0], pad);
    }
    for (int i = 0; i + 1 < MS_SSIM_SCALES; i++) {
        ms_ssim_decimate(s, t, &t->ref[i], &t->ref[i + 1], i);
        ms_ssim_decimate(s, t, &t->dist[i], &t->dist[i + 1], i);
    }

    IqaSsimMeans m[MS_SSIM_SCALES];
    for (int i = 0; i < MS_SSIM_SCALES; i++) {
        iqa_ssim_begin(&t->ssim, s->w[i], s->h[i]);
        for (int y = 0; y < s->h[i]; y++)
            iqa_ssim_push_row(&t->ssim, image_row(&t->ref[i], y), image_row(&t->dist[i], y));
        m[i] = iqa_ssim_end(&t->ssim);
    }
    return float_ms_ssim_write(s, sink, frame->index, m);
}

static const MetricModelFeature float_ms_ssim_model_features[] = {
    { "float_ms_ssim", "float_ms_ssim" },
    { NULL, NULL },
};

const Metric metric_float_ms_ssim = {
    .name = "float_ms_ssim",
    .keys = ms_ssim_keys,
    .model_features = float_ms_ssim_model_features,
    .options = ms_ssim_options,
    .state_size = sizeof(FloatMsSsimState),
    .flags = METRIC_LUMA_ONLY,
    .init = ms_ssim_init,
    .scratch_alloc = ms_ssim_scratch_alloc,
    .scratch_free = ms_ssim_scratch_free,
    .extract = ms_ssim_extract,
};
