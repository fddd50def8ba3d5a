/*
 * One register of VECTOR_BYTES for the integer kernels (integer VIF, ADM
 * and motion), as intrinsics under one name for both widths: the kernels
 * are written once (x86/<metric>_vector_tmpl.c) and compiled for AVX2
 * (VECTOR_BYTES 32) and AVX-512 (64).  Each function is one instruction,
 * or a short sequence, of either width; where the widths differ in what
 * they can do (mask registers, masked 16-bit loads, 64-bit shifts and
 * conversions), the function says what it computes and each width does it
 * its own way, so that the kernels compile to what each width's own code
 * would be.  A file includes this header once.
 */
#ifndef QUALE_SRC_METRICS_X86_VECTOR_INT_H
#define QUALE_SRC_METRICS_X86_VECTOR_INT_H

#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reduce.h"

#if VECTOR_BYTES != 32 && VECTOR_BYTES != 64
#error "VECTOR_BYTES: 32 (AVX2) or 64 (AVX-512)"
#endif

#define VI_INLINE static inline __attribute__((always_inline))

/* Vector registers the instruction set has: where a kernel's sums would
 * not fit 16, it computes them in two passes. */
#define VI_REGISTERS (VECTOR_BYTES == 64 ? 32 : 16)

/* Lanes of each size in a register. */
#define VI_LANES16 (VECTOR_BYTES / 2)
#define VI_LANES32 (VECTOR_BYTES / 4)

#if VECTOR_BYTES == 64
typedef __m512i vi;
typedef __m512d vd;
typedef __m512 vf;
typedef __m256i vi_half;
/* Masks of lanes: mask registers. */
typedef __mmask16 vm32;
typedef __mmask8 vm64;
/* The 16-bit columns of a step that belong to the row: loads and stores
 * are masked, so no row is too narrow. */
typedef __mmask32 vcols;
#define VI_MASKED_COLUMNS 1
#else
typedef __m256i vi;
typedef __m256d vd;
typedef __m256 vf;
typedef __m128i vi_half;
/* Masks of lanes: all ones in a lane that is set. */
typedef __m256i vm32;
typedef __m256i vm64;
/* AVX2 has no masked 16-bit loads: a row's last step ends at its last
 * column instead, over columns done before (the same values again), and a
 * row narrower than a step goes to the C kernel. */
typedef unsigned vcols;
#define VI_MASKED_COLUMNS 0
#endif

#if VECTOR_BYTES == 64
#define VI_OP(name) _mm512_##name
#define VI_SI(name) _mm512_##name##_si512
#else
#define VI_OP(name) _mm256_##name
#define VI_SI(name) _mm256_##name##_si256
#endif

/* ---- constants, loads and stores ------------------------------------------ */

VI_INLINE vi vi_zero(void) { return VI_SI(setzero)(); }
VI_INLINE vi vi_set1_16(int16_t x) { return VI_OP(set1_epi16)(x); }
VI_INLINE vi vi_set1_32(int32_t x) { return VI_OP(set1_epi32)(x); }
#if VECTOR_BYTES == 64
VI_INLINE vi vi_set1_64(int64_t x) { return _mm512_set1_epi64(x); }
#else
VI_INLINE vi vi_set1_64(int64_t x) { return _mm256_set1_epi64x(x); }
#endif

VI_INLINE vi vi_loadu(const void *p) { return VI_SI(loadu)((const vi *)p); }
VI_INLINE void vi_storeu(void *p, vi v) { VI_SI(storeu)((vi *)p, v); }

/* 0, 2, 4, ...: the column of each 32-bit lane from the first of a step
 * of the horizontal passes, which make the outputs of every other column. */
VI_INLINE vi vi_even_columns(void)
{
#if VECTOR_BYTES == 64
    return _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
#else
    return _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
#endif
}

/* ---- arithmetic ------------------------------------------------------------ */

VI_INLINE vi vi_add16(vi a, vi b) { return VI_OP(add_epi16)(a, b); }
VI_INLINE vi vi_sub16(vi a, vi b) { return VI_OP(sub_epi16)(a, b); }
VI_INLINE vi vi_add32(vi a, vi b) { return VI_OP(add_epi32)(a, b); }
VI_INLINE vi vi_sub32(vi a, vi b) { return VI_OP(sub_epi32)(a, b); }
VI_INLINE vi vi_add64(vi a, vi b) { return VI_OP(add_epi64)(a, b); }
VI_INLINE vi vi_and(vi a, vi b) { return VI_SI(and)(a, b); }
VI_INLINE vi vi_or(vi a, vi b) { return VI_SI(or)(a, b); }
VI_INLINE vi vi_xor(vi a, vi b) { return VI_SI(xor)(a, b); }

VI_INLINE vi vi_mullo16(vi a, vi b) { return VI_OP(mullo_epi16)(a, b); }
VI_INLINE vi vi_mulhi_u16(vi a, vi b) { return VI_OP(mulhi_epu16)(a, b); }
VI_INLINE vi vi_mullo32(vi a, vi b) { return VI_OP(mullo_epi32)(a, b); }
/* Pairs of 16-bit products added in 32 bits (vpmaddwd). */
VI_INLINE vi vi_madd16(vi a, vi b) { return VI_OP(madd_epi16)(a, b); }
/* The 64-bit products of the even 32-bit lanes, signed and unsigned. */
VI_INLINE vi vi_mul_i32(vi a, vi b) { return VI_OP(mul_epi32)(a, b); }
VI_INLINE vi vi_mul_u32(vi a, vi b) { return VI_OP(mul_epu32)(a, b); }

VI_INLINE vi vi_abs32(vi a) { return VI_OP(abs_epi32)(a); }
VI_INLINE vi vi_max32(vi a, vi b) { return VI_OP(max_epi32)(a, b); }
VI_INLINE vi vi_min32(vi a, vi b) { return VI_OP(min_epi32)(a, b); }

VI_INLINE vi vi_unpacklo16(vi a, vi b) { return VI_OP(unpacklo_epi16)(a, b); }
VI_INLINE vi vi_unpackhi16(vi a, vi b) { return VI_OP(unpackhi_epi16)(a, b); }
/* 32-bit lanes to 16 bits with signed (unsigned) saturation, a's and b's
 * in turn by 128-bit blocks. */
VI_INLINE vi vi_packs32(vi a, vi b) { return VI_OP(packs_epi32)(a, b); }
VI_INLINE vi vi_packus32(vi a, vi b) { return VI_OP(packus_epi32)(a, b); }

/* ---- shifts (by a constant, or by the count in the low 64 bits of c) -------- */

VI_INLINE vi vi_srai32(vi a, int n) { return VI_OP(srai_epi32)(a, n); }
VI_INLINE vi vi_srli32(vi a, int n) { return VI_OP(srli_epi32)(a, n); }
VI_INLINE vi vi_slli32(vi a, int n) { return VI_OP(slli_epi32)(a, n); }
VI_INLINE vi vi_srli64(vi a, int n) { return VI_OP(srli_epi64)(a, n); }
VI_INLINE vi vi_slli64(vi a, int n) { return VI_OP(slli_epi64)(a, n); }
/* each lane by the count in the same lane of c */
VI_INLINE vi vi_srlv32(vi a, vi c) { return VI_OP(srlv_epi32)(a, c); }
VI_INLINE vi vi_sllv32(vi a, vi c) { return VI_OP(sllv_epi32)(a, c); }
VI_INLINE vi vi_sra32(vi a, __m128i c) { return VI_OP(sra_epi32)(a, c); }
VI_INLINE vi vi_srl32(vi a, __m128i c) { return VI_OP(srl_epi32)(a, c); }
VI_INLINE vi vi_sll32(vi a, __m128i c) { return VI_OP(sll_epi32)(a, c); }
VI_INLINE vi vi_srl64(vi a, __m128i c) { return VI_OP(srl_epi64)(a, c); }
VI_INLINE __m128i vi_count(int n) { return _mm_cvtsi32_si128(n); }

/* ---- masks of 32-bit lanes -------------------------------------------------- */

#if VECTOR_BYTES == 64
VI_INLINE vm32 vm32_gt(vi a, vi b) { return _mm512_cmpgt_epi32_mask(a, b); }
VI_INLINE vm32 vm32_eq(vi a, vi b) { return _mm512_cmpeq_epi32_mask(a, b); }
VI_INLINE vm32 vm32_and(vm32 a, vm32 b) { return a & b; }
/* a & ~b */
VI_INLINE vm32 vm32_and_not(vm32 a, vm32 b) { return a & (vm32)~b; }
VI_INLINE bool vm32_none(vm32 m) { return !m; }
/* The lanes of v where m is set, 0 elsewhere. */
VI_INLINE vi vi_keep32(vm32 m, vi v) { return _mm512_maskz_mov_epi32(m, v); }
/* b where m is set, a elsewhere. */
VI_INLINE vi vi_select32(vm32 m, vi b, vi a) { return _mm512_mask_blend_epi32(m, a, b); }
/* acc + v where m is set, acc elsewhere. */
VI_INLINE vi vi_add32_where(vi acc, vm32 m, vi v) { return _mm512_mask_add_epi32(acc, m, acc, v); }
/* Lanes 0 .. n - 1 (none for n <= 0, all from the lane count on). */
VI_INLINE vm32 vm32_first(int n)
{
    return n <= 0 ? 0 : n >= 16 ? (vm32)0xFFFF : (vm32)((1u << n) - 1);
}
#else
VI_INLINE vm32 vm32_gt(vi a, vi b) { return _mm256_cmpgt_epi32(a, b); }
VI_INLINE vm32 vm32_eq(vi a, vi b) { return _mm256_cmpeq_epi32(a, b); }
VI_INLINE vm32 vm32_and(vm32 a, vm32 b) { return _mm256_and_si256(a, b); }
VI_INLINE vm32 vm32_and_not(vm32 a, vm32 b) { return _mm256_andnot_si256(b, a); }
VI_INLINE bool vm32_none(vm32 m) { return _mm256_testz_si256(m, m); }
VI_INLINE vi vi_keep32(vm32 m, vi v) { return _mm256_and_si256(v, m); }
VI_INLINE vi vi_select32(vm32 m, vi b, vi a) { return _mm256_blendv_epi8(a, b, m); }
VI_INLINE vi vi_add32_where(vi acc, vm32 m, vi v)
{
    return _mm256_add_epi32(acc, _mm256_and_si256(v, m));
}
VI_INLINE vm32 vm32_first(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif

/* 32-bit lanes through a mask of lanes (those outside it read as 0, and
 * are not written). */
#if VECTOR_BYTES == 64
VI_INLINE vi vi_load32_masked(const void *p, vm32 m) { return _mm512_maskz_loadu_epi32(m, p); }
VI_INLINE void vi_store32_masked(void *p, vm32 m, vi v) { _mm512_mask_storeu_epi32(p, m, v); }
#else
VI_INLINE vi vi_load32_masked(const void *p, vm32 m)
{
    return _mm256_maskload_epi32((const int *)p, m);
}
VI_INLINE void vi_store32_masked(void *p, vm32 m, vi v) { _mm256_maskstore_epi32((int *)p, m, v); }
#endif

/* ---- steps of 16-bit columns ------------------------------------------------- */

/* A step over the 16-bit columns of a row: the vector's first column, and
 * which of its columns to read and write (see vcols). */
typedef struct VecColumns {
    ptrdiff_t x;
    vcols mask;
} VecColumns;

/* The step from column x0 of a row of n columns (n >= VI_LANES16 where
 * the columns are not masked). */
VI_INLINE VecColumns vec_columns(unsigned x0, unsigned n)
{
#if VI_MASKED_COLUMNS
    const ptrdiff_t left = (ptrdiff_t)n - x0;
    return (VecColumns){ x0, left >= 32 ? 0xffffffffu : left <= 0 ? 0 : (vcols)((1u << left) - 1) };
#else
    return (VecColumns){ x0 + VI_LANES16 <= n ? (ptrdiff_t)x0 : (ptrdiff_t)(n - VI_LANES16), 0 };
#endif
}

/* A register of 16-bit values (wide) or of bytes widened to 16 bits, from
 * column x of a row. */
VI_INLINE vi vi_load_row16(const void *row, ptrdiff_t x, bool wide)
{
#if VECTOR_BYTES == 64
    if (wide) return _mm512_loadu_si512((const uint16_t *)row + x);
    return _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)((const uint8_t *)row + x)));
#else
    if (wide) return _mm256_loadu_si256((const __m256i *)((const uint16_t *)row + x));
    return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)((const uint8_t *)row + x)));
#endif
}

/* The same at a step (columns outside it read as 0). */
VI_INLINE vi vi_load_columns(const void *row, VecColumns c, bool wide)
{
#if VI_MASKED_COLUMNS
    if (wide) return _mm512_maskz_loadu_epi16(c.mask, (const uint16_t *)row + c.x);
    return _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(c.mask, (const uint8_t *)row + c.x));
#else
    return vi_load_row16(row, c.x, wide);
#endif
}

VI_INLINE void vi_store_columns(int16_t *row, VecColumns c, vi v)
{
#if VI_MASKED_COLUMNS
    _mm512_mask_storeu_epi16(row + c.x, c.mask, v);
#else
    _mm256_storeu_si256((__m256i *)(row + c.x), v);
#endif
}

/* ---- 64-bit and 32-bit lanes ------------------------------------------------------ */

/* The odd 32-bit lanes moved to the even ones (the low halves of the
 * 64-bit lanes), where the 64-bit products read them. */
VI_INLINE vi vi_odd_to_even(vi v) { return vi_srli64(v, 32); }

/* The low (high) 32 bits of the 64-bit lanes of even (elements 0, 2, ...)
 * and odd (elements 1, 3, ...) put back in element order. */
VI_INLINE vi vi_join_low32(vi even, vi odd)
{
#if VECTOR_BYTES == 64
    return _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
#else
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
#endif
}

VI_INLINE vi vi_join_high32(vi even, vi odd)
{
#if VECTOR_BYTES == 64
    return _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
#else
    return _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
#endif
}

/* The 64-bit lanes of packs32 / packus32 in the order of their sources'
 * lanes (the packs interleave the two sources by 128-bit blocks). */
VI_INLINE vi vi_pack_order(vi v)
{
#if VECTOR_BYTES == 64
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), v);
#else
    return _mm256_permute4x64_epi64(v, 0xD8);
#endif
}

/* The 32-bit words at base + scale * index[lane] (scale 1, 2, 4 or 8, a
 * constant). */
#if VECTOR_BYTES == 64
#define vi_gather32(base, index, scale) \
    _mm512_i32gather_epi32((index), (const void *)(base), (scale))
#else
#define vi_gather32(base, index, scale) \
    _mm256_i32gather_epi32((const int *)(base), (index), (scale))
#endif

/* m & (a > b), 32-bit lanes */
#if VECTOR_BYTES == 64
VI_INLINE vm32 vm32_gt_where(vm32 m, vi a, vi b) { return _mm512_mask_cmpgt_epi32_mask(m, a, b); }
#else
VI_INLINE vm32 vm32_gt_where(vm32 m, vi a, vi b)
{
    return _mm256_and_si256(_mm256_cmpgt_epi32(a, b), m);
}
#endif

/* m & (a != b), 32-bit lanes */
#if VECTOR_BYTES == 64
VI_INLINE vm32 vm32_ne_where(vm32 m, vi a, vi b) { return m & _mm512_cmpneq_epi32_mask(a, b); }
#else
VI_INLINE vm32 vm32_ne_where(vm32 m, vi a, vi b)
{
    return _mm256_andnot_si256(_mm256_cmpeq_epi32(a, b), m);
}
#endif

/* acc less 1 in every lane where m is set: a count of lanes, negated. */
VI_INLINE vi vi_count_where(vi acc, vm32 m)
{
#if VECTOR_BYTES == 64
    return _mm512_mask_add_epi32(acc, m, acc, _mm512_set1_epi32(-1));
#else
    return _mm256_add_epi32(acc, m);
#endif
}

/* a's even 16-bit lanes, b's odd ones */
VI_INLINE vi vi_blend_odd16(vi a, vi b)
{
#if VECTOR_BYTES == 64
    return _mm512_mask_blend_epi16(0xAAAAAAAA, a, b);
#else
    return _mm256_blend_epi16(a, b, 0xAA);
#endif
}

/* An arithmetic right shift of 64-bit lanes by n (0 < n < 64). */
VI_INLINE vi vi_srai64(vi v, int n)
{
#if VECTOR_BYTES == 64
    return _mm512_sra_epi64(v, _mm_cvtsi32_si128(n));
#else
    const __m256i sign = _mm256_set1_epi64x((int64_t)(UINT64_C(1) << (63 - n)));
    return _mm256_sub_epi64(_mm256_xor_si256(_mm256_srli_epi64(v, n), sign), sign);
#endif
}

/* The low and the high half of a register, and a register of two halves
 * (the index of an extraction must be a constant at every optimisation
 * level: each branch has its own). */
VI_INLINE vi_half vi_get_half(vi v, int half)
{
#if VECTOR_BYTES == 64
    return half ? _mm512_extracti64x4_epi64(v, 1) : _mm512_extracti64x4_epi64(v, 0);
#else
    return half ? _mm256_extracti128_si256(v, 1) : _mm256_castsi256_si128(v);
#endif
}

VI_INLINE vi vi_from_halves(vi_half low, vi_half high)
{
#if VECTOR_BYTES == 64
    return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
#else
    return _mm256_set_m128i(high, low);
#endif
}

/* ---- doubles ------------------------------------------------------------------------ */

VI_INLINE vd vd_set1(double x) { return VI_OP(set1_pd)(x); }
VI_INLINE vd vd_zero(void) { return VI_OP(setzero_pd)(); }
VI_INLINE vd vd_add(vd a, vd b) { return VI_OP(add_pd)(a, b); }
VI_INLINE vd vd_sub(vd a, vd b) { return VI_OP(sub_pd)(a, b); }
VI_INLINE vd vd_mul(vd a, vd b) { return VI_OP(mul_pd)(a, b); }
VI_INLINE vd vd_div(vd a, vd b) { return VI_OP(div_pd)(a, b); }
VI_INLINE vd vd_max(vd a, vd b) { return VI_OP(max_pd)(a, b); }
VI_INLINE vd vd_min(vd a, vd b) { return VI_OP(min_pd)(a, b); }
#if VECTOR_BYTES == 64
VI_INLINE vi vd_bits(vd a) { return _mm512_castpd_si512(a); }
#else
VI_INLINE vi vd_bits(vd a) { return _mm256_castpd_si256(a); }
#endif

/* Rounded toward zero, to an integer double. */
VI_INLINE vd vd_trunc(vd a)
{
#if VECTOR_BYTES == 64
    return _mm512_roundscale_pd(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
#else
    return _mm256_round_pd(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
#endif
}

/* The int32 lanes of a half register as doubles, and doubles truncated to
 * int32 (the integer indefinite INT32_MIN out of range, as C casts on x86). */
VI_INLINE vd vd_from_i32(vi_half v) { return VI_OP(cvtepi32_pd)(v); }
VI_INLINE vi_half vd_to_i32(vd v) { return VI_OP(cvttpd_epi32)(v); }

/* Masks of 64-bit lanes from comparisons of doubles; b where m, else a. */
#if VECTOR_BYTES == 64
VI_INLINE vm64 vd_ge(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
VI_INLINE vm64 vm64_and(vm64 a, vm64 b) { return a & b; }
VI_INLINE vd vd_select(vm64 m, vd b, vd a) { return _mm512_mask_blend_pd(m, a, b); }
#else
VI_INLINE vm64 vd_ge(vd a, vd b) { return _mm256_castpd_si256(_mm256_cmp_pd(a, b, _CMP_GE_OQ)); }
VI_INLINE vm64 vm64_and(vm64 a, vm64 b) { return _mm256_and_si256(a, b); }
VI_INLINE vd vd_select(vm64 m, vd b, vd a)
{
    return _mm256_blendv_pd(a, b, _mm256_castsi256_pd(m));
}
#endif

/* The mask of the 32-bit lanes of one half of a register as a mask of
 * 64-bit lanes (those of vd_from_i32 of the half). */
VI_INLINE vm64 vm64_from_half(vm32 m, int half)
{
#if VECTOR_BYTES == 64
    return (vm64)(m >> (8 * half));
#else
    return _mm256_cvtepi32_epi64(half ? _mm256_extracti128_si256(m, 1) : _mm256_castsi256_si128(m));
#endif
}

/* A mask of 32-bit lanes from the masks of the elements of the low and
 * the high half, or of the even and the odd elements (a 64-bit lane each). */
VI_INLINE vm32 vm32_from_halves(vm64 low, vm64 high)
{
#if VECTOR_BYTES == 64
    return (vm32)(low | (high << 8));
#else
    const __m256 s = _mm256_shuffle_ps(_mm256_castsi256_ps(low), _mm256_castsi256_ps(high), 0x88);
    return _mm256_permute4x64_epi64(_mm256_castps_si256(s), 0xD8);
#endif
}

VI_INLINE vm32 vm32_from_even_odd(vm64 even, vm64 odd)
{
#if VECTOR_BYTES == 64
    return (vm32)(_pdep_u32(even, 0x5555) | _pdep_u32(odd, 0xAAAA));
#else
    /* each 64-bit mask fills its lane: its high half is the odd element's */
    return _mm256_blend_epi32(even, odd, 0xAA);
#endif
}

/* ---- floats ---------------------------------------------------------------------- */

/* Half a register of floats: as many as a vd has doubles. */
#if VECTOR_BYTES == 64
typedef __m256 vf_half;
#else
typedef __m128 vf_half;
#endif

VI_INLINE vf vf_from_i32(vi v) { return VI_OP(cvtepi32_ps)(v); }
/* The low or the high half of the floats of v as doubles. */
VI_INLINE vd vd_from_f32_half(vf v, int half)
{
#if VECTOR_BYTES == 64
    return _mm512_cvtps_pd(half ? _mm512_extractf32x8_ps(v, 1) : _mm512_extractf32x8_ps(v, 0));
#else
    return _mm256_cvtps_pd(half ? _mm256_extractf128_ps(v, 1) : _mm256_castps256_ps128(v));
#endif
}
VI_INLINE vd vd_from_f32(vf_half v) { return VI_OP(cvtps_pd)(v); }

/* int64 lanes to the nearest float (ties to even), as a C cast does.  AVX2
 * has no such conversion: the magnitude is rounded to odd at bit 11 where
 * it has more than 53 bits, so that the exact double it then is rounds to
 * the float the int64 would. */
VI_INLINE vf_half vi_i64_to_f32(vi x)
{
#if VECTOR_BYTES == 64
    return _mm512_cvtepi64_ps(x);
#else
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
#endif
}

/* The exact doubles of part 0 or 1 of the unsigned 32-bit lanes of v, one
 * 64-bit lane each: AVX2 the even and the odd lanes, AVX-512 the low and
 * the high half.  vi_join_parts() puts 32-bit results of the two parts
 * (in the low halves of 64-bit lanes) back in lane order. */
VI_INLINE vd vd_from_u32_part(vi v, int part)
{
#if VECTOR_BYTES == 64
    return _mm512_cvtepu32_pd(part ? _mm512_extracti64x4_epi64(v, 1) : _mm512_castsi512_si256(v));
#else
    const __m256i magic = _mm256_set1_epi64x(0x4330000000000000); /* 2^52 */
    const __m256i u = part ? _mm256_srli_epi64(v, 32)
                           : _mm256_and_si256(v, _mm256_set1_epi64x(0xffffffff));
    return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(u, magic)),
                         _mm256_castsi256_pd(magic));
#endif
}

VI_INLINE vi vi_join_parts(vi part0, vi part1)
{
#if VECTOR_BYTES == 64
    const __m512i order =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_epi32(part0, order, part1);
#else
    return _mm256_blend_epi32(part0, _mm256_slli_epi64(part1, 32), 0xaa);
#endif
}

/* ---- reductions ----------------------------------------------------------------- */

/* Whether every bit of v is 0. */
VI_INLINE bool vi_all_zero(vi v)
{
#if VECTOR_BYTES == 64
    return !_mm512_test_epi32_mask(v, v);
#else
    return _mm256_testz_si256(v, v);
#endif
}

/* The sum of the lanes, wrapping as the vector additions do. */
VI_INLINE uint32_t vi_sum_u32(vi v)
{
#if VECTOR_BYTES == 64
    return reduce_add_u32x16(v);
#else
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return (uint32_t)_mm_cvtsi128_si32(s);
#endif
}

/* The sum of the lanes as signed values, the kernels' sums being far
 * within 32 bits (AVX2 widens them first, AVX-512 wraps). */
VI_INLINE int64_t vi_sum_i32(vi v)
{
#if VECTOR_BYTES == 64
    return (int32_t)reduce_add_u32x16(v);
#else
    const __m256i wide = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(v)),
                                          _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1)));
    const __m128i s =
        _mm_add_epi64(_mm256_castsi256_si128(wide), _mm256_extracti128_si256(wide, 1));
    return _mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1);
#endif
}

VI_INLINE uint64_t vi_sum_u64(vi v)
{
#if VECTOR_BYTES == 64
    return reduce_add_u64x8(v);
#else
    return reduce_add_u64x4(v);
#endif
}

#endif /* QUALE_SRC_METRICS_X86_VECTOR_INT_H */
