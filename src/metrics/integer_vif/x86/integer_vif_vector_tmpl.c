/*
 * Integer VIF's kernels (the VifDsp table of integer_vif.h) on one register
 * of VECTOR_BYTES (vector_int.h), bit for bit what the C kernels compute;
 * integer_vif_avx2.c and integer_vif_avx512.c include this file.
 *
 * The filters run as 16-bit multiply-adds (vpmaddwd: two neighbouring
 * 16-bit values times two signed 16-bit coefficients, the products added)
 * on values offset by -32768 where they need all
 * 16 bits, so a sum comes out 2^31 short, modulo 2^32, where every true sum
 * of libvmaf's fits.  The 32-bit squares of 16-bit samples are summed as
 * their high and low 16-bit halves (vpmulhuw, vpmullw), and recombined
 * before the shift: (2^16 P + Q + r) >> s = (P << (16 - s)) + ((Q + r) >> s)
 * for s <= 16.
 *
 * The statistic of a sample (vif_pixel_rounded) runs on the 32-bit lanes:
 * the divisions and products in double, half the lanes at a time, in the
 * C code's order with no fused multiply-add; the logs from the table by
 * gathers, the octave and mantissa read from the bits of the exact double
 * of the integer.  Conversions follow the C (integer_vif.h's
 * vif_double_to_int32).
 *
 * The last columns of a row: AVX-512 reads and writes them through masks,
 * so no row goes to C; AVX2 ends a row's last step at its last column,
 * over columns done before (the same values again), so no kernel reads or
 * writes past a row, and rows narrower than a step go to the C kernels.
 * The horizontal passes read the planes' padding and drop the lanes past
 * the row.
 *
 * The 8-bit and 16-bit kernels are one always-inlined function with the
 * sample size as a constant argument, each compiled for every filter width
 * (VIF_CONSTANT_FW).  With Ice Lake's VNNI (VIF_VNNI, integer_vif_avx512icl.c)
 * the multiply-adds that feed a sum are one vpdpwssd each (the same sum
 * modulo 2^32).
 *
 * The includer defines VECTOR_BYTES, VIF_ISA(name) and VIF_VNNI.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "metrics/integer_vif/integer_vif.h"
#include "metrics/common/x86/vector_int.h"

#define INLINE VI_INLINE

/* ---- the taps in pairs ------------------------------------------------------
 *
 * Every tap of libvmaf's filters is below 32768 except the centre of the
 * 3-tap one (43728), and every centre tap is even, so:
 *   - the vertical passes interleave rows k and fw - 1 - k (equal taps),
 *     and the centre row with itself, at half its tap;
 *   - the horizontal passes pair neighbouring taps (k, k + 1), the last
 *     odd one with a zero, and split the 3-tap filter as
 *     (10904, 21864) + (21864, 10904) over offsets -1 and 0.
 * Either way the coefficients of a filter still add up to 65536.
 */

/* Evaluates `call` with FW the filter width fw (17, 9, 5 or 3) as a
 * constant, so that an always-inlined kernel unrolls its taps and keeps
 * their coefficients in registers. */
#define VIF_CONSTANT_FW(fw, call)               \
    do {                                        \
        switch (fw) {                           \
        case 17: { enum { FW = 17 }; call; } break; \
        case 9: { enum { FW = 9 }; call; } break;   \
        case 5: { enum { FW = 5 }; call; } break;   \
        default: { enum { FW = 3 }; call; } break;  \
        }                                       \
    } while (0)

/* The most pairs a filter needs (17 taps: 9). */
#define VIF_MAX_PAIRS 9

/* Two 16-bit coefficients in one 32-bit word, the first in the low half. */
static inline int32_t vif_coef_pair(uint32_t first, uint32_t second)
{
    return (int32_t)((first & 0xffff) | second << 16);
}

/* The vertical pairs of a filter of fw taps: pair k < fw / 2 covers rows k
 * and fw - 1 - k, the last (k = fw / 2) the centre row twice; returns how
 * many there are. */
static inline unsigned vif_vertical_pairs(unsigned fw, int32_t coef[VIF_MAX_PAIRS])
{
    const uint16_t *c = vif_filter(fw);
    const unsigned half = fw / 2;
    for (unsigned k = 0; k < half; k++) coef[k] = vif_coef_pair(c[k], c[k]);
    coef[half] = vif_coef_pair(c[half] / 2u, c[half] / 2u);
    return half + 1;
}

/* The horizontal pairs of a filter of fw taps: pair m multiplies the
 * samples at offset[m] and offset[m] + 1 from the output; returns how many
 * there are. */
static inline unsigned vif_horizontal_pairs(unsigned fw, int offset[VIF_MAX_PAIRS],
                                            int32_t coef[VIF_MAX_PAIRS])
{
    const uint16_t *c = vif_filter(fw);
    const int half = (int)(fw / 2);
    if (fw == 3) {
        offset[0] = -1;
        coef[0] = vif_coef_pair(c[0], c[1] / 2u);
        offset[1] = 0;
        coef[1] = vif_coef_pair(c[1] / 2u, c[2]);
        return 2;
    }
    unsigned m = 0;
    for (unsigned k = 0; k < fw; k += 2, m++) {
        offset[m] = (int)k - half;
        coef[m] = vif_coef_pair(c[k], k + 1 < fw ? c[k + 1] : 0);
    }
    return m;
}

/* The pairs of a filter of fw taps (not 3) for the output one column to the
 * right of the horizontal_pairs() ones, over the same samples: the samples
 * at offset[m] and offset[m] + 1 are its taps 2m - 1 and 2m. */
static inline void vif_horizontal_pairs_odd(unsigned fw, unsigned pairs,
                                            int32_t coef[VIF_MAX_PAIRS])
{
    const uint16_t *c = vif_filter(fw);
    for (unsigned m = 0; m < pairs; m++) coef[m] = vif_coef_pair(m ? c[2 * m - 1] : 0, c[2 * m]);
}

/* Columns per step of the vertical passes, outputs per step of the
 * horizontal ones. */
#define STEP VI_LANES16

/* ---- vertical passes ------------------------------------------------------ */

/* The interleaved samples of rows k and fw - 1 - k: the low or the high
 * unpacked half of a step of columns. */
INLINE vi load_pair(const void *const rows[], unsigned fw, unsigned k, VecColumns c, bool wide,
                    bool high)
{
    const vi a = vi_load_columns(rows[k], c, wide), b = vi_load_columns(rows[fw - 1 - k], c, wide);
    return high ? vi_unpackhi16(a, b) : vi_unpacklo16(a, b);
}

enum { SUM_MU1, SUM_MU2, SUM_XX, SUM_YY, SUM_XY, SUM_XX_P, SUM_YY_P, SUM_XY_P, SUMS };

INLINE vi madd_add(vi sum, vi v, vi c)
{
#if VIF_VNNI
    return _mm512_dpwssd_epi32(sum, v, c);
#else
    return vi_add32(sum, vi_madd16(v, c));
#endif
}

/*
 * Adds one pair of rows (a, b: the interleaved samples of each picture) to
 * the vertical sums of one half, modulo 2^32: the means, and the squares
 * and product (8 bits: whole; 16 bits: their low halves Q in SUM_XX..,
 * their high halves P in SUM_XX_P..).  All but the 8-bit means are offset
 * by -2^31.
 */
INLINE void vertical_stats_pair(vi a, vi b, vi c, bool wide, vi sum[SUMS])
{
    const vi bias = vi_set1_16(INT16_MIN);
    const vi aa = vi_mullo16(a, a), bb = vi_mullo16(b, b);
    const vi ab = vi_mullo16(a, b);
    if (wide) {
        sum[SUM_MU1] = madd_add(sum[SUM_MU1], vi_xor(a, bias), c);
        sum[SUM_MU2] = madd_add(sum[SUM_MU2], vi_xor(b, bias), c);
        sum[SUM_XX_P] = madd_add(sum[SUM_XX_P], vi_xor(vi_mulhi_u16(a, a), bias), c);
        sum[SUM_YY_P] = madd_add(sum[SUM_YY_P], vi_xor(vi_mulhi_u16(b, b), bias), c);
        sum[SUM_XY_P] = madd_add(sum[SUM_XY_P], vi_xor(vi_mulhi_u16(a, b), bias), c);
    } else {
        /* 8-bit samples are positive 16-bit numbers as they are */
        sum[SUM_MU1] = madd_add(sum[SUM_MU1], a, c);
        sum[SUM_MU2] = madd_add(sum[SUM_MU2], b, c);
    }
    sum[SUM_XX] = madd_add(sum[SUM_XX], vi_xor(aa, bias), c);
    sum[SUM_YY] = madd_add(sum[SUM_YY], vi_xor(bb, bias), c);
    sum[SUM_XY] = madd_add(sum[SUM_XY], vi_xor(ab, bias), c);
}

/* The vertical sums of both halves of a step of columns.  Rows are read
 * once for both halves, but for 16-bit rows with 16 registers, whose sums
 * would not fit them twice over: those are read again for the second
 * half. */
INLINE void vertical_stats_sums(const void *const ref[], const void *const dis[], unsigned fw,
                                unsigned pairs, const int32_t coef[], VecColumns c, bool wide,
                                vi lo[SUMS], vi hi[SUMS])
{
    for (unsigned i = 0; i < SUMS; i++) lo[i] = hi[i] = vi_zero();
    if (wide && VI_REGISTERS < 32) {
        for (unsigned h = 0; h < 2; h++)
            for (unsigned k = 0; k < pairs; k++)
                vertical_stats_pair(load_pair(ref, fw, k, c, true, h),
                                    load_pair(dis, fw, k, c, true, h), vi_set1_32(coef[k]), true,
                                    h ? hi : lo);
        return;
    }
    for (unsigned k = 0; k < pairs; k++) {
        const vi cf = vi_set1_32(coef[k]);
        const vi a0 = vi_load_columns(ref[k], c, wide);
        const vi a1 = vi_load_columns(ref[fw - 1 - k], c, wide);
        const vi b0 = vi_load_columns(dis[k], c, wide);
        const vi b1 = vi_load_columns(dis[fw - 1 - k], c, wide);
        vertical_stats_pair(vi_unpacklo16(a0, a1), vi_unpacklo16(b0, b1), cf, wide, lo);
        vertical_stats_pair(vi_unpackhi16(a0, a1), vi_unpackhi16(b0, b1), cf, wide, hi);
    }
}

/* (2^16 P + Q + round) >> shift, modulo 2^32, from the offset sums. */
INLINE vi vertical_square(vi p, vi q, bool wide, vi round, __m128i shift, __m128i shift_up)
{
    const vi offset = vi_set1_32(INT32_MIN);
    const vi low = vi_srl32(vi_add32(vi_add32(q, offset), round), shift);
    if (!wide) return low;
    return vi_add32(vi_sll32(vi_add32(p, offset), shift_up), low);
}

/* Stores a step of 16-bit values from the low and high unpacked halves,
 * each value in 0 .. 65535, offset by -32768. */
INLINE void store_plane(int16_t *dst, VecColumns c, vi low, vi high)
{
    const vi v = vi_packus32(low, high);
    vi_store_columns(dst, c, vi_xor(v, vi_set1_16(INT16_MIN)));
}

INLINE void vertical_stats(const void *const ref[], const void *const dis[], unsigned fw,
                           unsigned n, const VifShift *sh, int16_t *const planes[VIF_PLANES],
                           bool wide)
{
    int32_t coef[VIF_MAX_PAIRS];
    const unsigned pairs = vif_vertical_pairs(fw, coef);
    const vi low16 = vi_set1_32(0xffff);
    /* the 8-bit means are not offset */
    const vi mu_round = vi_set1_32((int32_t)(sh->mu_round + (wide ? 0x80000000u : 0)));
    const __m128i mu_shift = vi_count((int)sh->mu_shift);
    const vi sq_round = vi_set1_32((int32_t)sh->sq_round);
    const __m128i sq_shift = vi_count((int)sh->sq_shift);
    const __m128i sq_shift_up = vi_count(16 - (int)sh->sq_shift);

    for (unsigned x0 = 0; x0 < n; x0 += STEP) {
        const VecColumns c = vec_columns(x0, n);
        vi lo[SUMS], hi[SUMS];
        vertical_stats_sums(ref, dis, fw, pairs, coef, c, wide, lo, hi);
        vi out[2][5];
        for (unsigned h = 0; h < 2; h++) {
            const vi *sum = h ? hi : lo;
            /* libvmaf keeps 16 bits of a mean, 32 of a square */
            out[h][0] = vi_and(vi_srl32(vi_add32(sum[SUM_MU1], mu_round), mu_shift), low16);
            out[h][1] = vi_and(vi_srl32(vi_add32(sum[SUM_MU2], mu_round), mu_shift), low16);
            for (unsigned q = 0; q < 3; q++)
                out[h][2 + q] = vertical_square(sum[SUM_XX_P + q], sum[SUM_XX + q], wide, sq_round,
                                                sq_shift, sq_shift_up);
        }
        store_plane(planes[VIF_PLANE_MU1], c, out[0][0], out[1][0]);
        store_plane(planes[VIF_PLANE_MU2], c, out[0][1], out[1][1]);
        for (unsigned q = 0; q < 3; q++) {
            store_plane(planes[VIF_PLANE_XX_HI + 2 * q], c, vi_srli32(out[0][2 + q], 16),
                        vi_srli32(out[1][2 + q], 16));
            store_plane(planes[VIF_PLANE_XX_LO + 2 * q], c, vi_and(out[0][2 + q], low16),
                        vi_and(out[1][2 + q], low16));
        }
    }
}

static void VIF_ISA(vertical_stats_8)(const void *const ref[], const void *const dis[],
                                      unsigned fw, unsigned n, const VifShift *sh,
                                      int16_t *const planes[VIF_PLANES])
{
    if (!VI_MASKED_COLUMNS && n < STEP) vif_vertical_stats_c_8(ref, dis, fw, n, sh, planes);
    else VIF_CONSTANT_FW(fw, vertical_stats(ref, dis, FW, n, sh, planes, false));
}

static void VIF_ISA(vertical_stats_16)(const void *const ref[], const void *const dis[],
                                       unsigned fw, unsigned n, const VifShift *sh,
                                       int16_t *const planes[VIF_PLANES])
{
    if (!VI_MASKED_COLUMNS && n < STEP) vif_vertical_stats_c_16(ref, dis, fw, n, sh, planes);
    else VIF_CONSTANT_FW(fw, vertical_stats(ref, dis, FW, n, sh, planes, true));
}

INLINE void vertical_lowpass(const void *const ref[], const void *const dis[], unsigned fw,
                             unsigned n, unsigned shift, int16_t *ref_out, int16_t *dis_out,
                             bool wide)
{
    int32_t coef[VIF_MAX_PAIRS];
    const unsigned pairs = vif_vertical_pairs(fw, coef);
    const vi bias = vi_set1_16(wide ? INT16_MIN : 0);
    const vi low16 = vi_set1_32(0xffff);
    const vi round = vi_set1_32((int32_t)((1u << (shift - 1)) + (wide ? 0x80000000u : 0)));
    const __m128i count = vi_count((int)shift);

    for (unsigned x0 = 0; x0 < n; x0 += STEP) {
        const VecColumns c = vec_columns(x0, n);
        if (VI_REGISTERS < 32) {
            /* with 16 registers, a half of both pictures at a time */
            vi sum[2][2];
            for (unsigned h = 0; h < 2; h++) {
                vi s1 = round, s2 = round;
                for (unsigned k = 0; k < pairs; k++) {
                    const vi cf = vi_set1_32(coef[k]);
                    const vi a = vi_xor(load_pair(ref, fw, k, c, wide, h), bias);
                    const vi b = vi_xor(load_pair(dis, fw, k, c, wide, h), bias);
                    s1 = vi_add32(s1, vi_madd16(a, cf));
                    s2 = vi_add32(s2, vi_madd16(b, cf));
                }
                sum[h][0] = vi_and(vi_srl32(s1, count), low16);
                sum[h][1] = vi_and(vi_srl32(s2, count), low16);
            }
            store_plane(ref_out, c, sum[0][0], sum[1][0]);
            store_plane(dis_out, c, sum[0][1], sum[1][1]);
            continue;
        }
        /* the low and high halves of ref (s[0], s[1]) and dis at once */
        vi s[4] = { round, round, round, round };
        for (unsigned k = 0; k < pairs; k++) {
            const vi cf = vi_set1_32(coef[k]);
            const vi a0 = vi_xor(vi_load_columns(ref[k], c, wide), bias);
            const vi a1 = vi_xor(vi_load_columns(ref[fw - 1 - k], c, wide), bias);
            const vi b0 = vi_xor(vi_load_columns(dis[k], c, wide), bias);
            const vi b1 = vi_xor(vi_load_columns(dis[fw - 1 - k], c, wide), bias);
            s[0] = madd_add(s[0], vi_unpacklo16(a0, a1), cf);
            s[1] = madd_add(s[1], vi_unpackhi16(a0, a1), cf);
            s[2] = madd_add(s[2], vi_unpacklo16(b0, b1), cf);
            s[3] = madd_add(s[3], vi_unpackhi16(b0, b1), cf);
        }
        for (unsigned i = 0; i < 4; i++) s[i] = vi_and(vi_srl32(s[i], count), low16);
        store_plane(ref_out, c, s[0], s[1]);
        store_plane(dis_out, c, s[2], s[3]);
    }
}

static void VIF_ISA(vertical_lowpass_8)(const void *const ref[], const void *const dis[],
                                        unsigned fw, unsigned n, unsigned shift, int16_t *ref_out,
                                        int16_t *dis_out)
{
    if (!VI_MASKED_COLUMNS && n < STEP)
        vif_vertical_lowpass_c_8(ref, dis, fw, n, shift, ref_out, dis_out);
    else VIF_CONSTANT_FW(fw, vertical_lowpass(ref, dis, FW, n, shift, ref_out, dis_out, false));
}

static void VIF_ISA(vertical_lowpass_16)(const void *const ref[], const void *const dis[],
                                         unsigned fw, unsigned n, unsigned shift,
                                         int16_t *ref_out, int16_t *dis_out)
{
    if (!VI_MASKED_COLUMNS && n < STEP)
        vif_vertical_lowpass_c_16(ref, dis, fw, n, shift, ref_out, dis_out);
    else VIF_CONSTANT_FW(fw, vertical_lowpass(ref, dis, FW, n, shift, ref_out, dis_out, true));
}

/* ---- horizontal passes ---------------------------------------------------- */

/* Horizontal taps: a register of outputs, at every other column from p
 * (the first of them at p itself), of one offset plane; the true sums less
 * 2^31. */
INLINE vi horizontal_sum(const int16_t *p, unsigned pairs, const int offset[], const vi coef[])
{
    vi s = vi_madd16(vi_loadu(p + offset[0]), coef[0]);
    for (unsigned m = 1; m < pairs; m++) s = madd_add(s, vi_loadu(p + offset[m]), coef[m]);
    return s;
}

/* horizontal_sum() at p and at p + 1 from one load per pair: the odd
 * outputs take the same samples with the taps shifted by one (odd). */
INLINE void horizontal_sum_both(const int16_t *p, unsigned pairs, const int offset[],
                                const vi even[], const vi odd[], vi *at_even, vi *at_odd)
{
    vi v = vi_loadu(p + offset[0]);
    vi e = vi_madd16(v, even[0]), o = vi_madd16(v, odd[0]);
    for (unsigned m = 1; m < pairs; m++) {
        v = vi_loadu(p + offset[m]);
        e = madd_add(e, v, even[m]);
        o = madd_add(o, v, odd[m]);
    }
    *at_even = e;
    *at_odd = o;
}

/* ((uint64_t)a * b + 2^31) >> 32 in each 32-bit lane. */
INLINE vi mul_high_round(vi a, vi b)
{
    const vi round = vi_set1_64(INT64_C(1) << 31);
    const vi even = vi_add64(vi_mul_u32(a, b), round);
    const vi odd = vi_add64(vi_mul_u32(vi_odd_to_even(a), vi_odd_to_even(b)), round);
    return vi_join_high32(even, odd);
}

/* The exponent and the top 15 bits of the mantissa of an integer double
 * from 2^17 up, (e + 1023) << 15 | m, in the low half of each 64-bit lane:
 * 2048 log2(v) (vif_log2_64) is table[m] + 2048 (e - 15). */
INLINE vi log_key(vd v)
{
    return vi_srli64(vd_bits(v), 37);
}

/* table[m] + 2048 (e + 1023) in each 32-bit lane, from its key. */
INLINE vi log_from_key(const uint16_t *table, vi key)
{
    const vi entry = vi_gather32(table, vi_and(key, vi_set1_32(0x7fff)), 2);
    return vi_add32(vi_and(entry, vi_set1_32(0xffff)), vi_slli32(vi_srli32(key, 15), 11));
}

/* What log_from_key() of sigma_nsq + sigma1_sq has over the den term
 * log2(sigma_nsq + sigma1_sq) - log2(sigma_nsq): 2048 (1023 + 15 + 17). */
#define DEN_LOG_EXCESS (2048 * (1023 + 15 + 17))

/* A row's sums.  Each sample adds less than 2^16 to a log sum, and a lane
 * takes n / 8 <= 4096 samples of a row: 32 bits hold them. */
typedef struct StatSums {
    vi num_log, den_log; /* 32-bit lanes */
    vi num_non_log;      /* 64-bit lanes */
    vi non_log_count;    /* 32-bit lanes, negated */
} StatSums;

/* The doubles of one part of the statistic (vd_from_u32_part: half the
 * lanes, sigma2 >= 0): the keys of the logs of the den term, and of the
 * two of the num term. */
INLINE void statistic_part(vi sigma1, vi sigma2, vi sigma12, int part, vd gain_limit,
                           bool with_num, vi *den, vi *numer, vi *numer1)
{
    const vd s1 = vd_from_u32_part(sigma1, part);
    *den = log_key(vd_add(s1, vd_set1(131072.0)));
    if (!with_num) return;
    const vd s2 = vd_from_u32_part(sigma2, part), s12 = vd_from_u32_part(sigma12, part);
    vd g = vd_div(s12, vd_add(s1, vd_set1(VIF_EPS)));
    const vd sv = vd_sub(s2, vd_mul(g, s12));
    /* max((int32_t)sv, 0): sv < sigma2 < 2^31, and below -2^31 the
     * conversion's INT32_MIN gives 0 like any negative value */
    const vd sv_sq = vd_max(vd_trunc(sv), vd_zero());
    g = vd_min(g, gain_limit);
    const vd n1 = vd_add(sv_sq, vd_set1(131072.0));
    const vd gain = vd_trunc(vd_mul(vd_mul(g, g), s1));
    *numer = log_key(vd_add(gain, n1));
    *numer1 = log_key(n1);
}

/* The statistic of a register of samples (vif_pixel_rounded), where valid
 * is set. */
INLINE void statistic(vi mu1, vi mu2, vi xx, vi yy, vi xy, vm32 valid, const uint16_t *table,
                      vd gain_limit, StatSums *acc)
{
    const vi zero = vi_zero();
    const vi sigma1 = vi_sub32(xx, mul_high_round(mu1, mu1));
    const vi sigma2 = vi_max32(vi_sub32(yy, mul_high_round(mu2, mu2)), zero);
    const vi sigma12 = vi_sub32(xy, mul_high_round(mu1, mu2));

    const vm32 is_log = vm32_gt_where(valid, sigma1, vi_set1_32((65536 << 1) - 1));
    const vm32 non_log = vm32_and_not(valid, is_log);

    acc->non_log_count = vi_count_where(acc->non_log_count, non_log);
    const vi s2 = vi_keep32(non_log, sigma2);
    const vi low32 = vi_set1_64(0xffffffff);
    acc->num_non_log = vi_add64(acc->num_non_log, vi_add64(vi_and(s2, low32), vi_srli64(s2, 32)));

    if (vm32_none(is_log)) return;
    const vm32 is_num = vm32_gt_where(vm32_gt_where(is_log, sigma12, zero), sigma2, zero);
    const bool with_num = !vm32_none(is_num);
    vi den[2], numer[2], numer1[2];
    for (int part = 0; part < 2; part++)
        statistic_part(sigma1, sigma2, sigma12, part, gain_limit, with_num, &den[part],
                       &numer[part], &numer1[part]);
    const vi den_log = vi_sub32(log_from_key(table, vi_join_parts(den[0], den[1])),
                                vi_set1_32(DEN_LOG_EXCESS));
    acc->den_log = vi_add32_where(acc->den_log, is_log, den_log);
    if (!with_num) return;
    const vi num = vi_sub32(log_from_key(table, vi_join_parts(numer[0], numer[1])),
                            log_from_key(table, vi_join_parts(numer1[0], numer1[1])));
    acc->num_log = vi_add32_where(acc->num_log, is_num, num);
}

INLINE void horizontal_stats_fw(const int16_t *const planes[VIF_PLANES], unsigned n,
                                const unsigned fw, const uint16_t *log2_table, double gain_limit,
                                VifSums *sums)
{
    int offset[VIF_MAX_PAIRS];
    int32_t coef32[VIF_MAX_PAIRS], odd32[VIF_MAX_PAIRS];
    const unsigned pairs = vif_horizontal_pairs(fw, offset, coef32);
    /* The odd outputs from the even ones' loads: half the loads, for
     * twice the registers of coefficients and sums, which 16 registers
     * do not hold.  The 3-tap filter's split centre has no odd
     * counterpart. */
    const bool shared_loads = VI_REGISTERS >= 32 && fw != 3;
    if (shared_loads) vif_horizontal_pairs_odd(fw, pairs, odd32);
    vi coef[VIF_MAX_PAIRS], odd[VIF_MAX_PAIRS];
    for (unsigned m = 0; m < pairs; m++) {
        coef[m] = vi_set1_32(coef32[m]);
        odd[m] = vi_set1_32(shared_loads ? odd32[m] : 0);
    }
    const vd limit = vd_set1(gain_limit);
    const vi offset31 = vi_set1_32(INT32_MIN);
    /* a square's low half, less 2^31, then rounded: + 2^31 + 2^15 */
    const vi low_round = vi_set1_32((int32_t)(0x80000000u + 32768));
    const vi lane_column = vi_even_columns();

    StatSums acc = { vi_zero(), vi_zero(), vi_zero(), vi_zero() };
    /* The filtered values of a block of steps, then their statistics: two
     * short loops, so that the statistics of several steps (their gathers
     * wait long) are in flight at once. */
    enum { BLOCK_STEPS = 8 };
    vi filtered[BLOCK_STEPS][2][5];
    for (unsigned x0 = 0; x0 < n; x0 += BLOCK_STEPS * STEP) {
        const unsigned steps = QUALE_MIN(BLOCK_STEPS, (n - x0 + STEP - 1) / STEP);
        for (unsigned i = 0; i < steps; i++) {
            const unsigned x = x0 + i * STEP;
            vi both[2][VIF_PLANES];
            if (shared_loads)
                for (unsigned p = 0; p < VIF_PLANES; p++)
                    horizontal_sum_both(planes[p] + x, pairs, offset, coef, odd, &both[0][p],
                                        &both[1][p]);
            for (unsigned parity = 0; parity < 2; parity++) {
                vi *const v = both[parity];
                if (!shared_loads)
                    for (unsigned p = 0; p < VIF_PLANES; p++)
                        v[p] = horizontal_sum(planes[p] + x + parity, pairs, offset, coef);
                vi *const f = filtered[i][parity];
                f[0] = vi_add32(v[VIF_PLANE_MU1], offset31);
                f[1] = vi_add32(v[VIF_PLANE_MU2], offset31);
                /* (2^16 H + L + 2^15) >> 16 = H + ((L + 2^15) >> 16) */
                for (unsigned q = 0; q < 3; q++)
                    f[2 + q] = vi_add32(
                        vi_add32(v[VIF_PLANE_XX_HI + 2 * q], offset31),
                        vi_srli32(vi_add32(v[VIF_PLANE_XX_LO + 2 * q], low_round), 16));
            }
        }
        for (unsigned i = 0; i < steps; i++)
            for (unsigned parity = 0; parity < 2; parity++) {
                const ptrdiff_t at = (ptrdiff_t)(x0 + i * STEP) + parity;
                /* lanes at or past n are computed from the padding and dropped */
                const vm32 valid = vm32_gt(vi_set1_32((int)(n - at)), lane_column);
                const vi *const f = filtered[i][parity];
                statistic(f[0], f[1], f[2], f[3], f[4], valid, log2_table, limit, &acc);
            }
    }

    sums->num_log += vi_sum_i32(acc.num_log);
    sums->den_log += vi_sum_i32(acc.den_log);
    sums->num_non_log += (int64_t)vi_sum_u64(acc.num_non_log);
    sums->den_non_log += -vi_sum_i32(acc.non_log_count);
}

static void VIF_ISA(horizontal_stats)(const int16_t *const planes[VIF_PLANES], unsigned n,
                                      unsigned fw, const uint16_t *log2_table, double gain_limit,
                                      VifSums *sums)
{
    VIF_CONSTANT_FW(fw, horizontal_stats_fw(planes, n, FW, log2_table, gain_limit, sums));
}

INLINE void horizontal_lowpass_fw(const int16_t *ref, const int16_t *dis, unsigned n_out,
                                  const unsigned fw, uint16_t *ref_out, uint16_t *dis_out)
{
    int offset[VIF_MAX_PAIRS];
    int32_t coef32[VIF_MAX_PAIRS];
    const unsigned pairs = vif_horizontal_pairs(fw, offset, coef32);
    vi coef[VIF_MAX_PAIRS];
    for (unsigned m = 0; m < pairs; m++) coef[m] = vi_set1_32(coef32[m]);
    /* 2^31 for the offset, 2^15 to round */
    const vi round = vi_set1_32((int32_t)(0x80000000u + 32768));

    for (unsigned x0 = 0; x0 < n_out; x0 += STEP) {
        const VecColumns c = vec_columns(x0, n_out);
        const int16_t *const in[2] = { ref + 2 * c.x, dis + 2 * c.x };
        int16_t *const out[2] = { (int16_t *)ref_out, (int16_t *)dis_out };
        for (unsigned i = 0; i < 2; i++) {
            const vi a = vi_srli32(vi_add32(horizontal_sum(in[i], pairs, offset, coef), round), 16);
            const vi b = vi_srli32(
                vi_add32(horizontal_sum(in[i] + 2 * VI_LANES32, pairs, offset, coef), round), 16);
            vi_store_columns(out[i], c, vi_pack_order(vi_packus32(a, b)));
        }
    }
}

static void VIF_ISA(horizontal_lowpass)(const int16_t *ref, const int16_t *dis, unsigned n_out,
                                        unsigned fw, uint16_t *ref_out, uint16_t *dis_out)
{
    if (!VI_MASKED_COLUMNS && n_out < STEP)
        vif_horizontal_lowpass_c(ref, dis, n_out, fw, ref_out, dis_out);
    else VIF_CONSTANT_FW(fw, horizontal_lowpass_fw(ref, dis, n_out, FW, ref_out, dis_out));
}

void VIF_ISA(vif_dsp_init)(VifDsp *dsp)
{
    dsp->vertical_stats[0] = VIF_ISA(vertical_stats_8);
    dsp->vertical_stats[1] = VIF_ISA(vertical_stats_16);
    dsp->horizontal_stats = VIF_ISA(horizontal_stats);
    dsp->vertical_lowpass[0] = VIF_ISA(vertical_lowpass_8);
    dsp->vertical_lowpass[1] = VIF_ISA(vertical_lowpass_16);
    dsp->horizontal_lowpass = VIF_ISA(horizontal_lowpass);
}
