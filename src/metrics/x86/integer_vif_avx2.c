/*
 * Integer VIF's kernels for AVX2: the VifDsp table of integer_vif.h, bit for
 * bit what the C kernels compute.
 *
 * The filters run as 16-bit multiply-adds (vpmaddwd, integer_vif_x86.h
 * says how the taps pair up) on values offset by -32768 where they need all
 * 16 bits, so a sum comes out 2^31 short, modulo 2^32, where every true sum
 * of libvmaf's fits.  The 32-bit squares of 16-bit samples are summed as
 * their high and low 16-bit halves (vpmulhuw, vpmullw), and recombined
 * before the shift: (2^16 P + Q + r) >> s = (P << (16 - s)) + ((Q + r) >> s)
 * for s <= 16.
 *
 * The statistic of a sample (vif_pixel_rounded) runs on 8 lanes: the
 * divisions and products in double, 4 lanes at a time, in the C code's
 * order with no fused multiply-add; the logs from the table by gathers,
 * the octave and mantissa read from the bits of the exact double of the
 * integer.  Conversions follow the C (integer_vif.h's vif_double_to_int32).
 *
 * A row's last step ends at its last column, over columns done before
 * (the same values again), so no kernel reads or writes past a row; rows
 * narrower than a step go to the C kernels.  The horizontal passes read
 * the planes' padding and drop the lanes past the row.
 *
 * The 8-bit and 16-bit kernels are one always-inlined function with the
 * sample size as a constant argument, each compiled for every filter width
 * (VIF_CONSTANT_FW).
 */
#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "metrics/integer_vif.h"
#include "metrics/x86/integer_vif_x86.h"

#define INLINE static inline __attribute__((always_inline))

/* Columns per step of the vertical passes, outputs per step of the
 * horizontal ones. */
#define STEP 16

/* ---- vertical passes ------------------------------------------------------ */

/* 16 samples of a row from column x, as 16-bit values. */
INLINE __m256i load_row(const void *row, ptrdiff_t x, bool wide)
{
    if (wide) return _mm256_loadu_si256((const __m256i *)((const uint16_t *)row + x));
    return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)((const uint8_t *)row + x)));
}

/* The interleaved samples of rows k and fw - 1 - k: the low (columns 0-3,
 * 8-11) or the high (4-7, 12-15) half of 16 columns. */
INLINE __m256i load_pair(const void *const rows[], unsigned fw, unsigned k, ptrdiff_t x,
                         bool wide, bool high)
{
    const __m256i a = load_row(rows[k], x, wide), b = load_row(rows[fw - 1 - k], x, wide);
    return high ? _mm256_unpackhi_epi16(a, b) : _mm256_unpacklo_epi16(a, b);
}

enum { SUM_MU1, SUM_MU2, SUM_XX, SUM_YY, SUM_XY, SUM_XX_P, SUM_YY_P, SUM_XY_P, SUMS };

INLINE __m256i madd_add(__m256i sum, __m256i v, __m256i c)
{
    return _mm256_add_epi32(sum, _mm256_madd_epi16(v, c));
}

/*
 * Adds one pair of rows (a, b: the interleaved samples of each picture) to
 * the vertical sums of one half, modulo 2^32: the means, and the squares
 * and product (8 bits: whole; 16 bits: their low halves Q in SUM_XX..,
 * their high halves P in SUM_XX_P..).  All but the 8-bit means are offset
 * by -2^31.
 */
INLINE void vertical_stats_pair(__m256i a, __m256i b, __m256i c, bool wide, __m256i sum[SUMS])
{
    const __m256i bias = _mm256_set1_epi16(INT16_MIN);
    const __m256i aa = _mm256_mullo_epi16(a, a), bb = _mm256_mullo_epi16(b, b);
    const __m256i ab = _mm256_mullo_epi16(a, b);
    if (wide) {
        sum[SUM_MU1] = madd_add(sum[SUM_MU1], _mm256_xor_si256(a, bias), c);
        sum[SUM_MU2] = madd_add(sum[SUM_MU2], _mm256_xor_si256(b, bias), c);
        sum[SUM_XX_P] = madd_add(sum[SUM_XX_P], _mm256_xor_si256(_mm256_mulhi_epu16(a, a), bias), c);
        sum[SUM_YY_P] = madd_add(sum[SUM_YY_P], _mm256_xor_si256(_mm256_mulhi_epu16(b, b), bias), c);
        sum[SUM_XY_P] = madd_add(sum[SUM_XY_P], _mm256_xor_si256(_mm256_mulhi_epu16(a, b), bias), c);
    } else {
        /* 8-bit samples are positive 16-bit numbers as they are */
        sum[SUM_MU1] = madd_add(sum[SUM_MU1], a, c);
        sum[SUM_MU2] = madd_add(sum[SUM_MU2], b, c);
    }
    sum[SUM_XX] = madd_add(sum[SUM_XX], _mm256_xor_si256(aa, bias), c);
    sum[SUM_YY] = madd_add(sum[SUM_YY], _mm256_xor_si256(bb, bias), c);
    sum[SUM_XY] = madd_add(sum[SUM_XY], _mm256_xor_si256(ab, bias), c);
}

/* The vertical sums of both halves of 16 columns at x.  8-bit rows are
 * widened once for both halves; 16-bit ones, whose sums would not fit the
 * registers twice over, are read again for the second half. */
INLINE void vertical_stats_sums(const void *const ref[], const void *const dis[], unsigned fw,
                                unsigned pairs, const int32_t coef[], ptrdiff_t x, bool wide,
                                __m256i lo[SUMS], __m256i hi[SUMS])
{
    for (unsigned i = 0; i < SUMS; i++) lo[i] = hi[i] = _mm256_setzero_si256();
    if (wide) {
        for (unsigned h = 0; h < 2; h++)
            for (unsigned k = 0; k < pairs; k++)
                vertical_stats_pair(load_pair(ref, fw, k, x, true, h),
                                    load_pair(dis, fw, k, x, true, h),
                                    _mm256_set1_epi32(coef[k]), true, h ? hi : lo);
        return;
    }
    for (unsigned k = 0; k < pairs; k++) {
        const __m256i c = _mm256_set1_epi32(coef[k]);
        const __m256i a0 = load_row(ref[k], x, false), a1 = load_row(ref[fw - 1 - k], x, false);
        const __m256i b0 = load_row(dis[k], x, false), b1 = load_row(dis[fw - 1 - k], x, false);
        vertical_stats_pair(_mm256_unpacklo_epi16(a0, a1), _mm256_unpacklo_epi16(b0, b1), c,
                            false, lo);
        vertical_stats_pair(_mm256_unpackhi_epi16(a0, a1), _mm256_unpackhi_epi16(b0, b1), c,
                            false, hi);
    }
}

/* (2^16 P + Q + round) >> shift, modulo 2^32, from the offset sums. */
INLINE __m256i vertical_square(__m256i p, __m256i q, bool wide, __m256i round, __m128i shift,
                               __m128i shift_up)
{
    const __m256i offset = _mm256_set1_epi32(INT32_MIN);
    const __m256i low = _mm256_srl_epi32(_mm256_add_epi32(_mm256_add_epi32(q, offset), round), shift);
    if (!wide) return low;
    return _mm256_add_epi32(_mm256_sll_epi32(_mm256_add_epi32(p, offset), shift_up), low);
}

/* Stores 16 columns of 16-bit values from the low (0-3, 8-11) and high
 * (4-7, 12-15) halves, each value in 0 .. 65535, offset by -32768. */
INLINE void store_plane(int16_t *dst, __m256i low, __m256i high)
{
    const __m256i v = _mm256_packus_epi32(low, high);
    _mm256_storeu_si256((__m256i *)dst, _mm256_xor_si256(v, _mm256_set1_epi16(INT16_MIN)));
}

INLINE void vertical_stats(const void *const ref[], const void *const dis[], unsigned fw,
                           unsigned n, const VifShift *sh, int16_t *const planes[VIF_PLANES],
                           bool wide)
{
    int32_t coef[VIF_MAX_PAIRS];
    const unsigned pairs = vif_vertical_pairs(fw, coef);
    const __m256i low16 = _mm256_set1_epi32(0xffff);
    /* the 8-bit means are not offset */
    const __m256i mu_round = _mm256_set1_epi32((int32_t)(sh->mu_round + (wide ? 0x80000000u : 0)));
    const __m128i mu_shift = _mm_cvtsi32_si128((int)sh->mu_shift);
    const __m256i sq_round = _mm256_set1_epi32((int32_t)sh->sq_round);
    const __m128i sq_shift = _mm_cvtsi32_si128((int)sh->sq_shift);
    const __m128i sq_shift_up = _mm_cvtsi32_si128(16 - (int)sh->sq_shift);

    for (unsigned x0 = 0; x0 < n; x0 += STEP) {
        /* the last step ends at the last column, over columns done before */
        const ptrdiff_t x = x0 + STEP <= n ? x0 : n - STEP;
        __m256i lo[SUMS], hi[SUMS];
        vertical_stats_sums(ref, dis, fw, pairs, coef, x, wide, lo, hi);
        __m256i out[2][5];
        for (unsigned h = 0; h < 2; h++) {
            const __m256i *sum = h ? hi : lo;
            /* libvmaf keeps 16 bits of a mean, 32 of a square */
            out[h][0] = _mm256_and_si256(
                _mm256_srl_epi32(_mm256_add_epi32(sum[SUM_MU1], mu_round), mu_shift), low16);
            out[h][1] = _mm256_and_si256(
                _mm256_srl_epi32(_mm256_add_epi32(sum[SUM_MU2], mu_round), mu_shift), low16);
            for (unsigned q = 0; q < 3; q++)
                out[h][2 + q] = vertical_square(sum[SUM_XX_P + q], sum[SUM_XX + q], wide, sq_round,
                                                sq_shift, sq_shift_up);
        }
        store_plane(planes[VIF_PLANE_MU1] + x, out[0][0], out[1][0]);
        store_plane(planes[VIF_PLANE_MU2] + x, out[0][1], out[1][1]);
        for (unsigned q = 0; q < 3; q++) {
            store_plane(planes[VIF_PLANE_XX_HI + 2 * q] + x, _mm256_srli_epi32(out[0][2 + q], 16),
                        _mm256_srli_epi32(out[1][2 + q], 16));
            store_plane(planes[VIF_PLANE_XX_LO + 2 * q] + x, _mm256_and_si256(out[0][2 + q], low16),
                        _mm256_and_si256(out[1][2 + q], low16));
        }
    }
}

static void vertical_stats_8(const void *const ref[], const void *const dis[], unsigned fw,
                             unsigned n, const VifShift *sh, int16_t *const planes[VIF_PLANES])
{
    if (n < STEP) vif_vertical_stats_c_8(ref, dis, fw, n, sh, planes);
    else VIF_CONSTANT_FW(fw, vertical_stats(ref, dis, FW, n, sh, planes, false));
}

static void vertical_stats_16(const void *const ref[], const void *const dis[], unsigned fw,
                              unsigned n, const VifShift *sh, int16_t *const planes[VIF_PLANES])
{
    if (n < STEP) vif_vertical_stats_c_16(ref, dis, fw, n, sh, planes);
    else VIF_CONSTANT_FW(fw, vertical_stats(ref, dis, FW, n, sh, planes, true));
}

INLINE void vertical_lowpass(const void *const ref[], const void *const dis[], unsigned fw,
                             unsigned n, unsigned shift, int16_t *ref_out, int16_t *dis_out,
                             bool wide)
{
    int32_t coef[VIF_MAX_PAIRS];
    const unsigned pairs = vif_vertical_pairs(fw, coef);
    const __m256i bias = _mm256_set1_epi16(INT16_MIN);
    const __m256i low16 = _mm256_set1_epi32(0xffff);
    const __m256i round =
        _mm256_set1_epi32((int32_t)((1u << (shift - 1)) + (wide ? 0x80000000u : 0)));
    const __m128i count = _mm_cvtsi32_si128((int)shift);

    for (unsigned x0 = 0; x0 < n; x0 += STEP) {
        const ptrdiff_t x = x0 + STEP <= n ? x0 : n - STEP;
        __m256i sum[2][2];
        for (unsigned h = 0; h < 2; h++) {
            __m256i s1 = round, s2 = round;
            for (unsigned k = 0; k < pairs; k++) {
                const __m256i c = _mm256_set1_epi32(coef[k]);
                __m256i a = load_pair(ref, fw, k, x, wide, h);
                __m256i b = load_pair(dis, fw, k, x, wide, h);
                if (wide) {
                    a = _mm256_xor_si256(a, bias);
                    b = _mm256_xor_si256(b, bias);
                }
                s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(a, c));
                s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(b, c));
            }
            sum[h][0] = _mm256_and_si256(_mm256_srl_epi32(s1, count), low16);
            sum[h][1] = _mm256_and_si256(_mm256_srl_epi32(s2, count), low16);
        }
        store_plane(ref_out + x, sum[0][0], sum[1][0]);
        store_plane(dis_out + x, sum[0][1], sum[1][1]);
    }
}

static void vertical_lowpass_8(const void *const ref[], const void *const dis[], unsigned fw,
                               unsigned n, unsigned shift, int16_t *ref_out, int16_t *dis_out)
{
    if (n < STEP) vif_vertical_lowpass_c_8(ref, dis, fw, n, shift, ref_out, dis_out);
    else VIF_CONSTANT_FW(fw, vertical_lowpass(ref, dis, FW, n, shift, ref_out, dis_out, false));
}

static void vertical_lowpass_16(const void *const ref[], const void *const dis[], unsigned fw,
                                unsigned n, unsigned shift, int16_t *ref_out, int16_t *dis_out)
{
    if (n < STEP) vif_vertical_lowpass_c_16(ref, dis, fw, n, shift, ref_out, dis_out);
    else VIF_CONSTANT_FW(fw, vertical_lowpass(ref, dis, FW, n, shift, ref_out, dis_out, true));
}

/* ---- horizontal passes ---------------------------------------------------- */

/* Horizontal taps: 8 outputs, at every other column from p (the first of
 * them at p itself), of one offset plane; the true sums less 2^31. */
INLINE __m256i horizontal_sum(const int16_t *p, unsigned pairs, const int offset[],
                              const __m256i coef[])
{
    __m256i s = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(p + offset[0])), coef[0]);
    for (unsigned m = 1; m < pairs; m++)
        s = _mm256_add_epi32(
            s, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(p + offset[m])), coef[m]));
    return s;
}

/* ((uint64_t)a * b + 2^31) >> 32 in each 32-bit lane. */
INLINE __m256i mul_high_round(__m256i a, __m256i b)
{
    const __m256i round = _mm256_set1_epi64x(INT64_C(1) << 31);
    const __m256i even = _mm256_add_epi64(_mm256_mul_epu32(a, b), round);
    const __m256i odd = _mm256_add_epi64(
        _mm256_mul_epu32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)), round);
    return _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xaa);
}

/* The exact double of the 32-bit value in the low half of each 64-bit
 * lane (the high half zero). */
INLINE __m256d u32_to_pd(__m256i v)
{
    const __m256i magic = _mm256_set1_epi64x(0x4330000000000000); /* 2^52 */
    return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(v, magic)),
                         _mm256_castsi256_pd(magic));
}

/* The exponent and the top 15 bits of the mantissa of an integer double
 * from 2^17 up, (e + 1023) << 15 | m, in the low half of each 64-bit lane:
 * 2048 log2(v) (vif_log2_64) is table[m] + 2048 (e - 15). */
INLINE __m256i log_key(__m256d v)
{
    return _mm256_srli_epi64(_mm256_castpd_si256(v), 37);
}

/* The keys of the even and the odd 32-bit lanes in 8 lanes. */
INLINE __m256i join_keys(__m256i even, __m256i odd)
{
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xaa);
}

/* table[m] + 2048 (e + 1023) in each 32-bit lane, from its key. */
INLINE __m256i log_from_key(const uint16_t *table, __m256i key)
{
    const __m256i entry = _mm256_i32gather_epi32(
        (const int *)table, _mm256_and_si256(key, _mm256_set1_epi32(0x7fff)), 2);
    return _mm256_add_epi32(_mm256_and_si256(entry, _mm256_set1_epi32(0xffff)),
                            _mm256_slli_epi32(_mm256_srli_epi32(key, 15), 11));
}

/* What log_from_key() of sigma_nsq + sigma1_sq has over the den term
 * log2(sigma_nsq + sigma1_sq) - log2(sigma_nsq): 2048 (1023 + 15 + 17). */
#define DEN_LOG_EXCESS (2048 * (1023 + 15 + 17))

/* A row's sums.  Each sample adds less than 2^16 to a log sum, and a lane
 * takes n / 8 <= 4096 samples of a row: 32 bits hold them. */
typedef struct StatSums {
    __m256i num_log, den_log; /* 32-bit lanes */
    __m256i num_non_log;      /* 64-bit lanes */
    __m256i non_log_count;    /* 32-bit lanes, negated */
} StatSums;

/* The doubles of one half of the statistic, 4 samples in 64-bit lanes
 * (their 32-bit values in the low halves): the keys of the logs of the
 * den term, and of the two of the num term. */
INLINE void stat_half(__m256i sigma1, __m256i sigma2, __m256i sigma12, __m256d gain_limit,
                      bool with_num, __m256i *den, __m256i *numer, __m256i *numer1)
{
    const __m256d s1 = u32_to_pd(sigma1);
    *den = log_key(_mm256_add_pd(s1, _mm256_set1_pd(131072.0)));
    if (!with_num) return;
    const __m256d s2 = u32_to_pd(sigma2), s12 = u32_to_pd(sigma12);
    __m256d g = _mm256_div_pd(s12, _mm256_add_pd(s1, _mm256_set1_pd(VIF_EPS)));
    const __m256d sv = _mm256_sub_pd(s2, _mm256_mul_pd(g, s12));
    /* max((int32_t)sv, 0): sv < sigma2 < 2^31, and below -2^31 the
     * conversion's INT32_MIN gives 0 like any negative value */
    const __m256d sv_sq = _mm256_max_pd(
        _mm256_round_pd(sv, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), _mm256_setzero_pd());
    g = _mm256_min_pd(g, gain_limit);
    const __m256d n1 = _mm256_add_pd(sv_sq, _mm256_set1_pd(131072.0));
    const __m256d gain = _mm256_round_pd(_mm256_mul_pd(_mm256_mul_pd(g, g), s1),
                                         _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    *numer = log_key(_mm256_add_pd(gain, n1));
    *numer1 = log_key(n1);
}

/* The statistic of 8 samples (vif_pixel_rounded), where valid is set. */
INLINE void stat8(__m256i mu1, __m256i mu2, __m256i xx, __m256i yy, __m256i xy, __m256i valid,
                  const uint16_t *table, __m256d gain_limit, StatSums *acc)
{
    const __m256i sigma1 = _mm256_sub_epi32(xx, mul_high_round(mu1, mu1));
    const __m256i sigma2 =
        _mm256_max_epi32(_mm256_sub_epi32(yy, mul_high_round(mu2, mu2)), _mm256_setzero_si256());
    const __m256i sigma12 = _mm256_sub_epi32(xy, mul_high_round(mu1, mu2));

    const __m256i is_log = _mm256_and_si256(
        _mm256_cmpgt_epi32(sigma1, _mm256_set1_epi32((65536 << 1) - 1)), valid);
    const __m256i non_log = _mm256_andnot_si256(is_log, valid);

    acc->non_log_count = _mm256_add_epi32(acc->non_log_count, non_log);
    const __m256i s2 = _mm256_and_si256(sigma2, non_log);
    const __m256i low32 = _mm256_set1_epi64x(0xffffffff);
    acc->num_non_log = _mm256_add_epi64(
        acc->num_non_log, _mm256_add_epi64(_mm256_and_si256(s2, low32), _mm256_srli_epi64(s2, 32)));

    if (_mm256_testz_si256(is_log, is_log)) return;
    const __m256i is_num = _mm256_and_si256(
        is_log, _mm256_and_si256(_mm256_cmpgt_epi32(sigma12, _mm256_setzero_si256()),
                                 _mm256_cmpgt_epi32(sigma2, _mm256_setzero_si256())));
    const bool with_num = !_mm256_testz_si256(is_num, is_num);
    /* the even lanes, then the odd ones, each in 64-bit lanes */
    __m256i den[2], numer[2], numer1[2];
    stat_half(_mm256_and_si256(sigma1, low32), _mm256_and_si256(sigma2, low32),
              _mm256_and_si256(sigma12, low32), gain_limit, with_num, &den[0], &numer[0],
              &numer1[0]);
    stat_half(_mm256_srli_epi64(sigma1, 32), _mm256_srli_epi64(sigma2, 32),
              _mm256_srli_epi64(sigma12, 32), gain_limit, with_num, &den[1], &numer[1],
              &numer1[1]);
    const __m256i den_log = _mm256_sub_epi32(log_from_key(table, join_keys(den[0], den[1])),
                                             _mm256_set1_epi32(DEN_LOG_EXCESS));
    acc->den_log = _mm256_add_epi32(acc->den_log, _mm256_and_si256(den_log, is_log));
    if (!with_num) return;
    const __m256i num = _mm256_sub_epi32(log_from_key(table, join_keys(numer[0], numer[1])),
                                         log_from_key(table, join_keys(numer1[0], numer1[1])));
    acc->num_log = _mm256_add_epi32(acc->num_log, _mm256_and_si256(num, is_num));
}

/* The sum of the 32-bit lanes, as signed values. */
INLINE int64_t sum_epi32(__m256i v)
{
    const __m256i wide = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(v)),
                                          _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1)));
    const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(wide), _mm256_extracti128_si256(wide, 1));
    return _mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1);
}

INLINE int64_t sum_epi64(__m256i v)
{
    const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return _mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1);
}

INLINE void horizontal_stats_fw(const int16_t *const planes[VIF_PLANES], unsigned n,
                                const unsigned fw, const uint16_t *log2_table, double gain_limit,
                                VifSums *sums)
{
    int offset[VIF_MAX_PAIRS];
    int32_t coef32[VIF_MAX_PAIRS];
    const unsigned pairs = vif_horizontal_pairs(fw, offset, coef32);
    __m256i coef[VIF_MAX_PAIRS];
    for (unsigned m = 0; m < pairs; m++) coef[m] = _mm256_set1_epi32(coef32[m]);
    const __m256d limit = _mm256_set1_pd(gain_limit);
    const __m256i offset31 = _mm256_set1_epi32(INT32_MIN);
    /* a square's low half, less 2^31, then rounded: + 2^31 + 2^15 */
    const __m256i low_round = _mm256_set1_epi32((int32_t)(0x80000000u + 32768));
    /* the column of each lane, from the first of the step: 0, 2, .., 14 */
    const __m256i lane_column = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);

    StatSums acc = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                     _mm256_setzero_si256() };
    for (unsigned x = 0; x < n; x += STEP) {
        for (unsigned parity = 0; parity < 2; parity++) {
            const ptrdiff_t at = (ptrdiff_t)x + parity;
            /* lanes at or past n are computed from the padding and dropped */
            const __m256i valid = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - at)), lane_column);
            __m256i v[VIF_PLANES];
            for (unsigned p = 0; p < VIF_PLANES; p++)
                v[p] = horizontal_sum(planes[p] + at, pairs, offset, coef);
            const __m256i mu1 = _mm256_add_epi32(v[VIF_PLANE_MU1], offset31);
            const __m256i mu2 = _mm256_add_epi32(v[VIF_PLANE_MU2], offset31);
            /* (2^16 H + L + 2^15) >> 16 = H + ((L + 2^15) >> 16) */
            __m256i sq[3];
            for (unsigned q = 0; q < 3; q++)
                sq[q] = _mm256_add_epi32(
                    _mm256_add_epi32(v[VIF_PLANE_XX_HI + 2 * q], offset31),
                    _mm256_srli_epi32(_mm256_add_epi32(v[VIF_PLANE_XX_LO + 2 * q], low_round), 16));
            stat8(mu1, mu2, sq[0], sq[1], sq[2], valid, log2_table, limit, &acc);
        }
    }

    sums->num_log += sum_epi32(acc.num_log);
    sums->den_log += sum_epi32(acc.den_log);
    sums->num_non_log += sum_epi64(acc.num_non_log);
    sums->den_non_log += -sum_epi32(acc.non_log_count);
}

static void horizontal_stats(const int16_t *const planes[VIF_PLANES], unsigned n, unsigned fw,
                             const uint16_t *log2_table, double gain_limit, VifSums *sums)
{
    VIF_CONSTANT_FW(fw, horizontal_stats_fw(planes, n, FW, log2_table, gain_limit, sums));
}

INLINE void horizontal_lowpass_fw(const int16_t *ref, const int16_t *dis, unsigned n_out,
                                  const unsigned fw, uint16_t *ref_out, uint16_t *dis_out)
{
    int offset[VIF_MAX_PAIRS];
    int32_t coef32[VIF_MAX_PAIRS];
    const unsigned pairs = vif_horizontal_pairs(fw, offset, coef32);
    __m256i coef[VIF_MAX_PAIRS];
    for (unsigned m = 0; m < pairs; m++) coef[m] = _mm256_set1_epi32(coef32[m]);
    /* 2^31 for the offset, 2^15 to round */
    const __m256i round = _mm256_set1_epi32((int32_t)(0x80000000u + 32768));

    for (unsigned x0 = 0; x0 < n_out; x0 += STEP) {
        const ptrdiff_t x = x0 + STEP <= n_out ? x0 : n_out - STEP;
        const int16_t *const in[2] = { ref + 2 * x, dis + 2 * x };
        uint16_t *const out[2] = { ref_out + x, dis_out + x };
        for (unsigned i = 0; i < 2; i++) {
            const __m256i a = _mm256_srli_epi32(
                _mm256_add_epi32(horizontal_sum(in[i], pairs, offset, coef), round), 16);
            const __m256i b = _mm256_srli_epi32(
                _mm256_add_epi32(horizontal_sum(in[i] + 16, pairs, offset, coef), round), 16);
            const __m256i v = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8);
            _mm256_storeu_si256((__m256i *)out[i], v);
        }
    }
}

static void horizontal_lowpass(const int16_t *ref, const int16_t *dis, unsigned n_out,
                               unsigned fw, uint16_t *ref_out, uint16_t *dis_out)
{
    if (n_out < STEP) vif_horizontal_lowpass_c(ref, dis, n_out, fw, ref_out, dis_out);
    else VIF_CONSTANT_FW(fw, horizontal_lowpass_fw(ref, dis, n_out, FW, ref_out, dis_out));
}

void vif_dsp_init_avx2(VifDsp *dsp)
{
    dsp->vertical_stats[0] = vertical_stats_8;
    dsp->vertical_stats[1] = vertical_stats_16;
    dsp->horizontal_stats = horizontal_stats;
    dsp->vertical_lowpass[0] = vertical_lowpass_8;
    dsp->vertical_lowpass[1] = vertical_lowpass_16;
    dsp->horizontal_lowpass = horizontal_lowpass;
}
