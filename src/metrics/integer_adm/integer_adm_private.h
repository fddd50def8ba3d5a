/*
 * What integer ADM's C reference (integer_adm.c) and its C row kernels
 * (integer_adm_rows.c) share besides integer_adm.h.
 */
#ifndef QUALE_SRC_METRICS_INTEGER_ADM_INTEGER_ADM_PRIVATE_H
#define QUALE_SRC_METRICS_INTEGER_ADM_INTEGER_ADM_PRIVATE_H

#include <math.h>
#include <stdint.h>

#include "integer_adm.h"

#if defined(__GNUC__)
#define ADM_INLINE static inline __attribute__((always_inline))
#else
#define ADM_INLINE static inline
#endif

typedef AdmRect Rect;

/* Band planes, in this order in every array. */
enum { BAND_A, BAND_H, BAND_V, BAND_D };

/* ---- small exact helpers --------------------------------------------------- */

/* libvmaf converts doubles to uint16_t and uint32_t with plain casts; gcc on
 * x86-64 compiles them to a truncating conversion to int32 (uint16_t) or
 * int64 (uint32_t) and keeps the low bits, out-of-range values giving the
 * "integer indefinite" 0x80...0.  Only a Barten CSF with large scales
 * leaves the range; this keeps that case defined and equal to libvmaf. */
static inline uint16_t double_to_u16(double v)
{
    if (!(v > -2147483649.0 && v < 2147483648.0)) return 0;
    return (uint16_t)(int32_t)v;
}

static inline uint32_t double_to_u32(double v)
{
    if (!(v > -9223372036854775808.0 && v < 9223372036854775808.0)) return 0;
    return (uint32_t)(int64_t)v;
}

/* libvmaf's shift counts are uint32 expressions like ceil(log2(n)) - 1 fed
 * to pow(2, ...); keep their unsigned wrap-around. */
static inline double pow2_u32(uint32_t e)
{
    return pow(2, (double)e);
}

/* abs() of an int32 as the hardware does it: INT32_MIN stays INT32_MIN. */
static inline int32_t abs_wrap(int32_t v)
{
    return v < 0 ? (int32_t)(0u - (uint32_t)v) : v;
}

/* Reflection across the first sample (-1 -> 1) and across the end
 * (n -> n - 1, n + 1 -> n - 2): the DWT's source indices. */
static inline int mirror(int k, int n)
{
    return k < 0 ? -k : k >= n ? 2 * n - k - 1 : k;
}

/* The C row kernels into dsp (the SIMD levels then replace some). */
void adm_dsp_init_c(AdmDsp *dsp);

#endif /* QUALE_SRC_METRICS_INTEGER_ADM_INTEGER_ADM_PRIVATE_H */
