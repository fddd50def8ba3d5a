/*
 * Horizontal sums of vector lanes that wrap as the vector additions do.
 * The compiler's _mm512_reduce_add_* add the lanes as signed scalars, which
 * C leaves undefined on overflow; real pictures never get there, but the
 * kernels' checks feed extreme inputs, and there the sum must still be the
 * C kernel's wrapped one.
 */
#ifndef QUALE_SRC_METRICS_X86_REDUCE_H
#define QUALE_SRC_METRICS_X86_REDUCE_H

#include <immintrin.h>
#include <stdint.h>

#if defined(__AVX2__)
static inline uint64_t reduce_add_u64x4(__m256i v)
{
    const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return (uint64_t)_mm_cvtsi128_si64(s) + (uint64_t)_mm_extract_epi64(s, 1);
}
#endif

#if defined(__AVX512F__)
static inline uint64_t reduce_add_u64x8(__m512i v)
{
    const __m256i s = _mm256_add_epi64(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    __m128i t = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    t = _mm_add_epi64(t, _mm_unpackhi_epi64(t, t));
    return (uint64_t)_mm_cvtsi128_si64(t);
}

static inline uint32_t reduce_add_u32x16(__m512i v)
{
    const __m256i s = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    t = _mm_add_epi32(t, _mm_unpackhi_epi64(t, t));
    t = _mm_add_epi32(t, _mm_srli_epi64(t, 32));
    return (uint32_t)_mm_cvtsi128_si32(t);
}
#endif

#endif /* QUALE_SRC_METRICS_X86_REDUCE_H */
