/*
 * Float ADM (float_adm.c): what its C reference and its CUDA twin
 * (src/cuda/float_adm.cu, float_adm_cuda.c) share.
 *
 * Inline, for the host and, under nvcc, for the device: the DWT's
 * coefficients and mirror, the scored region, the decoupling of one
 * sample after its three divisions, the masking sum of one orientation:
 * the CPU's scalar path and the kernels run the same functions.  Host C,
 * below: the state, the pooling of a level's sums into its scores and the
 * keys written from the four levels' scores, and the reciprocal that the
 * reference divides by.
 */
#ifndef QUALE_SRC_METRICS_FLOAT_ADM_H
#define QUALE_SRC_METRICS_FLOAT_ADM_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "metrics/common/bitcast.h"
#include "metrics/common/host_device.h"

#define FLOAT_ADM_SCALES 4
#define FLOAT_ADM_MIN_SIZE 17
#define FLOAT_ADM_BORDER_FACTOR 0.1
/* the eps added to the reference details before dividing by them */
#define FLOAT_ADM_DIV_EPS 1e-30f

/* libvmaf's constants, double literals where its are */
#define FLOAT_ADM_ONE_BY_30 0.0333333351
#define FLOAT_ADM_ONE_BY_15 0.0666666701

/* The Daubechies-2 filters, taps summed from the first. */
#define FLOAT_ADM_DWT_LO 0.482962913144690f, 0.836516303737469f, 0.224143868041857f, \
                         -0.129409522550921f
#define FLOAT_ADM_DWT_HI -0.129409522550921f, -0.224143868041857f, 0.836516303737469f, \
                         -0.482962913144690f

/* The sums of a level, in this order (h, v, d each): the masked restored
 * part, the masked additive impairment and the CSF-weighted reference, to
 * the power adm_p_norm (cubed by default); each the float sum of its rows'
 * float sums in row order. */
enum {
    FLOAT_ADM_SUM_NUM_H, FLOAT_ADM_SUM_NUM_V, FLOAT_ADM_SUM_NUM_D,
    FLOAT_ADM_SUM_AIM_H, FLOAT_ADM_SUM_AIM_V, FLOAT_ADM_SUM_AIM_D,
    FLOAT_ADM_SUM_DEN_H, FLOAT_ADM_SUM_DEN_V, FLOAT_ADM_SUM_DEN_D,
    FLOAT_ADM_SUMS,
};

/* The DWT's source index: -1 -> 1, n -> n - 1, n + 1 -> n - 2. */
HOST_DEVICE_INLINE int float_adm_dwt_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 1 : i;
}

/* The scored region of a w x h band: the band less 10% on every side. */
typedef struct FloatAdmRect {
    int left, top, right, bottom;
} FloatAdmRect;

HOST_DEVICE_INLINE FloatAdmRect float_adm_rect(int w, int h)
{
    FloatAdmRect r;
    r.left = (int)(w * FLOAT_ADM_BORDER_FACTOR - 0.5);
    r.top = (int)(h * FLOAT_ADM_BORDER_FACTOR - 0.5);
    r.right = w - r.left;
    r.bottom = h - r.top;
    return r;
}

/*
 * The decoupling of one sample (libvmaf's adm_decouple_s) and its CSF
 * weighting, once the three quotients q[b] = t[b] / (o[b] + eps) are made
 * (by the reference's division, see float_adm.c): the restored part
 * r = clamp(q, 0, 1) * o, allowed to grow up to gain_limit times (in
 * double, as libvmaf's MIN/MAX of a double and a float) where the (h, v)
 * vectors of o and t point within one degree; cr = csf * r and
 * ca = csf * (t - r) per orientation h, v, d.
 */
HOST_DEVICE_INLINE void float_adm_decouple(const float o[3], const float t[3], const float q[3],
                                         float cos_1deg_sq, double gain_limit,
                                         const float csf[3], float cr[3], float ca[3])
{
    float rst[3];
    for (int b = 0; b < 3; b++) {
        const float k = q[b] < 0.0f ? 0.0f : (q[b] > 1.0f ? 1.0f : q[b]);
        rst[b] = k * o[b];
    }
    const float ot_dp = o[0] * t[0] + o[1] * t[1];
    const float o_mag_sq = o[0] * o[0] + o[1] * o[1];
    const float t_mag_sq = t[0] * t[0] + t[1] * t[1];
    const bool angle_flag = (ot_dp >= 0.0f) &&
                            (ot_dp * ot_dp >= cos_1deg_sq * o_mag_sq * t_mag_sq);

    for (int b = 0; b < 3; b++) {
        if (angle_flag && rst[b] > 0.0) {
            const double g = rst[b] * gain_limit;
            rst[b] = (float)(g < t[b] ? g : t[b]);
        }
        if (angle_flag && rst[b] < 0.0) {
            const double g = rst[b] * gain_limit;
            rst[b] = (float)(g > t[b] ? g : t[b]);
        }
        const float add = t[b] - rst[b];
        cr[b] = csf[b] * rst[b];
        ca[b] = csf[b] * add;
    }
}

/* |x| / 30 as libvmaf makes it: its double constant times the float. */
HOST_DEVICE_INLINE float float_adm_by_30(float x)
{
    return (float)(FLOAT_ADM_ONE_BY_30 * fabsf(x));
}

/* libvmaf's ADM_CM_THRESH_S_* sum of one orientation: the 3x3 window of
 * |x| / 30 (flt, row by row, left to right) with |x| / 15 of the centre's
 * CSF value in the middle, in its order. */
HOST_DEVICE_INLINE float float_adm_cm_sum(float up_l, float up, float up_r, float mid_l,
                                        float centre, float mid_r, float down_l, float down,
                                        float down_r)
{
    float sum = 0;
    sum += up_l;
    sum += up;
    sum += up_r;
    sum += mid_l;
    sum += FLOAT_ADM_ONE_BY_15 * fabsf(centre);
    sum += mid_r;
    sum += down_l;
    sum += down;
    sum += down_r;
    return sum;
}


/*
 * An approximate reciprocal (float_adm_reciprocal(), the CPU's rcpss) from
 * a table of its results on [1, 2): entry k holds the bits of the
 * reciprocal of the float 1 + k 2^(shift - 23), whose mantissa's lower
 * `shift` bits do not change it.  Other exponents scale it by powers of
 * two; zeros and subnormals give infinities, infinities zeros, NaNs
 * themselves quieted, and results below the normal range zeros, as
 * Intel's rcpss does.  A twin checks this against the host's reciprocal
 * before it trusts it (src/cuda/float_adm_cuda.c).
 */
HOST_DEVICE_INLINE float float_adm_reciprocal_from_table(const uint32_t *table, unsigned shift,
                                                       float d)
{
    const uint32_t u = bitcast_float_bits(d), sign = u & 0x80000000u;
    const uint32_t e = (u >> 23) & 0xFFu, m = u & 0x007FFFFFu;
    if (e == 0) return bitcast_bits_float(sign | 0x7F800000u);
    if (e == 255) return bitcast_bits_float(m ? u | 0x00400000u : sign);
    const uint32_t t = table[m >> shift];
    const int re = (int)((t >> 23) & 0xFFu) + 127 - (int)e;
    if (re <= 0) return bitcast_bits_float(sign);
    return bitcast_bits_float(sign | ((uint32_t)re << 23) | (t & 0x007FFFFFu));
}

#if !defined(__CUDACC__)

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

enum FloatAdmKey {
    FLOAT_ADM_KEY_ADM2,
    FLOAT_ADM_KEY_AIM,
    FLOAT_ADM_KEY_ADM3,
    FLOAT_ADM_KEY_SCALE0,
    FLOAT_ADM_KEY_ADM = FLOAT_ADM_KEY_SCALE0 + FLOAT_ADM_SCALES,
    FLOAT_ADM_KEY_NUM,
    FLOAT_ADM_KEY_DEN,
    FLOAT_ADM_KEY_NUM_SCALE0,
    FLOAT_ADM_KEY_COUNT = FLOAT_ADM_KEY_NUM_SCALE0 + 2 * FLOAT_ADM_SCALES,
};

typedef struct FloatAdmState {
    /* options */
    bool debug;
    double enhn_gain_limit;
    double norm_view_dist;
    double noise_weight;
    double csf_scale;
    double csf_diag_scale;
    int ref_display_height;
    int csf_mode;
    int bypass_cm;
    bool adm3_apply_hm;
    double p_norm;
    double dlm_weight;
    double min_val;
    double factor1[FLOAT_ADM_SCALES]; /* adm_f1s0..3, -1: from the CSF */
    double factor2[FLOAT_ADM_SCALES]; /* adm_f2s0..3 */
    int skip_aim_scale;
    bool skip_scale0;

    /* set by init */
    int w, h;
    float csf[FLOAT_ADM_SCALES][3];  /* weight per scale and orientation h, v, d */
    float cos_1deg_sq;
    unsigned key[FLOAT_ADM_KEY_COUNT];
} FloatAdmState;

/* The scores of one level. */
typedef struct FloatAdmLevel {
    float num, den, aim;
} FloatAdmLevel;

/* The scores of a level whose bands are w2 x h2, from its sums (libvmaf's
 * values for a skipped scale 0 where scored is false: sums unused). */
FloatAdmLevel float_adm_level(const FloatAdmState *s, int w2, int h2, bool scored,
                              const float sums[FLOAT_ADM_SUMS]);

/* Writes the keys of a frame from its four levels' scores. */
int float_adm_write(const FloatAdmState *s, FeatureSink *sink, unsigned frame,
                    const FloatAdmLevel levels[FLOAT_ADM_SCALES]);

/* float_adm_write() from the rows' sums that a GPU twin reads back:
 * rows[k] holds, per band row m of level k, its FLOAT_ADM_SUMS float sums
 * at rows[k][m * FLOAT_ADM_SUMS] (the scored rows are read), added here in
 * float in row order as the reference adds them; then each level's scores
 * (float_adm_level()) and the keys.  rows[0] is not read with
 * adm_skip_scale0. */
int float_adm_write_rows(const FloatAdmState *s, FeatureSink *sink, unsigned frame,
                         const float *const rows[FLOAT_ADM_SCALES]);

/* Whether the reference divides by libvmaf's reciprocal (rcpss and one
 * Newton step: x86 with SSE2) rather than exactly, and that reciprocal's
 * approximation (the CPU's rcpss; 1 / d where there is none). */
bool float_adm_divides_by_reciprocal(void);
float float_adm_reciprocal(float d);

/* The host's float_adm_reciprocal() on [1, 2) as the table of
 * float_adm_reciprocal_from_table(), made once per process, for a GPU twin
 * to divide as the reference does: NULL where the reference divides
 * exactly; *usable false where the table does not reproduce the host's
 * reciprocal (the twin then declines the metric). */
const uint32_t *float_adm_reciprocal_table(unsigned *shift, size_t *count, bool *usable);

extern const Metric metric_float_adm;

#ifdef __cplusplus
}
#endif

#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_FLOAT_ADM_H */
