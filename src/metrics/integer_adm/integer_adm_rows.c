/*
 * Integer ADM's C row kernels (the AdmDsp table's C level, which the SIMD
 * kernels of x86/ equal bit for bit): the DWT, the decoupling, and the
 * CSF, masking and denominator sums, a row at a time.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics/common/adm_csf.h"
#include "common.h"
#include "integer_adm.h"
#include "metric.h"
#include "integer_adm_private.h"

/* ---- DWT ------------------------------------------------------------------- */

/* libvmaf's db2 analysis filters in Q15; the low-pass taps sum to 46342. */
#define DWT_LO_SUM 46342

/* Extends a row of n values (n >= 3) for the horizontal filter taps at
 * 2j - 1 .. 2j + 2: row[-1] = row[1], row[n] = row[n-1], row[n+1] = row[n-2]. */
static inline void pad_row(int32_t *row, int n)
{
    row[-1] = row[1];
    row[n] = row[n - 1];
    row[n + 1] = row[n - 2];
}

/* The two filters over t[0..3] = row[2j - 1 .. 2j + 2], in 32 bits (level 0:
 * |t| <= 32768, so the sums stay below 2^31) and in 64 bits (levels 1..3). */
static inline int32_t filter_lo32(const int32_t *t)
{
    return 15826 * t[0] + 27411 * t[1] + 7345 * t[2] - 4240 * t[3];
}

static inline int32_t filter_hi32(const int32_t *t)
{
    return 27411 * t[2] - 4240 * t[0] - 7345 * t[1] - 15826 * t[3];
}

static inline int64_t filter_lo64(const int32_t *t)
{
    return 15826 * (int64_t)t[0] + 27411 * (int64_t)t[1] + 7345 * (int64_t)t[2]
           - 4240 * (int64_t)t[3];
}

static inline int64_t filter_hi64(const int32_t *t)
{
    return 27411 * (int64_t)t[2] - 4240 * (int64_t)t[0] - 7345 * (int64_t)t[1]
           - 15826 * (int64_t)t[3];
}

ADM_INLINE uint32_t load_sample(const uint8_t *row, int j, int bytes)
{
    return bytes == 1 ? row[j] : ((const uint16_t *)row)[j];
}

/* One output row of level 0 from the picture rows src[0..3] (rows 2i - 1 ..
 * 2i + 2, mirrored; uint8_t samples when bytes is 1, uint16_t when 2) into
 * out[a, h, v, d].  Vertical pass: samples centred on 0 and brought back to
 * 8 bits, narrowed to int16; horizontal pass in Q16.  The vertical sums are
 * libvmaf's int32 sums, wrapping the way they do with samples above the
 * bit depth (within it, the result always fits).  Without details only the
 * approximation is made. */
ADM_INLINE void dwt_row0(const uint8_t *const src[4], int bytes, int bitdepth, int w,
                         bool details, int32_t *const out[4], int32_t *restrict lo,
                         int32_t *restrict hi)
{
    const uint32_t round = 1u << (bitdepth - 1);
    const uint32_t offset = (uint32_t)DWT_LO_SUM * round;
    const uint8_t *restrict r0 = src[0], *restrict r1 = src[1];
    const uint8_t *restrict r2 = src[2], *restrict r3 = src[3];

    for (int j = 0; j < w; j++) {
        const uint32_t s0 = load_sample(r0, j, bytes), s1 = load_sample(r1, j, bytes);
        const uint32_t s2 = load_sample(r2, j, bytes), s3 = load_sample(r3, j, bytes);
        const uint32_t l = 15826u * s0 + 27411u * s1 + 7345u * s2 - 4240u * s3 - offset;
        lo[j] = (int16_t)((int32_t)(l + round) >> bitdepth);
    }
    pad_row(lo, w);

    int32_t *restrict a = out[BAND_A];
    if (!details) {
        for (int j = 0; j < (w + 1) / 2; j++)
            a[j] = (int16_t)((filter_lo32(lo + 2 * j - 1) + 32768) >> 16);
        return;
    }

    for (int j = 0; j < w; j++) {
        const uint32_t s0 = load_sample(r0, j, bytes), s1 = load_sample(r1, j, bytes);
        const uint32_t s2 = load_sample(r2, j, bytes), s3 = load_sample(r3, j, bytes);
        const uint32_t d = 27411u * s2 - 4240u * s0 - 7345u * s1 - 15826u * s3;
        hi[j] = (int16_t)((int32_t)(d + round) >> bitdepth);
    }
    pad_row(hi, w);

    int32_t *restrict bh = out[BAND_H], *restrict bv = out[BAND_V], *restrict bd = out[BAND_D];
    for (int j = 0; j < (w + 1) / 2; j++) {
        a[j] = (int16_t)((filter_lo32(lo + 2 * j - 1) + 32768) >> 16);
        bv[j] = (int16_t)((filter_hi32(lo + 2 * j - 1) + 32768) >> 16);
        bh[j] = (int16_t)((filter_lo32(hi + 2 * j - 1) + 32768) >> 16);
        bd[j] = (int16_t)((filter_hi32(hi + 2 * j - 1) + 32768) >> 16);
    }
}

static void dwt_row0_8_c(const uint8_t *const src[4], int bitdepth, int w, bool details,
                         int32_t *const out[4], int32_t *lo, int32_t *hi)
{
    (void)bitdepth; /* always 8 */
    dwt_row0(src, 1, 8, w, details, out, lo, hi);
}

static void dwt_row0_16_c(const uint8_t *const src[4], int bitdepth, int w, bool details,
                          int32_t *const out[4], int32_t *lo, int32_t *hi)
{
    dwt_row0(src, 2, bitdepth, w, details, out, lo, hi);
}

/* One output row of levels 1..3 from rows src[0..3] of the previous
 * approximation band (w wide, int32), in 64-bit sums with per-level
 * rounding shifts. */
static void dwt_row123_c(const int32_t *const src[4], int w, int scale, bool details,
                         int32_t *const out[4], int32_t *lo, int32_t *hi)
{
    static const int64_t v_add[3] = { 0, 32768, 32768 }, h_add[3] = { 16384, 32768, 16384 };
    static const int v_shift[3] = { 0, 16, 16 }, h_shift[3] = { 15, 16, 15 };
    const int64_t va = v_add[scale - 1], ha = h_add[scale - 1];
    const int vs = v_shift[scale - 1], hs = h_shift[scale - 1];

    for (int j = 0; j < w; j++) {
        const int32_t t[4] = { src[0][j], src[1][j], src[2][j], src[3][j] };
        lo[j] = (int32_t)((filter_lo64(t) + va) >> vs);
        if (details) hi[j] = (int32_t)((filter_hi64(t) + va) >> vs);
    }
    pad_row(lo, w);

    int32_t *a = out[BAND_A];
    if (!details) {
        for (int j = 0; j < (w + 1) / 2; j++)
            a[j] = (int32_t)((filter_lo64(lo + 2 * j - 1) + ha) >> hs);
        return;
    }

    int32_t *bh = out[BAND_H], *bv = out[BAND_V], *bd = out[BAND_D];
    pad_row(hi, w);
    for (int j = 0; j < (w + 1) / 2; j++) {
        a[j] = (int32_t)((filter_lo64(lo + 2 * j - 1) + ha) >> hs);
        bv[j] = (int32_t)((filter_hi64(lo + 2 * j - 1) + ha) >> hs);
        bh[j] = (int32_t)((filter_lo64(hi + 2 * j - 1) + ha) >> hs);
        bd[j] = (int32_t)((filter_hi64(hi + 2 * j - 1) + ha) >> hs);
    }
}

/* ---- decoupling -------------------------------------------------------------- */

/* Whether the angle between (oh, ov) and (th, tv) is below one degree:
 * u.v >= 0 and (u.v)^2 >= cos^2(1 deg) |u|^2 |v|^2, in libvmaf's mix of
 * float and double. */
static inline bool angle_within_1deg(int64_t ot_dp, int64_t o_mag_sq, int64_t t_mag_sq,
                                     float cos_1deg_sq)
{
    const double dp = (float)ot_dp / 4096.0;
    return dp >= 0.0f &&
           dp * dp >= cos_1deg_sq * ((float)o_mag_sq / 4096.0) * ((float)t_mag_sq / 4096.0);
}

/* t / o in Q15, clamped to [0, 1]; level 0: reciprocal of the int16 o from
 * the table. */
static inline int32_t ratio_q15_level0(const int32_t *div_lookup, int32_t o, int32_t t)
{
    if (o == 0) return 32768;
    const int32_t k = (int32_t)(((int64_t)div_lookup[o + 32768] * t + 16384) >> 15);
    return k < 0 ? 0 : k > 32768 ? 32768 : k;
}

/* Levels 1..3: o reduced to its 15 leading bits (rounded), the shift made
 * up after the product. */
static inline int32_t ratio_q15_level123(const int32_t *div_lookup, int32_t o, int32_t t)
{
    if (o == 0) return 32768;
    uint32_t mag = o < 0 ? 0u - (uint32_t)o : (uint32_t)o;
    int shift = 0;
    if (mag >= 32768) {
        shift = 17 - __builtin_clz(mag);
        mag = (uint16_t)((mag + (1u << (shift - 1))) >> shift);
    }
    const int64_t sign = o < 0 ? -1 : 1;
    /* libvmaf's int "1 << (14 + shift)" */
    const int64_t round = (int32_t)(1u << (14 + shift));
    const int64_t k = ((int64_t)div_lookup[mag + 32768] * t * sign + round) >> (15 + shift);
    return k < 0 ? 0 : k > 32768 ? 32768 : (int32_t)k;
}

/* a b + c d in 64 bits, wrapping as the vector kernels' additions do.  Real
 * details keep far below the wrap (it needs both products near 2^62);
 * checkasm's extreme inputs reach it, and there C and SIMD must agree
 * without the signed overflow C leaves undefined. */
ADM_INLINE int64_t adm_dot2(int32_t a, int32_t b, int32_t c, int32_t d)
{
    return (int64_t)((uint64_t)((int64_t)a * b) + (uint64_t)((int64_t)c * d));
}

/* Splits a row of distorted details (over columns j0 .. j1 - 1) into the
 * restored part (rst) and the additive impairment (add). */
ADM_INLINE void decouple_row(bool level0, const int32_t *div_lookup, float cos_1deg_sq,
                             double gain, const int32_t *const ref[3], const int32_t *const dis[3],
                             int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    for (int j = j0; j < j1; j++) {
        const int32_t oh = ref[0][j], ov = ref[1][j];
        const int32_t th = dis[0][j], tv = dis[1][j];
        const bool angle = angle_within_1deg(adm_dot2(oh, th, ov, tv), adm_dot2(oh, oh, ov, ov),
                                             adm_dot2(th, th, tv, tv), cos_1deg_sq);
        for (int b = 0; b < 3; b++) {
            const int32_t o = ref[b][j], t = dis[b][j];
            const int32_t k = level0 ? ratio_q15_level0(div_lookup, o, t)
                                     : ratio_q15_level123(div_lookup, o, t);
            int32_t v = level0 ? (int16_t)((k * o + 16384) >> 15)
                               : (int32_t)(((int64_t)k * o + 16384) >> 15);
            /* libvmaf tests the sign of k / 32768 * o / 64 in float,
             * which is the sign of k * o. */
            if (angle && k > 0 && o != 0) {
                const double g = v * gain;
                v = (int32_t)(o > 0 ? (g < t ? g : t) : (g > t ? g : t));
            }
            rst[b][j] = v;
            add[b][j] = level0 ? (int16_t)(t - v) : (int32_t)((uint32_t)t - (uint32_t)v);
        }
    }
}

static void decouple_row0_c(const int32_t *div_lookup, float cos_1deg_sq, double gain,
                            const int32_t *const ref[3], const int32_t *const dis[3],
                            int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    decouple_row(true, div_lookup, cos_1deg_sq, gain, ref, dis, rst, add, j0, j1);
}

static void decouple_row123_c(const int32_t *div_lookup, float cos_1deg_sq, double gain,
                              const int32_t *const ref[3], const int32_t *const dis[3],
                              int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    decouple_row(false, div_lookup, cos_1deg_sq, gain, ref, dis, rst, add, j0, j1);
}

/* ---- CSF and masking ----------------------------------------------------------- */

/* CSF-weights a row of h, v, d of a decoupled band (columns j0 .. j1 - 1)
 * and sums what the 3x3 masking threshold needs:
 *   around[j] = sum over orientations of |csf| / 30,
 *   centre[j] = sum over orientations of |csf| / 15 - |csf| / 30,
 * so that threshold = (3x3 box sum of around) + centre.  The sums wrap in
 * 32 bits like libvmaf's int32 threshold. */
ADM_INLINE void masking_row(bool level0, const uint32_t csf[3], const int32_t *const src[3],
                            int32_t *around, int32_t *centre, int j0, int j1)
{
    /* level 0: Q21 / Q23 weights back to Q16, with libvmaf's 65535 */
    static const int32_t add0[3] = { 16384, 16384, 65535 };
    static const int shift0[3] = { 15, 15, 17 };

    for (int j = j0; j < j1; j++) {
        uint32_t sum_around = 0, sum_centre = 0;
        for (int b = 0; b < 3; b++) {
            int32_t c, flt, ctr;
            if (level0) {
                c = (int16_t)(((int32_t)csf[b] * src[b][j] + add0[b]) >> shift0[b]);
                flt = (int16_t)((4369 * abs(c) + 2048) >> 12);
                ctr = (int16_t)((8738 * abs(c) + 2048) >> 12);
            } else {
                /* 1 / 30 and 1 / 15 in Q32, with libvmaf's rounding
                 * term (int32_t)(1u << 31), which subtracts */
                c = (int32_t)(((int64_t)csf[b] * src[b][j] + (1 << 27)) >> 28);
                flt = (int32_t)((143165577 * (int64_t)abs_wrap(c) + INT32_MIN) >> 32);
                ctr = (int32_t)((286331153 * (int64_t)abs_wrap(c) + INT32_MIN) >> 32);
            }
            sum_around += (uint32_t)flt;
            sum_centre += (uint32_t)ctr - (uint32_t)flt;
        }
        around[j] = (int32_t)sum_around;
        centre[j] = (int32_t)sum_centre;
    }
}

static void masking_row0_c(const uint32_t csf[3], const int32_t *const src[3], int32_t *around,
                           int32_t *centre, int j0, int j1)
{
    masking_row(true, csf, src, around, centre, j0, j1);
}

static void masking_row123_c(const uint32_t csf[3], const int32_t *const src[3],
                             int32_t *around, int32_t *centre, int j0, int j1)
{
    masking_row(false, csf, src, around, centre, j0, j1);
}

/* The masked sums' rounding (see AdmMaskedShifts): the cubes are rounded
 * down by shifts that depend on the band width, every row sum by a shift
 * that depends on its height. */
void adm_masked_shifts(bool level0, int w, int h, AdmMaskedShifts *p)
{
    if (level0) {
        p->cub[0] = p->cub[1] = double_to_u32(ceil(log2(w) - 4));
        p->cub[2] = double_to_u32(ceil(log2(w) - 3));
        p->sq[0] = p->sq[1] = 29;
        p->sq[2] = 30;
        p->sq_add[0] = p->sq_add[1] = 1 << 28;
        p->sq_add[2] = 1 << 29;
        p->sub[0] = p->sub[1] = 10;
        p->sub[2] = 12;
    } else {
        p->cub[0] = p->cub[1] = p->cub[2] = double_to_u32(ceil(log2(w)));
        p->sq[0] = p->sq[1] = p->sq[2] = 30;
        p->sq_add[0] = p->sq_add[1] = p->sq_add[2] = 1 << 29;
        p->sub[0] = p->sub[1] = p->sub[2] = 0;
    }
    for (int b = 0; b < 3; b++) p->cub_add[b] = double_to_u32(pow2_u32(p->cub[b] - 1));
    p->row_shift = double_to_u32(ceil(log2(h)));
    p->row_add = double_to_u32(pow2_u32(p->row_shift - 1));
}

/* The numerator from a level's masked sums (the restored part against the
 * additive impairment's masking for the DLM, the other way round for AIM):
 * per orientation (sum of the cubes)^(1/3) plus the noise floor (area *
 * noise_weight)^(1/3), the three orientations added. */
float adm_masked_finish(const AdmState *s, bool level0, int scale, int w, int h,
                        const AdmMaskedShifts *p, double noise_weight, const uint64_t acc[3])
{
    const Rect r = adm_rect_scored(w, h);
    const uint32_t *cub = p->cub, row_shift = p->row_shift;
    (void)s;
    /* Back to float: level 0 in double then float, levels 1..3 through a
     * float divisor (the int64 sum is converted to float first). */
    float f[3];
    if (level0) {
        static const uint32_t total[3] = { 52, 52, 57 };
        for (int b = 0; b < 3; b++)
            f[b] = (float)((int64_t)acc[b] / pow2_u32(total[b] - cub[b] - row_shift));
    } else {
        static const uint32_t total[3] = { 45, 39, 36 };
        const float divisor = pow2_u32(total[scale - 1] - cub[0] - row_shift);
        for (int b = 0; b < 3; b++) f[b] = (float)(int64_t)acc[b] / divisor;
    }
    const float floor_term = powf((r.bottom - r.top) * (r.right - r.left) * noise_weight,
                                  1.0f / 3.0f);
    float num[3];
    for (int b = 0; b < 3; b++) num[b] = powf(f[b], 1.0f / 3.0f) + floor_term;
    return num[0] + num[1] + num[2];
}

/* One row of the masked sums (before the row's rounding shift): per
 * orientation the sum over columns left .. right - 1 of the cube of
 * max(|csf(x)| - threshold, 0), the threshold from the masking rows
 * around[0..2] (the rows above, at and below, mirrored) and centre.  The
 * masking window reflects across the first column (-1 -> 1) and repeats
 * the last (w -> w - 1), as libvmaf's does. */
ADM_INLINE void masked_row(bool level0, const uint32_t csf[3], const AdmMaskedShifts *p,
                           const int32_t *const src[3], const int32_t *const around[3],
                           const int32_t *centre, int w, int left, int right, uint32_t *col,
                           uint64_t sums[3])
{
    /* column sums of the 3-row window, then the 3-column box per sample */
    const int j0 = QUALE_MAX(left - 1, 0), j1 = QUALE_MIN(right + 1, w);
    for (int j = j0; j < j1; j++)
        col[j] = (uint32_t)around[0][j] + (uint32_t)around[1][j] + (uint32_t)around[2][j];
    if (left == 0) col[-1] = col[1];
    if (right == w) col[w] = col[w - 1];

    uint64_t row[3] = { 0, 0, 0 };
    for (int j = left; j < right; j++) {
        const int32_t thr = (int32_t)(col[j - 1] + col[j] + col[j + 1] + (uint32_t)centre[j]);
        for (int b = 0; b < 3; b++) {
            const int32_t c = level0
                ? src[b][j] * (int32_t)csf[b]
                : (int32_t)(((int64_t)src[b][j] * csf[b] + (1 << 27)) >> 28);
            int32_t m = (int32_t)((uint32_t)abs_wrap(c) - ((uint32_t)thr << p->sub[b]));
            if (m < 0) m = 0;
            const int32_t m_sq = (int32_t)(((int64_t)m * m + p->sq_add[b]) >> p->sq[b]);
            row[b] += (uint64_t)(((int64_t)m_sq * m + p->cub_add[b]) >> p->cub[b]);
        }
    }
    for (int b = 0; b < 3; b++) sums[b] = row[b];
}

static void masked_row0_c(const uint32_t csf[3], const AdmMaskedShifts *p,
                          const int32_t *const src[3], const int32_t *const around[3],
                          const int32_t *centre, int w, int left, int right, uint32_t *col,
                          uint64_t sums[3])
{
    masked_row(true, csf, p, src, around, centre, w, left, right, col, sums);
}

static void masked_row123_c(const uint32_t csf[3], const AdmMaskedShifts *p,
                            const int32_t *const src[3], const int32_t *const around[3],
                            const int32_t *centre, int w, int left, int right, uint32_t *col,
                            uint64_t sums[3])
{
    masked_row(false, csf, p, src, around, centre, w, left, right, col, sums);
}

/* The denominator of a level: per orientation (sum of |csf(o)|^3)^(1/3)
 * plus the noise floor, over the scored region of the reference details;
 * the CSF weight is applied after the cube, in double. */
void adm_den_shifts(bool level0, int scale, int w, int h, AdmDenShifts *p)
{
    const Rect r = adm_rect_scored(w, h);
    memset(p, 0, sizeof(*p));
    if (level0) {
        int shift = (int)ceil(log2((r.bottom - r.top) * (r.right - r.left)) - 20);
        shift = QUALE_MAX(shift, 0);
        p->row_shift = (uint32_t)shift;
        p->row_add = shift > 0 ? 1u << (shift - 1) : 0;
        return;
    }
    /* libvmaf adds 2^shift, not 2^(shift - 1), before the square's shift */
    static const int sq[3] = { 31, 30, 31 };
    p->sq = (uint32_t)sq[scale - 1];
    p->sq_add = 1u << p->sq;
    p->cub = double_to_u32(ceil(log2(r.right - r.left)));
    p->cub_add = double_to_u32(pow2_u32(p->cub - 1));
    p->row_shift = double_to_u32(ceil(log2(r.bottom - r.top)));
    p->row_add = double_to_u32(pow2_u32(p->row_shift - 1));
}

float adm_den_finish(const AdmState *s, bool level0, int scale, int w, int h,
                     const AdmDenShifts *p, const uint64_t acc[3])
{
    const Rect r = adm_rect_scored(w, h);
    static const uint32_t total[3] = { 32, 27, 23 };
    const double scale_back = level0 ? pow(2, 18 - (int)p->row_shift)
                                     : pow2_u32(total[scale - 1] - p->row_shift - p->cub);
    const float floor_term = powf((r.bottom - r.top) * (r.right - r.left) * s->noise_weight,
                                  1.0f / 3.0f);
    float den[3];
    for (int b = 0; b < 3; b++) {
        const double csf = (double)(acc[b] / scale_back) * pow(s->csf[scale][b], 3);
        den[b] = powf(csf, 1.0f / 3.0f) + floor_term;
    }
    return den[0] + den[1] + den[2];
}

/* One row of the denominator's sums (before the row's rounding shift) over
 * columns left .. right - 1. */
static void den_row0_c(const AdmDenShifts *p, const int32_t *const ref[3], int left, int right,
                       uint64_t sums[3])
{
    (void)p; /* level 0: the cube is exact */
    for (int b = 0; b < 3; b++) {
        const int32_t *o = ref[b];
        uint64_t row = 0;
        for (int j = left; j < right; j++) {
            const uint64_t m = (uint16_t)abs(o[j]);
            row += m * m * m;
        }
        sums[b] = row;
    }
}

static void den_row123_c(const AdmDenShifts *p, const int32_t *const ref[3], int left,
                         int right, uint64_t sums[3])
{
    for (int b = 0; b < 3; b++) {
        const int32_t *o = ref[b];
        uint64_t row = 0;
        for (int j = left; j < right; j++) {
            const uint64_t m = (uint32_t)abs_wrap(o[j]);
            row += ((((m * m) + p->sq_add) >> p->sq) * m + p->cub_add) >> p->cub;
        }
        sums[b] = row;
    }
}

void adm_dsp_init_c(AdmDsp *dsp)
{
    *dsp = (AdmDsp){
        .dwt_row0_8 = dwt_row0_8_c,
        .dwt_row0_16 = dwt_row0_16_c,
        .dwt_row123 = dwt_row123_c,
        .decouple_row0 = decouple_row0_c,
        .decouple_row123 = decouple_row123_c,
        .masking_row0 = masking_row0_c,
        .masking_row123 = masking_row123_c,
        .masked_row0 = masked_row0_c,
        .masked_row123 = masked_row123_c,
        .den_row0 = den_row0_c,
        .den_row123 = den_row123_c,
    };
}
