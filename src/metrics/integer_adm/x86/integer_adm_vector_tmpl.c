/*
 * Integer ADM's kernels (the AdmDsp table of integer_adm.h) on one register
 * of VECTOR_BYTES (vector_int.h), bit-exact with the C reference
 * (src/metrics/integer_adm.c): the same integer operations on the int32
 * lanes, and where the C reference computes in float or double, the same
 * float or double operations in the same order.  integer_adm_avx2.c and
 * integer_adm_avx512.c include this file.
 *
 * The 64-bit products of the reference are vpmuldq on the even and the
 * odd lanes; where only the low 32 bits of a shifted product survive, a
 * logical 64-bit shift gives them as the arithmetic one would.  Level 0's
 * values are int16, so its DWT runs on 16-bit lanes with vpmaddwd, which
 * sums two products in 32 bits exactly as the C code's int32 sums; the DWT
 * of levels 1..3 does the same on the 16-bit halves of its int32 values
 * (below).
 *
 * The last vector of a row is masked, so that a kernel writes only the
 * samples the C code does, except in its scratch rows (lo, hi, col), which
 * have ADM_ROW_PAD samples of slack on each side.  Where AVX-512 has what
 * AVX2 lacks (a leading-zero count, 64-bit arithmetic shifts and minima,
 * mask registers), the steps of the reciprocal of levels 1..3 that use it
 * are written once for each.
 *
 * The includer defines VECTOR_BYTES and ADM_ISA(name).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "metrics/integer_adm/integer_adm.h"
#include "metrics/common/x86/vector_int.h"

#define INLINE VI_INLINE

/* int32 lanes a register. */
#define LANES VI_LANES32

/* ---- helpers ------------------------------------------------------------------ */

/* The low 16 bits of each int32 lane, sign-extended. */
INLINE vi sext16(vi v)
{
    return vi_srai32(vi_slli32(v, 16), 16);
}

/* Two int16 coefficients as the pair vpmaddwd multiplies adjacent samples by. */
INLINE vi coef_pair(int16_t first, int16_t second)
{
    return vi_set1_32((int32_t)(((uint32_t)(uint16_t)second << 16) | (uint16_t)first));
}

/* The db2 analysis taps in Q15, as the pairs vpmaddwd multiplies adjacent
 * 16-bit values by: low pass (15826, 27411), (7345, -4240); high pass
 * (-4240, -7345), (27411, -15826). */
#define LO01 coef_pair(15826, 27411)
#define LO23 coef_pair(7345, -4240)
#define HI01 coef_pair(-4240, -7345)
#define HI23 coef_pair(27411, -15826)

/* Reflects a row of n values (n >= 3) across its ends for the filter taps
 * at 2j - 1 .. 2j + 2, as the C reference's pad_row. */
INLINE void pad_row16(int16_t *row, int n)
{
    row[-1] = row[1];
    row[n] = row[n - 1];
    row[n + 1] = row[n - 2];
}

/* ---- DWT of level 0 ------------------------------------------------------------ */

/* A register of samples of a row as int16 lanes: 8-bit samples as they
 * are, 16-bit ones less 32768 (vpmaddwd multiplies signed values; the sums
 * get the 32768 times the taps back, see dwt0_vertical). */
INLINE vi load_samples16(const uint8_t *row, int j, int bytes)
{
    if (bytes == 1) return vi_load_row16(row, j, false);
    return vi_xor(vi_load_row16(row, j, true), vi_set1_16(INT16_MIN));
}

/* The int32 lanes of a and b as 16-bit values (their low halves: the C
 * code's (int16_t) casts), in column order when a and b are the
 * unpacklo and unpackhi halves of the same columns. */
INLINE vi narrow16(vi a, vi b)
{
    const vi low = vi_set1_32(0xFFFF);
    return vi_packus32(vi_and(a, low), vi_and(b, low));
}

/* x01 . c01 + x23 . c23: two taps of each of two pairs of 16-bit values. */
INLINE vi madd_pairs(vi x01, vi x23, vi c01, vi c23)
{
    return vi_add32(vi_madd16(x01, c01), vi_madd16(x23, c23));
}

/* (x01 . c01 + x23 . c23 + add) >> shift, arithmetic. */
INLINE vi filter_sum16(vi x01, vi x23, vi c01, vi c23, vi add, __m128i shift)
{
    return vi_sra32(vi_add32(madd_pairs(x01, x23, c01, c23), add), shift);
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
    const vi lo_add = vi_set1_32((int32_t)(bias - 46342u * round + round));
    const vi hi_add = vi_set1_32((int32_t)round);
    const __m128i shift = vi_count(bitdepth);

    /* w >= 33 (a picture of ADM_MIN_SIZE): the last vector overlaps the one
     * before */
    for (int j0 = 0; j0 < w; j0 += VI_LANES16) {
        const int j = j0 + VI_LANES16 <= w ? j0 : w - VI_LANES16;
        const vi s0 = load_samples16(r0, j, bytes), s1 = load_samples16(r1, j, bytes);
        const vi s2 = load_samples16(r2, j, bytes), s3 = load_samples16(r3, j, bytes);
        const vi a01 = vi_unpacklo16(s0, s1), b01 = vi_unpackhi16(s0, s1);
        const vi a23 = vi_unpacklo16(s2, s3), b23 = vi_unpackhi16(s2, s3);
        vi_storeu(lo + j, narrow16(filter_sum16(a01, a23, LO01, LO23, lo_add, shift),
                                   filter_sum16(b01, b23, LO01, LO23, lo_add, shift)));
        if (!details) continue;
        vi_storeu(hi + j, narrow16(filter_sum16(a01, a23, HI01, HI23, hi_add, shift),
                                   filter_sum16(b01, b23, HI01, HI23, hi_add, shift)));
    }
}

INLINE void dwt_row0(const uint8_t *const src[4], int bytes, int bitdepth, int w, bool details,
                     int32_t *const out[4], int32_t *lo32, int32_t *hi32)
{
    /* the rows hold int16 here */
    int16_t *lo = (int16_t *)lo32, *hi = (int16_t *)hi32;
    const int half = (w + 1) / 2;

    const vi round = vi_set1_32(32768);
    const __m128i shift = vi_count(16);

    dwt0_vertical(src[0], src[1], src[2], src[3], bytes, bitdepth, w, details, lo, hi);
    pad_row16(lo, w);
    if (details) pad_row16(hi, w);
    /* the horizontal pass: for the outputs from j, the taps 2j - 1 ..
     * 2j + 2 of the padded int16 rows, (sum + 32768) >> 16 */
    for (int j = 0; j < half; j += LANES) {
        const vm32 mask = vm32_first(half - j);
        const vi p = vi_loadu(lo + 2 * j - 1), q = vi_loadu(lo + 2 * j + 1);
        vi_store32_masked(out[0] + j, mask, filter_sum16(p, q, LO01, LO23, round, shift));
        if (!details) continue;
        vi_store32_masked(out[2] + j, mask, filter_sum16(p, q, HI01, HI23, round, shift));
        const vi ph = vi_loadu(hi + 2 * j - 1), qh = vi_loadu(hi + 2 * j + 1);
        vi_store32_masked(out[1] + j, mask, filter_sum16(ph, qh, LO01, LO23, round, shift));
        vi_store32_masked(out[3] + j, mask, filter_sum16(ph, qh, HI01, HI23, round, shift));
    }
}

static void ADM_ISA(dwt_row0_8)(const uint8_t *const src[4], int bitdepth, int w, bool details,
                                int32_t *const out[4], int32_t *lo, int32_t *hi)
{
    (void)bitdepth;
    dwt_row0(src, 1, 8, w, details, out, lo, hi);
}

static void ADM_ISA(dwt_row0_16)(const uint8_t *const src[4], int bitdepth, int w, bool details,
                                 int32_t *const out[4], int32_t *lo, int32_t *hi)
{
    dwt_row0(src, 2, bitdepth, w, details, out, lo, hi);
}

/* ---- DWT of levels 1..3 -------------------------------------------------------- */

/* Levels 1..3: the C code sums four int32 taps in 64 bits, c0 t0 + c1 t1 +
 * c2 t2 + c3 t3 + add, then shifts right.  The kernels split every t into
 * 16-bit halves, t = 2^16 hi + lo, and vpmaddwd sums the halves' products in
 * 32 bits exactly:
 *   A = sum of c hi (|A| < 2^31), B = sum of c (lo - 32768) (|B| < 2^31),
 *   sum = 2^16 (A + K) + B, K = 32768 (c0 + c1 + c2 + c3) / 2^16
 * (K_LO for the low pass, 0 for the high pass).  Then
 *   sum >> 0                  = 2^16 (A + K) + B      (mod 2^32),
 *   (sum + 2^15) >> 16        = A + K + ((B + 2^15) >> 16),
 *   (sum + 2^14) >> 15        = 2 (A + K) + ((B + 2^14) >> 15),
 * whose low 32 bits are the C code's (int32_t) of its int64 result. */
#define K_LO 23171

/* A row of int32 as two rows of 16-bit halves: the high halves, and the
 * low halves less 32768. */
typedef struct SplitRow {
    int16_t *high, *low;
} SplitRow;

/* The split rows in a scratch row of int32 (ADM_ROW_PAD of slack around w
 * samples): each has 32 values of slack before and 96 after its w. */
INLINE SplitRow split_row(int32_t *scratch, int w)
{
    int16_t *base = (int16_t *)(scratch - ADM_ROW_PAD) + 32;
    return (SplitRow){ base, base + ((w + 96 + 31) & ~31) };
}

INLINE void pad_split(SplitRow r, int n)
{
    pad_row16(r.high, n);
    pad_row16(r.low, n);
}

/* Stores two registers of int32 (a: the first, b: the next) as their halves. */
INLINE void store_split(SplitRow r, int j, vi a, vi b)
{
    const vi low = vi_set1_32(0xFFFF);
    const vi high = vi_packs32(vi_srai32(a, 16), vi_srai32(b, 16));
    const vi lows = vi_xor(vi_packus32(vi_and(a, low), vi_and(b, low)), vi_set1_16(INT16_MIN));
    vi_storeu(r.high + j, vi_pack_order(high));
    vi_storeu(r.low + j, vi_pack_order(lows));
}

/* The pairs (t0, t1) and (t2, t3) of four int32 rows as 16-bit halves. */
INLINE void split_pairs(vi t0, vi t1, vi t2, vi t3, vi *h01, vi *h23, vi *l01, vi *l23)
{
    const vi bias = vi_set1_16(INT16_MIN);
    *h01 = vi_blend_odd16(vi_srli32(t0, 16), t1);
    *h23 = vi_blend_odd16(vi_srli32(t2, 16), t3);
    *l01 = vi_xor(vi_blend_odd16(t0, vi_slli32(t1, 16)), bias);
    *l23 = vi_xor(vi_blend_odd16(t2, vi_slli32(t3, 16)), bias);
}

/* (2^16 (A + k) + B + add) >> shift in 32 bits, for shift 0 (add 0), 15
 * (add 2^14) or 16 (add 2^15), as above. */
INLINE vi combine(vi a, vi b, int k, int shift)
{
    a = vi_add32(a, vi_set1_32(k));
    if (shift == 0) return vi_add32(vi_slli32(a, 16), b);
    if (shift == 15)
        return vi_add32(vi_add32(a, a), vi_srai32(vi_add32(b, vi_set1_32(1 << 14)), 15));
    return vi_add32(a, vi_srai32(vi_add32(b, vi_set1_32(1 << 15)), 16));
}

/* Vertical pass of a register of columns: the low- and high-pass sums. */
INLINE void vertical(const int32_t *const src[4], int j, vm32 mask, int shift, vi *low, vi *high)
{
    vi h01, h23, l01, l23;
    split_pairs(vi_load32_masked(src[0] + j, mask), vi_load32_masked(src[1] + j, mask),
                vi_load32_masked(src[2] + j, mask), vi_load32_masked(src[3] + j, mask), &h01,
                &h23, &l01, &l23);
    *low = combine(madd_pairs(h01, h23, LO01, LO23), madd_pairs(l01, l23, LO01, LO23), K_LO, shift);
    *high = combine(madd_pairs(h01, h23, HI01, HI23), madd_pairs(l01, l23, HI01, HI23), 0, shift);
}

/* Horizontal pass: a register of outputs from j of a split row (taps
 * 2j - 1 .. 2j + 2). */
INLINE void horizontal(SplitRow r, int j, int shift, vi *low, vi *high)
{
    const vi ph = vi_loadu(r.high + 2 * j - 1), qh = vi_loadu(r.high + 2 * j + 1);
    const vi pl = vi_loadu(r.low + 2 * j - 1), ql = vi_loadu(r.low + 2 * j + 1);
    *low = combine(madd_pairs(ph, qh, LO01, LO23), madd_pairs(pl, ql, LO01, LO23), K_LO, shift);
    *high = combine(madd_pairs(ph, qh, HI01, HI23), madd_pairs(pl, ql, HI01, HI23), 0, shift);
}

static void ADM_ISA(dwt_row123)(const int32_t *const src[4], int w, int scale, bool details,
                                int32_t *const out[4], int32_t *lo32, int32_t *hi32)
{
    /* libvmaf's shifts: vertical 0, 16, 16; horizontal 15, 16, 15 */
    const int vs = scale == 1 ? 0 : 16, hs = scale == 2 ? 16 : 15;
    const SplitRow lo = split_row(lo32, w), hi = split_row(hi32, w);
    const int half = (w + 1) / 2;

    for (int j = 0; j < w; j += 2 * LANES) {
        vi la, ha, lb, hb;
        vertical(src, j, vm32_first(w - j), vs, &la, &ha);
        vertical(src, j + LANES, vm32_first(w - j - LANES), vs, &lb, &hb);
        store_split(lo, j, la, lb);
        if (details) store_split(hi, j, ha, hb);
    }
    pad_split(lo, w);
    if (details) pad_split(hi, w);

    for (int j = 0; j < half; j += LANES) {
        const vm32 mask = vm32_first(half - j);
        vi low, high;
        horizontal(lo, j, hs, &low, &high);
        vi_store32_masked(out[0] + j, mask, low);
        if (!details) continue;
        vi_store32_masked(out[2] + j, mask, high);
        horizontal(hi, j, hs, &low, &high);
        vi_store32_masked(out[1] + j, mask, low);
        vi_store32_masked(out[3] + j, mask, high);
    }
}

/* ---- decoupling -------------------------------------------------------------------- */

/* The C code's angle test on half a register of elements in double lanes,
 * from the float values of u.v, |u|^2 and |v|^2 (as doubles): u.v >= 0 and
 * (u.v / 4096)^2 >= cos^2(1 deg) (|u|^2 / 4096) (|v|^2 / 4096). */
INLINE vm64 angle_test(vd dp_f, vd o_f, vd t_f, vd cos_sq)
{
    const vd inv4096 = vd_set1(1.0 / 4096.0);
    const vd dp = vd_mul(dp_f, inv4096);
    const vd rhs = vd_mul(vd_mul(cos_sq, vd_mul(o_f, inv4096)), vd_mul(t_f, inv4096));
    return vm64_and(vd_ge(dp, vd_zero()), vd_ge(vd_mul(dp, dp), rhs));
}

/* The gain limit, where cond: v * gain in double, then at most t (o > 0)
 * or at least t (o < 0), truncated to int32. */
INLINE vi gain_limit(vi v, vi t, vi o, vm32 cond, vd gain)
{
    const vm32 positive = vm32_gt(o, vi_zero());
    vi_half r[2];
    for (int half = 0; half < 2; half++) {
        const vd g = vd_mul(vd_from_i32(vi_get_half(v, half)), gain);
        const vd td = vd_from_i32(vi_get_half(t, half));
        /* g < t ? g : t and g > t ? g : t, as minpd and maxpd pick */
        const vd limited = vd_select(vm64_from_half(positive, half), vd_min(g, td), vd_max(g, td));
        r[half] = vd_to_i32(limited);
    }
    return vi_select32(cond, vi_from_halves(r[0], r[1]), v);
}

/* The reciprocal table's entries (adm_div_lookup_init) for divisors d,
 * 0 < |d| <= 32768: trunc(2^30 / d), computed.  The double quotient is
 * within 2^-23 of the true one, which is an integer or at least 2^-15
 * from one, so truncating it gives the integer quotient; two divisions of
 * 8 lanes cost half of a gather of 16 from the 256 KiB table.  Lanes of
 * d = 0 get INT32_MIN; the callers replace them. */
INLINE vi reciprocal_q30(vi d)
{
    const vd dividend = vd_set1(1073741824.0);
    return vi_from_halves(vd_to_i32(vd_div(dividend, vd_from_i32(vi_get_half(d, 0)))),
                          vd_to_i32(vd_div(dividend, vd_from_i32(vi_get_half(d, 1)))));
}

/* Level 0: t / o from the reciprocal, clamped to [0, 32768] (|o|, |t| <=
 * 32768, so the product fits 46 bits and the result 31). */
INLINE vi ratio_level0(const int32_t *div_lookup, vi o, vi t)
{
    (void)div_lookup;
    const vi div = reciprocal_q30(o);
    const vi add = vi_set1_64(16384);
    const vi even = vi_srli64(vi_add64(vi_mul_i32(div, t), add), 15);
    const vi odd = vi_srli64(vi_add64(vi_mul_i32(vi_odd_to_even(div), vi_odd_to_even(t)), add), 15);
    vi k = vi_join_low32(even, odd);
    k = vi_min32(vi_max32(k, vi_zero()), vi_set1_32(32768));
    return vi_select32(vm32_eq(o, vi_zero()), vi_set1_32(32768), k);
}

/* Levels 1..3's reciprocal: where |o| >= 32768 (big), o is reduced to its
 * 15 leading bits with the shift 17 - clz(|o|), else the shift is 0. */
INLINE void reciprocal_shift(vi mag, vm32 *big, vi *shift)
{
#if VECTOR_BYTES == 64
    *big = _mm512_cmpge_epu32_mask(mag, _mm512_set1_epi32(32768));
    *shift = _mm512_maskz_sub_epi32(*big, _mm512_set1_epi32(17), _mm512_lzcnt_epi32(mag));
#else
    /* AVX2 has no leading-zero count: floor(log2(mag)) from the exponent
     * of mag >> 8 (exact in a float) */
    *big = _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_srli_epi32(mag, 15), _mm256_setzero_si256()),
                            _mm256_set1_epi32(-1));
    const vi exponent = _mm256_srli_epi32(
        _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_srli_epi32(mag, 8))), 23);
    *shift = _mm256_and_si256(*big,
                              _mm256_sub_epi32(exponent, _mm256_set1_epi32(127 - 8 + 14)));
#endif
}

/* Levels 1..3, the even elements (odd 0) or the odd ones (odd 1), whose
 * div, t, round and shift are in the even int32 lanes: k = (div * t *
 * sign + round) >> shift, clamped to [0, 32768], in 64-bit lanes. */
INLINE vi ratio_level123_part(vi div, vi t, vm32 negative, int odd, vi round, vi shift)
{
#if VECTOR_BYTES == 64
    vi p = _mm512_mul_epi32(div, t);
    const __mmask8 neg = (__mmask8)_pext_u32(negative, odd ? 0xAAAA : 0x5555);
    p = _mm512_mask_sub_epi64(p, neg, _mm512_setzero_si512(), p);
    p = _mm512_add_epi64(p, _mm512_srai_epi64(_mm512_slli_epi64(round, 32), 32));
    const vi k = _mm512_srav_epi64(p, _mm512_and_si512(shift, _mm512_set1_epi64(0xFFFFFFFF)));
    return _mm512_min_epi64(_mm512_max_epi64(k, _mm512_setzero_si512()),
                            _mm512_set1_epi64(32768));
#else
    /* the element's sign in its whole 64-bit lane */
    const vi neg =
        odd ? _mm256_shuffle_epi32(negative, 0xF5) : _mm256_shuffle_epi32(negative, 0xA0);
    vi p = _mm256_mul_epi32(div, t);
    p = _mm256_sub_epi64(_mm256_xor_si256(p, neg), neg);
    /* round's even lanes sign-extended to 64 bits */
    const vi round_sign = _mm256_shuffle_epi32(_mm256_srai_epi32(round, 31), 0xA0);
    p = _mm256_add_epi64(p, _mm256_blend_epi32(round, round_sign, 0xAA));
    /* AVX2 has no 64-bit arithmetic shift: a negative sum, whose k would be
     * negative, gives 0 by its sign */
    const vi k = _mm256_srlv_epi64(p, _mm256_and_si256(shift, _mm256_set1_epi64x(0xFFFFFFFF)));
    const vi max = _mm256_set1_epi64x(32768);
    const vi clamped = _mm256_blendv_epi8(k, max, _mm256_cmpgt_epi64(k, max));
    return _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), p), clamped);
#endif
}

/* Levels 1..3: o reduced to its 15 leading bits (rounded, wrapping in 32
 * bits like the C code), the shift made up after the product. */
INLINE vi ratio_level123(const int32_t *div_lookup, vi o, vi t)
{
    const vi zero = vi_zero(), one = vi_set1_32(1);
    const vi mag = vi_abs32(o); /* as uint32: INT32_MIN is 2^31 */
    vm32 big;
    vi shift;
    reciprocal_shift(mag, &big, &shift);
    const vi rounded = vi_and(
        vi_srlv32(vi_add32(mag, vi_sllv32(one, vi_sub32(shift, one))), shift), vi_set1_32(0xFFFF));
    const vi index = vi_select32(big, rounded, mag);
    (void)div_lookup;
    const vi div = reciprocal_q30(index);
    /* libvmaf's int (1 << (14 + shift)): negative at shift 17 */
    const vi round = vi_sllv32(one, vi_add32(shift, vi_set1_32(14)));
    const vi total = vi_add32(shift, vi_set1_32(15));
    const vm32 negative = vm32_gt(zero, o);
    const vi even = ratio_level123_part(div, t, negative, 0, round, total);
    const vi odd = ratio_level123_part(vi_odd_to_even(div), vi_odd_to_even(t), negative, 1,
                                       vi_odd_to_even(round), vi_odd_to_even(total));
    return vi_select32(vm32_eq(o, zero), vi_set1_32(32768), vi_join_low32(even, odd));
}

/* The angle test of a register of elements at level 0: the dot products
 * fit int32 but for 2^31 (every value -32768), which wraps to INT32_MIN
 * and is read back as 2^31. */
INLINE vm32 angle_level0(vi oh, vi ov, vi th, vi tv, vd cos_sq)
{
    const vi low = vi_set1_32(0xFFFF);
    const vi o = vi_or(vi_and(oh, low), vi_slli32(ov, 16));
    const vi t = vi_or(vi_and(th, low), vi_slli32(tv, 16));
    const vi sums[3] = { vi_madd16(o, t), vi_madd16(o, o), vi_madd16(t, t) };
    vf f[3];
    for (int k = 0; k < 3; k++) {
        f[k] = vf_from_i32(sums[k]);
#if VECTOR_BYTES == 64
        const __mmask16 wrapped = _mm512_cmpeq_epi32_mask(sums[k], _mm512_set1_epi32(INT32_MIN));
        f[k] = _mm512_mask_mov_ps(f[k], wrapped, _mm512_set1_ps(2147483648.0f));
#else
        const __m256i wrapped = _mm256_cmpeq_epi32(sums[k], _mm256_set1_epi32(INT32_MIN));
        f[k] = _mm256_xor_ps(f[k],
                             _mm256_and_ps(_mm256_castsi256_ps(wrapped), _mm256_set1_ps(-0.0f)));
#endif
    }
    vm64 m[2];
    for (int half = 0; half < 2; half++)
        m[half] = angle_test(vd_from_f32_half(f[0], half), vd_from_f32_half(f[1], half),
                             vd_from_f32_half(f[2], half), cos_sq);
    return vm32_from_halves(m[0], m[1]);
}

/* Levels 1..3: 64-bit dot products of the even and the odd elements,
 * rounded to float as C casts them. */
INLINE vm32 angle_level123(vi oh, vi ov, vi th, vi tv, vd cos_sq)
{
    vm64 m[2];
    for (int odd = 0; odd < 2; odd++) {
        const vi a = odd ? vi_odd_to_even(oh) : oh, b = odd ? vi_odd_to_even(ov) : ov;
        const vi c = odd ? vi_odd_to_even(th) : th, d = odd ? vi_odd_to_even(tv) : tv;
        const vi dp = vi_add64(vi_mul_i32(a, c), vi_mul_i32(b, d));
        const vi om = vi_add64(vi_mul_i32(a, a), vi_mul_i32(b, b));
        const vi tm = vi_add64(vi_mul_i32(c, c), vi_mul_i32(d, d));
        m[odd] = angle_test(vd_from_f32(vi_i64_to_f32(dp)), vd_from_f32(vi_i64_to_f32(om)),
                            vd_from_f32(vi_i64_to_f32(tm)), cos_sq);
    }
    return vm32_from_even_odd(m[0], m[1]);
}

INLINE void decouple_row(bool level0, const int32_t *div_lookup, float cos_1deg_sq, double gain,
                         const int32_t *const ref[3], const int32_t *const dis[3],
                         int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    const vd cos_sq = vd_set1(cos_1deg_sq);
    const vd gain_pd = vd_set1(gain);
    const vi zero = vi_zero();

    for (int j = j0; j < j1; j += LANES) {
        const vm32 mask = vm32_first(j1 - j);
        vi o[3], t[3];
        for (int b = 0; b < 3; b++) {
            o[b] = vi_load32_masked(ref[b] + j, mask);
            t[b] = vi_load32_masked(dis[b] + j, mask);
        }
        const vm32 angle = level0 ? angle_level0(o[0], o[1], t[0], t[1], cos_sq)
                                  : angle_level123(o[0], o[1], t[0], t[1], cos_sq);
        for (int b = 0; b < 3; b++) {
            const vi k = level0 ? ratio_level0(div_lookup, o[b], t[b])
                                : ratio_level123(div_lookup, o[b], t[b]);
            vi v;
            if (level0) {
                /* k * o fits 31 bits */
                v = vi_srai32(vi_add32(vi_mullo32(k, o[b]), vi_set1_32(16384)), 15);
            } else {
                const vi round = vi_set1_64(16384);
                v = vi_join_low32(
                    vi_srli64(vi_add64(vi_mul_i32(k, o[b]), round), 15),
                    vi_srli64(vi_add64(vi_mul_i32(vi_odd_to_even(k), vi_odd_to_even(o[b])), round),
                              15));
            }
            const vm32 cond = vm32_ne_where(vm32_and(angle, vm32_gt(k, zero)), o[b], zero);
            if (!vm32_none(cond)) v = gain_limit(v, t[b], o[b], cond, gain_pd);
            vi a = vi_sub32(t[b], v);
            if (level0) a = sext16(a);
            vi_store32_masked(rst[b] + j, mask, v);
            vi_store32_masked(add[b] + j, mask, a);
        }
    }
}

static void ADM_ISA(decouple_row0)(const int32_t *div_lookup, float cos_1deg_sq, double gain,
                                   const int32_t *const ref[3], const int32_t *const dis[3],
                                   int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    decouple_row(true, div_lookup, cos_1deg_sq, gain, ref, dis, rst, add, j0, j1);
}

static void ADM_ISA(decouple_row123)(const int32_t *div_lookup, float cos_1deg_sq, double gain,
                                     const int32_t *const ref[3], const int32_t *const dis[3],
                                     int32_t *const rst[3], int32_t *const add[3], int j0, int j1)
{
    decouple_row(false, div_lookup, cos_1deg_sq, gain, ref, dis, rst, add, j0, j1);
}

/* ---- CSF and masking ------------------------------------------------------------ */

/* Levels 1..3's CSF: (int32)((csf * x + 2^27) >> 28) with csf a uint32
 * (vpmuldq multiplies signed: a csf of 2^31 or more, csf_high, is csf -
 * 2^32, and x * 2^32 is added back; the true product fits int64). */
INLINE vi csf_level123(vi x, vi csf, bool csf_high)
{
    const vi add = vi_set1_64(1 << 27);
    const vi xo = vi_odd_to_even(x);
    vi even = vi_mul_i32(x, csf), odd = vi_mul_i32(xo, csf);
    if (csf_high) {
        even = vi_add64(even, vi_slli64(x, 32));
        odd = vi_add64(odd, vi_slli64(xo, 32));
    }
    return vi_join_low32(vi_srli64(vi_add64(even, add), 28), vi_srli64(vi_add64(odd, add), 28));
}

/* (int32)((m * |c| - 2^31) >> 32) for levels 1..3's 1/30 and 1/15. */
INLINE vi scale_q32(vi abs_c, int32_t m)
{
    const vi mul = vi_set1_32(m), add = vi_set1_64(INT32_MIN);
    return vi_join_high32(vi_add64(vi_mul_i32(abs_c, mul), add),
                          vi_add64(vi_mul_i32(vi_odd_to_even(abs_c), mul), add));
}

INLINE void masking_row(bool level0, const uint32_t csf[3], const int32_t *const src[3],
                        int32_t *around, int32_t *centre, int j0, int j1)
{
    static const int32_t add0[3] = { 16384, 16384, 65535 };
    static const int shift0[3] = { 15, 15, 17 };
    vi csf_v[3];
    for (int b = 0; b < 3; b++) csf_v[b] = vi_set1_32((int32_t)csf[b]);

    for (int j = j0; j < j1; j += LANES) {
        const vm32 mask = vm32_first(j1 - j);
        vi sum_around = vi_zero(), sum_centre = vi_zero();
        for (int b = 0; b < 3; b++) {
            const vi s = vi_load32_masked(src[b] + j, mask);
            vi flt, ctr;
            if (level0) {
                const vi c = sext16(
                    vi_srai32(vi_add32(vi_mullo32(csf_v[b], s), vi_set1_32(add0[b])), shift0[b]));
                const vi a = vi_abs32(c);
                const vi round = vi_set1_32(2048);
                flt = sext16(vi_srai32(vi_add32(vi_mullo32(a, vi_set1_32(4369)), round), 12));
                ctr = sext16(vi_srai32(vi_add32(vi_mullo32(a, vi_set1_32(8738)), round), 12));
            } else {
                const vi a = vi_abs32(csf_level123(s, csf_v[b], csf[b] >> 31));
                flt = scale_q32(a, 143165577);
                ctr = scale_q32(a, 286331153);
            }
            sum_around = vi_add32(sum_around, flt);
            sum_centre = vi_add32(sum_centre, vi_sub32(ctr, flt));
        }
        vi_store32_masked(around + j, mask, sum_around);
        vi_store32_masked(centre + j, mask, sum_centre);
    }
}

static void ADM_ISA(masking_row0)(const uint32_t csf[3], const int32_t *const src[3],
                                  int32_t *around, int32_t *centre, int j0, int j1)
{
    masking_row(true, csf, src, around, centre, j0, j1);
}

static void ADM_ISA(masking_row123)(const uint32_t csf[3], const int32_t *const src[3],
                                    int32_t *around, int32_t *centre, int j0, int j1)
{
    masking_row(false, csf, src, around, centre, j0, j1);
}

/* One orientation's cube terms of a register of elements, added to the
 * 64-bit sums (even and odd elements): m = max(|c| - (thr << sub), 0),
 * m_sq = (int32)((m m + sq_add) >> sq), term = (m_sq m + cub_add) >> cub
 * (arithmetic: m_sq may have wrapped negative). */
INLINE vi cube_terms(vi c, vi thr, int sub, vi sq_add, int sq, vi cub_add, int cub, vm32 lanes)
{
    const vi m = vi_keep32(lanes, vi_max32(vi_sub32(vi_abs32(c), vi_slli32(thr, sub)), vi_zero()));
    vi sum = vi_zero();
    for (int odd = 0; odd < 2; odd++) {
        const vi v = odd ? vi_odd_to_even(m) : m;
        const vi m_sq = vi_srli64(vi_add64(vi_mul_i32(v, v), sq_add), sq);
        sum = vi_add64(sum, vi_srai64(vi_add64(vi_mul_i32(m_sq, v), cub_add), cub));
    }
    return sum;
}

INLINE void masked_row(bool level0, const uint32_t csf[3], const AdmMaskedShifts *p,
                       const int32_t *const src[3], const int32_t *const around[3],
                       const int32_t *centre, int w, int left, int right, uint32_t *col,
                       uint64_t sums[3])
{
    vi csf_v[3], sq_add[3], cub_add[3];
    for (int b = 0; b < 3; b++) {
        csf_v[b] = vi_set1_32((int32_t)csf[b]);
        sq_add[b] = vi_set1_64(p->sq_add[b]);
        cub_add[b] = vi_set1_64(p->cub_add[b]);
    }

    /* column sums of the 3-row window, then the 3-column box per sample */
    const int j0 = QUALE_MAX(left - 1, 0), j1 = QUALE_MIN(right + 1, w);
    for (int j = j0; j < j1; j += LANES) {
        const vm32 mask = vm32_first(j1 - j);
        const vi sum = vi_add32(vi_add32(vi_load32_masked(around[0] + j, mask),
                                         vi_load32_masked(around[1] + j, mask)),
                                vi_load32_masked(around[2] + j, mask));
        vi_storeu(col + j, sum); /* col has slack */
    }
    if (left == 0) col[-1] = col[1];
    if (right == w) col[w] = col[w - 1];

    vi row[3] = { vi_zero(), vi_zero(), vi_zero() };
    for (int j = left; j < right; j += LANES) {
        const vm32 mask = vm32_first(right - j);
        const vi thr =
            vi_add32(vi_add32(vi_loadu(col + j - 1), vi_loadu(col + j)),
                     vi_add32(vi_loadu(col + j + 1), vi_load32_masked(centre + j, mask)));
        for (int b = 0; b < 3; b++) {
            const vi s = vi_load32_masked(src[b] + j, mask);
            const vi c = level0 ? vi_mullo32(s, csf_v[b]) : csf_level123(s, csf_v[b], csf[b] >> 31);
            row[b] = vi_add64(row[b], cube_terms(c, thr, (int)p->sub[b], sq_add[b], (int)p->sq[b],
                                                 cub_add[b], (int)p->cub[b], mask));
        }
    }
    for (int b = 0; b < 3; b++) sums[b] = vi_sum_u64(row[b]);
}

static void ADM_ISA(masked_row0)(const uint32_t csf[3], const AdmMaskedShifts *p,
                                 const int32_t *const src[3], const int32_t *const around[3],
                                 const int32_t *centre, int w, int left, int right, uint32_t *col,
                                 uint64_t sums[3])
{
    masked_row(true, csf, p, src, around, centre, w, left, right, col, sums);
}

static void ADM_ISA(masked_row123)(const uint32_t csf[3], const AdmMaskedShifts *p,
                                   const int32_t *const src[3], const int32_t *const around[3],
                                   const int32_t *centre, int w, int left, int right,
                                   uint32_t *col, uint64_t sums[3])
{
    masked_row(false, csf, p, src, around, centre, w, left, right, col, sums);
}

/* ---- the denominator -------------------------------------------------------------- */

static void ADM_ISA(den_row0)(const AdmDenShifts *p, const int32_t *const ref[3], int left,
                              int right, uint64_t sums[3])
{
    (void)p;
    for (int b = 0; b < 3; b++) {
        vi row = vi_zero();
        for (int j = left; j < right; j += LANES) {
            /* (uint16_t)|o|: |o| <= 32768; its square fits 32 bits */
            const vi m = vi_and(vi_abs32(vi_load32_masked(ref[b] + j, vm32_first(right - j))),
                                vi_set1_32(0xFFFF));
            const vi sq = vi_mullo32(m, m);
            row = vi_add64(row, vi_mul_u32(sq, m));
            row = vi_add64(row, vi_mul_u32(vi_odd_to_even(sq), vi_odd_to_even(m)));
        }
        sums[b] = vi_sum_u64(row);
    }
}

/* ((m * m + sq_add) >> sq) * m, mod 2^64 as the C code's uint64 (the
 * shifted square may need 33 bits), for the even lanes of m. */
INLINE vi den_cube(vi m, vi sq_add, __m128i sq, vi cub_add, __m128i cub)
{
    const vi s = vi_srl64(vi_add64(vi_mul_u32(m, m), sq_add), sq);
    const vi p = vi_add64(vi_mul_u32(s, m), vi_slli64(vi_mul_u32(vi_srli64(s, 32), m), 32));
    return vi_srl64(vi_add64(p, cub_add), cub);
}

static void ADM_ISA(den_row123)(const AdmDenShifts *p, const int32_t *const ref[3], int left,
                                int right, uint64_t sums[3])
{
    const vi sq_add = vi_set1_64((int64_t)p->sq_add);
    const vi cub_add = vi_set1_64((int64_t)p->cub_add);
    const __m128i sq = vi_count((int)p->sq), cub = vi_count((int)p->cub);

    for (int b = 0; b < 3; b++) {
        vi row = vi_zero();
        for (int j = left; j < right; j += LANES) {
            /* |o| as uint32; a masked lane is 0 and adds 0 */
            const vi m = vi_abs32(vi_load32_masked(ref[b] + j, vm32_first(right - j)));
            row = vi_add64(row, den_cube(m, sq_add, sq, cub_add, cub));
            row = vi_add64(row, den_cube(vi_odd_to_even(m), sq_add, sq, cub_add, cub));
        }
        sums[b] = vi_sum_u64(row);
    }
}

void ADM_ISA(adm_dsp_init)(AdmDsp *dsp)
{
    dsp->dwt_row0_8 = ADM_ISA(dwt_row0_8);
    dsp->dwt_row0_16 = ADM_ISA(dwt_row0_16);
    dsp->dwt_row123 = ADM_ISA(dwt_row123);
    dsp->decouple_row0 = ADM_ISA(decouple_row0);
    dsp->decouple_row123 = ADM_ISA(decouple_row123);
    dsp->masking_row0 = ADM_ISA(masking_row0);
    dsp->masking_row123 = ADM_ISA(masking_row123);
    dsp->masked_row0 = ADM_ISA(masked_row0);
    dsp->masked_row123 = ADM_ISA(masked_row123);
    dsp->den_row0 = ADM_ISA(den_row0);
    dsp->den_row123 = ADM_ISA(den_row123);
}
