/*
 * GCC vector types of one register for the x86 kernels, and the few
 * operations that need an intrinsic (GCC's generic code for them is a
 * call or a detour through halves).  The includer defines VECTOR_BYTES:
 * 32 for AVX2, 64 for AVX-512; a file includes this header once.
 */
#ifndef QUALE_SRC_METRICS_X86_VECTOR_H
#define QUALE_SRC_METRICS_X86_VECTOR_H

#include <immintrin.h>
#include <stdint.h>

#if VECTOR_BYTES != 32 && VECTOR_BYTES != 64
#error "VECTOR_BYTES: 32 (AVX2) or 64 (AVX-512)"
#endif

typedef double vec_f64 __attribute__((vector_size(VECTOR_BYTES)));
typedef float vec_f32 __attribute__((vector_size(VECTOR_BYTES)));
typedef int32_t vec_i32 __attribute__((vector_size(VECTOR_BYTES)));
typedef uint32_t vec_u32 __attribute__((vector_size(VECTOR_BYTES)));
/* as many floats as a vec_f64 has doubles */
typedef float vec_f32_half __attribute__((vector_size(VECTOR_BYTES / 2)));

/* float <-> double lane by lane, one instruction each way */
static inline vec_f64 vec_widen(vec_f32_half x)
{
#if VECTOR_BYTES == 64
    return (vec_f64)_mm512_cvtps_pd((__m256)x);
#else
    return (vec_f64)_mm256_cvtps_pd((__m128)x);
#endif
}

static inline vec_f32_half vec_narrow(vec_f64 x)
{
#if VECTOR_BYTES == 64
    return (vec_f32_half)_mm512_cvtpd_ps((__m512d)x);
#else
    return (vec_f32_half)_mm256_cvtpd_ps((__m256d)x);
#endif
}

/* IEEE square roots (correctly rounded, as C's sqrt and sqrtf) */
static inline vec_f64 vec_sqrt_f64(vec_f64 x)
{
#if VECTOR_BYTES == 64
    return (vec_f64)_mm512_sqrt_pd((__m512d)x);
#else
    return (vec_f64)_mm256_sqrt_pd((__m256d)x);
#endif
}

static inline vec_f32 vec_sqrt_f32(vec_f32 x)
{
#if VECTOR_BYTES == 64
    return (vec_f32)_mm512_sqrt_ps((__m512)x);
#else
    return (vec_f32)_mm256_sqrt_ps((__m256)x);
#endif
}

static inline vec_f32_half vec_sqrt_f32_half(vec_f32_half x)
{
#if VECTOR_BYTES == 64
    return (vec_f32_half)_mm256_sqrt_ps((__m256)x);
#else
    return (vec_f32_half)_mm_sqrt_ps((__m128)x);
#endif
}

/* The 32-bit words at base + scale * index[lane] (scale 1, 2, 4 or 8, a
 * constant) */
#if VECTOR_BYTES == 64
#define vec_gather_i32(base, index, scale) \
    ((vec_i32)_mm512_i32gather_epi32((__m512i)(index), (base), (scale)))
#else
#define vec_gather_i32(base, index, scale) \
    ((vec_i32)_mm256_i32gather_epi32((const int *)(base), (__m256i)(index), (scale)))
#endif

/* Whether any lane has a bit set; the largest lane (as signed integers) */
static inline int vec_any_i32(vec_i32 x)
{
#if VECTOR_BYTES == 64
    return _mm512_test_epi32_mask((__m512i)x, (__m512i)x) != 0;
#else
    return !_mm256_testz_si256((__m256i)x, (__m256i)x);
#endif
}

static inline int32_t vec_max_lane_i32(vec_i32 x)
{
#if VECTOR_BYTES == 64
    return _mm512_reduce_max_epi32((__m512i)x);
#else
    __m128i m = _mm_max_epi32(_mm256_castsi256_si128((__m256i)x),
                              _mm256_extracti128_si256((__m256i)x, 1));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0x4e));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0xb1));
    return _mm_cvtsi128_si32(m);
#endif
}

#endif /* QUALE_SRC_METRICS_X86_VECTOR_H */
