/*
 * Float VIF (float_vif.c): what its C reference and its CUDA twin
 * (src/cuda/float_vif.cu, float_vif_cuda.c) share.
 *
 * The per-sample element code (the edge mirror, libvmaf's log2
 * approximation and the statistic of one sample) is inline here and
 * compiles for the host and, under nvcc, for the device: the CPU's scalar
 * path and the kernels run the same function.  The state, the option
 * constants that init() derives, and the step from the per-scale sums to
 * the keys (float_vif_write()) are host C, below.
 */
#ifndef QUALE_SRC_METRICS_FLOAT_VIF_H
#define QUALE_SRC_METRICS_FLOAT_VIF_H

#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "metrics/common/vif_tools.h"

#include "metrics/common/bitcast.h"
#include "metrics/common/host_device.h"

#define FLOAT_VIF_SCALES 4
#define FLOAT_VIF_MAX_TAPS 128       /* libvmaf's filter buffer */
#define FLOAT_VIF_EPS 1.0e-10f       /* libvmaf's eps of the statistic */

/* libvmaf's log2 approximation: a degree-8 polynomial of the mantissa,
 * highest power first. */
#define FLOAT_VIF_LOG2_POLY                                                           \
    -0.012671635276421f, 0.064841182402670f, -0.157048836463065f, 0.257167726303123f, \
        -0.353800560300520f, 0.480131410397451f, -0.721314327952201f,               \
        1.442694803896991f, 0.0f

/* libvmaf's reflection at the edges: -k -> k, n - 1 + k -> n - 1 - k. */
HOST_DEVICE_INLINE int float_vif_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 2 : i;
}


/* libvmaf's log2 approximation: the exponent plus the polynomial of the
 * mantissa in [1, 2). */
HOST_DEVICE_INLINE float float_vif_log2(float x)
{
    if (x == 0) return -INFINITY;
    if (x < 0) return NAN;
    const float poly_c[9] = { FLOAT_VIF_LOG2_POLY };
    const uint32_t bits = bitcast_float_bits(x);
    const uint32_t exponent = (bits & 0x7F800000u) >> 23;
    const float mantissa = bitcast_bits_float((bits & 0x007FFFFFu) | 0x3F800000u);
    const float log_base = (float)((int32_t)exponent - 127);
    const float t = mantissa - 1.0f;
    float poly = 0;
    for (int i = 0; i < 9; i++) poly = poly * t + poly_c[i];
    return log_base + poly;
}

/* libvmaf's vif_statistic_s() of one sample, from its five filtered
 * quantities: the numerator and the denominator that the row sums.
 * sigma_max_inv = vif_sigma_nsq^2 / 255^2 (float), gain_limit the float
 * of vif_enhn_gain_limit. */
HOST_DEVICE_INLINE void float_vif_statistic(float mu1, float mu2, float xx_f, float yy_f,
                                          float xy_f, double sigma_nsq, float gain_limit,
                                          float sigma_max_inv, float *num, float *den)
{
    const float eps = FLOAT_VIF_EPS;
    const float mu1_sq = mu1 * mu1, mu2_sq = mu2 * mu2, mu1_mu2 = mu1 * mu2;
    float sigma1_sq = xx_f - mu1_sq;
    float sigma2_sq = yy_f - mu2_sq;
    const float sigma12 = xy_f - mu1_mu2;

    sigma1_sq = sigma1_sq > 0.0f ? sigma1_sq : 0.0f;
    sigma2_sq = sigma2_sq > 0.0f ? sigma2_sq : 0.0f;

    /* libvmaf computes the logs below first and then overwrites them
     * where sigma1_sq (zeroed if under eps) is under sigma_nsq */
    if ((sigma1_sq < eps ? 0.0f : sigma1_sq) < sigma_nsq) {
        *num = 1.0f - sigma2_sq * sigma_max_inv;
        *den = 1.0f;
        return;
    }
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
    sv_sq = sv_sq > eps ? sv_sq : eps;
    g = g < gain_limit ? g : gain_limit;

    /* float numerator over a double denominator, the sum in double, the
     * logarithm of its float */
    *num = sigma12 < 0.0f
         ? 0.0f
         : float_vif_log2((float)(1.0f + (g * g * sigma1_sq) / (sv_sq + sigma_nsq)));
    *den = float_vif_log2((float)(1.0f + sigma1_sq / sigma_nsq));
}

#if !defined(__CUDACC__)

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

enum FloatVifKey {
    FLOAT_VIF_KEY_SCALE0,
    FLOAT_VIF_KEY_VIF = FLOAT_VIF_KEY_SCALE0 + FLOAT_VIF_SCALES,
    FLOAT_VIF_KEY_NUM,
    FLOAT_VIF_KEY_DEN,
    FLOAT_VIF_KEY_NUM_SCALE0,
    FLOAT_VIF_KEY_COUNT = FLOAT_VIF_KEY_NUM_SCALE0 + 2 * FLOAT_VIF_SCALES,
};

/* vif_prescale_method: how vif_prescale resizes the picture. */
enum FloatVifPrescale {
    FLOAT_VIF_PRESCALE_NEAREST = VIF_PRESCALE_NEAREST,
    FLOAT_VIF_PRESCALE_BILINEAR = VIF_PRESCALE_BILINEAR,
    FLOAT_VIF_PRESCALE_BICUBIC = VIF_PRESCALE_BICUBIC,
    FLOAT_VIF_PRESCALE_LANCZOS4 = VIF_PRESCALE_LANCZOS4,
};

typedef struct FloatVifState {
    /* options */
    bool debug;
    double enhn_gain_limit;
    double kernelscale;
    double prescale;
    double min_val[FLOAT_VIF_SCALES]; /* [0] unused: scale 0 has none */
    double sigma_nsq;
    bool skip_scale0;
    int prescale_method;             /* enum FloatVifPrescale */

    /* set by init */
    int src_w, src_h;                /* the picture */
    int w[FLOAT_VIF_SCALES], h[FLOAT_VIF_SCALES];
    int taps[FLOAT_VIF_SCALES];
    float filter[FLOAT_VIF_SCALES][FLOAT_VIF_MAX_TAPS];
    float sigma_max_inv;
    float sigma_nsq_below;           /* the largest float under vif_sigma_nsq */
    unsigned key[FLOAT_VIF_KEY_COUNT];
} FloatVifState;

/* Writes the keys of a frame from the per-scale sums: scores[2s] the
 * numerator and scores[2s + 1] the denominator of scale s, each the float
 * sum of the rows' float sums in row order (0 for a skipped scale 0). */
int float_vif_write(const FloatVifState *s, FeatureSink *sink, unsigned frame,
                    const double scores[2 * FLOAT_VIF_SCALES]);

/* float_vif_write() from the rows' sums that a GPU twin reads back:
 * rows[s] holds each row of scale s's numerator and denominator sums (two
 * floats a row, rows in order), added here in float in row order as the
 * reference adds them (rows[0] is not read with vif_skip_scale0). */
int float_vif_write_rows(const FloatVifState *s, FeatureSink *sink, unsigned frame,
                         const float *const rows[FLOAT_VIF_SCALES]);

extern const Metric metric_float_vif;

#ifdef __cplusplus
}
#endif

#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_FLOAT_VIF_H */
