/*
 * Integer VIF's kernels for AVX-512 (F, BW, DQ, VL): the VifDsp table of
 * integer_vif.h, bit for bit what the C kernels compute.
 *
 * The arithmetic is that of integer_vif_avx2.c (read its comment first):
 * 16-bit multiply-adds on values offset by -32768, squares summed as 16-bit
 * halves, the statistic in double in the C code's order.  Twice as many
 * columns a step, and masks where AVX2 needs tricks: the last columns of a
 * row are read and written through masked loads and stores, so no kernel
 * hands a narrow row to C, and the statistic's branches are lane masks.
 *
 * integer_vif_avx512icl.c compiles this file again with VIF_AVX512_VNNI
 * for Ice Lake's level, where the multiply-adds that feed a sum are one
 * vpdpwssd each (the same sum modulo 2^32).
 */
#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "metrics/x86/reduce.h"
#include "metrics/integer_vif.h"
#include "metrics/x86/integer_vif_x86.h"

#define INLINE static inline __attribute__((always_inline))

#ifndef VIF_AVX512_VNNI
#define VIF_AVX512_VNNI 0
#endif

/* Columns per step of the vertical passes, outputs per step of the
 * horizontal ones. */
#define STEP 32

/* The first `count` of 32 lanes (all of them from 32 on). */
INLINE __mmask32 first_lanes(ptrdiff_t count)
{
    return count >= 32 ? 0xffffffffu : count <= 0 ? 0 : (__mmask32)((1u << count) - 1);
}

/* ---- vertical passes ------------------------------------------------------ */

/* 32 samples of a row from column x (those past the mask read as 0), as
 * 16-bit values. */
INLINE __m512i load_row(const void *row, ptrdiff_t x, __mmask32 mask, bool wide)
{
    if (wide) return _mm512_maskz_loadu_epi16(mask, (const uint16_t *)row + x);
    return _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(mask, (const uint8_t *)row + x));
}

enum { SUM_MU1, SUM_MU2, SUM_XX, SUM_YY, SUM_XY, SUM_XX_P, SUM_YY_P, SUM_XY_P, SUMS };

INLINE __m512i madd_add(__m512i sum, __m512i v, __m512i c)
{
#if VIF_AVX512_VNNI
    return _mm512_dpwssd_epi32(sum, v, c);
#else
    return _mm512_add_epi32(sum, _mm512_madd_epi16(v, c));
#endif
}

/* One pair of rows into the sums of one half (see integer_vif_avx2.c). */
INLINE void vertical_stats_pair(__m512i a, __m512i b, __m512i c, bool wide, __m512i sum[SUMS])
{
    const __m512i bias = _mm512_set1_epi16(INT16_MIN);
    const __m512i aa = _mm512_mullo_epi16(a, a), bb = _mm512_mullo_epi16(b, b);
    const __m512i ab = _mm512_mullo_epi16(a, b);
    if (wide) {
        sum[SUM_MU1] = madd_add(sum[SUM_MU1], _mm512_xor_si512(a, bias), c);
        sum[SUM_MU2] = madd_add(sum[SUM_MU2], _mm512_xor_si512(b, bias), c);
        sum[SUM_XX_P] = madd_add(sum[SUM_XX_P], _mm512_xor_si512(_mm512_mulhi_epu16(a, a), bias), c);
        sum[SUM_YY_P] = madd_add(sum[SUM_YY_P], _mm512_xor_si512(_mm512_mulhi_epu16(b, b), bias), c);
        sum[SUM_XY_P] = madd_add(sum[SUM_XY_P], _mm512_xor_si512(_mm512_mulhi_epu16(a, b), bias), c);
    } else {
        sum[SUM_MU1] = madd_add(sum[SUM_MU1], a, c);
        sum[SUM_MU2] = madd_add(sum[SUM_MU2], b, c);
    }
    sum[SUM_XX] = madd_add(sum[SUM_XX], _mm512_xor_si512(aa, bias), c);
    sum[SUM_YY] = madd_add(sum[SUM_YY], _mm512_xor_si512(bb, bias), c);
    sum[SUM_XY] = madd_add(sum[SUM_XY], _mm512_xor_si512(ab, bias), c);
}

/* (2^16 P + Q + round) >> shift, modulo 2^32, from the offset sums. */
INLINE __m512i vertical_square(__m512i p, __m512i q, bool wide, __m512i round, __m128i shift,
                               __m128i shift_up)
{
    const __m512i offset = _mm512_set1_epi32(INT32_MIN);
    const __m512i low = _mm512_srl_epi32(_mm512_add_epi32(_mm512_add_epi32(q, offset), round), shift);
    if (!wide) return low;
    return _mm512_add_epi32(_mm512_sll_epi32(_mm512_add_epi32(p, offset), shift_up), low);
}

/* Stores the columns under mask of 32 16-bit values from the low and high
 * unpacked halves, each value in 0 .. 65535, offset by -32768. */
INLINE void store_plane(int16_t *dst, __mmask32 mask, __m512i low, __m512i high)
{
    const __m512i v = _mm512_packus_epi32(low, high);
    _mm512_mask_storeu_epi16(dst, mask, _mm512_xor_si512(v, _mm512_set1_epi16(INT16_MIN)));
}

INLINE void vertical_stats(const void *const ref[], const void *const dis[], unsigned fw,
                           unsigned n, const VifShift *sh, int16_t *const planes[VIF_PLANES],
                           bool wide)
{
    int32_t coef32[VIF_MAX_PAIRS];
    const unsigned pairs = vif_vertical_pairs(fw, coef32);
    const __m512i low16 = _mm512_set1_epi32(0xffff);
    const __m512i mu_round =
        _mm512_set1_epi32((int32_t)(sh->mu_round + (wide ? 0x80000000u : 0)));
    const __m128i mu_shift = _mm_cvtsi32_si128((int)sh->mu_shift);
    const __m512i sq_round = _mm512_set1_epi32((int32_t)sh->sq_round);
    const __m128i sq_shift = _mm_cvtsi32_si128((int)sh->sq_shift);
    const __m128i sq_shift_up = _mm_cvtsi32_si128(16 - (int)sh->sq_shift);

    for (unsigned x = 0; x < n; x += STEP) {
        const __mmask32 mask = first_lanes((ptrdiff_t)n - x);
        __m512i lo[SUMS], hi[SUMS];
        for (unsigned i = 0; i < SUMS; i++) lo[i] = hi[i] = _mm512_setzero_si512();
        for (unsigned k = 0; k < pairs; k++) {
            const __m512i c = _mm512_set1_epi32(coef32[k]);
            const __m512i a0 = load_row(ref[k], x, mask, wide);
            const __m512i a1 = load_row(ref[fw - 1 - k], x, mask, wide);
            const __m512i b0 = load_row(dis[k], x, mask, wide);
            const __m512i b1 = load_row(dis[fw - 1 - k], x, mask, wide);
            vertical_stats_pair(_mm512_unpacklo_epi16(a0, a1), _mm512_unpacklo_epi16(b0, b1), c,
                                wide, lo);
            vertical_stats_pair(_mm512_unpackhi_epi16(a0, a1), _mm512_unpackhi_epi16(b0, b1), c,
                                wide, hi);
        }
        __m512i out[2][5];
        for (unsigned h = 0; h < 2; h++) {
            const __m512i *sum = h ? hi : lo;
            out[h][0] = _mm512_and_si512(
                _mm512_srl_epi32(_mm512_add_epi32(sum[SUM_MU1], mu_round), mu_shift), low16);
            out[h][1] = _mm512_and_si512(
                _mm512_srl_epi32(_mm512_add_epi32(sum[SUM_MU2], mu_round), mu_shift), low16);
            for (unsigned q = 0; q < 3; q++)
                out[h][2 + q] = vertical_square(sum[SUM_XX_P + q], sum[SUM_XX + q], wide, sq_round,
                                                sq_shift, sq_shift_up);
        }
        store_plane(planes[VIF_PLANE_MU1] + x, mask, out[0][0], out[1][0]);
        store_plane(planes[VIF_PLANE_MU2] + x, mask, out[0][1], out[1][1]);
        for (unsigned q = 0; q < 3; q++) {
            store_plane(planes[VIF_PLANE_XX_HI + 2 * q] + x, mask,
                        _mm512_srli_epi32(out[0][2 + q], 16), _mm512_srli_epi32(out[1][2 + q], 16));
            store_plane(planes[VIF_PLANE_XX_LO + 2 * q] + x, mask,
                        _mm512_and_si512(out[0][2 + q], low16),
                        _mm512_and_si512(out[1][2 + q], low16));
        }
    }
}

static void vertical_stats_8(const void *const ref[], const void *const dis[], unsigned fw,
                             unsigned n, const VifShift *sh, int16_t *const planes[VIF_PLANES])
{
    VIF_CONSTANT_FW(fw, vertical_stats(ref, dis, FW, n, sh, planes, false));
}

static void vertical_stats_16(const void *const ref[], const void *const dis[], unsigned fw,
                              unsigned n, const VifShift *sh, int16_t *const planes[VIF_PLANES])
{
    VIF_CONSTANT_FW(fw, vertical_stats(ref, dis, FW, n, sh, planes, true));
}

INLINE void vertical_lowpass(const void *const ref[], const void *const dis[], unsigned fw,
                             unsigned n, unsigned shift, int16_t *ref_out, int16_t *dis_out,
                             bool wide)
{
    int32_t coef32[VIF_MAX_PAIRS];
    const unsigned pairs = vif_vertical_pairs(fw, coef32);
    const __m512i bias = _mm512_set1_epi16(wide ? INT16_MIN : 0);
    const __m512i low16 = _mm512_set1_epi32(0xffff);
    const __m512i round =
        _mm512_set1_epi32((int32_t)((1u << (shift - 1)) + (wide ? 0x80000000u : 0)));
    const __m128i count = _mm_cvtsi32_si128((int)shift);

    for (unsigned x = 0; x < n; x += STEP) {
        const __mmask32 mask = first_lanes((ptrdiff_t)n - x);
        __m512i s[4] = { round, round, round, round };
        for (unsigned k = 0; k < pairs; k++) {
            const __m512i c = _mm512_set1_epi32(coef32[k]);
            const __m512i a0 = _mm512_xor_si512(load_row(ref[k], x, mask, wide), bias);
            const __m512i a1 = _mm512_xor_si512(load_row(ref[fw - 1 - k], x, mask, wide), bias);
            const __m512i b0 = _mm512_xor_si512(load_row(dis[k], x, mask, wide), bias);
            const __m512i b1 = _mm512_xor_si512(load_row(dis[fw - 1 - k], x, mask, wide), bias);
            s[0] = madd_add(s[0], _mm512_unpacklo_epi16(a0, a1), c);
            s[1] = madd_add(s[1], _mm512_unpackhi_epi16(a0, a1), c);
            s[2] = madd_add(s[2], _mm512_unpacklo_epi16(b0, b1), c);
            s[3] = madd_add(s[3], _mm512_unpackhi_epi16(b0, b1), c);
        }
        for (unsigned i = 0; i < 4; i++) s[i] = _mm512_and_si512(_mm512_srl_epi32(s[i], count), low16);
        store_plane(ref_out + x, mask, s[0], s[1]);
        store_plane(dis_out + x, mask, s[2], s[3]);
    }
}

static void vertical_lowpass_8(const void *const ref[], const void *const dis[], unsigned fw,
                               unsigned n, unsigned shift, int16_t *ref_out, int16_t *dis_out)
{
    VIF_CONSTANT_FW(fw, vertical_lowpass(ref, dis, FW, n, shift, ref_out, dis_out, false));
}

static void vertical_lowpass_16(const void *const ref[], const void *const dis[], unsigned fw,
                                unsigned n, unsigned shift, int16_t *ref_out, int16_t *dis_out)
{
    VIF_CONSTANT_FW(fw, vertical_lowpass(ref, dis, FW, n, shift, ref_out, dis_out, true));
}

/* ---- horizontal passes ---------------------------------------------------- */

/* Horizontal taps: 16 outputs, at every other column from p, of one offset
 * plane; the true sums less 2^31. */
INLINE __m512i horizontal_sum(const int16_t *p, unsigned pairs, const int offset[],
                              const __m512i coef[])
{
    __m512i s = _mm512_madd_epi16(_mm512_loadu_si512(p + offset[0]), coef[0]);
    for (unsigned m = 1; m < pairs; m++)
        s = madd_add(s, _mm512_loadu_si512(p + offset[m]), coef[m]);
    return s;
}

/* ((uint64_t)a * b + 2^31) >> 32 in each 32-bit lane. */
INLINE __m512i mul_high_round(__m512i a, __m512i b)
{
    const __m512i round = _mm512_set1_epi64(INT64_C(1) << 31);
    const __m512i even = _mm512_add_epi64(_mm512_mul_epu32(a, b), round);
    const __m512i odd = _mm512_add_epi64(
        _mm512_mul_epu32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(b, 32)), round);
    return _mm512_mask_blend_epi32(0xaaaa, _mm512_srli_epi64(even, 32), odd);
}

/* The exponent and the top 15 bits of the mantissa of an integer double
 * from 2^17 up, (e + 1023) << 15 | m, in the low half of each 64-bit lane:
 * 2048 log2(v) (vif_log2_64) is table[m] + 2048 (e - 15). */
INLINE __m512i log_key(__m512d v)
{
    return _mm512_srli_epi64(_mm512_castpd_si512(v), 37);
}

/* The keys of lanes 0-7 and 8-15 in 16 lanes. */
INLINE __m512i join_keys(__m512i low, __m512i high)
{
    const __m512i order =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_epi32(low, order, high);
}

/* table[m] + 2048 (e + 1023) in each 32-bit lane, from its key. */
INLINE __m512i log_from_key(const uint16_t *table, __m512i key)
{
    const __m512i entry = _mm512_i32gather_epi32(
        _mm512_and_si512(key, _mm512_set1_epi32(0x7fff)), (const void *)table, 2);
    return _mm512_add_epi32(_mm512_and_si512(entry, _mm512_set1_epi32(0xffff)),
                            _mm512_slli_epi32(_mm512_srli_epi32(key, 15), 11));
}

/* What log_from_key() of sigma_nsq + sigma1_sq has over the den term
 * log2(sigma_nsq + sigma1_sq) - log2(sigma_nsq): 2048 (1023 + 15 + 17). */
#define DEN_LOG_EXCESS (2048 * (1023 + 15 + 17))

/* A row's sums.  Each sample adds less than 2^16 to a log sum, and a lane
 * takes n / 16 <= 2048 samples of a row: 32 bits hold them. */
typedef struct StatSums {
    __m512i num_log, den_log; /* 32-bit lanes */
    __m512i num_non_log;      /* 64-bit lanes */
    __m512i non_log_count;    /* 32-bit lanes */
} StatSums;

/* The doubles of 8 samples (32-bit values, sigma2 >= 0): the keys of the
 * logs of the den term, and of the two of the num term. */
INLINE void stat_half(__m256i sigma1, __m256i sigma2, __m256i sigma12, __m512d gain_limit,
                      bool with_num, __m512i *den, __m512i *numer, __m512i *numer1)
{
    const __m512d s1 = _mm512_cvtepu32_pd(sigma1);
    *den = log_key(_mm512_add_pd(s1, _mm512_set1_pd(131072.0)));
    if (!with_num) return;
    const __m512d s2 = _mm512_cvtepu32_pd(sigma2), s12 = _mm512_cvtepu32_pd(sigma12);
    __m512d g = _mm512_div_pd(s12, _mm512_add_pd(s1, _mm512_set1_pd(VIF_EPS)));
    const __m512d sv = _mm512_sub_pd(s2, _mm512_mul_pd(g, s12));
    /* max((int32_t)sv, 0): see integer_vif_avx2.c */
    const __m512d sv_sq = _mm512_max_pd(
        _mm512_roundscale_pd(sv, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), _mm512_setzero_pd());
    g = _mm512_min_pd(g, gain_limit);
    const __m512d n1 = _mm512_add_pd(sv_sq, _mm512_set1_pd(131072.0));
    const __m512d gain = _mm512_roundscale_pd(_mm512_mul_pd(_mm512_mul_pd(g, g), s1),
                                              _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    *numer = log_key(_mm512_add_pd(gain, n1));
    *numer1 = log_key(n1);
}

/* The statistic of 16 samples (vif_pixel_rounded), where valid is set. */
INLINE void stat16(__m512i mu1, __m512i mu2, __m512i xx, __m512i yy, __m512i xy, __mmask16 valid,
                   const uint16_t *table, __m512d gain_limit, StatSums *acc)
{
    const __m512i zero = _mm512_setzero_si512();
    const __m512i sigma1 = _mm512_sub_epi32(xx, mul_high_round(mu1, mu1));
    const __m512i sigma2 = _mm512_max_epi32(_mm512_sub_epi32(yy, mul_high_round(mu2, mu2)), zero);
    const __m512i sigma12 = _mm512_sub_epi32(xy, mul_high_round(mu1, mu2));

    const __mmask16 is_log =
        _mm512_mask_cmpgt_epi32_mask(valid, sigma1, _mm512_set1_epi32((65536 << 1) - 1));
    const __mmask16 non_log = valid & (__mmask16)~is_log;

    acc->non_log_count = _mm512_mask_sub_epi32(acc->non_log_count, non_log, acc->non_log_count,
                                               _mm512_set1_epi32(-1));
    const __m512i s2 = _mm512_maskz_mov_epi32(non_log, sigma2);
    const __m512i low32 = _mm512_set1_epi64(0xffffffff);
    acc->num_non_log = _mm512_add_epi64(
        acc->num_non_log, _mm512_add_epi64(_mm512_and_si512(s2, low32), _mm512_srli_epi64(s2, 32)));

    if (!is_log) return;
    const __mmask16 is_num = _mm512_mask_cmpgt_epi32_mask(
        _mm512_mask_cmpgt_epi32_mask(is_log, sigma12, zero), sigma2, zero);
    /* lanes 0-7, then 8-15, in doubles */
    __m512i den[2], numer[2], numer1[2];
    stat_half(_mm512_castsi512_si256(sigma1), _mm512_castsi512_si256(sigma2),
              _mm512_castsi512_si256(sigma12), gain_limit, is_num != 0, &den[0], &numer[0],
              &numer1[0]);
    stat_half(_mm512_extracti64x4_epi64(sigma1, 1), _mm512_extracti64x4_epi64(sigma2, 1),
              _mm512_extracti64x4_epi64(sigma12, 1), gain_limit, is_num != 0, &den[1],
              &numer[1], &numer1[1]);
    const __m512i den_log = _mm512_sub_epi32(log_from_key(table, join_keys(den[0], den[1])),
                                             _mm512_set1_epi32(DEN_LOG_EXCESS));
    acc->den_log = _mm512_mask_add_epi32(acc->den_log, is_log, acc->den_log, den_log);
    if (!is_num) return;
    const __m512i num = _mm512_sub_epi32(log_from_key(table, join_keys(numer[0], numer[1])),
                                         log_from_key(table, join_keys(numer1[0], numer1[1])));
    acc->num_log = _mm512_mask_add_epi32(acc->num_log, is_num, acc->num_log, num);
}

INLINE void horizontal_stats_fw(const int16_t *const planes[VIF_PLANES], unsigned n,
                                const unsigned fw, const uint16_t *log2_table, double gain_limit,
                                VifSums *sums)
{
    int offset[VIF_MAX_PAIRS];
    int32_t coef32[VIF_MAX_PAIRS];
    const unsigned pairs = vif_horizontal_pairs(fw, offset, coef32);
    __m512i coef[VIF_MAX_PAIRS];
    for (unsigned m = 0; m < pairs; m++) coef[m] = _mm512_set1_epi32(coef32[m]);
    const __m512d limit = _mm512_set1_pd(gain_limit);
    const __m512i offset31 = _mm512_set1_epi32(INT32_MIN);
    const __m512i low_round = _mm512_set1_epi32((int32_t)(0x80000000u + 32768));
    const __m512i lane_column =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);

    StatSums acc = { _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                     _mm512_setzero_si512() };
    for (unsigned x = 0; x < n; x += STEP) {
        for (unsigned parity = 0; parity < 2; parity++) {
            const ptrdiff_t at = (ptrdiff_t)x + parity;
            /* lanes at or past n are computed from the padding and dropped */
            const __mmask16 valid =
                _mm512_cmpgt_epi32_mask(_mm512_set1_epi32((int)(n - at)), lane_column);
            __m512i v[VIF_PLANES];
            for (unsigned p = 0; p < VIF_PLANES; p++)
                v[p] = horizontal_sum(planes[p] + at, pairs, offset, coef);
            const __m512i mu1 = _mm512_add_epi32(v[VIF_PLANE_MU1], offset31);
            const __m512i mu2 = _mm512_add_epi32(v[VIF_PLANE_MU2], offset31);
            __m512i sq[3];
            for (unsigned q = 0; q < 3; q++)
                sq[q] = _mm512_add_epi32(
                    _mm512_add_epi32(v[VIF_PLANE_XX_HI + 2 * q], offset31),
                    _mm512_srli_epi32(_mm512_add_epi32(v[VIF_PLANE_XX_LO + 2 * q], low_round), 16));
            stat16(mu1, mu2, sq[0], sq[1], sq[2], valid, log2_table, limit, &acc);
        }
    }

    sums->num_log += (int32_t)reduce_add_u32x16(acc.num_log);
    sums->den_log += (int32_t)reduce_add_u32x16(acc.den_log);
    sums->num_non_log += (int64_t)reduce_add_u64x8(acc.num_non_log);
    sums->den_non_log += (int32_t)reduce_add_u32x16(acc.non_log_count);
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
    __m512i coef[VIF_MAX_PAIRS];
    for (unsigned m = 0; m < pairs; m++) coef[m] = _mm512_set1_epi32(coef32[m]);
    const __m512i round = _mm512_set1_epi32((int32_t)(0x80000000u + 32768));
    /* packus interleaves the two sources by 128-bit lanes; this undoes it */
    const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);

    for (unsigned x = 0; x < n_out; x += STEP) {
        const __mmask32 mask = first_lanes((ptrdiff_t)n_out - x);
        const int16_t *const in[2] = { ref + 2 * x, dis + 2 * x };
        uint16_t *const out[2] = { ref_out + x, dis_out + x };
        for (unsigned i = 0; i < 2; i++) {
            const __m512i a = _mm512_srli_epi32(
                _mm512_add_epi32(horizontal_sum(in[i], pairs, offset, coef), round), 16);
            const __m512i b = _mm512_srli_epi32(
                _mm512_add_epi32(horizontal_sum(in[i] + 32, pairs, offset, coef), round), 16);
            const __m512i v = _mm512_permutexvar_epi64(order, _mm512_packus_epi32(a, b));
            _mm512_mask_storeu_epi16(out[i], mask, v);
        }
    }
}

static void horizontal_lowpass(const int16_t *ref, const int16_t *dis, unsigned n_out,
                               unsigned fw, uint16_t *ref_out, uint16_t *dis_out)
{
    VIF_CONSTANT_FW(fw, horizontal_lowpass_fw(ref, dis, n_out, FW, ref_out, dis_out));
}

#if VIF_AVX512_VNNI
void vif_dsp_init_avx512icl(VifDsp *dsp)
#else
void vif_dsp_init_avx512(VifDsp *dsp)
#endif
{
    dsp->vertical_stats[0] = vertical_stats_8;
    dsp->vertical_stats[1] = vertical_stats_16;
    dsp->horizontal_stats = horizontal_stats;
    dsp->vertical_lowpass[0] = vertical_lowpass_8;
    dsp->vertical_lowpass[1] = vertical_lowpass_16;
    dsp->horizontal_lowpass = horizontal_lowpass;
}
