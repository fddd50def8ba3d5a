/*
 * SSIM ("float_ssim"): libvmaf's floating-point SSIM of the luma plane,
 * the IQA implementation with its 11-tap Gaussian window (iqa.c).
 *
 * The luma samples become floats on the 8-bit scale (picture_float.h).
 * Unless the scale option says otherwise, a picture whose smaller side is
 * about 384 samples or more is first shrunk by the factor
 *   scale = max(1, round(min(w, h) / 256))
 * (4 for 1080p, 8 for 2160p): every scale x scale block, mirrored at the
 * borders, averaged with weights 1/scale^2 (float) in a double sum, to a
 * picture of w / scale (+1 if w is odd) by h / scale (+1 if h is odd).
 * float_ssim is then the mean SSIM over the positions where the window
 * fits, rounded to float; with enable_lcs also the means of its
 * luminance, contrast and structure terms (float_ssim_l, _c, _s).  With
 * enable_db the score is written as -10 log10(1 - ssim) dB, capped with
 * clip_db at ceil(10 log10(peak^2 / (0.5 / (w h)))), peak = 2^bitdepth - 1.
 *
 * The window needs 11 x 11 samples after the shrink; smaller pictures are
 * refused (libvmaf would divide by zero or a negative count there).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "float_ssim.h"
#include "metrics/common/iqa.h"
#include "metrics/common/picture_float.h"
#include "metrics/common/scratch.h"

static const char *const ssim_keys[FLOAT_SSIM_KEY_COUNT + 1] = {
    "float_ssim", "float_ssim_l", "float_ssim_c", "float_ssim_s", NULL,
};

static const MetricOption ssim_options[] = {
    IQA_SSIM_OUTPUT_OPTIONS(FloatSsimState, "SSIM"),
    { .name = "scale",
      .help = "decimation scale factor (0=auto, 1=no downscaling, 2-10=explicit)",
      .offset = offsetof(FloatSsimState, scale_option), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 0, .max = IQA_MAX_TAPS },
    { 0 },
};

/* libvmaf's IQA _round(): halves away from zero, by the fraction of a. */
static int iqa_round(float a)
{
    const int sign = a > 0.0f ? 1 : -1;
    return a - (int)a >= 0.5 ? (int)a + sign : (int)a;
}

int float_ssim_setup(FloatSsimState *s, const QualeVideoFormat *f, char *error,
                     size_t error_size)
{
    s->bitdepth = f->bitdepth;
    s->w = (int)f->width;
    s->h = (int)f->height;
    if (s->scale_option > 0) {
        s->scale = s->scale_option;
    } else {
        const int r = iqa_round((float)QUALE_MIN(s->w, s->h) / 256.0f);
        s->scale = r > 1 ? r : 1;
    }
    s->scaled_w = s->scale > 1 ? iqa_decimated_size(s->w, s->scale) : s->w;
    s->scaled_h = s->scale > 1 ? iqa_decimated_size(s->h, s->scale) : s->h;
    if (s->scaled_w < IQA_GAUSSIAN_TAPS || s->scaled_h < IQA_GAUSSIAN_TAPS) {
        snprintf(error, error_size,
                 "float_ssim: cannot score %ux%u video at scale %d: the "
                 "%dx%d picture SSIM sees is smaller than its %dx%d window",
                 f->width, f->height, s->scale, s->scaled_w, s->scaled_h,
                 IQA_GAUSSIAN_TAPS, IQA_GAUSSIAN_TAPS);
        return -EINVAL;
    }
    for (int i = 0; i < s->scale * s->scale; i++)
        s->box[i] = 1.0f / (s->scale * s->scale);

    s->max_db = iqa_db_cap(s->clip_db, f->bitdepth, f->width, f->height);
    return 0;
}

static int ssim_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    FloatSsimState *s = state;
    int err = picture_float_check(f, "float_ssim", sink);
    if (err) return err;
    char error[256];
    if ((err = float_ssim_setup(s, f, error, sizeof(error)))) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s", error);
        return err;
    }
    iqa_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));
    return feature_sink_declare_keys(sink, ssim_keys, s->enable_lcs ? FLOAT_SSIM_KEY_COUNT : 1,
                                     s->key);
}

unsigned float_ssim_values(const FloatSsimState *s, const IqaSsimMeans *m,
                           double value[FLOAT_SSIM_KEY_COUNT])
{
    value[FLOAT_SSIM_KEY_SSIM] = iqa_db_score(m->ssim, s->enable_db, s->max_db);
    if (!s->enable_lcs) return 1;
    value[FLOAT_SSIM_KEY_L] = m->l;
    value[FLOAT_SSIM_KEY_C] = m->c;
    value[FLOAT_SSIM_KEY_S] = m->s;
    return FLOAT_SSIM_KEY_COUNT;
}

int float_ssim_write(const FloatSsimState *s, FeatureSink *sink, unsigned index,
                     const IqaSsimMeans *m)
{
    double value[FLOAT_SSIM_KEY_COUNT];
    const unsigned count = float_ssim_values(s, m, value);
    int err = 0;
    for (unsigned k = 0; k < count && !err; k++)
        err = feature_sink_put(sink, s->key[k], index, value[k]);
    return err;
}

/* Per worker: the SSIM rows, the luma rows of one block row and the two
 * shrunk rows. */
typedef struct FloatSsimScratch {
    IqaSsim ssim;
    float *source;        /* scale rows of w + 2 IQA_PAD floats */
    size_t source_stride;
    float *ref_row, *dist_row;
    void *decimate_work;
} FloatSsimScratch;

static void ssim_scratch_free(void *scratch)
{
    FloatSsimScratch *t = scratch;
    if (t) iqa_ssim_free(&t->ssim);
    SCRATCH_FREE(t, t->source, t->ref_row, t->dist_row, t->decimate_work);
}

static int ssim_scratch_alloc(const void *state, void **scratch)
{
    const FloatSsimState *s = state;
    FloatSsimScratch *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->source_stride = quale_align((size_t)s->w + 2 * IQA_PAD, QUALE_ALIGNMENT / sizeof(float));
    const size_t row = quale_align((size_t)s->scaled_w * sizeof(float), QUALE_ALIGNMENT);
    t->source = quale_aligned_alloc(t->source_stride * sizeof(float) * s->scale);
    t->ref_row = quale_aligned_alloc(row);
    t->dist_row = quale_aligned_alloc(row);
    t->decimate_work =
        quale_aligned_alloc(iqa_decimate_work_size(s->scaled_w, s->scale, s->scale));
    int err = iqa_ssim_alloc(&t->ssim, s->scaled_w, &s->dsp);
    return scratch_hand_over(scratch, t,
                             !err && t->source && t->ref_row && t->dist_row && t->decimate_work,
                             ssim_scratch_free);
}

/* Row y of the shrunk luma of pic: its scale source rows, mirrored, to
 * floats, then the box filter.  The last block of a row can start at w
 * itself (w odd and a multiple of the scale): its taps reach w + centre,
 * one more mirrored sample than the kernel's half width. */
static void shrink_row(const FloatSsimState *s, FloatSsimScratch *t, const QualePicture *pic,
                       int y, float *dst)
{
    const int f = s->scale, centre = f / 2;
    const float *rows[IQA_MAX_TAPS];
    for (int v = 0; v < f; v++) {
        float *row = t->source + (size_t)v * t->source_stride + IQA_PAD;
        picture_float_row(pic, 0, (unsigned)iqa_mirror(y * f + v - centre, s->h), 0.0f, row);
        iqa_pad_row(row, s->w, centre + 1);
        rows[v] = row;
    }
    s->dsp.decimate_row(rows, s->box, f, f, s->scaled_w, dst, t->decimate_work);
}

static int ssim_extract(const void *state, void *scratch, const MetricFrame *frame,
                        FeatureSink *sink)
{
    const FloatSsimState *s = state;
    FloatSsimScratch *t = scratch;

    iqa_ssim_begin(&t->ssim, s->scaled_w, s->scaled_h);
    for (int y = 0; y < s->scaled_h; y++) {
        if (s->scale > 1) {
            shrink_row(s, t, frame->ref, y, t->ref_row);
            shrink_row(s, t, frame->dist, y, t->dist_row);
        } else {
            picture_float_row(frame->ref, 0, (unsigned)y, 0.0f, t->ref_row);
            picture_float_row(frame->dist, 0, (unsigned)y, 0.0f, t->dist_row);
        }
        iqa_ssim_push_row(&t->ssim, t->ref_row, t->dist_row);
    }
    const IqaSsimMeans m = iqa_ssim_end(&t->ssim);
    return float_ssim_write(s, sink, frame->index, &m);
}

static const MetricModelFeature float_ssim_model_features[] = {
    { "float_ssim", "float_ssim" },
    { NULL, NULL },
};

const Metric metric_float_ssim = {
    .name = "float_ssim",
    .keys = ssim_keys,
    .model_features = float_ssim_model_features,
    .options = ssim_options,
    .state_size = sizeof(FloatSsimState),
    .flags = METRIC_LUMA_ONLY,
    .init = ssim_init,
    .scratch_alloc = ssim_scratch_alloc,
    .scratch_free = ssim_scratch_free,
    .extract = ssim_extract,
};
