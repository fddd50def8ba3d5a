/*
 * Integer ADM's kernels in AVX-512 (F, CD, BW, DQ, VL), bit-exact with the
 * C reference (src/metrics/integer_adm.c).  The same scheme as the AVX2
 * kernels (integer_adm_avx2.c) on sixteen int32 lanes, with what AVX-512
 * adds: exact int64 to float conversion (vcvtqq2ps) for the angle test,
 * 64-bit arithmetic and variable shifts, leading-zero counts, mask
 * registers for the last vector of a row and for the selects.
 */
#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "metrics/x86/reduce.h"
#include "metrics/integer_adm.h"
#include "metrics/x86/integer_adm_x86.h"

/* ---- helpers ------------------------------------------------------------------ */

/* Lanes 0 .. n - 1 of sixteen (none for n <= 0). */
INLINE __mmask16 lanes_below(int n)
{
    return n <= 0 ? 0 : n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

INLINE __m512i load_masked(const int32_t *p, __mmask16 mask)
{
    return _mm512_maskz_loadu_epi32(mask, p);
}

INLINE void store_masked(int32_t *p, __mmask16 mask, __m512i v)
{
    _mm512_mask_storeu_epi32(p, mask, v);
}

/* The odd int32 lanes moved to the even ones, where vpmuldq reads them. */
INLINE __m512i odd_to_even(__m512i v)
{
    return _mm512_srli_epi64(v, 32);
}

/* The low (high) 32 bits of the 64-bit lanes of even (elements 0, 2, ...)
 * and odd (1, 3, ...) put back in element order. */
INLINE __m512i join_low32(__m512i even, __m512i odd)
{
    return _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

INLINE __m512i join_high32(__m512i even, __m512i odd)
{
    return _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

/* The element masks of the even (odd) elements as masks of 64-bit lanes,
 * and back. */
INLINE __mmask8 even_mask(__mmask16 m)
{
    return (__mmask8)_pext_u32(m, 0x5555);
}

INLINE __mmask8 odd_mask(__mmask16 m)
{
    return (__mmask8)_pext_u32(m, 0xAAAA);
}

INLINE __mmask16 join_masks(__mmask8 even, __mmask8 odd)
{
    return (__mmask16)(_pdep_u32(even, 0x5555) | _pdep_u32(odd, 0xAAAA));
}

INLINE __m512i sext16(__m512i v)
{
    return _mm512_srai_epi32(_mm512_slli_epi32(v, 16), 16);
}

INLINE __m512i coef_pair(int16_t first, int16_t second)
{
    return _mm512_set1_epi32((int32_t)(((uint32_t)(uint16_t)second << 16) | (uint16_t)first));
}

/* ---- DWT of level 0 ------------------------------------------------------------ */

#define LO01 coef_pair(ADM_LO01)
#define LO23 coef_pair(ADM_LO23)
#define HI01 coef_pair(ADM_HI01)
#define HI23 coef_pair(ADM_HI23)

/* 32 samples as int16 lanes (16-bit samples less 32768, see the AVX2 file). */
INLINE __m512i load_samples16(const uint8_t *row, int j, int bytes)
{
    if (bytes == 1) return _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(row + j)));
    return _mm512_xor_si512(_mm512_loadu_si512(row + 2 * j), _mm512_set1_epi16(INT16_MIN));
}

/* The int32 lanes of a and b as 16-bit values (their low halves), in
 * column order when a and b are the unpacked halves of the same columns. */
INLINE __m512i narrow16(__m512i a, __m512i b)
{
    const __m512i low = _mm512_set1_epi32(0xFFFF);
    return _mm512_packus_epi32(_mm512_and_si512(a, low), _mm512_and_si512(b, low));
}

/* x01 . c01 + x23 . c23: two taps of each of two pairs of 16-bit values. */
INLINE __m512i madd_pairs(__m512i x01, __m512i x23, __m512i c01, __m512i c23)
{
    return _mm512_add_epi32(_mm512_madd_epi16(x01, c01), _mm512_madd_epi16(x23, c23));
}

/* (x01 . c01 + x23 . c23 + add) >> shift, arithmetic. */
INLINE __m512i filter_sum16(__m512i x01, __m512i x23, __m512i c01, __m512i c23, __m512i add,
                            __m128i shift)
{
    return _mm512_sra_epi32(_mm512_add_epi32(madd_pairs(x01, x23, c01, c23), add), shift);
}

INLINE void dwt0_vertical(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                          const uint8_t *r3, int bytes, int bitdepth, int w, bool details,
                          int16_t *lo, int16_t *hi)
{
    const uint32_t round = 1u << (bitdepth - 1);
    const uint32_t bias = bytes == 2 ? 32768u * 46342u : 0;
    const __m512i lo_add = _mm512_set1_epi32((int32_t)(bias - 46342u * round + round));
    const __m512i hi_add = _mm512_set1_epi32((int32_t)round);
    const __m128i shift = _mm_cvtsi32_si128(bitdepth);

    /* w >= 33: the last vector overlaps the one before */
    for (int j0 = 0; j0 < w; j0 += 32) {
        const int j = j0 + 32 <= w ? j0 : w - 32;
        const __m512i s0 = load_samples16(r0, j, bytes), s1 = load_samples16(r1, j, bytes);
        const __m512i s2 = load_samples16(r2, j, bytes), s3 = load_samples16(r3, j, bytes);
        const __m512i a01 = _mm512_unpacklo_epi16(s0, s1), b01 = _mm512_unpackhi_epi16(s0, s1);
        const __m512i a23 = _mm512_unpacklo_epi16(s2, s3), b23 = _mm512_unpackhi_epi16(s2, s3);
        _mm512_storeu_si512(lo + j, narrow16(filter_sum16(a01, a23, LO01, LO23, lo_add, shift),
                                             filter_sum16(b01, b23, LO01, LO23, lo_add, shift)));
        if (!details) continue;
        _mm512_storeu_si512(hi + j, narrow16(filter_sum16(a01, a23, HI01, HI23, hi_add, shift),
                                             filter_sum16(b01, b23, HI01, HI23, hi_add, shift)));
    }
}

INLINE void dwt_row0(const uint8_t *const src[4], int bytes, int bitdepth, int w, bool details,
                     int32_t *const out[4], int32_t *lo32, int32_t *hi32)
{
    int16_t *lo = (int16_t *)lo32, *hi = (int16_t *)hi32;
    const int half = (w + 1) / 2;
    const __m512i round = _mm512_set1_epi32(32768);
    const __m128i shift = _mm_cvtsi32_si128(16);

    dwt0_vertical(src[0], src[1], src[2], src[3], bytes, bitdepth, w, details, lo, hi);
    pad_row16(lo, w);
    if (details) pad_row16(hi, w);
    for (int j = 0; j < half; j += 16) {
        const __mmask16 mask = lanes_below(half - j);
        const __m512i p = _mm512_loadu_si512(lo + 2 * j - 1);
        const __m512i q = _mm512_loadu_si512(lo + 2 * j + 1);
        store_masked(out[0] + j, mask, filter_sum16(p, q, LO01, LO23, round, shift));
        if (!details) continue;
        store_masked(out[2] + j, mask, filter_sum16(p, q, HI01, HI23, round, shift));
        const __m512i ph = _mm512_loadu_si512(hi + 2 * j - 1);
        const __m512i qh = _mm512_loadu_si512(hi + 2 * j + 1);
        store_masked(out[1] + j, mask, filter_sum16(ph, qh, LO01, LO23, round, shift));
        store_masked(out[3] + j, mask, filter_sum16(ph, qh, HI01, HI23, round, shift));
    }
}

static void dwt_row0_8_avx512(const uint8_t *const src[4], int bitdepth, int w, bool details,
                              int32_t *const out[4], int32_t *lo, int32_t *hi)
{
    (void)bitdepth;
    dwt_row0(src, 1, 8, w, details, out, lo, hi);
}

static void dwt_row0_16_avx512(const uint8_t *const src[4], int bitdepth, int w, bool details,
                               int32_t *const out[4], int32_t *lo, int32_t *hi)
{
    dwt_row0(src, 2, bitdepth, w, details, out, lo, hi);
}

/* ---- DWT of levels 1..3 -------------------------------------------------------- */

/* The taps on 16-bit halves: see integer_adm_x86.h. */

/* Stores 32 int32 (a: the first 16, b: the next 16) as their halves. */
INLINE void store_split(AdmSplitRow r, int j, __m512i a, __m512i b)
{
    const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    const __m512i low = _mm512_set1_epi32(0xFFFF);
    const __m512i high = _mm512_packs_epi32(_mm512_srai_epi32(a, 16), _mm512_srai_epi32(b, 16));
    const __m512i lows = _mm512_xor_si512(
        _mm512_packus_epi32(_mm512_and_si512(a, low), _mm512_and_si512(b, low)),
        _mm512_set1_epi16(INT16_MIN));
    _mm512_storeu_si512(r.high + j, _mm512_permutexvar_epi64(order, high));
    _mm512_storeu_si512(r.low + j, _mm512_permutexvar_epi64(order, lows));
}

INLINE void split_pairs(__m512i t0, __m512i t1, __m512i t2, __m512i t3, __m512i *h01,
                        __m512i *h23, __m512i *l01, __m512i *l23)
{
    const __m512i bias = _mm512_set1_epi16(INT16_MIN);
    *h01 = _mm512_mask_blend_epi16(0xAAAAAAAA, _mm512_srli_epi32(t0, 16), t1);
    *h23 = _mm512_mask_blend_epi16(0xAAAAAAAA, _mm512_srli_epi32(t2, 16), t3);
    *l01 = _mm512_xor_si512(_mm512_mask_blend_epi16(0xAAAAAAAA, t0, _mm512_slli_epi32(t1, 16)),
                            bias);
    *l23 = _mm512_xor_si512(_mm512_mask_blend_epi16(0xAAAAAAAA, t2, _mm512_slli_epi32(t3, 16)),
                            bias);
}

INLINE __m512i combine(__m512i a, __m512i b, int k, int shift)
{
    a = _mm512_add_epi32(a, _mm512_set1_epi32(k));
    if (shift == 0) return _mm512_add_epi32(_mm512_slli_epi32(a, 16), b);
    if (shift == 15)
        return _mm512_add_epi32(_mm512_add_epi32(a, a),
                                _mm512_srai_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(1 << 14)),
                                                  15));
    return _mm512_add_epi32(a, _mm512_srai_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(1 << 15)),
                                                 16));
}

/* Vertical pass of 16 columns: the low- and high-pass sums. */
INLINE void vertical16(const int32_t *const src[4], int j, __mmask16 mask, int shift,
                       __m512i *low, __m512i *high)
{
    __m512i h01, h23, l01, l23;
    split_pairs(load_masked(src[0] + j, mask), load_masked(src[1] + j, mask),
                load_masked(src[2] + j, mask), load_masked(src[3] + j, mask), &h01, &h23, &l01,
                &l23);
    *low = combine(madd_pairs(h01, h23, LO01, LO23), madd_pairs(l01, l23, LO01, LO23), ADM_K_LO,
                   shift);
    *high = combine(madd_pairs(h01, h23, HI01, HI23), madd_pairs(l01, l23, HI01, HI23), 0, shift);
}

/* Horizontal pass: outputs j .. j + 15 of a split row. */
INLINE void horizontal16(AdmSplitRow r, int j, int shift, __m512i *low, __m512i *high)
{
    const __m512i ph = _mm512_loadu_si512(r.high + 2 * j - 1);
    const __m512i qh = _mm512_loadu_si512(r.high + 2 * j + 1);
    const __m512i pl = _mm512_loadu_si512(r.low + 2 * j - 1);
    const __m512i ql = _mm512_loadu_si512(r.low + 2 * j + 1);
    *low = combine(madd_pairs(ph, qh, LO01, LO23), madd_pairs(pl, ql, LO01, LO23), ADM_K_LO, shift);
    *high = combine(madd_pairs(ph, qh, HI01, HI23), madd_pairs(pl, ql, HI01, HI23), 0, shift);
}

static void dwt_row123_avx512(const int32_t *const src[4], int w, int scale, bool details,
                              int32_t *const out[4], int32_t *lo32, int32_t *hi32)
{
    /* libvmaf's shifts: vertical 0, 16, 16; horizontal 15, 16, 15 */
    const int vs = scale == 1 ? 0 : 16, hs = scale == 2 ? 16 : 15;
    const AdmSplitRow lo = split_row(lo32, w), hi = split_row(hi32, w);
    const int half = (w + 1) / 2;

    for (int j = 0; j < w; j += 32) {
        __m512i la, ha, lb, hb;
        vertical16(src, j, lanes_below(w - j), vs, &la, &ha);
        vertical16(src, j + 16, lanes_below(w - j - 16), vs, &lb, &hb);
        store_split(lo, j, la, lb);
        if (details) store_split(hi, j, ha, hb);
    }
    pad_split(lo, w);
    if (details) pad_split(hi, w);

    for (int j = 0; j < half; j += 16) {
        const __mmask16 mask = lanes_below(half - j);
        __m512i low, high;
        horizontal16(lo, j, hs, &low, &high);
        store_masked(out[0] + j, mask, low);
        if (!details) continue;
        store_masked(out[2] + j, mask, high);
        horizontal16(hi, j, hs, &low, &high);
        store_masked(out[1] + j, mask, low);
        store_masked(out[3] + j, mask, high);
    }
}

/* ---- decoupling -------------------------------------------------------------------- */

/* The C code's angle test on eight elements in double lanes (see the AVX2
 * file), from the float values of u.v, |u|^2 and |v|^2. */
INLINE __mmask8 angle_test_pd(__m256 dp_f, __m256 o_f, __m256 t_f, __m512d cos_sq)
{
    const __m512d inv4096 = _mm512_set1_pd(1.0 / 4096.0);
    const __m512d dp = _mm512_mul_pd(_mm512_cvtps_pd(dp_f), inv4096);
    const __m512d rhs = _mm512_mul_pd(
        _mm512_mul_pd(cos_sq, _mm512_mul_pd(_mm512_cvtps_pd(o_f), inv4096)),
        _mm512_mul_pd(_mm512_cvtps_pd(t_f), inv4096));
    return _mm512_cmp_pd_mask(dp, _mm512_setzero_pd(), _CMP_GE_OQ) &
           _mm512_cmp_pd_mask(_mm512_mul_pd(dp, dp), rhs, _CMP_GE_OQ);
}

/* The gain limit, where cond: v * gain in double, then at most t (o > 0) or
 * at least t (o < 0), truncated to int32. */
INLINE __m512i gain_limit(__m512i v, __m512i t, __m512i o, __mmask16 cond, __m512d gain)
{
    const __mmask16 positive = _mm512_cmpgt_epi32_mask(o, _mm512_setzero_si512());
    /* (the extraction's index must be a constant at every optimisation
     * level, so the halves are taken before the loop) */
    const __m256i v_half[2] = { _mm512_extracti64x4_epi64(v, 0), _mm512_extracti64x4_epi64(v, 1) };
    const __m256i t_half[2] = { _mm512_extracti64x4_epi64(t, 0), _mm512_extracti64x4_epi64(t, 1) };
    __m256i r[2];
    for (int half = 0; half < 2; half++) {
        const __m256i vh = v_half[half];
        const __m256i th = t_half[half];
        const __m512d g = _mm512_mul_pd(_mm512_cvtepi32_pd(vh), gain);
        const __m512d td = _mm512_cvtepi32_pd(th);
        /* g < t ? g : t and g > t ? g : t, as minpd and maxpd pick */
        const __m512d limited = _mm512_mask_blend_pd((__mmask8)(positive >> (8 * half)),
                                                     _mm512_max_pd(g, td), _mm512_min_pd(g, td));
        r[half] = _mm512_cvttpd_epi32(limited);
    }
    return _mm512_mask_blend_epi32(cond, v, _mm512_inserti64x4(_mm512_castsi256_si512(r[0]),
                                                               r[1], 1));
}

INLINE __m512i ratio_level0(const int32_t *div_lookup, __m512i o, __m512i t)
{
    const __m512i div = _mm512_i32gather_epi32(_mm512_add_epi32(o, _mm512_set1_epi32(32768)),
                                               div_lookup, 4);
    const __m512i add = _mm512_set1_epi64(16384);
    const __m512i even = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epi32(div, t), add), 15);
    const __m512i odd = _mm512_srli_epi64(
        _mm512_add_epi64(_mm512_mul_epi32(odd_to_even(div), odd_to_even(t)), add), 15);
    __m512i k = join_low32(even, odd);
    k = _mm512_min_epi32(_mm512_max_epi32(k, _mm512_setzero_si512()), _mm512_set1_epi32(32768));
    return _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask(o, _mm512_setzero_si512()), k,
                                   _mm512_set1_epi32(32768));
}

/* Levels 1..3, the even lanes of div, t, round and shift: (div * t * sign +
 * round) >> shift, clamped to [0, 32768]. */
INLINE __m512i ratio_level123_half(__m512i div, __m512i t, __mmask8 negative, __m512i round,
                                   __m512i shift)
{
    __m512i p = _mm512_mul_epi32(div, t);
    p = _mm512_mask_sub_epi64(p, negative, _mm512_setzero_si512(), p);
    p = _mm512_add_epi64(p, _mm512_srai_epi64(_mm512_slli_epi64(round, 32), 32));
    const __m512i k = _mm512_srav_epi64(p, _mm512_and_si512(shift,
                                                            _mm512_set1_epi64(0xFFFFFFFF)));
    return _mm512_min_epi64(_mm512_max_epi64(k, _mm512_setzero_si512()),
                            _mm512_set1_epi64(32768));
}

INLINE __m512i ratio_level123(const int32_t *div_lookup, __m512i o, __m512i t)
{
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1);
    const __m512i mag = _mm512_abs_epi32(o); /* as uint32: INT32_MIN is 2^31 */
    const __mmask16 big = _mm512_cmpge_epu32_mask(mag, _mm512_set1_epi32(32768));
    /* 17 - clz(mag) where mag >= 32768, else 0 */
    const __m512i shift = _mm512_maskz_sub_epi32(big, _mm512_set1_epi32(17),
                                                 _mm512_lzcnt_epi32(mag));
    const __m512i rounded = _mm512_and_si512(
        _mm512_srlv_epi32(_mm512_add_epi32(mag, _mm512_sllv_epi32(one, _mm512_sub_epi32(shift, one))),
                          shift),
        _mm512_set1_epi32(0xFFFF));
    const __m512i index = _mm512_mask_blend_epi32(big, mag, rounded);
    const __m512i div = _mm512_i32gather_epi32(_mm512_add_epi32(index, _mm512_set1_epi32(32768)),
                                               div_lookup, 4);
    /* libvmaf's int (1 << (14 + shift)): negative at shift 17 */
    const __m512i round = _mm512_sllv_epi32(one, _mm512_add_epi32(shift, _mm512_set1_epi32(14)));
    const __m512i total = _mm512_add_epi32(shift, _mm512_set1_epi32(15));
    const __mmask16 negative = _mm512_cmplt_epi32_mask(o, zero);
    const __m512i even = ratio_level123_half(div, t, even_mask(negative), round, total);
    const __m512i odd = ratio_level123_half(odd_to_even(div), odd_to_even(t), odd_mask(negative),
                                            odd_to_even(round), odd_to_even(total));
    return _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask(o, zero), join_low32(even, odd),
                                   _mm512_set1_epi32(32768));
}

/* Level 0: the dot products fit int32 but for 2^31 (every value -32768),
 * which wraps to INT32_MIN. */
INLINE __mmask16 angle_level0(__m512i oh, __m512i ov, __m512i th, __m512i tv, __m512d cos_sq)
{
    const __m512i low = _mm512_set1_epi32(0xFFFF);
    const __m512i o = _mm512_or_si512(_mm512_and_si512(oh, low), _mm512_slli_epi32(ov, 16));
    const __m512i t = _mm512_or_si512(_mm512_and_si512(th, low), _mm512_slli_epi32(tv, 16));
    const __m512i sums[3] = { _mm512_madd_epi16(o, t), _mm512_madd_epi16(o, o),
                              _mm512_madd_epi16(t, t) };
    __m512 f[3];
    for (int k = 0; k < 3; k++) {
        f[k] = _mm512_cvtepi32_ps(sums[k]);
        /* -2^31 back to 2^31 */
        f[k] = _mm512_mask_mov_ps(f[k], _mm512_cmpeq_epi32_mask(sums[k],
                                                                _mm512_set1_epi32(INT32_MIN)),
                                  _mm512_set1_ps(2147483648.0f));
    }
    /* (the halves spelled out: the extraction's index must be a constant
     * at every optimisation level) */
    const __mmask8 lo = angle_test_pd(_mm512_extractf32x8_ps(f[0], 0),
                                      _mm512_extractf32x8_ps(f[1], 0),
                                      _mm512_extractf32x8_ps(f[2], 0), cos_sq);
    const __mmask8 hi = angle_test_pd(_mm512_extractf32x8_ps(f[0], 1),
                                      _mm512_extractf32x8_ps(f[1], 1),
                                      _mm512_extractf32x8_ps(f[2], 1), cos_sq);
    return (__mmask16)(lo | (hi << 8));
}

/* Levels 1..3: 64-bit dot products of the even and the odd elements,
 * rounded to float as C casts them. */
INLINE __mmask16 angle_level123(__m512i oh, __m512i ov, __m512i th, __m512i tv, __m512d cos_sq)
{
    __mmask8 m[2];
    for (int odd = 0; odd < 2; odd++) {
        const __m512i a = odd ? odd_to_even(oh) : oh, b = odd ? odd_to_even(ov) : ov;
        const __m512i c = odd ? odd_to_even(th) : th, d = odd ? odd_to_even(tv) : tv;
        const __m512i dp = _mm512_add_epi64(_mm512_mul_epi32(a, c), _mm512_mul_epi32(b, d));
        const __m512i om = _mm512_add_epi64(_mm512_mul_epi32(a, a), _mm512_mul_epi32(b, b));
        const __m512i tm = _mm512_add_epi64(_mm512_mul_epi32(c, c), _mm512_mul_epi32(d, d));
        m[odd] = angle_test_pd(_mm512_cvtepi64_ps(dp), _mm512_cvtepi64_ps(om),
                               _mm512_cvtepi64_ps(tm), cos_sq);
    }
    return join_masks(m[0], m[1]);
}

INLINE void decouple_row(bool level0, const int32_t *div_lookup, float cos_1deg_sq, double gain,
                         const int32_t *const ref[3], const int32_t *const dis[3],
                         int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    const __m512d cos_sq = _mm512_set1_pd(cos_1deg_sq);
    const __m512d gain_pd = _mm512_set1_pd(gain);
    const __m512i zero = _mm512_setzero_si512();

    for (int j = j0; j < j1; j += 16) {
        const __mmask16 mask = lanes_below(j1 - j);
        __m512i o[3], t[3];
        for (int b = 0; b < 3; b++) {
            o[b] = load_masked(ref[b] + j, mask);
            t[b] = load_masked(dis[b] + j, mask);
        }
        const __mmask16 angle = level0 ? angle_level0(o[0], o[1], t[0], t[1], cos_sq)
                                       : angle_level123(o[0], o[1], t[0], t[1], cos_sq);
        for (int b = 0; b < 3; b++) {
            const __m512i k = level0 ? ratio_level0(div_lookup, o[b], t[b])
                                     : ratio_level123(div_lookup, o[b], t[b]);
            __m512i v;
            if (level0) {
                v = _mm512_srai_epi32(_mm512_add_epi32(_mm512_mullo_epi32(k, o[b]),
                                                       _mm512_set1_epi32(16384)), 15);
            } else {
                const __m512i round = _mm512_set1_epi64(16384);
                v = join_low32(
                    _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epi32(k, o[b]), round), 15),
                    _mm512_srli_epi64(_mm512_add_epi64(
                        _mm512_mul_epi32(odd_to_even(k), odd_to_even(o[b])), round), 15));
            }
            const __mmask16 cond = angle & _mm512_cmpgt_epi32_mask(k, zero) &
                                   _mm512_cmpneq_epi32_mask(o[b], zero);
            if (cond) v = gain_limit(v, t[b], o[b], cond, gain_pd);
            __m512i a = _mm512_sub_epi32(t[b], v);
            if (level0) a = sext16(a);
            store_masked(rst[b] + j, mask, v);
            store_masked(add[b] + j, mask, a);
        }
    }
}

static void decouple_row0_avx512(const int32_t *div_lookup, float cos_1deg_sq, double gain,
                                 const int32_t *const ref[3], const int32_t *const dis[3],
                                 int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    decouple_row(true, div_lookup, cos_1deg_sq, gain, ref, dis, rst, add, j0, j1);
}

static void decouple_row123_avx512(const int32_t *div_lookup, float cos_1deg_sq, double gain,
                                   const int32_t *const ref[3], const int32_t *const dis[3],
                                   int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    decouple_row(false, div_lookup, cos_1deg_sq, gain, ref, dis, rst, add, j0, j1);
}

/* ---- CSF and masking ------------------------------------------------------------ */

/* Levels 1..3's CSF (see the AVX2 file): a csf of 2^31 or more is
 * multiplied as csf - 2^32 and x * 2^32 added back. */
INLINE __m512i csf_level123(__m512i x, __m512i csf, bool csf_high)
{
    const __m512i add = _mm512_set1_epi64(1 << 27);
    const __m512i xo = odd_to_even(x);
    __m512i even = _mm512_mul_epi32(x, csf), odd = _mm512_mul_epi32(xo, csf);
    if (csf_high) {
        even = _mm512_add_epi64(even, _mm512_slli_epi64(x, 32));
        odd = _mm512_add_epi64(odd, _mm512_slli_epi64(xo, 32));
    }
    return join_low32(_mm512_srli_epi64(_mm512_add_epi64(even, add), 28),
                      _mm512_srli_epi64(_mm512_add_epi64(odd, add), 28));
}

INLINE __m512i scale_q32(__m512i abs_c, int32_t m)
{
    const __m512i mul = _mm512_set1_epi32(m), add = _mm512_set1_epi64(INT32_MIN);
    return join_high32(_mm512_add_epi64(_mm512_mul_epi32(abs_c, mul), add),
                       _mm512_add_epi64(_mm512_mul_epi32(odd_to_even(abs_c), mul), add));
}

INLINE void masking_row(bool level0, const uint32_t csf[3], const int32_t *const src[3],
                        int32_t *around, int32_t *centre, int j0, int j1)
{
    static const int32_t add0[3] = { 16384, 16384, 65535 };
    static const int shift0[3] = { 15, 15, 17 };
    __m512i csf_v[3];
    for (int b = 0; b < 3; b++) csf_v[b] = _mm512_set1_epi32((int32_t)csf[b]);

    for (int j = j0; j < j1; j += 16) {
        const __mmask16 mask = lanes_below(j1 - j);
        __m512i sum_around = _mm512_setzero_si512(), sum_centre = _mm512_setzero_si512();
        for (int b = 0; b < 3; b++) {
            const __m512i s = load_masked(src[b] + j, mask);
            __m512i flt, ctr;
            if (level0) {
                const __m512i c = sext16(_mm512_srai_epi32(
                    _mm512_add_epi32(_mm512_mullo_epi32(csf_v[b], s), _mm512_set1_epi32(add0[b])),
                    shift0[b]));
                const __m512i a = _mm512_abs_epi32(c);
                const __m512i round = _mm512_set1_epi32(2048);
                flt = sext16(_mm512_srai_epi32(
                    _mm512_add_epi32(_mm512_mullo_epi32(a, _mm512_set1_epi32(4369)), round), 12));
                ctr = sext16(_mm512_srai_epi32(
                    _mm512_add_epi32(_mm512_mullo_epi32(a, _mm512_set1_epi32(8738)), round), 12));
            } else {
                const __m512i a = _mm512_abs_epi32(csf_level123(s, csf_v[b], csf[b] >> 31));
                flt = scale_q32(a, 143165577);
                ctr = scale_q32(a, 286331153);
            }
            sum_around = _mm512_add_epi32(sum_around, flt);
            sum_centre = _mm512_add_epi32(sum_centre, _mm512_sub_epi32(ctr, flt));
        }
        store_masked(around + j, mask, sum_around);
        store_masked(centre + j, mask, sum_centre);
    }
}

static void masking_row0_avx512(const uint32_t csf[3], const int32_t *const src[3],
                                int32_t *around, int32_t *centre, int j0, int j1)
{
    masking_row(true, csf, src, around, centre, j0, j1);
}

static void masking_row123_avx512(const uint32_t csf[3], const int32_t *const src[3],
                                  int32_t *around, int32_t *centre, int j0, int j1)
{
    masking_row(false, csf, src, around, centre, j0, j1);
}

/* One orientation's cube terms of sixteen elements (see the AVX2 file),
 * added in 64-bit lanes. */
INLINE __m512i cube_terms(__m512i c, __m512i thr, __m128i sub, __m512i sq_add, __m128i sq,
                          __m512i cub_add, __m128i cub, __mmask16 lanes)
{
    __m512i m = _mm512_sub_epi32(_mm512_abs_epi32(c), _mm512_sll_epi32(thr, sub));
    m = _mm512_maskz_max_epi32(lanes, m, _mm512_setzero_si512());
    __m512i sum = _mm512_setzero_si512();
    for (int odd = 0; odd < 2; odd++) {
        const __m512i v = odd ? odd_to_even(m) : m;
        const __m512i m_sq = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epi32(v, v), sq_add), sq);
        sum = _mm512_add_epi64(sum, _mm512_sra_epi64(
            _mm512_add_epi64(_mm512_mul_epi32(m_sq, v), cub_add), cub));
    }
    return sum;
}

INLINE void masked_row(bool level0, const uint32_t csf[3], const AdmMaskedShifts *p,
                       const int32_t *const src[3], const int32_t *const around[3],
                       const int32_t *centre, int w, int left, int right, uint32_t *col,
                       uint64_t sums[3])
{
    __m512i csf_v[3], sq_add[3], cub_add[3];
    __m128i sub[3], sq[3], cub[3];
    for (int b = 0; b < 3; b++) {
        csf_v[b] = _mm512_set1_epi32((int32_t)csf[b]);
        sq_add[b] = _mm512_set1_epi64(p->sq_add[b]);
        cub_add[b] = _mm512_set1_epi64(p->cub_add[b]);
        sub[b] = _mm_cvtsi32_si128((int)p->sub[b]);
        sq[b] = _mm_cvtsi32_si128((int)p->sq[b]);
        cub[b] = _mm_cvtsi32_si128((int)p->cub[b]);
    }

    const int j0 = QUALE_MAX(left - 1, 0), j1 = QUALE_MIN(right + 1, w);
    for (int j = j0; j < j1; j += 16) {
        const __mmask16 mask = lanes_below(j1 - j);
        const __m512i sum = _mm512_add_epi32(
            _mm512_add_epi32(load_masked(around[0] + j, mask), load_masked(around[1] + j, mask)),
            load_masked(around[2] + j, mask));
        _mm512_storeu_si512(col + j, sum); /* col has slack */
    }
    if (left == 0) col[-1] = col[1];
    if (right == w) col[w] = col[w - 1];

    __m512i row[3] = { _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512() };
    for (int j = left; j < right; j += 16) {
        const __mmask16 mask = lanes_below(right - j);
        const __m512i thr = _mm512_add_epi32(
            _mm512_add_epi32(_mm512_loadu_si512(col + j - 1), _mm512_loadu_si512(col + j)),
            _mm512_add_epi32(_mm512_loadu_si512(col + j + 1), load_masked(centre + j, mask)));
        for (int b = 0; b < 3; b++) {
            const __m512i s = load_masked(src[b] + j, mask);
            const __m512i c = level0 ? _mm512_mullo_epi32(s, csf_v[b])
                                     : csf_level123(s, csf_v[b], csf[b] >> 31);
            row[b] = _mm512_add_epi64(row[b], cube_terms(c, thr, sub[b], sq_add[b], sq[b],
                                                         cub_add[b], cub[b], mask));
        }
    }
    for (int b = 0; b < 3; b++) sums[b] = reduce_add_u64x8(row[b]);
}

static void masked_row0_avx512(const uint32_t csf[3], const AdmMaskedShifts *p,
                               const int32_t *const src[3], const int32_t *const around[3],
                               const int32_t *centre, int w, int left, int right, uint32_t *col,
                               uint64_t sums[3])
{
    masked_row(true, csf, p, src, around, centre, w, left, right, col, sums);
}

static void masked_row123_avx512(const uint32_t csf[3], const AdmMaskedShifts *p,
                                 const int32_t *const src[3], const int32_t *const around[3],
                                 const int32_t *centre, int w, int left, int right,
                                 uint32_t *col, uint64_t sums[3])
{
    masked_row(false, csf, p, src, around, centre, w, left, right, col, sums);
}

/* ---- the denominator -------------------------------------------------------------- */

static void den_row0_avx512(const AdmDenShifts *p, const int32_t *const ref[3], int left,
                            int right, uint64_t sums[3])
{
    (void)p;
    for (int b = 0; b < 3; b++) {
        __m512i row = _mm512_setzero_si512();
        for (int j = left; j < right; j += 16) {
            const __m512i m = _mm512_and_si512(
                _mm512_abs_epi32(load_masked(ref[b] + j, lanes_below(right - j))),
                _mm512_set1_epi32(0xFFFF));
            const __m512i sq = _mm512_mullo_epi32(m, m);
            row = _mm512_add_epi64(row, _mm512_mul_epu32(sq, m));
            row = _mm512_add_epi64(row, _mm512_mul_epu32(odd_to_even(sq), odd_to_even(m)));
        }
        sums[b] = reduce_add_u64x8(row);
    }
}

INLINE __m512i den_cube(__m512i m, __m512i sq_add, __m128i sq, __m512i cub_add, __m128i cub)
{
    const __m512i s = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(m, m), sq_add), sq);
    const __m512i p = _mm512_add_epi64(
        _mm512_mul_epu32(s, m), _mm512_slli_epi64(_mm512_mul_epu32(_mm512_srli_epi64(s, 32), m), 32));
    return _mm512_srl_epi64(_mm512_add_epi64(p, cub_add), cub);
}

static void den_row123_avx512(const AdmDenShifts *p, const int32_t *const ref[3], int left,
                              int right, uint64_t sums[3])
{
    const __m512i sq_add = _mm512_set1_epi64((int64_t)p->sq_add);
    const __m512i cub_add = _mm512_set1_epi64((int64_t)p->cub_add);
    const __m128i sq = _mm_cvtsi32_si128((int)p->sq), cub = _mm_cvtsi32_si128((int)p->cub);

    for (int b = 0; b < 3; b++) {
        __m512i row = _mm512_setzero_si512();
        for (int j = left; j < right; j += 16) {
            const __m512i m = _mm512_abs_epi32(load_masked(ref[b] + j, lanes_below(right - j)));
            row = _mm512_add_epi64(row, den_cube(m, sq_add, sq, cub_add, cub));
            row = _mm512_add_epi64(row, den_cube(odd_to_even(m), sq_add, sq, cub_add, cub));
        }
        sums[b] = reduce_add_u64x8(row);
    }
}

void adm_dsp_init_avx512(AdmDsp *dsp)
{
    dsp->dwt_row0_8 = dwt_row0_8_avx512;
    dsp->dwt_row0_16 = dwt_row0_16_avx512;
    dsp->dwt_row123 = dwt_row123_avx512;
    dsp->decouple_row0 = decouple_row0_avx512;
    dsp->decouple_row123 = decouple_row123_avx512;
    dsp->masking_row0 = masking_row0_avx512;
    dsp->masking_row123 = masking_row123_avx512;
    dsp->masked_row0 = masked_row0_avx512;
    dsp->masked_row123 = masked_row123_avx512;
    dsp->den_row0 = den_row0_avx512;
    dsp->den_row123 = den_row123_avx512;
}
