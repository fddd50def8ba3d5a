/*
 * Anti-noise SNR ("float_ansnr"): libvmaf's float_ansnr and float_anpsnr
 * of the luma plane.
 *
 * The samples become floats on the 8-bit scale less 128 (picture_float.h).
 * The reference is filtered with the 3 x 3 kernel [1 2 1]^T [1 2 1] / 16,
 * the distorted picture with a 5 x 5 kernel of weights / 571; each output
 * is a float sum over kernel rows of float sums along the row.  Outside
 * the picture, index -i reads i and index n - 1 + i reads n - i (libvmaf's
 * mirror: 2 n - idx - 1 past the end, -idx before the start).  Then, with
 * the filtered pictures r and d, in float, row by row,
 *   sig = sum of r^2, noise = sum of (r - d)^2
 * (each row summed on its own, then added to the total), and
 *   float_ansnr  = noise == 0 ? psnr_max : 10 log10(sig / noise)
 *   float_anpsnr = min(10 log10(peak^2 w h / max(noise, 1e-10)), psnr_max)
 * with peak and psnr_max of float_psnr.
 *
 * The 5 x 5 mirror needs 3 samples a side: smaller pictures are refused
 * (libvmaf reads outside the picture there).
 *
 * The filters and the rows' sums are the kernels of a FloatAnsnrDsp: this
 * file's C ones (built from float_ansnr_tmpl.c) or src/metrics/x86/
 * float_ansnr_<isa>.c's, which give every value the same operations in
 * the same order.  Rows are filtered ANSNR_SUM_ROWS at a time and their
 * sums made together (each row's in its own order), then added to the
 * picture's in row order.
 *
 * The state, the weights and the steps its GPU twins share: float_ansnr.h.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "cpu.h"
#include "float_ansnr.h"
#include "metric.h"
#include "metrics/common/picture_float.h"
#include "metrics/common/scratch.h"

/* Source rows kept: the 5 the distorted filter reads. */
#define ANSNR_RING ANSNR_DIS_TAPS
#define ANSNR_PAD (ANSNR_DIS_TAPS / 2)

/* The C kernels. */
#define ANSNR_FN(name) float_ansnr_##name##_c
#include "float_ansnr_tmpl.c"
#undef ANSNR_FN

/* The dsp of one instruction set's kernels. */
#define ANSNR_KERNELS(isa)                                               \
    (FloatAnsnrDsp){ .filter_ref_row = float_ansnr_filter_ref_row_##isa, \
                     .filter_dis_row = float_ansnr_filter_dis_row_##isa, \
                     .row_sums = float_ansnr_row_sums_##isa }

void float_ansnr_dsp_init(FloatAnsnrDsp *dsp, unsigned cpu_flags)
{
    CPU_PICK_KERNELS(*dsp, ANSNR_KERNELS, cpu_flags);
}

static const char *const ansnr_keys[] = { "float_ansnr", "float_anpsnr", NULL };

static const MetricOption ansnr_options[] = { { 0 } };

int float_ansnr_check(const QualeVideoFormat *f, FeatureSink *sink)
{
    return picture_float_check(f, "float_ansnr", sink);
}

int float_ansnr_check_size(unsigned width, unsigned height, char *error, size_t error_size)
{
    if (width >= ANSNR_MIN_SIDE && height >= ANSNR_MIN_SIDE) return 0;
    snprintf(error, error_size,
             "float_ansnr: cannot score %ux%u video: its %dx%d filter needs "
             "at least %ux%u luma samples",
             width, height, ANSNR_DIS_TAPS, ANSNR_DIS_TAPS, ANSNR_MIN_SIDE, ANSNR_MIN_SIDE);
    return -EINVAL;
}

int float_ansnr_write(const FloatAnsnrState *s, FeatureSink *sink, unsigned index, float sig,
                      float noise)
{
    const int w = s->w, h = s->h;
    const double ansnr = noise == 0 ? s->psnr_max : 10.0 * log10(sig / noise);
    const double anpsnr = QUALE_MIN(
        10 * log10(s->peak * s->peak * w * h / QUALE_MAX((double)noise, 1e-10)), s->psnr_max);
    int err = feature_sink_put(sink, s->key_ansnr, index, ansnr);
    if (!err) err = feature_sink_put(sink, s->key_anpsnr, index, anpsnr);
    return err;
}

int float_ansnr_write_rows(const FloatAnsnrState *s, FeatureSink *sink, unsigned index,
                           const float *row_sums)
{
    float sig = 0.0f, noise = 0.0f;
    for (int y = 0; y < s->h; y++) {
        sig += row_sums[y];
        noise += row_sums[s->h + y];
    }
    return float_ansnr_write(s, sink, index, sig, noise);
}

static int ansnr_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    FloatAnsnrState *s = state;
    int err = float_ansnr_check(f, sink);
    if (err) return err;
    char error[256];
    if ((err = float_ansnr_check_size(f->width, f->height, error, sizeof(error)))) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s", error);
        return err;
    }
    s->w = (int)f->width;
    s->h = (int)f->height;
    s->peak = picture_float_peak(f->bitdepth);
    s->psnr_max = picture_float_psnr_max(f->bitdepth);
    float_ansnr_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));
    err = feature_sink_declare(sink, ansnr_keys[0], &s->key_ansnr);
    if (!err) err = feature_sink_declare(sink, ansnr_keys[1], &s->key_anpsnr);
    return err;
}

/* Per worker: the last 5 converted rows of each picture (padded), and
 * ANSNR_SUM_ROWS filtered rows of each. */
typedef struct FloatAnsnrScratch {
    float *ring;        /* 2 x ANSNR_RING rows */
    size_t stride;      /* in floats */
    float *ref_filtered, *dis_filtered;
    size_t filtered_stride; /* in floats */
} FloatAnsnrScratch;

static void ansnr_scratch_free(void *scratch)
{
    FloatAnsnrScratch *t = scratch;
    SCRATCH_FREE(t, t->ring, t->ref_filtered, t->dis_filtered);
}

static int ansnr_scratch_alloc(const void *state, void **scratch)
{
    const FloatAnsnrState *s = state;
    FloatAnsnrScratch *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    /* ANSNR_PAD floats before a row would misalign it: keep a vector */
    t->stride = quale_align((size_t)s->w + 2 * QUALE_ALIGNMENT / sizeof(float),
                            QUALE_ALIGNMENT / sizeof(float));
    t->ring = quale_aligned_alloc(2 * ANSNR_RING * t->stride * sizeof(float));
    t->filtered_stride = quale_align((size_t)s->w, QUALE_ALIGNMENT / sizeof(float));
    const size_t filtered = ANSNR_SUM_ROWS * t->filtered_stride * sizeof(float);
    t->ref_filtered = quale_aligned_alloc(filtered);
    t->dis_filtered = quale_aligned_alloc(filtered);
    return scratch_hand_over(scratch, t, t->ring && t->ref_filtered && t->dis_filtered,
                             ansnr_scratch_free);
}

/* libvmaf's ANSNR mirror. */
static inline int ansnr_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 1 : i;
}

/* The ring row of source row y of picture p (0 ref, 1 distorted). */
static float *ring_row(const FloatAnsnrScratch *t, int p, int y)
{
    const size_t offset = QUALE_ALIGNMENT / sizeof(float);
    return t->ring + ((size_t)p * ANSNR_RING + (size_t)(y % ANSNR_RING)) * t->stride + offset;
}

/* Converts row y of both pictures into the ring, with the mirror past
 * each end. */
static void load_row(const FloatAnsnrState *s, FloatAnsnrScratch *t, const MetricFrame *frame,
                     int y)
{
    for (int p = 0; p < 2; p++) {
        float *row = ring_row(t, p, y);
        picture_float_row(p ? frame->dist : frame->ref, 0, (unsigned)y, ANSNR_OFFSET, row);
        for (int i = 1; i <= ANSNR_PAD; i++) {
            row[-i] = row[ansnr_mirror(-i, s->w)];
            row[s->w - 1 + i] = row[ansnr_mirror(s->w - 1 + i, s->w)];
        }
    }
}

static int ansnr_extract(const void *state, void *scratch, const MetricFrame *frame,
                         FeatureSink *sink)
{
    const FloatAnsnrState *s = state;
    FloatAnsnrScratch *t = scratch;
    const int w = s->w, h = s->h;

    for (int y = 0; y < ANSNR_PAD; y++) load_row(s, t, frame, y);

    float sig = 0.0f, noise = 0.0f;
    for (int y0 = 0; y0 < h; y0 += ANSNR_SUM_ROWS) {
        const int rows = QUALE_MIN(ANSNR_SUM_ROWS, h - y0);
        for (int y = y0; y < y0 + rows; y++) {
            if (y + ANSNR_PAD < h) load_row(s, t, frame, y + ANSNR_PAD);

            const float *ref_rows[ANSNR_REF_TAPS], *dis_rows[ANSNR_DIS_TAPS];
            for (int i = 0; i < ANSNR_REF_TAPS; i++)
                ref_rows[i] = ring_row(t, 0, ansnr_mirror(y - ANSNR_REF_TAPS / 2 + i, h));
            for (int i = 0; i < ANSNR_DIS_TAPS; i++)
                dis_rows[i] = ring_row(t, 1, ansnr_mirror(y - ANSNR_DIS_TAPS / 2 + i, h));
            const size_t at = (size_t)(y - y0) * t->filtered_stride;
            s->dsp.filter_ref_row(ref_rows, t->ref_filtered + at, w);
            s->dsp.filter_dis_row(dis_rows, t->dis_filtered + at, w);
        }
        float sig_rows[ANSNR_SUM_ROWS], noise_rows[ANSNR_SUM_ROWS];
        s->dsp.row_sums(t->ref_filtered, t->dis_filtered, t->filtered_stride, rows, w, sig_rows,
                        noise_rows);
        /* the picture's sums: the rows' in row order */
        for (int i = 0; i < rows; i++) {
            sig += sig_rows[i];
            noise += noise_rows[i];
        }
    }
    return float_ansnr_write(s, sink, frame->index, sig, noise);
}

static const MetricModelFeature float_ansnr_model_features[] = {
    { "float_ansnr", "float_ansnr" },
    { "float_anpsnr", "float_anpsnr" },
    { NULL, NULL },
};

const Metric metric_float_ansnr = {
    .name = "float_ansnr",
    .keys = ansnr_keys,
    .model_features = float_ansnr_model_features,
    .options = ansnr_options,
    .state_size = sizeof(FloatAnsnrState),
    .flags = METRIC_LUMA_ONLY,
    .init = ansnr_init,
    .scratch_alloc = ansnr_scratch_alloc,
    .scratch_free = ansnr_scratch_free,
    .extract = ansnr_extract,
};
