/*
 * float ADM's rows: the DWT, and the decoupling, CSF and masking of its
 * bands (float_adm.c is the metric).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <emmintrin.h>
#include "common.h"
#include "metric.h"
#include "metrics/common/adm_csf.h"
#include "float_adm.h"
#include "metrics/common/picture_float.h"
#include "float_adm_private.h"
#include "float_adm_private.h"

/* ---- the DWT ------------------------------------------------------------------- */

static const float dwt_lo[4] = { FLOAT_ADM_DWT_LO };
static const float dwt_hi[4] = { FLOAT_ADM_DWT_HI };

/* Row y of one DWT level of a w-wide input whose four source rows are
 * given: the approximation into a, the details into h, v, d (when h is
 * not NULL: libvmaf's adm_dwt2_lo_s makes only a). */
void dwt_row(const float *const src[4], int w, float *lo, float *hi, float *a,
                    float *h, float *v, float *d)
{
    const float *restrict s0 = src[0], *restrict s1 = src[1];
    const float *restrict s2 = src[2], *restrict s3 = src[3];
    const bool details = h != NULL;
    for (int j = 0; j < w; j++) {
        float acc = 0;
        acc += dwt_lo[0] * s0[j];
        acc += dwt_lo[1] * s1[j];
        acc += dwt_lo[2] * s2[j];
        acc += dwt_lo[3] * s3[j];
        lo[j] = acc;
    }
    if (details) {
        for (int j = 0; j < w; j++) {
            float acc = 0;
            acc += dwt_hi[0] * s0[j];
            acc += dwt_hi[1] * s1[j];
            acc += dwt_hi[2] * s2[j];
            acc += dwt_hi[3] * s3[j];
            hi[j] = acc;
        }
    }
    for (int j = 0; j < (w + 1) / 2; j++) {
        const int j0 = dwt_mirror(2 * j - 1, w), j1 = dwt_mirror(2 * j, w);
        const int j2 = dwt_mirror(2 * j + 1, w), j3 = dwt_mirror(2 * j + 2, w);
        float acc = 0;
        acc += dwt_lo[0] * lo[j0];
        acc += dwt_lo[1] * lo[j1];
        acc += dwt_lo[2] * lo[j2];
        acc += dwt_lo[3] * lo[j3];
        a[j] = acc;
        if (!details) continue;
        acc = 0;
        acc += dwt_hi[0] * lo[j0];
        acc += dwt_hi[1] * lo[j1];
        acc += dwt_hi[2] * lo[j2];
        acc += dwt_hi[3] * lo[j3];
        v[j] = acc;
        acc = 0;
        acc += dwt_lo[0] * hi[j0];
        acc += dwt_lo[1] * hi[j1];
        acc += dwt_lo[2] * hi[j2];
        acc += dwt_lo[3] * hi[j3];
        h[j] = acc;
        acc = 0;
        acc += dwt_hi[0] * hi[j0];
        acc += dwt_hi[1] * hi[j1];
        acc += dwt_hi[2] * hi[j2];
        acc += dwt_hi[3] * hi[j3];
        d[j] = acc;
    }
}

/* Level-0 source row y of picture i (0 reference, 1 distorted) as floats,
 * kept in slot y % 4: the four rows of one output row differ mod 4. */
const float *source_row(FloatAdmScratch *t, int i, const QualePicture *pic, int y)
{
    const int slot = y % 4;
    if (t->source_row[i][slot] != y) {
        picture_float_row(pic, 0, (unsigned)y, -128.0f, t->source[i][slot]);
        t->source_row[i][slot] = y;
    }
    return t->source[i][slot];
}

/* ---- decoupling, CSF and masking --------------------------------------------------- */

/* Decouples column j of row o (reference) / d (distorted) and weights
 * both parts by the CSF into ring row r. */
static inline void decouple_at(const FloatAdmState *s, const float *const o[ORIENTATIONS],
                               const float *const d[ORIENTATIONS], const float csf[3], int j,
                               const AdmRow *r)
{
    const float eps = FLOAT_ADM_DIV_EPS;
    const float ov[3] = { o[O_H][j], o[O_V][j], o[O_D][j] };
    const float tv[3] = { d[O_H][j], d[O_V][j], d[O_D][j] };
    const float q[3] = { adm_div(tv[0], ov[0] + eps), adm_div(tv[1], ov[1] + eps),
                         adm_div(tv[2], ov[2] + eps) };
    float cr[3], ca[3];
    float_adm_decouple(ov, tv, q, s->cos_1deg_sq, s->enhn_gain_limit, csf, cr, ca);
    for (int b = 0; b < 3; b++) {
        r->csf_r[b][j] = cr[b];
        r->csf_a[b][j] = ca[b];
        r->flt_r[b][j] = float_adm_by_30(cr[b]);
        r->flt_a[b][j] = float_adm_by_30(ca[b]);
    }
}

/* decouple_at() for columns [lo, hi). */
void decouple_row(const FloatAdmState *s, const float *const o[ORIENTATIONS],
                         const float *const d[ORIENTATIONS], const float csf[3], int lo, int hi,
                         const AdmRow *r)
{
    int j = lo;
#if VEC4_LANES
    const Vec4 zero = vec_set1(0.0f), one = vec_set1(1.0f), eps = vec_set1(1e-30f);
    const Vec4 cos_sq = vec_set1(s->cos_1deg_sq);
    const Vec4Dbl gain_limit = vec_set1_dbl(s->enhn_gain_limit);
    for (; j + VEC4_LANES <= hi; j += VEC4_LANES) {
        Vec4 ov[3], tv[3], rst[3];
        for (int b = 0; b < 3; b++) {
            ov[b] = vec_load(o[b] + j);
            tv[b] = vec_load(d[b] + j);
            Vec4 k = vec_div(tv[b], ov[b] + eps);
            k = vec_select(k < zero, zero, vec_select(k > one, one, k));
            rst[b] = k * ov[b];
        }
        const Vec4 ot_dp = ov[O_H] * tv[O_H] + ov[O_V] * tv[O_V];
        const Vec4 o_mag_sq = ov[O_H] * ov[O_H] + ov[O_V] * ov[O_V];
        const Vec4 t_mag_sq = tv[O_H] * tv[O_H] + tv[O_V] * tv[O_V];
        const Vec4Int angle = (ot_dp >= zero) & (ot_dp * ot_dp >= cos_sq * o_mag_sq * t_mag_sq);

        for (int b = 0; b < 3; b++) {
            const Vec4Dbl t = __builtin_convertvector(tv[b], Vec4Dbl);
            Vec4Dbl g = __builtin_convertvector(rst[b], Vec4Dbl) * gain_limit;
            rst[b] = vec_select(angle & (rst[b] > zero),
                                vec_select(vec_narrow(g < t), __builtin_convertvector(g, Vec4),
                                           tv[b]), rst[b]);
            g = __builtin_convertvector(rst[b], Vec4Dbl) * gain_limit;
            rst[b] = vec_select(angle & (rst[b] < zero),
                                vec_select(vec_narrow(g > t), __builtin_convertvector(g, Vec4),
                                           tv[b]), rst[b]);
            const Vec4 c = vec_set1(csf[b]);
            const Vec4 cr = c * rst[b], ca = c * (tv[b] - rst[b]);
            vec_store(r->csf_r[b] + j, cr);
            vec_store(r->csf_a[b] + j, ca);
            vec_store(r->flt_r[b] + j, vec_scale_abs(ADM_ONE_BY_30, cr));
            vec_store(r->flt_a[b] + j, vec_scale_abs(ADM_ONE_BY_30, ca));
        }
    }
#endif
    for (; j < hi; j++) decouple_at(s, o, d, csf, j, r);
}

static inline float cube_or_pow(float x, double p_norm)
{
    return p_norm == 3.0 ? x * x * x : powf(x, p_norm);
}

/* The masking threshold at column j: libvmaf's ADM_CM_THRESH_S_* sums of
 * the 3x3 window of flt (|x| / 30) with |x| / 15 at the centre, in its
 * order, per orientation, then over h, v, d. */
static inline float mask_threshold(float *const up[ORIENTATIONS],
                                   float *const mid[ORIENTATIONS],
                                   float *const down[ORIENTATIONS],
                                   float *const centre[ORIENTATIONS], int jl, int j, int jr)
{
    float thr = 0;
    for (int b = 0; b < ORIENTATIONS; b++)
        thr += float_adm_cm_sum(up[b][jl], up[b][j], up[b][jr], mid[b][jl], centre[b][j],
                                mid[b][jr], down[b][jl], down[b][j], down[b][jr]);
    return thr;
}

/* The masked values at column j: max(|x| - threshold, 0) for the restored
 * part (num, x[0..2]) and the additive impairment (aim, x[3..5]). */
static inline void mask_at(const FloatAdmState *s, const AdmRow *up, const AdmRow *mid,
                           const AdmRow *down, int w, int j, float *const x[6])
{
    const int jl = j == 0 ? 1 : j - 1, jr = j == w - 1 ? w - 1 : j + 1;
    float thr_num = 0.0f, thr_aim = 0.0f;
    if (!s->bypass_cm) {
        thr_num = mask_threshold(up->flt_a, mid->flt_a, down->flt_a, mid->csf_a, jl, j, jr);
        thr_aim = mask_threshold(up->flt_r, mid->flt_r, down->flt_r, mid->csf_r, jl, j, jr);
    }
    for (int b = 0; b < 3; b++) {
        const float xr = fabsf(mid->csf_r[b][j]) - thr_num;
        const float xa = fabsf(mid->csf_a[b][j]) - thr_aim;
        x[b][j] = xr < 0.0f ? 0.0f : xr;
        x[3 + b][j] = xa < 0.0f ? 0.0f : xa;
    }
}

#if VEC4_LANES
/* mask_threshold() of four columns j.. inside the row (no mirroring). */
static inline Vec4 vec_mask_threshold(float *const up[ORIENTATIONS],
                                        float *const mid[ORIENTATIONS],
                                        float *const down[ORIENTATIONS],
                                        float *const centre[ORIENTATIONS], int j)
{
    Vec4 thr = vec_set1(0.0f);
    for (int b = 0; b < ORIENTATIONS; b++) {
        Vec4 sum = vec_set1(0.0f);
        sum += vec_load(up[b] + j - 1);
        sum += vec_load(up[b] + j);
        sum += vec_load(up[b] + j + 1);
        sum += vec_load(mid[b] + j - 1);
        sum = __builtin_convertvector(
            __builtin_convertvector(sum, Vec4Dbl) +
                vec_set1_dbl(ADM_ONE_BY_15) *
                    __builtin_convertvector(vec_abs(vec_load(centre[b] + j)), Vec4Dbl),
            Vec4);
        sum += vec_load(mid[b] + j + 1);
        sum += vec_load(down[b] + j - 1);
        sum += vec_load(down[b] + j);
        sum += vec_load(down[b] + j + 1);
        thr += sum;
    }
    return thr;
}
#endif

/* One row of libvmaf's adm_cm_s() for the restored part (num: masked by
 * the additive impairment) and the additive impairment (aim: masked by
 * the restored part), summed in its order; x: six rows of scratch. */
void mask_row(const FloatAdmState *s, const AdmRow *up, const AdmRow *mid,
                     const AdmRow *down, int w, int left, int right, float *const x[6],
                     float num[3], float aim[3])
{
    int j = left;
    if (j == 0 && j < right) mask_at(s, up, mid, down, w, j++, x);
#if VEC4_LANES
    const Vec4 zero = vec_set1(0.0f);
    for (; j + VEC4_LANES <= right && j + VEC4_LANES <= w - 1; j += VEC4_LANES) {
        Vec4 thr_num = zero, thr_aim = zero;
        if (!s->bypass_cm) {
            thr_num = vec_mask_threshold(up->flt_a, mid->flt_a, down->flt_a, mid->csf_a, j);
            thr_aim = vec_mask_threshold(up->flt_r, mid->flt_r, down->flt_r, mid->csf_r, j);
        }
        for (int b = 0; b < 3; b++) {
            const Vec4 xr = vec_abs(vec_load(mid->csf_r[b] + j)) - thr_num;
            const Vec4 xa = vec_abs(vec_load(mid->csf_a[b] + j)) - thr_aim;
            vec_store(x[b] + j, vec_select(xr < zero, zero, xr));
            vec_store(x[3 + b] + j, vec_select(xa < zero, zero, xa));
        }
    }
#endif
    for (; j < right; j++) mask_at(s, up, mid, down, w, j, x);

    float num_h = 0, num_v = 0, num_d = 0, aim_h = 0, aim_v = 0, aim_d = 0;
    const double p = s->p_norm;
    for (j = left; j < right; j++) {
        num_h += cube_or_pow(x[0][j], p);
        num_v += cube_or_pow(x[1][j], p);
        num_d += cube_or_pow(x[2][j], p);
        aim_h += cube_or_pow(x[3][j], p);
        aim_v += cube_or_pow(x[4][j], p);
        aim_d += cube_or_pow(x[5][j], p);
    }
    num[0] += num_h;
    num[1] += num_v;
    num[2] += num_d;
    aim[0] += aim_h;
    aim[1] += aim_v;
    aim[2] += aim_d;
}

/* One row of libvmaf's adm_csf_den_scale_s(): |csf * o|^p of the reference. */
void den_row(const FloatAdmState *s, const float *const o[ORIENTATIONS],
                    const float csf[3], int left, int right, float den[3])
{
    float dh = 0, dv = 0, dd = 0;
    const double p = s->p_norm;
    for (int j = left; j < right; j++) {
        dh += cube_or_pow(fabsf(csf[0] * o[O_H][j]), p);
        dv += cube_or_pow(fabsf(csf[1] * o[O_V][j]), p);
        dd += cube_or_pow(fabsf(csf[2] * o[O_D][j]), p);
    }
    den[0] += dh;
    den[1] += dv;
    den[2] += dd;
}

/* The sum over h, v, d of (sum)^(1/p) + noise floor. */
float pooled(const float acc[3], float noise, double p_norm)
{
    const float h = powf(acc[0], 1.0f / p_norm) + noise;
    const float v = powf(acc[1], 1.0f / p_norm) + noise;
    const float d = powf(acc[2], 1.0f / p_norm) + noise;
    return h + v + d;
}
