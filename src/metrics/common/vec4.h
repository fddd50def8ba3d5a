/*
 * Vectors of four floats where gcc or clang can make them (SSE2, NEON),
 * which the float references' row loops (float_adm_rows.c, float_vif.c)
 * compute in: lane by lane the same IEEE operations as their scalar code,
 * selects in place of its branches, so that the results do not change,
 * only how many are made at once.  VEC4_LANES is 0 where the compiler
 * cannot make them, and the scalar loops then do all the work.  One
 * declaration, so that the two metrics' loads, stores and selects cannot
 * come to differ.
 */
#ifndef QUALE_SRC_METRICS_COMMON_VEC4_H
#define QUALE_SRC_METRICS_COMMON_VEC4_H

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && (__GNUC__ >= 9 || defined(__clang__)) && \
    (defined(__SSE2__) || defined(__ARM_NEON))
#define VEC4_LANES 4
typedef float Vec4 __attribute__((vector_size(VEC4_LANES * sizeof(float))));
typedef int32_t Vec4Int __attribute__((vector_size(VEC4_LANES * sizeof(int32_t))));
typedef double Vec4Dbl __attribute__((vector_size(VEC4_LANES * sizeof(double))));

static inline Vec4 vec_load(const float *p)
{
    Vec4 v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void vec_store(float *p, Vec4 v)
{
    memcpy(p, &v, sizeof(v));
}

static inline Vec4 vec_set1(float x)
{
    return (Vec4){ x, x, x, x };
}

static inline Vec4Int vec_set1_int(int32_t x)
{
    return (Vec4Int){ x, x, x, x };
}

/* mask ? a : b, lane by lane (mask lanes are all ones or zero) */
static inline Vec4 vec_select(Vec4Int mask, Vec4 a, Vec4 b)
{
    return (Vec4)((mask & (Vec4Int)a) | (~mask & (Vec4Int)b));
}
#else
#define VEC4_LANES 0
#endif

#endif /* QUALE_SRC_METRICS_COMMON_VEC4_H */
