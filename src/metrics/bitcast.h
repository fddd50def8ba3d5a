/*
 * The bits of a float or a double as an unsigned integer and back, for the
 * scalar instantiations of the per-element templates (ciede_tmpl.h,
 * psnr_hvs_tmpl.h), which select and flip signs in the bits as their
 * vector instantiations do.  memcpy is the portable spelling; compilers
 * (nvcc too) turn it into a register move.
 */
#ifndef QUALE_SRC_METRICS_BITCAST_H
#define QUALE_SRC_METRICS_BITCAST_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define BITCAST_FN static inline __host__ __device__
#else
#define BITCAST_FN static inline
#endif

BITCAST_FN uint64_t bitcast_double_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof(u));
    return u;
}

BITCAST_FN double bitcast_bits_double(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof(x));
    return x;
}

BITCAST_FN uint32_t bitcast_float_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof(u));
    return u;
}

BITCAST_FN float bitcast_bits_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof(x));
    return x;
}

#undef BITCAST_FN

#endif /* QUALE_SRC_METRICS_BITCAST_H */
