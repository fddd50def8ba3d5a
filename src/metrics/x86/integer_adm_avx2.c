/*
 * Integer ADM's kernels in AVX2, bit-exact with the C reference
 * (src/metrics/integer_adm.c): the same integer operations on eight int32
 * lanes, and where the C reference computes in float or double, the same
 * float or double operations in the same order.
 *
 * The 64-bit products of the reference are vpmuldq on the even and the
 * odd lanes; where only the low 32 bits of a shifted product survive, a
 * logical 64-bit shift gives them as the arithmetic one would.  Level 0's
 * values are int16, so its DWT runs on 16-bit lanes with vpmaddwd, which
 * sums two products in 32 bits exactly as the C code's int32 sums; the DWT
 * of levels 1..3 does the same on the 16-bit halves of its int32 values
 * (integer_adm_x86.h).
 *
 * The last vector of a row is masked (vpmaskmovd), so that a kernel writes
 * only the samples the C code does, except in its scratch rows (lo, hi,
 * col), which have ADM_ROW_PAD samples of slack on each side.
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

/* Lanes 0 .. n - 1 set (n may exceed 8). */
INLINE __m256i lanes_below(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

INLINE __m256i load_masked(const int32_t *p, __m256i mask)
{
    return _mm256_maskload_epi32((const int *)p, mask);
}

INLINE void store_masked(int32_t *p, __m256i mask, __m256i v)
{
    _mm256_maskstore_epi32((int *)p, mask, v);
}

/* The odd int32 lanes moved to the even ones (the low halves of the
 * 64-bit lanes), where vpmuldq reads them. */
INLINE __m256i odd_to_even(__m256i v)
{
    return _mm256_srli_epi64(v, 32);
}

/* The low 32 bits of the 64-bit lanes of even (elements 0, 2, ...) and odd
 * (elements 1, 3, ...) put back in element order. */
INLINE __m256i join_low32(__m256i even, __m256i odd)
{
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

/* The high 32 bits of the 64-bit lanes, likewise. */
INLINE __m256i join_high32(__m256i even, __m256i odd)
{
    return _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

/* Sign extension of the even int32 lanes to 64 bits. */
INLINE __m256i sext_even(__m256i v)
{
    return _mm256_blend_epi32(v, _mm256_shuffle_epi32(_mm256_srai_epi32(v, 31), 0xA0), 0xAA);
}

/* An arithmetic right shift of 64-bit lanes by n (0 < n < 64). */
INLINE __m256i srai64(__m256i v, int n)
{
    const __m256i sign = _mm256_set1_epi64x((int64_t)(UINT64_C(1) << (63 - n)));
    return _mm256_sub_epi64(_mm256_xor_si256(_mm256_srli_epi64(v, n), sign), sign);
}

/* The int32 lanes of a and b as 16-bit values (their low halves: the C
 * code's (int16_t) casts), in column order when a and b are the
 * vpunpcklwd and vpunpckhwd halves of the same columns. */
INLINE __m256i narrow16(__m256i a, __m256i b)
{
    const __m256i low = _mm256_set1_epi32(0xFFFF);
    return _mm256_packus_epi32(_mm256_and_si256(a, low), _mm256_and_si256(b, low));
}

/* Two int16 coefficients as the pair vpmaddwd multiplies adjacent samples by. */
INLINE __m256i coef_pair(int16_t first, int16_t second)
{
    return _mm256_set1_epi32((int32_t)(((uint32_t)(uint16_t)second << 16) | (uint16_t)first));
}

/* ---- DWT of level 0 ------------------------------------------------------------ */

#define LO01 coef_pair(ADM_LO01)
#define LO23 coef_pair(ADM_LO23)
#define HI01 coef_pair(ADM_HI01)
#define HI23 coef_pair(ADM_HI23)

/* 16 samples of a row as int16 lanes: 8-bit samples as they are, 16-bit
 * ones less 32768 (vpmaddwd multiplies signed values; the sums get the
 * 32768 times the taps back, see dwt0_vertical). */
INLINE __m256i load_samples16(const uint8_t *row, int j, int bytes)
{
    if (bytes == 1) return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(row + j)));
    return _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(row + 2 * j)),
                            _mm256_set1_epi16(INT16_MIN));
}

/* x01 . c01 + x23 . c23: two taps of each of two pairs of 16-bit values. */
INLINE __m256i madd_pairs(__m256i x01, __m256i x23, __m256i c01, __m256i c23)
{
    return _mm256_add_epi32(_mm256_madd_epi16(x01, c01), _mm256_madd_epi16(x23, c23));
}

/* (x01 . c01 + x23 . c23 + add) >> shift, arithmetic. */
INLINE __m256i filter_sum16(__m256i x01, __m256i x23, __m256i c01, __m256i c23, __m256i add,
                            __m128i shift)
{
    return _mm256_sra_epi32(_mm256_add_epi32(madd_pairs(x01, x23, c01, c23), add), shift);
}

/* The horizontal pass over a padded int16 row: for outputs j .. j + 7,
 * low- and high-pass sums of taps 2j - 1 .. 2j + 2, (sum + 32768) >> 16. */
INLINE void filter_row16(const int16_t *row, int j, __m256i *low, __m256i *high)
{
    const __m256i p = _mm256_loadu_si256((const __m256i *)(row + 2 * j - 1));
    const __m256i q = _mm256_loadu_si256((const __m256i *)(row + 2 * j + 1));
    const __m256i round = _mm256_set1_epi32(32768);
    const __m128i shift = _mm_cvtsi32_si128(16);
    *low = filter_sum16(p, q, LO01, LO23, round, shift);
    *high = filter_sum16(p, q, HI01, HI23, round, shift);
}

/* The vertical pass of one output row: the low-pass (and with details the
 * high-pass) sums of rows r0..r3 into int16 rows.  The sums are the C
 * code's uint32 sums (vpmaddwd's int32 sums wrap the same way); with
 * 16-bit samples the taps times 32768 are added back: 32768 * 46342 for the
 * low pass, 0 for the high pass. */
INLINE void dwt0_vertical(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                          const uint8_t *r3, int bytes, int bitdepth, int w, bool details,
                          int16_t *lo, int16_t *hi)
{
    const uint32_t round = 1u << (bitdepth - 1);
    const uint32_t bias = bytes == 2 ? 32768u * 46342u : 0;
    const __m256i lo_add = _mm256_set1_epi32((int32_t)(bias - 46342u * round + round));
    const __m256i hi_add = _mm256_set1_epi32((int32_t)round);
    const __m128i shift = _mm_cvtsi32_si128(bitdepth);

    /* w >= 16: the last vector overlaps the one before */
    for (int j0 = 0; j0 < w; j0 += 16) {
        const int j = j0 + 16 <= w ? j0 : w - 16;
        const __m256i s0 = load_samples16(r0, j, bytes), s1 = load_samples16(r1, j, bytes);
        const __m256i s2 = load_samples16(r2, j, bytes), s3 = load_samples16(r3, j, bytes);
        const __m256i a01 = _mm256_unpacklo_epi16(s0, s1), b01 = _mm256_unpackhi_epi16(s0, s1);
        const __m256i a23 = _mm256_unpacklo_epi16(s2, s3), b23 = _mm256_unpackhi_epi16(s2, s3);
        _mm256_storeu_si256((__m256i *)(lo + j),
                            narrow16(filter_sum16(a01, a23, LO01, LO23, lo_add, shift),
                                     filter_sum16(b01, b23, LO01, LO23, lo_add, shift)));
        if (!details) continue;
        _mm256_storeu_si256((__m256i *)(hi + j),
                            narrow16(filter_sum16(a01, a23, HI01, HI23, hi_add, shift),
                                     filter_sum16(b01, b23, HI01, HI23, hi_add, shift)));
    }
}

INLINE void dwt_row0(const uint8_t *const src[4], int bytes, int bitdepth, int w, bool details,
                     int32_t *const out[4], int32_t *lo32, int32_t *hi32)
{
    /* the rows hold int16 here */
    int16_t *lo = (int16_t *)lo32, *hi = (int16_t *)hi32;
    const int half = (w + 1) / 2;

    dwt0_vertical(src[0], src[1], src[2], src[3], bytes, bitdepth, w, details, lo, hi);
    pad_row16(lo, w);
    if (details) pad_row16(hi, w);
    for (int j = 0; j < half; j += 8) {
        const __m256i mask = lanes_below(half - j);
        __m256i low, high;
        filter_row16(lo, j, &low, &high);
        store_masked(out[0] + j, mask, low);
        if (!details) continue;
        store_masked(out[2] + j, mask, high);
        filter_row16(hi, j, &low, &high);
        store_masked(out[1] + j, mask, low);
        store_masked(out[3] + j, mask, high);
    }
}

static void dwt_row0_8_avx2(const uint8_t *const src[4], int bitdepth, int w, bool details,
                            int32_t *const out[4], int32_t *lo, int32_t *hi)
{
    (void)bitdepth;
    dwt_row0(src, 1, 8, w, details, out, lo, hi);
}

static void dwt_row0_16_avx2(const uint8_t *const src[4], int bitdepth, int w, bool details,
                             int32_t *const out[4], int32_t *lo, int32_t *hi)
{
    dwt_row0(src, 2, bitdepth, w, details, out, lo, hi);
}

/* ---- DWT of levels 1..3 -------------------------------------------------------- */

/* The taps on 16-bit halves: see integer_adm_x86.h. */

/* Stores 16 int32 (a: the first 8, b: the next 8) as their halves. */
INLINE void store_split(AdmSplitRow r, int j, __m256i a, __m256i b)
{
    const __m256i low = _mm256_set1_epi32(0xFFFF);
    const __m256i high = _mm256_packs_epi32(_mm256_srai_epi32(a, 16), _mm256_srai_epi32(b, 16));
    const __m256i lows = _mm256_xor_si256(
        _mm256_packus_epi32(_mm256_and_si256(a, low), _mm256_and_si256(b, low)),
        _mm256_set1_epi16(INT16_MIN));
    _mm256_storeu_si256((__m256i *)(r.high + j), _mm256_permute4x64_epi64(high, 0xD8));
    _mm256_storeu_si256((__m256i *)(r.low + j), _mm256_permute4x64_epi64(lows, 0xD8));
}

/* The pairs (t0, t1) and (t2, t3) of four int32 rows as 16-bit halves. */
INLINE void split_pairs(__m256i t0, __m256i t1, __m256i t2, __m256i t3, __m256i *h01,
                        __m256i *h23, __m256i *l01, __m256i *l23)
{
    const __m256i bias = _mm256_set1_epi16(INT16_MIN);
    *h01 = _mm256_blend_epi16(_mm256_srli_epi32(t0, 16), t1, 0xAA);
    *h23 = _mm256_blend_epi16(_mm256_srli_epi32(t2, 16), t3, 0xAA);
    *l01 = _mm256_xor_si256(_mm256_blend_epi16(t0, _mm256_slli_epi32(t1, 16), 0xAA), bias);
    *l23 = _mm256_xor_si256(_mm256_blend_epi16(t2, _mm256_slli_epi32(t3, 16), 0xAA), bias);
}

/* (2^16 (A + k) + B + add) >> shift in 32 bits, for shift 0 (add 0), 15
 * (add 2^14) or 16 (add 2^15), as above. */
INLINE __m256i combine(__m256i a, __m256i b, int k, int shift)
{
    a = _mm256_add_epi32(a, _mm256_set1_epi32(k));
    if (shift == 0) return _mm256_add_epi32(_mm256_slli_epi32(a, 16), b);
    if (shift == 15)
        return _mm256_add_epi32(_mm256_add_epi32(a, a),
                                _mm256_srai_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(1 << 14)),
                                                  15));
    return _mm256_add_epi32(a, _mm256_srai_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(1 << 15)),
                                                 16));
}

/* Vertical pass of 8 columns: the low- and high-pass sums. */
INLINE void vertical8(const int32_t *const src[4], int j, __m256i mask, int shift, __m256i *low,
                      __m256i *high)
{
    __m256i h01, h23, l01, l23;
    split_pairs(load_masked(src[0] + j, mask), load_masked(src[1] + j, mask),
                load_masked(src[2] + j, mask), load_masked(src[3] + j, mask), &h01, &h23, &l01,
                &l23);
    *low = combine(madd_pairs(h01, h23, LO01, LO23), madd_pairs(l01, l23, LO01, LO23), ADM_K_LO,
                   shift);
    *high = combine(madd_pairs(h01, h23, HI01, HI23), madd_pairs(l01, l23, HI01, HI23), 0, shift);
}

/* Horizontal pass: outputs j .. j + 7 of a split row (taps 2j - 1 .. 2j + 2). */
INLINE void horizontal8(AdmSplitRow r, int j, int shift, __m256i *low, __m256i *high)
{
    const __m256i ph = _mm256_loadu_si256((const __m256i *)(r.high + 2 * j - 1));
    const __m256i qh = _mm256_loadu_si256((const __m256i *)(r.high + 2 * j + 1));
    const __m256i pl = _mm256_loadu_si256((const __m256i *)(r.low + 2 * j - 1));
    const __m256i ql = _mm256_loadu_si256((const __m256i *)(r.low + 2 * j + 1));
    *low = combine(madd_pairs(ph, qh, LO01, LO23), madd_pairs(pl, ql, LO01, LO23), ADM_K_LO, shift);
    *high = combine(madd_pairs(ph, qh, HI01, HI23), madd_pairs(pl, ql, HI01, HI23), 0, shift);
}

static void dwt_row123_avx2(const int32_t *const src[4], int w, int scale, bool details,
                            int32_t *const out[4], int32_t *lo32, int32_t *hi32)
{
    /* libvmaf's shifts: vertical 0, 16, 16; horizontal 15, 16, 15 */
    const int vs = scale == 1 ? 0 : 16, hs = scale == 2 ? 16 : 15;
    const AdmSplitRow lo = split_row(lo32, w), hi = split_row(hi32, w);
    const int half = (w + 1) / 2;

    for (int j = 0; j < w; j += 16) {
        __m256i la, ha, lb, hb;
        vertical8(src, j, lanes_below(w - j), vs, &la, &ha);
        vertical8(src, j + 8, lanes_below(w - j - 8), vs, &lb, &hb);
        store_split(lo, j, la, lb);
        if (details) store_split(hi, j, ha, hb);
    }
    pad_split(lo, w);
    if (details) pad_split(hi, w);

    for (int j = 0; j < half; j += 8) {
        const __m256i mask = lanes_below(half - j);
        __m256i low, high;
        horizontal8(lo, j, hs, &low, &high);
        store_masked(out[0] + j, mask, low);
        if (!details) continue;
        store_masked(out[2] + j, mask, high);
        horizontal8(hi, j, hs, &low, &high);
        store_masked(out[1] + j, mask, low);
        store_masked(out[3] + j, mask, high);
    }
}

/* ---- decoupling -------------------------------------------------------------------- */

/* The C code's angle test on four elements in double lanes, from the float
 * values of u.v, |u|^2 and |v|^2 (as doubles): u.v >= 0 and
 * (u.v / 4096)^2 >= cos^2(1 deg) (|u|^2 / 4096) (|v|^2 / 4096). */
INLINE __m256d angle_test_pd(__m256d dp_f, __m256d o_f, __m256d t_f, __m256d cos_sq)
{
    const __m256d inv4096 = _mm256_set1_pd(1.0 / 4096.0);
    const __m256d dp = _mm256_mul_pd(dp_f, inv4096);
    const __m256d rhs = _mm256_mul_pd(_mm256_mul_pd(cos_sq, _mm256_mul_pd(o_f, inv4096)),
                                      _mm256_mul_pd(t_f, inv4096));
    return _mm256_and_pd(_mm256_cmp_pd(dp, _mm256_setzero_pd(), _CMP_GE_OQ),
                         _mm256_cmp_pd(_mm256_mul_pd(dp, dp), rhs, _CMP_GE_OQ));
}

/* Four double-lane masks (elements 0..3, 4..7) as eight int32 masks. */
INLINE __m256i join_masks_pd(__m256d a, __m256d b)
{
    const __m256 s = _mm256_shuffle_ps(_mm256_castpd_ps(a), _mm256_castpd_ps(b), 0x88);
    return _mm256_permute4x64_epi64(_mm256_castps_si256(s), 0xD8);
}

/* The gain limit, where cond: v * gain in double, then at most t (o > 0)
 * or at least t (o < 0), truncated to int32. */
INLINE __m256i gain_limit(__m256i v, __m256i t, __m256i o, __m256i cond, __m256d gain)
{
    __m128i r[2];
    const __m256i positive = _mm256_cmpgt_epi32(o, _mm256_setzero_si256());
    for (int half = 0; half < 2; half++) {
        const __m128i vh = half ? _mm256_extracti128_si256(v, 1) : _mm256_castsi256_si128(v);
        const __m128i th = half ? _mm256_extracti128_si256(t, 1) : _mm256_castsi256_si128(t);
        const __m128i ph = half ? _mm256_extracti128_si256(positive, 1)
                                : _mm256_castsi256_si128(positive);
        const __m256d g = _mm256_mul_pd(_mm256_cvtepi32_pd(vh), gain);
        const __m256d td = _mm256_cvtepi32_pd(th);
        const __m256d pos = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(ph));
        /* g < t ? g : t and g > t ? g : t, as minpd and maxpd pick */
        const __m256d limited = _mm256_blendv_pd(_mm256_max_pd(g, td), _mm256_min_pd(g, td), pos);
        r[half] = _mm256_cvttpd_epi32(limited);
    }
    return _mm256_blendv_epi8(v, _mm256_set_m128i(r[1], r[0]), cond);
}

/* int64 lanes to the nearest float (ties to even), as a C cast does: the
 * magnitude is rounded to odd at bit 11 where it has more than 53 bits, so
 * that the exact double it then is rounds to the float the int64 would. */
INLINE __m128 int64_to_float(__m256i x)
{
    const __m256i sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
    __m256i u = _mm256_sub_epi64(_mm256_xor_si256(x, sign), sign); /* |x|, 2^63 stays */
    const __m256i exact = _mm256_cmpeq_epi64(_mm256_srli_epi64(u, 53), _mm256_setzero_si256());
    const __m256i low_bits = _mm256_set1_epi64x(0x7FF);
    const __m256i sticky = _mm256_andnot_si256(
        _mm256_cmpeq_epi64(_mm256_and_si256(u, low_bits), _mm256_setzero_si256()),
        _mm256_set1_epi64x(0x800));
    const __m256i odd = _mm256_or_si256(_mm256_andnot_si256(low_bits, u), sticky);
    u = _mm256_blendv_epi8(odd, u, exact);
    /* u = hi * 2^32 + lo as a double, exactly */
    const __m256i hi = _mm256_or_si256(_mm256_srli_epi64(u, 32),
                                       _mm256_set1_epi64x(0x4530000000000000)); /* 2^84 + hi 2^32 */
    const __m256i lo = _mm256_blend_epi32(u, _mm256_set1_epi64x(0x4330000000000000),
                                          0xAA); /* 2^52 + lo */
    const __m256d d = _mm256_add_pd(
        _mm256_sub_pd(_mm256_castsi256_pd(hi), _mm256_set1_pd(0x1p84 + 0x1p52)),
        _mm256_castsi256_pd(lo));
    const __m128 f = _mm256_cvtpd_ps(d);
    const __m128i s = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
        sign, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
    return _mm_xor_ps(f, _mm_and_ps(_mm_castsi128_ps(s), _mm_set1_ps(-0.0f)));
}

/* Level 0: t / o from the reciprocal table, clamped to [0, 32768]
 * (|o|, |t| <= 32768, so the product fits 46 bits and the result 31). */
INLINE __m256i ratio_level0(const int32_t *div_lookup, __m256i o, __m256i t)
{
    const __m256i div = _mm256_i32gather_epi32(div_lookup,
                                               _mm256_add_epi32(o, _mm256_set1_epi32(32768)), 4);
    const __m256i add = _mm256_set1_epi64x(16384);
    const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(div, t), add), 15);
    const __m256i odd = _mm256_srli_epi64(
        _mm256_add_epi64(_mm256_mul_epi32(odd_to_even(div), odd_to_even(t)), add), 15);
    __m256i k = join_low32(even, odd);
    k = _mm256_min_epi32(_mm256_max_epi32(k, _mm256_setzero_si256()), _mm256_set1_epi32(32768));
    return _mm256_blendv_epi8(k, _mm256_set1_epi32(32768),
                              _mm256_cmpeq_epi32(o, _mm256_setzero_si256()));
}

/* Levels 1..3, for the even lanes (64-bit lanes hold the int32 values of
 * div, t, the sign of o, the round term and the shift in their low halves):
 * k = (div * t * sign + round) >> shift, clamped to [0, 32768]. */
INLINE __m256i ratio_level123_half(__m256i div, __m256i t, __m256i negative, __m256i round,
                                   __m256i shift)
{
    __m256i p = _mm256_mul_epi32(div, t);
    p = _mm256_sub_epi64(_mm256_xor_si256(p, negative), negative);
    p = _mm256_add_epi64(p, sext_even(round));
    const __m256i k = _mm256_srlv_epi64(p, _mm256_and_si256(shift, _mm256_set1_epi64x(0xFFFFFFFF)));
    const __m256i max = _mm256_set1_epi64x(32768);
    const __m256i clamped = _mm256_blendv_epi8(k, max, _mm256_cmpgt_epi64(k, max));
    /* a negative sum shifts to a negative k: 0 */
    return _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), p), clamped);
}

/* Levels 1..3: o reduced to its 15 leading bits (rounded, wrapping in 32
 * bits like the C code), the shift made up after the product. */
INLINE __m256i ratio_level123(const int32_t *div_lookup, __m256i o, __m256i t)
{
    const __m256i zero = _mm256_setzero_si256();
    const __m256i mag = _mm256_abs_epi32(o); /* as uint32: INT32_MIN is 2^31 */
    const __m256i big = _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_srli_epi32(mag, 15), zero),
                                         _mm256_set1_epi32(-1));
    /* floor(log2(mag)) from the exponent of mag >> 8 (exact in a float) */
    const __m256i exponent = _mm256_srli_epi32(
        _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_srli_epi32(mag, 8))), 23);
    const __m256i shift = _mm256_and_si256(
        big, _mm256_sub_epi32(exponent, _mm256_set1_epi32(127 - 8 + 14)));
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i rounded = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_add_epi32(mag, _mm256_sllv_epi32(one, _mm256_sub_epi32(shift, one))),
                          shift),
        _mm256_set1_epi32(0xFFFF));
    const __m256i index = _mm256_blendv_epi8(mag, rounded, big);
    const __m256i div = _mm256_i32gather_epi32(div_lookup,
                                               _mm256_add_epi32(index, _mm256_set1_epi32(32768)), 4);
    /* libvmaf's int (1 << (14 + shift)): negative at shift 17 */
    const __m256i round = _mm256_sllv_epi32(one, _mm256_add_epi32(shift, _mm256_set1_epi32(14)));
    const __m256i total = _mm256_add_epi32(shift, _mm256_set1_epi32(15));
    const __m256i negative = _mm256_cmpgt_epi32(zero, o);
    const __m256i negative_even = _mm256_shuffle_epi32(negative, 0xA0);
    const __m256i negative_odd = _mm256_shuffle_epi32(negative, 0xF5);
    const __m256i even = ratio_level123_half(div, t, negative_even, round, total);
    const __m256i odd = ratio_level123_half(odd_to_even(div), odd_to_even(t), negative_odd,
                                            odd_to_even(round), odd_to_even(total));
    const __m256i k = join_low32(even, odd);
    return _mm256_blendv_epi8(k, _mm256_set1_epi32(32768), _mm256_cmpeq_epi32(o, zero));
}

/* The angle test of eight elements at level 0: the dot products fit int32
 * but for 2^31 (every value -32768), which wraps to INT32_MIN. */
INLINE __m256i angle_level0(__m256i oh, __m256i ov, __m256i th, __m256i tv, __m256d cos_sq)
{
    const __m256i low = _mm256_set1_epi32(0xFFFF);
    const __m256i o = _mm256_or_si256(_mm256_and_si256(oh, low), _mm256_slli_epi32(ov, 16));
    const __m256i t = _mm256_or_si256(_mm256_and_si256(th, low), _mm256_slli_epi32(tv, 16));
    const __m256i sums[3] = { _mm256_madd_epi16(o, t), _mm256_madd_epi16(o, o),
                              _mm256_madd_epi16(t, t) };
    __m256 f[3];
    for (int k = 0; k < 3; k++) {
        const __m256i wrapped = _mm256_cmpeq_epi32(sums[k], _mm256_set1_epi32(INT32_MIN));
        f[k] = _mm256_xor_ps(_mm256_cvtepi32_ps(sums[k]),
                             _mm256_and_ps(_mm256_castsi256_ps(wrapped), _mm256_set1_ps(-0.0f)));
    }
    __m256d m[2];
    for (int half = 0; half < 2; half++) {
        const __m128 a = half ? _mm256_extractf128_ps(f[0], 1) : _mm256_castps256_ps128(f[0]);
        const __m128 b = half ? _mm256_extractf128_ps(f[1], 1) : _mm256_castps256_ps128(f[1]);
        const __m128 c = half ? _mm256_extractf128_ps(f[2], 1) : _mm256_castps256_ps128(f[2]);
        m[half] = angle_test_pd(_mm256_cvtps_pd(a), _mm256_cvtps_pd(b), _mm256_cvtps_pd(c),
                                cos_sq);
    }
    return join_masks_pd(m[0], m[1]);
}

/* Levels 1..3: 64-bit dot products (even and odd lanes), floats by exact
 * rounding. */
INLINE __m256i angle_level123(__m256i oh, __m256i ov, __m256i th, __m256i tv, __m256d cos_sq)
{
    __m256d m[2];
    for (int odd = 0; odd < 2; odd++) {
        const __m256i a = odd ? odd_to_even(oh) : oh, b = odd ? odd_to_even(ov) : ov;
        const __m256i c = odd ? odd_to_even(th) : th, d = odd ? odd_to_even(tv) : tv;
        const __m256i dp = _mm256_add_epi64(_mm256_mul_epi32(a, c), _mm256_mul_epi32(b, d));
        const __m256i om = _mm256_add_epi64(_mm256_mul_epi32(a, a), _mm256_mul_epi32(b, b));
        const __m256i tm = _mm256_add_epi64(_mm256_mul_epi32(c, c), _mm256_mul_epi32(d, d));
        m[odd] = angle_test_pd(_mm256_cvtps_pd(int64_to_float(dp)),
                               _mm256_cvtps_pd(int64_to_float(om)),
                               _mm256_cvtps_pd(int64_to_float(tm)), cos_sq);
    }
    /* m[0]: elements 0, 2, 4, 6; m[1]: 1, 3, 5, 7; each mask fills its 64 bits */
    return _mm256_blend_epi32(_mm256_castpd_si256(m[0]), _mm256_castpd_si256(m[1]), 0xAA);
}

INLINE void decouple_row(bool level0, const int32_t *div_lookup, float cos_1deg_sq, double gain,
                         const int32_t *const ref[3], const int32_t *const dis[3],
                         int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    const __m256d cos_sq = _mm256_set1_pd(cos_1deg_sq);
    const __m256d gain_pd = _mm256_set1_pd(gain);
    const __m256i zero = _mm256_setzero_si256();

    for (int j = j0; j < j1; j += 8) {
        const __m256i mask = lanes_below(j1 - j);
        __m256i o[3], t[3];
        for (int b = 0; b < 3; b++) {
            o[b] = load_masked(ref[b] + j, mask);
            t[b] = load_masked(dis[b] + j, mask);
        }
        const __m256i angle = level0 ? angle_level0(o[0], o[1], t[0], t[1], cos_sq)
                                     : angle_level123(o[0], o[1], t[0], t[1], cos_sq);
        for (int b = 0; b < 3; b++) {
            const __m256i k = level0 ? ratio_level0(div_lookup, o[b], t[b])
                                     : ratio_level123(div_lookup, o[b], t[b]);
            __m256i v;
            if (level0) {
                /* k * o fits 31 bits */
                v = _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(k, o[b]),
                                                       _mm256_set1_epi32(16384)), 15);
            } else {
                const __m256i round = _mm256_set1_epi64x(16384);
                v = join_low32(
                    _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(k, o[b]), round), 15),
                    _mm256_srli_epi64(_mm256_add_epi64(
                        _mm256_mul_epi32(odd_to_even(k), odd_to_even(o[b])), round), 15));
            }
            const __m256i cond = _mm256_andnot_si256(
                _mm256_cmpeq_epi32(o[b], zero), _mm256_and_si256(angle, _mm256_cmpgt_epi32(k, zero)));
            if (!_mm256_testz_si256(cond, cond)) v = gain_limit(v, t[b], o[b], cond, gain_pd);
            __m256i a = _mm256_sub_epi32(t[b], v);
            if (level0) a = _mm256_srai_epi32(_mm256_slli_epi32(a, 16), 16);
            store_masked(rst[b] + j, mask, v);
            store_masked(add[b] + j, mask, a);
        }
    }
}

static void decouple_row0_avx2(const int32_t *div_lookup, float cos_1deg_sq, double gain,
                               const int32_t *const ref[3], const int32_t *const dis[3],
                               int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    decouple_row(true, div_lookup, cos_1deg_sq, gain, ref, dis, rst, add, j0, j1);
}

static void decouple_row123_avx2(const int32_t *div_lookup, float cos_1deg_sq, double gain,
                                 const int32_t *const ref[3], const int32_t *const dis[3],
                                 int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    decouple_row(false, div_lookup, cos_1deg_sq, gain, ref, dis, rst, add, j0, j1);
}

/* ---- CSF and masking ------------------------------------------------------------ */

/* Levels 1..3's CSF: (int32)((csf * x + 2^27) >> 28) with csf a uint32
 * (vpmuldq multiplies signed: a csf of 2^31 or more is csf - 2^32, and
 * x * 2^32 is added back; the true product fits int64). */
INLINE __m256i csf_level123(__m256i x, __m256i csf, __m256i csf_high)
{
    const __m256i add = _mm256_set1_epi64x(1 << 27);
    const __m256i xo = odd_to_even(x);
    const __m256i even = _mm256_add_epi64(_mm256_mul_epi32(x, csf),
                                          _mm256_and_si256(_mm256_slli_epi64(x, 32), csf_high));
    const __m256i odd = _mm256_add_epi64(_mm256_mul_epi32(xo, csf),
                                         _mm256_and_si256(_mm256_slli_epi64(xo, 32), csf_high));
    return join_low32(_mm256_srli_epi64(_mm256_add_epi64(even, add), 28),
                      _mm256_srli_epi64(_mm256_add_epi64(odd, add), 28));
}

/* (int32)((m * |c| - 2^31) >> 32) for levels 1..3's 1/30 and 1/15. */
INLINE __m256i scale_q32(__m256i abs_c, int32_t m)
{
    const __m256i mul = _mm256_set1_epi32(m), add = _mm256_set1_epi64x(INT32_MIN);
    return join_high32(_mm256_add_epi64(_mm256_mul_epi32(abs_c, mul), add),
                       _mm256_add_epi64(_mm256_mul_epi32(odd_to_even(abs_c), mul), add));
}

INLINE __m256i sext16(__m256i v)
{
    return _mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16);
}

INLINE void masking_row(bool level0, const uint32_t csf[3], const int32_t *const src[3],
                        int32_t *around, int32_t *centre, int j0, int j1)
{
    static const int32_t add0[3] = { 16384, 16384, 65535 };
    static const int shift0[3] = { 15, 15, 17 };
    __m256i csf_v[3], csf_high[3];
    for (int b = 0; b < 3; b++) {
        csf_v[b] = _mm256_set1_epi32((int32_t)csf[b]);
        csf_high[b] = _mm256_set1_epi64x(csf[b] >> 31 ? -1 : 0);
    }

    for (int j = j0; j < j1; j += 8) {
        const __m256i mask = lanes_below(j1 - j);
        __m256i sum_around = _mm256_setzero_si256(), sum_centre = _mm256_setzero_si256();
        for (int b = 0; b < 3; b++) {
            const __m256i s = load_masked(src[b] + j, mask);
            __m256i flt, ctr;
            if (level0) {
                const __m256i c = sext16(_mm256_srai_epi32(
                    _mm256_add_epi32(_mm256_mullo_epi32(csf_v[b], s), _mm256_set1_epi32(add0[b])),
                    shift0[b]));
                const __m256i a = _mm256_abs_epi32(c);
                const __m256i round = _mm256_set1_epi32(2048);
                flt = sext16(_mm256_srai_epi32(
                    _mm256_add_epi32(_mm256_mullo_epi32(a, _mm256_set1_epi32(4369)), round), 12));
                ctr = sext16(_mm256_srai_epi32(
                    _mm256_add_epi32(_mm256_mullo_epi32(a, _mm256_set1_epi32(8738)), round), 12));
            } else {
                const __m256i a = _mm256_abs_epi32(csf_level123(s, csf_v[b], csf_high[b]));
                flt = scale_q32(a, 143165577);
                ctr = scale_q32(a, 286331153);
            }
            sum_around = _mm256_add_epi32(sum_around, flt);
            sum_centre = _mm256_add_epi32(sum_centre, _mm256_sub_epi32(ctr, flt));
        }
        store_masked(around + j, mask, sum_around);
        store_masked(centre + j, mask, sum_centre);
    }
}

static void masking_row0_avx2(const uint32_t csf[3], const int32_t *const src[3],
                              int32_t *around, int32_t *centre, int j0, int j1)
{
    masking_row(true, csf, src, around, centre, j0, j1);
}

static void masking_row123_avx2(const uint32_t csf[3], const int32_t *const src[3],
                                int32_t *around, int32_t *centre, int j0, int j1)
{
    masking_row(false, csf, src, around, centre, j0, j1);
}

/* One orientation's cube terms of eight elements, added to the 64-bit sums
 * (even and odd elements): m = max(|c| - (thr << sub), 0), m_sq = (int32)((m
 * m + sq_add) >> sq), term = (m_sq m + cub_add) >> cub (arithmetic: m_sq may
 * have wrapped negative). */
INLINE __m256i cube_terms(__m256i c, __m256i thr, int sub, __m256i sq_add, int sq,
                          __m256i cub_add, int cub, __m256i lanes)
{
    __m256i m = _mm256_sub_epi32(_mm256_abs_epi32(c), _mm256_slli_epi32(thr, sub));
    m = _mm256_and_si256(_mm256_max_epi32(m, _mm256_setzero_si256()), lanes);
    __m256i sum = _mm256_setzero_si256();
    for (int odd = 0; odd < 2; odd++) {
        const __m256i v = odd ? odd_to_even(m) : m;
        const __m256i m_sq = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(v, v), sq_add), sq);
        sum = _mm256_add_epi64(sum, srai64(_mm256_add_epi64(_mm256_mul_epi32(m_sq, v), cub_add), cub));
    }
    return sum;
}

INLINE void masked_row(bool level0, const uint32_t csf[3], const AdmMaskedShifts *p,
                       const int32_t *const src[3], const int32_t *const around[3],
                       const int32_t *centre, int w, int left, int right, uint32_t *col,
                       uint64_t sums[3])
{
    __m256i csf_v[3], csf_high[3], sq_add[3], cub_add[3];
    for (int b = 0; b < 3; b++) {
        csf_v[b] = _mm256_set1_epi32((int32_t)csf[b]);
        csf_high[b] = _mm256_set1_epi64x(csf[b] >> 31 ? -1 : 0);
        sq_add[b] = _mm256_set1_epi64x(p->sq_add[b]);
        cub_add[b] = _mm256_set1_epi64x(p->cub_add[b]);
    }

    /* column sums of the 3-row window, then the 3-column box per sample */
    const int j0 = QUALE_MAX(left - 1, 0), j1 = QUALE_MIN(right + 1, w);
    for (int j = j0; j < j1; j += 8) {
        const __m256i mask = lanes_below(j1 - j);
        const __m256i sum = _mm256_add_epi32(
            _mm256_add_epi32(load_masked(around[0] + j, mask), load_masked(around[1] + j, mask)),
            load_masked(around[2] + j, mask));
        _mm256_storeu_si256((__m256i *)(col + j), sum); /* col has slack */
    }
    if (left == 0) col[-1] = col[1];
    if (right == w) col[w] = col[w - 1];

    __m256i row[3] = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256() };
    for (int j = left; j < right; j += 8) {
        const __m256i mask = lanes_below(right - j);
        const __m256i thr = _mm256_add_epi32(
            _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(col + j - 1)),
                             _mm256_loadu_si256((const __m256i *)(col + j))),
            _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(col + j + 1)),
                             load_masked(centre + j, mask)));
        for (int b = 0; b < 3; b++) {
            const __m256i s = load_masked(src[b] + j, mask);
            const __m256i c = level0 ? _mm256_mullo_epi32(s, csf_v[b])
                                     : csf_level123(s, csf_v[b], csf_high[b]);
            row[b] = _mm256_add_epi64(row[b], cube_terms(c, thr, (int)p->sub[b], sq_add[b],
                                                         (int)p->sq[b], cub_add[b],
                                                         (int)p->cub[b], mask));
        }
    }
    for (int b = 0; b < 3; b++) sums[b] = reduce_add_u64x4(row[b]);
}

static void masked_row0_avx2(const uint32_t csf[3], const AdmMaskedShifts *p,
                             const int32_t *const src[3], const int32_t *const around[3],
                             const int32_t *centre, int w, int left, int right, uint32_t *col,
                             uint64_t sums[3])
{
    masked_row(true, csf, p, src, around, centre, w, left, right, col, sums);
}

static void masked_row123_avx2(const uint32_t csf[3], const AdmMaskedShifts *p,
                               const int32_t *const src[3], const int32_t *const around[3],
                               const int32_t *centre, int w, int left, int right, uint32_t *col,
                               uint64_t sums[3])
{
    masked_row(false, csf, p, src, around, centre, w, left, right, col, sums);
}

/* ---- the denominator -------------------------------------------------------------- */

static void den_row0_avx2(const AdmDenShifts *p, const int32_t *const ref[3], int left,
                          int right, uint64_t sums[3])
{
    (void)p;
    for (int b = 0; b < 3; b++) {
        __m256i row = _mm256_setzero_si256();
        for (int j = left; j < right; j += 8) {
            /* (uint16_t)|o|: |o| <= 32768; its square fits 32 bits */
            const __m256i m = _mm256_and_si256(
                _mm256_abs_epi32(load_masked(ref[b] + j, lanes_below(right - j))),
                _mm256_set1_epi32(0xFFFF));
            const __m256i sq = _mm256_mullo_epi32(m, m);
            row = _mm256_add_epi64(row, _mm256_mul_epu32(sq, m));
            row = _mm256_add_epi64(row, _mm256_mul_epu32(odd_to_even(sq), odd_to_even(m)));
        }
        sums[b] = reduce_add_u64x4(row);
    }
}

/* ((m * m + sq_add) >> sq) * m, mod 2^64 as the C code's uint64 (the
 * shifted square may need 33 bits), for the even lanes of m. */
INLINE __m256i den_cube(__m256i m, __m256i sq_add, __m128i sq, __m256i cub_add, __m128i cub)
{
    const __m256i s = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(m, m), sq_add), sq);
    const __m256i p = _mm256_add_epi64(
        _mm256_mul_epu32(s, m), _mm256_slli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(s, 32), m), 32));
    return _mm256_srl_epi64(_mm256_add_epi64(p, cub_add), cub);
}

static void den_row123_avx2(const AdmDenShifts *p, const int32_t *const ref[3], int left,
                            int right, uint64_t sums[3])
{
    const __m256i sq_add = _mm256_set1_epi64x((int64_t)p->sq_add);
    const __m256i cub_add = _mm256_set1_epi64x((int64_t)p->cub_add);
    const __m128i sq = _mm_cvtsi32_si128((int)p->sq), cub = _mm_cvtsi32_si128((int)p->cub);

    for (int b = 0; b < 3; b++) {
        __m256i row = _mm256_setzero_si256();
        for (int j = left; j < right; j += 8) {
            /* |o| as uint32; a masked lane is 0 and adds 0 */
            const __m256i m = _mm256_abs_epi32(load_masked(ref[b] + j, lanes_below(right - j)));
            row = _mm256_add_epi64(row, den_cube(m, sq_add, sq, cub_add, cub));
            row = _mm256_add_epi64(row, den_cube(odd_to_even(m), sq_add, sq, cub_add, cub));
        }
        sums[b] = reduce_add_u64x4(row);
    }
}

void adm_dsp_init_avx2(AdmDsp *dsp)
{
    dsp->dwt_row0_8 = dwt_row0_8_avx2;
    dsp->dwt_row0_16 = dwt_row0_16_avx2;
    dsp->dwt_row123 = dwt_row123_avx2;
    dsp->decouple_row0 = decouple_row0_avx2;
    dsp->decouple_row123 = decouple_row123_avx2;
    dsp->masking_row0 = masking_row0_avx2;
    dsp->masking_row123 = masking_row123_avx2;
    dsp->masked_row0 = masked_row0_avx2;
    dsp->masked_row123 = masked_row123_avx2;
    dsp->den_row0 = den_row0_avx2;
    dsp->den_row123 = den_row123_avx2;
}
