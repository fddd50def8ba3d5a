/*
 * Float VIF: libvmaf's "float_vif" extractor (vif_scale0..3), the
 * floating-point visual information fidelity of the luma plane.
 *
 * The samples become floats on the 8-bit scale less 128
 * (picture_float.h); vif_prescale first resizes the picture (nearest
 * sample, libvmaf's default method).  Then at each of four scales s:
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
 * come, and the decimated pictures are filtered at the kept samples only.
 *
 * Sizes: every filter must fit its mirror (radius < side) at every scale,
 * which needs 16x16 at vif_kernelscale 1 (2x2 at scale 3); libvmaf reads
 * outside its buffers below that, so smaller pictures are refused.
 * vif_prescale_method (nearest, bilinear, bicubic, lanczos4) is a string
 * option that quale's option tables cannot hold yet: only nearest exists.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "metric.h"
#include "picture_float.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define VIF_SCALES 4
#define VIF_MAX_TAPS 128             /* libvmaf's filter buffer */

enum {
    KEY_SCALE0,
    KEY_VIF = KEY_SCALE0 + VIF_SCALES, KEY_NUM, KEY_DEN, KEY_NUM_SCALE0,
    KEY_COUNT = KEY_NUM_SCALE0 + 2 * VIF_SCALES,
};

static const char *const vif_keys[KEY_COUNT + 1] = {
    "vif_scale0", "vif_scale1", "vif_scale2", "vif_scale3",
    /* with debug */
    "vif", "vif_num", "vif_den",
    "vif_num_scale0", "vif_den_scale0", "vif_num_scale1", "vif_den_scale1",
    "vif_num_scale2", "vif_den_scale2", "vif_num_scale3", "vif_den_scale3",
    NULL,
};

typedef struct FloatVifState {
    /* options */
    bool debug;
    double enhn_gain_limit;
    double kernelscale;
    double prescale;
    double min_val[VIF_SCALES];      /* [0] unused: scale 0 has none */
    double sigma_nsq;
    bool skip_scale0;

    /* set by init */
    int src_w, src_h;                /* the picture */
    int w[VIF_SCALES], h[VIF_SCALES];
    int taps[VIF_SCALES];
    float filter[VIF_SCALES][VIF_MAX_TAPS];
    float sigma_max_inv;
    unsigned key[KEY_COUNT];
} FloatVifState;

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
    { .name = "vif_sigma_nsq", .alias = "snsq", .help = "neural noise variance",
      .offset = offsetof(FloatVifState, sigma_nsq), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 2.0, .min = 0.0, .max = 5.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "vif_skip_scale0", .alias = "ssclz", .help = "when set, skip scale 0 calculations",
      .offset = offsetof(FloatVifState, skip_scale0), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { 0 },
};

/* ---- the Gaussian filters ------------------------------------------------- */

/* The kernel scales libvmaf accepts (vif_tools.h), as floats. */
static const float vif_valid_kernelscales[] = {
    1.0f, 1.0f / 2.0f, 3.0f / 2.0f, 2.0f, 2.0f / 3.0f, 24.0f / 10.0f, 360.0f / 97.0f,
    4.0f / 3.0f, 3.5f / 3.0f, 3.75f / 3.0f, 4.25f / 3.0f, 5.0f / 3.0f, 3.0f,
    1.0f / 2.25f, 1.4746f, 1.54f, 1.6f, 1.06667f, 0.711111f, 0.740740f, 1.111111f,
};

static bool kernelscale_valid(float ks)
{
    for (size_t i = 0; i < QUALE_ARRAY_SIZE(vif_valid_kernelscales); i++)
        if (fabsf(ks - vif_valid_kernelscales[i]) < 1e-3) return true;
    return false;
}

/* 2^(4 - scale) + 1 taps times the kernel scale, rounded up to odd, >= 3. */
static int filter_taps(int scale, float ks)
{
    const int n = (1 << (4 - scale)) + 1;
    int taps = (int)ceil(n * ks);
    if (taps % 2 == 0) taps++;
    return taps > 3 ? taps : 3;
}

/* libvmaf's get_1d_gaussian_kernel(): the density at -k..k in its float
 * and double steps, normalised by its float sum. */
static void gaussian_filter(float *out, int taps)
{
    const float stdev = taps / 5.0f;
    const int half = (taps - 1) / 2;
    float sum = 0;
    for (int i = 0; i < taps; i++) {
        const float x = (float)(i - half);
        const float num = exp(-0.5 * x / stdev * x / stdev);
        const float den = 1 / (stdev * sqrt(2 * M_PI));
        out[i] = num / den;
        sum += out[i];
    }
    for (int i = 0; i < taps; i++) out[i] /= sum;
}

/* ---- libvmaf's log2 approximation ----------------------------------------- */

static const float log2_poly[9] = {
    -0.012671635276421f, 0.064841182402670f, -0.157048836463065f,
    0.257167726303123f, -0.353800560300520f, 0.480131410397451f,
    -0.721314327952201f, 1.442694803896991f, 0.0f,
};

/* The exponent, plus a degree-8 polynomial of the mantissa in [1, 2). */
static float log2_approx(float x)
{
    if (x == 0) return -INFINITY;
    if (x < 0) return NAN;
    uint32_t bits;
    memcpy(&bits, &x, sizeof(bits));
    const uint32_t exponent = (bits & 0x7F800000u) >> 23;
    const uint32_t mantissa_bits = (bits & 0x007FFFFFu) | 0x3F800000u;
    float mantissa;
    memcpy(&mantissa, &mantissa_bits, sizeof(mantissa));
    const float log_base = (float)((int32_t)exponent - 127);
    const float t = mantissa - 1.0f;
    float poly = 0;
    for (int i = 0; i < 9; i++) poly = poly * t + log2_poly[i];
    return log_base + poly;
}

/* ---- per worker ------------------------------------------------------------- */

/* The five filtered quantities, in this order in every row array. */
enum { Q_MU1, Q_MU2, Q_XX, Q_YY, Q_XY, Q_COUNT };

typedef struct FloatVifScratch {
    size_t stride[VIF_SCALES];       /* floats */
    float *ref[VIF_SCALES], *dist[VIF_SCALES];
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
    }
    for (int q = 0; q < Q_COUNT; q++) {
        quale_aligned_free(t->vrow[q]);
        quale_aligned_free(t->hrow[q]);
    }
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
        ok = (t->ref[k] = quale_aligned_alloc(plane)) && (t->dist[k] = quale_aligned_alloc(plane));
    }
    int radius = 0;
    for (int k = 0; k < VIF_SCALES; k++) radius = QUALE_MAX(radius, s->taps[k] / 2);
    t->pad = quale_align((size_t)radius, QUALE_ALIGNMENT / sizeof(float));
    const size_t row = ((size_t)s->w[0] + 2 * t->pad) * sizeof(float);
    for (int q = 0; ok && q < Q_COUNT; q++)
        ok = (t->vrow[q] = quale_aligned_alloc(row)) && (t->hrow[q] = quale_aligned_alloc(row));
    if (!ok) {
        vif_scratch_free(t);
        return -ENOMEM;
    }
    *scratch = t;
    return 0;
}

/* ---- filtering ----------------------------------------------------------------- */

/* libvmaf's reflection at the edges: -k -> k, n - 1 + k -> n - 1 - k. */
static inline int vif_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 2 : i;
}

/* Reflects the radius samples past each end of a row of w. */
static void pad_row(float *row, int w, int radius)
{
    for (int k = 1; k <= radius; k++) {
        row[-k] = row[k];
        row[w - 1 + k] = row[w - 1 - k];
    }
}

/* Vertical pass of row y for the five quantities of x and y. */
static void vertical5(const float *f, int taps, const float *x, const float *y, size_t stride,
                      int w, int h, int row_index, float *const vrow[Q_COUNT])
{
    float *restrict m1 = vrow[Q_MU1], *restrict m2 = vrow[Q_MU2];
    float *restrict xx = vrow[Q_XX], *restrict yy = vrow[Q_YY], *restrict xy = vrow[Q_XY];
    for (int j = 0; j < w; j++) m1[j] = m2[j] = xx[j] = yy[j] = xy[j] = 0.0f;
    for (int k = 0; k < taps; k++) {
        const float fk = f[k];
        const size_t r = (size_t)vif_mirror(row_index - taps / 2 + k, h) * stride;
        const float *restrict a = x + r, *restrict b = y + r;
        for (int j = 0; j < w; j++) {
            const float va = a[j], vb = b[j];
            m1[j] += fk * va;
            m2[j] += fk * vb;
            xx[j] += fk * (va * va);
            yy[j] += fk * (vb * vb);
            xy[j] += fk * (va * vb);
        }
    }
}

/* Horizontal pass of the five padded rows. */
static void horizontal5(const float *f, int taps, float *const vrow[Q_COUNT], int w,
                        float *const hrow[Q_COUNT])
{
    const int radius = taps / 2;
    for (int q = 0; q < Q_COUNT; q++) {
        pad_row(vrow[q], w, radius);
        for (int j = 0; j < w; j++) hrow[q][j] = 0.0f;
    }
    for (int k = 0; k < taps; k++) {
        const float fk = f[k];
        const int o = k - radius;
        const float *restrict a0 = vrow[Q_MU1] + o, *restrict a1 = vrow[Q_MU2] + o;
        const float *restrict a2 = vrow[Q_XX] + o, *restrict a3 = vrow[Q_YY] + o;
        const float *restrict a4 = vrow[Q_XY] + o;
        float *restrict d0 = hrow[Q_MU1], *restrict d1 = hrow[Q_MU2], *restrict d2 = hrow[Q_XX];
        float *restrict d3 = hrow[Q_YY], *restrict d4 = hrow[Q_XY];
        for (int j = 0; j < w; j++) {
            d0[j] += fk * a0[j];
            d1[j] += fk * a1[j];
            d2[j] += fk * a2[j];
            d3[j] += fk * a3[j];
            d4[j] += fk * a4[j];
        }
    }
}

/* The next scale: x and y blurred by filter f at their even rows and
 * columns (libvmaf filters every sample, then keeps these). */
static void decimate(const float *f, int taps, const float *x, const float *y, size_t stride,
                     int w, int h, float *nx, float *ny, size_t nstride, float *va, float *vb)
{
    const int radius = taps / 2;
    for (int i = 0; i < h / 2; i++) {
        for (int j = 0; j < w; j++) va[j] = vb[j] = 0.0f;
        for (int k = 0; k < taps; k++) {
            const float fk = f[k];
            const size_t r = (size_t)vif_mirror(2 * i - radius + k, h) * stride;
            const float *restrict a = x + r, *restrict b = y + r;
            for (int j = 0; j < w; j++) {
                va[j] += fk * a[j];
                vb[j] += fk * b[j];
            }
        }
        pad_row(va, w, radius);
        pad_row(vb, w, radius);
        float *restrict ox = nx + (size_t)i * nstride, *restrict oy = ny + (size_t)i * nstride;
        for (int j = 0; j < w / 2; j++) {
            float sa = 0.0f, sb = 0.0f;
            const float *pa = va + 2 * j - radius, *pb = vb + 2 * j - radius;
            for (int k = 0; k < taps; k++) {
                sa += f[k] * pa[k];
                sb += f[k] * pb[k];
            }
            ox[j] = sa;
            oy[j] = sb;
        }
    }
}

/* ---- the statistic --------------------------------------------------------------- */

/* libvmaf's vif_statistic_s() for one row, summed in float. */
static void statistic_row(const FloatVifState *s, float *const hrow[Q_COUNT], int w,
                          float *num, float *den)
{
    const float eps = 1.0e-10f;
    const float gain_limit = (float)s->enhn_gain_limit;
    const double sigma_nsq = s->sigma_nsq;
    const float sigma_max_inv = s->sigma_max_inv;
    float acc_num = 0, acc_den = 0;

    for (int j = 0; j < w; j++) {
        const float mu1 = hrow[Q_MU1][j], mu2 = hrow[Q_MU2][j];
        const float mu1_sq = mu1 * mu1, mu2_sq = mu2 * mu2, mu1_mu2 = mu1 * mu2;
        float sigma1_sq = hrow[Q_XX][j] - mu1_sq;
        float sigma2_sq = hrow[Q_YY][j] - mu2_sq;
        const float sigma12 = hrow[Q_XY][j] - mu1_mu2;

        sigma1_sq = QUALE_MAX(sigma1_sq, 0.0f);
        sigma2_sq = QUALE_MAX(sigma2_sq, 0.0f);

        /* libvmaf computes the logs below first and then overwrites them
         * where sigma1_sq (zeroed if under eps) is under sigma_nsq */
        float num_val, den_val;
        if ((sigma1_sq < eps ? 0.0f : sigma1_sq) < sigma_nsq) {
            num_val = 1.0f - sigma2_sq * sigma_max_inv;
            den_val = 1.0f;
        } else {
            float g = sigma12 / (sigma1_sq + eps);
            float sv_sq = sigma2_sq - g * sigma12;
            if (sigma1_sq < eps) {
                g = 0.0f;
                sv_sq = sigma2_sq;
                sigma1_sq = 0.0f;
            }
            if (sigma2_sq < eps) {
                g = 0.0f;
                sv_sq = 0.0f;
            }
            if (g < 0.0f) {
                sv_sq = sigma2_sq;
                g = 0.0f;
            }
            sv_sq = QUALE_MAX(sv_sq, eps);
            g = QUALE_MIN(g, gain_limit);

            /* float numerator over a double denominator, the sum in double,
             * the logarithm of its float */
            num_val = sigma12 < 0.0f
                    ? 0.0f
                    : log2_approx((float)(1.0f + (g * g * sigma1_sq) / (sv_sq + sigma_nsq)));
            den_val = log2_approx((float)(1.0f + sigma1_sq / sigma_nsq));
        }
        acc_num += num_val;
        acc_den += den_val;
    }
    *num = acc_num;
    *den = acc_den;
}

/* ---- the metric -------------------------------------------------------------------- */

static int vif_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    FloatVifState *s = state;
    int err = picture_float_check(f, "float_vif", sink);
    if (err) return err;

    const float ks = (float)s->kernelscale;
    if (!kernelscale_valid(ks)) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "float_vif: invalid vif_kernelscale %g; libvmaf accepts 1, 1/2, 3/2, 2, "
                         "2/3, 2.4, 360/97, 4/3, 3.5/3, 3.75/3, 4.25/3, 5/3, 3, 1/2.25, 1.4746, "
                         "1.54, 1.6, 1.06667, 0.711111, 0.74074 and 1.111111", s->kernelscale);
        return -EINVAL;
    }

    s->src_w = (int)f->width;
    s->src_h = (int)f->height;
    s->w[0] = (int)(f->width * s->prescale + 0.5);
    s->h[0] = (int)(f->height * s->prescale + 0.5);
    for (int k = 1; k < VIF_SCALES; k++) {
        s->w[k] = s->w[k - 1] / 2;
        s->h[k] = s->h[k - 1] / 2;
    }
    for (int k = 0; k < VIF_SCALES; k++) {
        s->taps[k] = filter_taps(k, ks);
        gaussian_filter(s->filter[k], s->taps[k]);
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

    const unsigned keys = s->debug ? KEY_COUNT : KEY_VIF;
    for (unsigned k = 0; k < keys; k++)
        if ((err = feature_sink_declare(sink, vif_keys[k], &s->key[k]))) return err;
    return 0;
}

/* The picture's luma as floats at scale 0, resized by vif_prescale with
 * libvmaf's nearest-sample scaler. */
static void load_picture(const FloatVifState *s, const QualePicture *pic, float *dst,
                         size_t stride)
{
    const int w = s->w[0], h = s->h[0];
    if (w == s->src_w && h == s->src_h) {
        for (int y = 0; y < h; y++)
            picture_float_row(pic, 0, (unsigned)y, -128.0f, dst + (size_t)y * stride);
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

static int vif_extract(const void *state, void *scratch, const MetricFrame *frame,
                       FeatureSink *sink)
{
    const FloatVifState *s = state;
    FloatVifScratch *t = scratch;

    load_picture(s, frame->ref, t->ref[0], t->stride[0]);
    load_picture(s, frame->dist, t->dist[0], t->stride[0]);

    float *vrow[Q_COUNT], *hrow[Q_COUNT];
    for (int q = 0; q < Q_COUNT; q++) {
        vrow[q] = t->vrow[q] + t->pad;
        hrow[q] = t->hrow[q];
    }

    double scores[2 * VIF_SCALES] = { 0 };
    for (int k = 0; k < VIF_SCALES; k++) {
        const int w = s->w[k], h = s->h[k];
        const size_t stride = t->stride[k];
        if (k > 0 || !s->skip_scale0) {
            float acc_num = 0.0f, acc_den = 0.0f;
            for (int y = 0; y < h; y++) {
                vertical5(s->filter[k], s->taps[k], t->ref[k], t->dist[k], stride, w, h, y, vrow);
                horizontal5(s->filter[k], s->taps[k], vrow, w, hrow);
                float num, den;
                statistic_row(s, hrow, w, &num, &den);
                acc_num += num;
                acc_den += den;
            }
            scores[2 * k] = acc_num;
            scores[2 * k + 1] = acc_den;
        }
        if (k + 1 < VIF_SCALES)
            decimate(s->filter[k + 1], s->taps[k + 1], t->ref[k], t->dist[k], stride, w, h,
                     t->ref[k + 1], t->dist[k + 1], t->stride[k + 1], vrow[0], vrow[1]);
    }

    const unsigned f = frame->index;
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

const Metric metric_float_vif = {
    .name = "float_vif",
    .keys = vif_keys,
    .options = vif_options,
    .state_size = sizeof(FloatVifState),
    .flags = METRIC_LUMA_ONLY,
    .init = vif_init,
    .scratch_alloc = vif_scratch_alloc,
    .scratch_free = vif_scratch_free,
    .extract = vif_extract,
};
