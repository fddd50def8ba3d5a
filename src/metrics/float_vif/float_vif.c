/*
 * Float VIF: libvmaf's "float_vif" extractor (vif_scale0..3), the
 * floating-point visual information fidelity of the luma plane.
 *
 * The samples become floats on the 8-bit scale less 128
 * (picture_float.h); vif_prescale first resizes the picture with
 * libvmaf's scaler of vif_prescale_method (see "prescaling" below).  Then
 * at each of four scales s:
 *  - the scale's picture: the original at s = 0, else the previous
 *    scale's blurred with this scale's filter and decimated by 2 (even
 *    rows and columns);
 *  - mu1, mu2, and the local second moments xx, yy, xy: the picture(s)
 *    filtered by the scale's Gaussian (17, 9, 5, 3 taps at
 *    vif_kernelscale 1; sigma = taps / 5), separable, mirrored at the
 *    edges (-k -> k, n - 1 + k -> n - 1 - k), vertical pass first, taps
 *    summed from the first;
 *  - per sample, libvmaf's "matching_matlab" statistic: the gain g of the
 *    distorted picture over the reference (capped at
 *    vif_enhn_gain_limit), its noise sv_sq, and
 *      num = log2(1 + g^2 sigma1^2 / (sv_sq + sigma_nsq)),
 *      den = log2(1 + sigma1^2 / sigma_nsq),
 *    or 1 - sigma2^2 sigma_nsq^2 / 255^2 and 1 where sigma1^2 < sigma_nsq,
 *    num 0 where the covariance is negative; log2 is libvmaf's polynomial
 *    approximation;
 *  - num and den summed in float, each row first.
 * vif_scale<s> = num / den (at least vif_scale<s>_min_val for s >= 1;
 * 0 with vif_skip_scale0 at s = 0); with debug also vif (the ratio of the
 * sums over the scales, 1 if the denominator is 0), vif_num, vif_den and
 * every scale's num and den.
 *
 * Every float operation is libvmaf's, with its types (the statistic mixes
 * float and double exactly as libvmaf's C does) and its order (libvmaf's
 * AVX2 convolution does the same operations as its C one).  Only the
 * order of work differs: rows are filtered, scored and decimated as they
 * come, in row bands that run on idle workers, and where gcc or clang
 * vectors exist four samples go through the same operations at once, lane
 * by lane, the statistic's branches as lane selects; each row's sums stay
 * sequential, and the rows are added in row order.
 *
 * float_vif.h holds what the CUDA twin (src/cuda/float_vif.cu) shares with
 * this file: the state, the statistic of one sample, the keys from the
 * per-scale sums.
 *
 * Sizes: every filter must fit its mirror (radius < side) at every scale,
 * which needs 16x16 at vif_kernelscale 1 (2x2 at scale 3); libvmaf reads
 * outside its buffers below that, so smaller pictures are refused.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "metric.h"
#include "float_vif.h"
#include "metrics/common/picture_float.h"
#include "metrics/common/vec4.h"
#include "metrics/common/vif_tools.h"
#include "metrics/common/scratch.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define VIF_SCALES FLOAT_VIF_SCALES
#define VIF_MAX_TAPS FLOAT_VIF_MAX_TAPS

enum {
    KEY_SCALE0 = FLOAT_VIF_KEY_SCALE0,
    KEY_VIF = FLOAT_VIF_KEY_VIF, KEY_NUM = FLOAT_VIF_KEY_NUM, KEY_DEN = FLOAT_VIF_KEY_DEN,
    KEY_NUM_SCALE0 = FLOAT_VIF_KEY_NUM_SCALE0,
    KEY_COUNT = FLOAT_VIF_KEY_COUNT,
};

static const char *const vif_keys[KEY_COUNT + 1] = {
    "vif_scale0", "vif_scale1", "vif_scale2", "vif_scale3",
    /* with debug */
    "vif", "vif_num", "vif_den",
    "vif_num_scale0", "vif_den_scale0", "vif_num_scale1", "vif_den_scale1",
    "vif_num_scale2", "vif_den_scale2", "vif_num_scale3", "vif_den_scale3",
    NULL,
};

/* FloatVifState: float_vif.h */

/* in enum FloatVifPrescale order */

static const MetricOption vif_options[] = {
    { .name = "debug", .help = "debug mode: enable additional output",
      .offset = offsetof(FloatVifState, debug), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { .name = "vif_enhn_gain_limit", .alias = "egl",
      .help = "enhancement gain imposed on vif, must be >= 1.0, "
              "where 1.0 means the gain is completely disabled",
      .offset = offsetof(FloatVifState, enhn_gain_limit), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 100.0, .min = 1.0, .max = 100.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "vif_kernelscale", .alias = "ks",
      .help = "scaling factor for the gaussian kernel (2.0 means multiplying the standard "
              "deviation by 2 and enlarge the kernel size accordingly",
      .offset = offsetof(FloatVifState, kernelscale), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1.0, .min = 0.1, .max = 4.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "vif_prescale", .alias = "ps",
      .help = "scaling factor for the frame (2.0 means making the image twice as large on "
              "each dimension)",
      .offset = offsetof(FloatVifState, prescale), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1.0, .min = 0.1, .max = 4.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "vif_scale1_min_val", .alias = "s1miv",
      .help = "minimum value allowed; smaller values will be set to this value",
      .offset = offsetof(FloatVifState, min_val[1]), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.0, .min = 0.0, .max = 1.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "vif_scale2_min_val", .alias = "s2miv",
      .help = "minimum value allowed; smaller values will be set to this value",
      .offset = offsetof(FloatVifState, min_val[2]), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.0, .min = 0.0, .max = 1.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "vif_scale3_min_val", .alias = "s3miv",
      .help = "minimum value allowed; smaller values will be set to this value",
      .offset = offsetof(FloatVifState, min_val[3]), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.0, .min = 0.0, .max = 1.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "vif_prescale_method", .alias = "pm", .choices = vif_prescale_method_names,
      .help = "scaling method for the frame, supported options: [nearest, bilinear, bicubic, "
              "lanczos4]",
      .offset = offsetof(FloatVifState, prescale_method), .type = QUALE_OPTION_CHOICE,
      .default_value.i = FLOAT_VIF_PRESCALE_NEAREST, .flags = OPTION_FEATURE_PARAM },
    { .name = "vif_sigma_nsq", .alias = "snsq", .help = "neural noise variance",
      .offset = offsetof(FloatVifState, sigma_nsq), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 2.0, .min = 0.0, .max = 5.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "vif_skip_scale0", .alias = "ssclz", .help = "when set, skip scale 0 calculations",
      .offset = offsetof(FloatVifState, skip_scale0), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { 0 },
};

/* ---- the Gaussian filters ------------------------------------------------- */

/* ---- libvmaf's log2 approximation ----------------------------------------- */

static const float log2_poly[9] = { FLOAT_VIF_LOG2_POLY };

/* float_vif_log2() (float_vif.h) is the scalar one. */

/* ---- per worker ------------------------------------------------------------- */

/* The five filtered quantities, in this order in every row array. */
enum { Q_MU1, Q_MU2, Q_XX, Q_YY, Q_XY, Q_COUNT };

typedef struct FloatVifScratch {
    size_t stride[VIF_SCALES];       /* floats */
    float *ref[VIF_SCALES], *dist[VIF_SCALES];
    float *row_sums[VIF_SCALES];     /* each row's num and den sums */
    size_t src_stride;               /* floats */
    float *src;                      /* the picture before a resampling prescale */
    float *vrow[Q_COUNT];            /* vertical pass, padded by the largest radius */
    float *hrow[Q_COUNT];            /* filtered rows */
    size_t pad;
} FloatVifScratch;

static void vif_scratch_free(void *scratch)
{
    FloatVifScratch *t = scratch;
    if (!t) return;
    for (int s = 0; s < VIF_SCALES; s++) {
        quale_aligned_free(t->ref[s]);
        quale_aligned_free(t->dist[s]);
        quale_aligned_free(t->row_sums[s]);
    }
    for (int q = 0; q < Q_COUNT; q++) {
        quale_aligned_free(t->vrow[q]);
        quale_aligned_free(t->hrow[q]);
    }
    quale_aligned_free(t->src);
    free(t);
}

static int vif_scratch_alloc(const void *state, void **scratch)
{
    const FloatVifState *s = state;
    FloatVifScratch *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    bool ok = true;
    for (int k = 0; ok && k < VIF_SCALES; k++) {
        t->stride[k] = quale_align((size_t)s->w[k], QUALE_ALIGNMENT / sizeof(float));
        const size_t plane = t->stride[k] * (size_t)s->h[k] * sizeof(float);
        ok = (t->ref[k] = quale_aligned_alloc(plane)) && (t->dist[k] = quale_aligned_alloc(plane)) &&
             (t->row_sums[k] = quale_aligned_alloc(2 * (size_t)s->h[k] * sizeof(float)));
    }
    int radius = 0;
    for (int k = 0; k < VIF_SCALES; k++) radius = QUALE_MAX(radius, s->taps[k] / 2);
    t->pad = quale_align((size_t)radius, QUALE_ALIGNMENT / sizeof(float));
    const size_t row = ((size_t)s->w[0] + 2 * t->pad) * sizeof(float);
    for (int q = 0; ok && q < Q_COUNT; q++)
        ok = (t->vrow[q] = quale_aligned_alloc(row)) && (t->hrow[q] = quale_aligned_alloc(row));
    if (ok && s->prescale_method != FLOAT_VIF_PRESCALE_NEAREST &&
        (s->w[0] != s->src_w || s->h[0] != s->src_h)) {
        t->src_stride = quale_align((size_t)s->src_w, QUALE_ALIGNMENT / sizeof(float));
        ok = (t->src = quale_aligned_alloc(t->src_stride * (size_t)s->src_h * sizeof(float)));
    }
    return scratch_hand_over(scratch, t, ok, vif_scratch_free);
}

/* ---- filtering ----------------------------------------------------------------- */

/* libvmaf's reflection at the edges: float_vif_mirror() (float_vif.h). */
#define vif_mirror float_vif_mirror

/* Reflects the radius samples past each end of a row of w. */
static void pad_row(float *row, int w, int radius)
{
    for (int k = 1; k <= radius; k++) {
        row[-k] = row[k];
        row[w - 1 + k] = row[w - 1 - k];
    }
}

/* The vectors of four floats: metrics/common/vec4.h. */
#if VEC4_LANES
/* float_vif_log2() of four floats. */
static inline Vec4 vec_log2_approx(Vec4 x)
{
    const Vec4Int bits = (Vec4Int)x;
    const Vec4Int exponent = (bits & vec_set1_int(0x7F800000)) >> 23;
    const Vec4 mantissa = (Vec4)((bits & vec_set1_int(0x007FFFFF)) | vec_set1_int(0x3F800000));
    const Vec4 log_base = __builtin_convertvector(exponent - vec_set1_int(127), Vec4);
    const Vec4 t = mantissa - vec_set1(1.0f);
    Vec4 poly = vec_set1(0.0f);
    for (int i = 0; i < 9; i++) poly = poly * t + vec_set1(log2_poly[i]);
    Vec4 r = log_base + poly;
    r = vec_select(x == vec_set1(0.0f), vec_set1(-INFINITY), r);
    return vec_select(x < vec_set1(0.0f), vec_set1(NAN), r);
}
#endif

/* out[j] = sum over k of f[k] * rows[k][j], the taps from the first. */
static void filter_rows(const float *f, int taps, const float *const *rows, int n, float *out)
{
    int j = 0;
#if VEC4_LANES
    for (; j + 2 * VEC4_LANES <= n; j += 2 * VEC4_LANES) {
        Vec4 a0 = { 0 }, a1 = { 0 };
        for (int k = 0; k < taps; k++) {
            const Vec4 fk = vec_set1(f[k]);
            a0 += fk * vec_load(rows[k] + j);
            a1 += fk * vec_load(rows[k] + j + VEC4_LANES);
        }
        vec_store(out + j, a0);
        vec_store(out + j + VEC4_LANES, a1);
    }
#endif
    for (; j < n; j++) {
        float acc = 0.0f;
        for (int k = 0; k < taps; k++) acc += f[k] * rows[k][j];
        out[j] = acc;
    }
}

/* out[j] = sum over k of f[k] * in[j + k]: a row padded on its left. */
static void filter_row(const float *f, int taps, const float *in, int n, float *out)
{
    int j = 0;
#if VEC4_LANES
    for (; j + 2 * VEC4_LANES <= n; j += 2 * VEC4_LANES) {
        Vec4 a0 = { 0 }, a1 = { 0 };
        for (int k = 0; k < taps; k++) {
            const Vec4 fk = vec_set1(f[k]);
            a0 += fk * vec_load(in + j + k);
            a1 += fk * vec_load(in + j + k + VEC4_LANES);
        }
        vec_store(out + j, a0);
        vec_store(out + j + VEC4_LANES, a1);
    }
#endif
    for (; j < n; j++) {
        float acc = 0.0f;
        for (int k = 0; k < taps; k++) acc += f[k] * in[j + k];
        out[j] = acc;
    }
}

/* Vertical pass of one row for the five quantities of x and y, whose
 * source rows are rx[k] and ry[k]. */
static void vertical5(const float *f, int taps, const float *const *rx, const float *const *ry,
                      int w, float *const vrow[Q_COUNT])
{
    int j = 0;
#if VEC4_LANES
    for (; j + VEC4_LANES <= w; j += VEC4_LANES) {
        Vec4 m1 = { 0 }, m2 = { 0 }, xx = { 0 }, yy = { 0 }, xy = { 0 };
        for (int k = 0; k < taps; k++) {
            const Vec4 fk = vec_set1(f[k]);
            const Vec4 a = vec_load(rx[k] + j), b = vec_load(ry[k] + j);
            m1 += fk * a;
            m2 += fk * b;
            xx += fk * (a * a);
            yy += fk * (b * b);
            xy += fk * (a * b);
        }
        vec_store(vrow[Q_MU1] + j, m1);
        vec_store(vrow[Q_MU2] + j, m2);
        vec_store(vrow[Q_XX] + j, xx);
        vec_store(vrow[Q_YY] + j, yy);
        vec_store(vrow[Q_XY] + j, xy);
    }
#endif
    for (; j < w; j++) {
        float m1 = 0.0f, m2 = 0.0f, xx = 0.0f, yy = 0.0f, xy = 0.0f;
        for (int k = 0; k < taps; k++) {
            const float fk = f[k], a = rx[k][j], b = ry[k][j];
            m1 += fk * a;
            m2 += fk * b;
            xx += fk * (a * a);
            yy += fk * (b * b);
            xy += fk * (a * b);
        }
        vrow[Q_MU1][j] = m1;
        vrow[Q_MU2][j] = m2;
        vrow[Q_XX][j] = xx;
        vrow[Q_YY][j] = yy;
        vrow[Q_XY][j] = xy;
    }
}

/* The source rows of output row y: y - radius + k, mirrored. */
static void mirrored_rows(const float *plane, size_t stride, int h, int y, int taps,
                          const float **rows)
{
    for (int k = 0; k < taps; k++) rows[k] = plane + (size_t)vif_mirror(y - taps / 2 + k, h) * stride;
}

/* Horizontal pass of the five padded rows. */
static void horizontal5(const float *f, int taps, float *const vrow[Q_COUNT], int w,
                        float *const hrow[Q_COUNT])
{
    const int radius = taps / 2;
    for (int q = 0; q < Q_COUNT; q++) {
        pad_row(vrow[q], w, radius);
        filter_row(f, taps, vrow[q] - radius, w, hrow[q]);
    }
}

/* Rows [i0, i1) of the next scale: x and y blurred by filter f at their
 * even rows and columns (libvmaf filters every sample, then keeps these).
 * va, vb and tmp are rows of w, va and vb padded. */
static void decimate(const float *f, int taps, const float *x, const float *y, size_t stride,
                     int w, int h, int i0, int i1, float *nx, float *ny, size_t nstride,
                     float *va, float *vb, float *tmp)
{
    const int radius = taps / 2;
    const float *rows[VIF_MAX_TAPS];
    for (int i = i0; i < i1; i++) {
        float *const v[2] = { va, vb };
        float *const out[2] = { nx + (size_t)i * nstride, ny + (size_t)i * nstride };
        const float *const plane[2] = { x, y };
        for (int p = 0; p < 2; p++) {
            mirrored_rows(plane[p], stride, h, 2 * i, taps, rows);
            filter_rows(f, taps, rows, w, v[p]);
            pad_row(v[p], w, radius);
            filter_row(f, taps, v[p] - radius, w, tmp);
            for (int j = 0; j < w / 2; j++) out[p][j] = tmp[2 * j];
        }
    }
}

/* ---- the statistic --------------------------------------------------------------- */

/* libvmaf's vif_statistic_s() for one row, summed in float. */
static void statistic_row(const FloatVifState *s, float *const hrow[Q_COUNT], int w,
                          float *num, float *den)
{
    const float gain_limit = (float)s->enhn_gain_limit;
    const double sigma_nsq = s->sigma_nsq;
    const float sigma_max_inv = s->sigma_max_inv;
    float acc_num = 0, acc_den = 0;
    int j = 0;

#if VEC4_LANES
    /* The same operations on four samples: every branch of the scalar
     * code below (float_vif_statistic()) becomes a lane select, its double
     * steps double lanes. */
    const float eps = FLOAT_VIF_EPS;
    const Vec4 zero = vec_set1(0.0f), veps = vec_set1(eps), one = vec_set1(1.0f);
    const Vec4 vlimit = vec_set1(gain_limit), vsmi = vec_set1(sigma_max_inv);
    const Vec4 vnsq_below = vec_set1(s->sigma_nsq_below);
    const Vec4Dbl dnsq = { sigma_nsq, sigma_nsq, sigma_nsq, sigma_nsq };
    const Vec4Dbl done = { 1.0, 1.0, 1.0, 1.0 };
    for (; j + VEC4_LANES <= w; j += VEC4_LANES) {
        const Vec4 mu1 = vec_load(hrow[Q_MU1] + j), mu2 = vec_load(hrow[Q_MU2] + j);
        Vec4 sigma1_sq = vec_load(hrow[Q_XX] + j) - mu1 * mu1;
        Vec4 sigma2_sq = vec_load(hrow[Q_YY] + j) - mu2 * mu2;
        const Vec4 sigma12 = vec_load(hrow[Q_XY] + j) - mu1 * mu2;

        sigma1_sq = vec_select(sigma1_sq > zero, sigma1_sq, zero);
        sigma2_sq = vec_select(sigma2_sq > zero, sigma2_sq, zero);

        Vec4 g = sigma12 / (sigma1_sq + veps);
        Vec4 sv_sq = sigma2_sq - g * sigma12;
        const Vec4Int small1 = sigma1_sq < veps;
        g = vec_select(small1, zero, g);
        sv_sq = vec_select(small1, sigma2_sq, sv_sq);
        sigma1_sq = vec_select(small1, zero, sigma1_sq);
        const Vec4Int small2 = sigma2_sq < veps;
        g = vec_select(small2, zero, g);
        sv_sq = vec_select(small2, zero, sv_sq);
        const Vec4Int negative = g < zero;
        sv_sq = vec_select(negative, sigma2_sq, sv_sq);
        g = vec_select(negative, zero, g);
        sv_sq = vec_select(sv_sq > veps, sv_sq, veps);
        g = vec_select(g < vlimit, g, vlimit);

        const Vec4Dbl num_ratio = __builtin_convertvector(g * g * sigma1_sq, Vec4Dbl) /
                                 (__builtin_convertvector(sv_sq, Vec4Dbl) + dnsq);
        const Vec4Dbl den_ratio = __builtin_convertvector(sigma1_sq, Vec4Dbl) / dnsq;
        Vec4 num_val = vec_log2_approx(__builtin_convertvector(done + num_ratio, Vec4));
        Vec4 den_val = vec_log2_approx(__builtin_convertvector(done + den_ratio, Vec4));
        num_val = vec_select(sigma12 < zero, zero, num_val);
        const Vec4Int flat = sigma1_sq <= vnsq_below;
        num_val = vec_select(flat, one - sigma2_sq * vsmi, num_val);
        den_val = vec_select(flat, one, den_val);

        for (int l = 0; l < VEC4_LANES; l++) {
            acc_num += num_val[l];
            acc_den += den_val[l];
        }
    }
#endif

    for (; j < w; j++) {
        float num_val, den_val;
        float_vif_statistic(hrow[Q_MU1][j], hrow[Q_MU2][j], hrow[Q_XX][j], hrow[Q_YY][j],
                            hrow[Q_XY][j], sigma_nsq, gain_limit, sigma_max_inv, &num_val,
                            &den_val);
        acc_num += num_val;
        acc_den += den_val;
    }
    *num = acc_num;
    *den = acc_den;
}

/* ---- the metric -------------------------------------------------------------------- */

static int vif_check_options(const void *state, FeatureSink *sink)
{
    const FloatVifState *s = state;
    if (vif_kernelscale_valid((float)s->kernelscale)) return 0;
    feature_sink_log(sink, QUALE_LOG_ERROR, "float_vif: invalid vif_kernelscale %g; libvmaf "
                     "accepts " VIF_KERNELSCALES_TEXT, s->kernelscale);
    return -EINVAL;
}

static int vif_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    FloatVifState *s = state;
    int err = picture_float_check(f, "float_vif", sink);
    if (err) return err;
    if ((err = vif_check_options(state, sink))) return err;

    s->src_w = (int)f->width;
    s->src_h = (int)f->height;
    s->w[0] = (int)(f->width * s->prescale + 0.5);
    s->h[0] = (int)(f->height * s->prescale + 0.5);
    if (s->prescale_method == FLOAT_VIF_PRESCALE_BILINEAR && s->w[0] > VIF_BILINEAR_MAX_WIDTH) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "float_vif: the bilinear prescale makes a picture %d wide; libvmaf's "
                         "bilinear scaler takes at most %d", s->w[0], VIF_BILINEAR_MAX_WIDTH);
        return -EINVAL;
    }
    /* lanczos4 reaches 5 samples out of the picture, mirrored once */
    if (s->prescale_method == FLOAT_VIF_PRESCALE_LANCZOS4 &&
        (s->w[0] != s->src_w || s->h[0] != s->src_h) && (s->src_w < 6 || s->src_h < 6)) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "float_vif: cannot prescale %ux%u video with lanczos4: its mirror "
                         "needs 6x6 (libvmaf reads outside the picture below that)",
                         f->width, f->height);
        return -EINVAL;
    }
    for (int k = 1; k < VIF_SCALES; k++) {
        s->w[k] = s->w[k - 1] / 2;
        s->h[k] = s->h[k - 1] / 2;
    }
    for (int k = 0; k < VIF_SCALES; k++) {
        s->taps[k] = vif_filter_taps(k, (float)s->kernelscale);
        vif_gaussian_kernel(s->filter[k], s->taps[k], s->taps[k] / 5.0f);
    }

    /* Every filter's mirror must stay inside the picture it filters: the
     * scale's own, and the previous scale's before decimation. */
    for (int k = 0; k < VIF_SCALES; k++) {
        const int radius = s->taps[k] / 2;
        const bool own = k > 0 || !s->skip_scale0;
        const int side = QUALE_MIN(s->w[k], s->h[k]);
        const int before = k > 0 ? QUALE_MIN(s->w[k - 1], s->h[k - 1]) : side;
        if ((own && side <= radius) || before <= radius) {
            feature_sink_log(sink, QUALE_LOG_ERROR,
                             "float_vif: cannot score %ux%u video: at scale %d the picture is "
                             "%dx%d, too small for the %d-tap filter (libvmaf reads outside "
                             "the picture there)", f->width, f->height, k, s->w[k], s->h[k],
                             s->taps[k]);
            return -EINVAL;
        }
    }

    s->sigma_max_inv = powf((float)s->sigma_nsq, 2.0f) / (255.0 * 255.0);
    /* a float f is under the double sigma_nsq exactly when f <= this */
    float below = (float)s->sigma_nsq;
    while ((double)below >= s->sigma_nsq) below = nextafterf(below, -INFINITY);
    s->sigma_nsq_below = below;

    return feature_sink_declare_keys(sink, vif_keys, s->debug ? KEY_COUNT : KEY_VIF, s->key);
}

/* The picture's luma as floats at scale 0, resized by vif_prescale with
 * libvmaf's scaler of vif_prescale_method.  src: the scratch's source
 * picture (methods other than nearest). */
static void load_picture(const FloatVifState *s, const QualePicture *pic, float *dst,
                         size_t stride, float *src, size_t src_stride)
{
    const int w = s->w[0], h = s->h[0];
    if (w == s->src_w && h == s->src_h) {
        for (int y = 0; y < h; y++)
            picture_float_row(pic, 0, (unsigned)y, -128.0f, dst + (size_t)y * stride);
        return;
    }
    if (s->prescale_method != FLOAT_VIF_PRESCALE_NEAREST) {
        for (int y = 0; y < s->src_h; y++)
            picture_float_row(pic, 0, (unsigned)y, -128.0f, src + (size_t)y * src_stride);
        vif_prescale(src, s->src_w, s->src_h, src_stride, dst, w, h, stride, s->prescale_method);
        return;
    }
    const float ratio_x = (float)s->src_w / w, ratio_y = (float)s->src_h / h;
    const bool hbd = pic->format.bitdepth > 8;
    const float scaler = hbd ? picture_float_scaler(pic->format.bitdepth) : 1.0f;
    for (int y = 0; y < h; y++) {
        const void *row = picture_row(pic, 0, (unsigned)(int)(y * ratio_y));
        float *out = dst + (size_t)y * stride;
        for (int x = 0; x < w; x++) {
            const unsigned v = picture_sample(row, (unsigned)(int)(x * ratio_x), hbd);
            out[x] = hbd ? (float)v / scaler + -128.0f : (float)v + -128.0f;
        }
    }
}

/*
 * A scale's rows are cut into bands that run as tasks (metric_run_tasks()),
 * so that one large frame spreads over the idle workers: a band scores its
 * rows into the frame's row sums, or makes its rows of the next scale's
 * pictures, with the filter rows of the thread that runs it; the pictures
 * and the row sums are those of extract()'s scratch.  Each row's sums are
 * the same whoever computes them, and float_vif_write_rows() adds them in
 * row order as libvmaf does, so neither the bands nor the thread count
 * change a digit.
 */
enum { VIF_BAND_ROWS = 32, VIF_MAX_BANDS = 64 };

typedef struct VifBands {
    const FloatVifState *s;
    const FloatVifScratch *t; /* extract()'s */
    int scale;
    int rows, band_rows;
} VifBands;

/* Bands of at least VIF_BAND_ROWS rows, at most VIF_MAX_BANDS of them;
 * returns how many. */
static unsigned vif_bands_plan(VifBands *b, int rows)
{
    int band_rows = (rows + VIF_MAX_BANDS - 1) / VIF_MAX_BANDS;
    b->band_rows = QUALE_MAX(band_rows, VIF_BAND_ROWS);
    b->rows = rows;
    return rows > 0 ? (unsigned)((rows + b->band_rows - 1) / b->band_rows) : 0;
}

/* The padded filter rows of a thread's scratch. */
static void vif_filter_rows(const FloatVifScratch *t, float *vrow[Q_COUNT], float *hrow[Q_COUNT])
{
    for (int q = 0; q < Q_COUNT; q++) {
        vrow[q] = t->vrow[q] + t->pad;
        hrow[q] = t->hrow[q];
    }
}

/* The num and den sums of the band's rows of a scale. */
static void vif_stats_band(void *arg, unsigned band, void *scratch)
{
    const VifBands *b = arg;
    const FloatVifState *s = b->s;
    const FloatVifScratch *t = b->t;
    const int k = b->scale, w = s->w[k], h = s->h[k];
    const int y0 = (int)band * b->band_rows, y1 = QUALE_MIN(y0 + b->band_rows, b->rows);
    float *vrow[Q_COUNT], *hrow[Q_COUNT];
    vif_filter_rows(scratch, vrow, hrow);
    const float *rx[VIF_MAX_TAPS], *ry[VIF_MAX_TAPS];
    for (int y = y0; y < y1; y++) {
        mirrored_rows(t->ref[k], t->stride[k], h, y, s->taps[k], rx);
        mirrored_rows(t->dist[k], t->stride[k], h, y, s->taps[k], ry);
        vertical5(s->filter[k], s->taps[k], rx, ry, w, vrow);
        horizontal5(s->filter[k], s->taps[k], vrow, w, hrow);
        statistic_row(s, hrow, w, &t->row_sums[k][2 * y], &t->row_sums[k][2 * y + 1]);
    }
}

/* The band's rows of scale b->scale + 1 from scale b->scale. */
static void vif_decimate_band(void *arg, unsigned band, void *scratch)
{
    const VifBands *b = arg;
    const FloatVifState *s = b->s;
    const FloatVifScratch *t = b->t;
    const int k = b->scale;
    const int i0 = (int)band * b->band_rows, i1 = QUALE_MIN(i0 + b->band_rows, b->rows);
    float *vrow[Q_COUNT], *hrow[Q_COUNT];
    vif_filter_rows(scratch, vrow, hrow);
    decimate(s->filter[k + 1], s->taps[k + 1], t->ref[k], t->dist[k], t->stride[k], s->w[k],
             s->h[k], i0, i1, t->ref[k + 1], t->dist[k + 1], t->stride[k + 1], vrow[0], vrow[1],
             hrow[0]);
}

static int vif_extract(const void *state, void *scratch, const MetricFrame *frame,
                       FeatureSink *sink)
{
    const FloatVifState *s = state;
    FloatVifScratch *t = scratch;

    load_picture(s, frame->ref, t->ref[0], t->stride[0], t->src, t->src_stride);
    load_picture(s, frame->dist, t->dist[0], t->stride[0], t->src, t->src_stride);

    int err = 0;
    for (int k = 0; k < VIF_SCALES && !err; k++) {
        VifBands b = { .s = s, .t = t, .scale = k };
        if (k > 0 || !s->skip_scale0)
            err = metric_run_tasks(frame, t, vif_bands_plan(&b, s->h[k]), vif_stats_band, &b);
        if (!err && k + 1 < VIF_SCALES)
            err = metric_run_tasks(frame, t, vif_bands_plan(&b, s->h[k] / 2), vif_decimate_band,
                                   &b);
    }
    if (err) return err;
    const float *const rows[VIF_SCALES] = { t->row_sums[0], t->row_sums[1], t->row_sums[2],
                                            t->row_sums[3] };
    return float_vif_write_rows(s, sink, frame->index, rows);
}

int float_vif_write(const FloatVifState *s, FeatureSink *sink, unsigned f,
                    const double scores[2 * VIF_SCALES])
{
    const int first = s->skip_scale0 ? 1 : 0;
    int err = feature_sink_put(sink, s->key[KEY_SCALE0], f,
                               s->skip_scale0 ? 0.0 : scores[0] / scores[1]);
    for (int k = 1; k < VIF_SCALES && !err; k++)
        err = feature_sink_put(sink, s->key[KEY_SCALE0 + k], f,
                               QUALE_MAX(scores[2 * k] / scores[2 * k + 1], s->min_val[k]));
    if (err || !s->debug) return err;

    double num = 0.0, den = 0.0;
    for (int k = first; k < VIF_SCALES; k++) {
        num += scores[2 * k];
        den += scores[2 * k + 1];
    }
    err = feature_sink_put(sink, s->key[KEY_VIF], f, den == 0.0 ? 1.0 : num / den);
    if (!err) err = feature_sink_put(sink, s->key[KEY_NUM], f, num);
    if (!err) err = feature_sink_put(sink, s->key[KEY_DEN], f, den);
    for (int k = 0; k < VIF_SCALES && !err; k++) {
        const bool skipped = k == 0 && s->skip_scale0;
        err = feature_sink_put(sink, s->key[KEY_NUM_SCALE0 + 2 * k], f,
                               skipped ? 0.0 : scores[2 * k]);
        if (!err)
            err = feature_sink_put(sink, s->key[KEY_NUM_SCALE0 + 2 * k + 1], f,
                                   skipped ? -1.0 : scores[2 * k + 1]);
    }
    return err;
}

int float_vif_write_rows(const FloatVifState *s, FeatureSink *sink, unsigned f,
                         const float *const rows[VIF_SCALES])
{
    double scores[2 * VIF_SCALES] = { 0 };
    for (int k = s->skip_scale0 ? 1 : 0; k < VIF_SCALES; k++) {
        float acc_num = 0.0f, acc_den = 0.0f;
        for (int y = 0; y < s->h[k]; y++) {
            acc_num += rows[k][2 * y];
            acc_den += rows[k][2 * y + 1];
        }
        scores[2 * k] = acc_num;
        scores[2 * k + 1] = acc_den;
    }
    return float_vif_write(s, sink, f, scores);
}

static const MetricModelFeature float_vif_model_features[] = {
    { "VMAF_feature_vif_scale0_score", "vif_scale0" },
    { "VMAF_feature_vif_scale1_score", "vif_scale1" },
    { "VMAF_feature_vif_scale2_score", "vif_scale2" },
    { "VMAF_feature_vif_scale3_score", "vif_scale3" },
    { "vif", "vif" },
    { "vif_num", "vif_num" },
    { "vif_den", "vif_den" },
    { "vif_num_scale0", "vif_num_scale0" },
    { "vif_den_scale0", "vif_den_scale0" },
    { "vif_num_scale1", "vif_num_scale1" },
    { "vif_den_scale1", "vif_den_scale1" },
    { "vif_num_scale2", "vif_num_scale2" },
    { "vif_den_scale2", "vif_den_scale2" },
    { "vif_num_scale3", "vif_num_scale3" },
    { "vif_den_scale3", "vif_den_scale3" },
    { NULL, NULL },
};

const Metric metric_float_vif = {
    .name = "float_vif",
    .keys = vif_keys,
    .model_features = float_vif_model_features,
    .options = vif_options,
    .state_size = sizeof(FloatVifState),
    .flags = METRIC_LUMA_ONLY,
    .check_options = vif_check_options,
    .init = vif_init,
    .scratch_alloc = vif_scratch_alloc,
    .scratch_free = vif_scratch_free,
    .extract = vif_extract,
};
