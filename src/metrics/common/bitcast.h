/*
 * The bits of a float or a double as an unsigned integer and back: for the
 * scalar instantiations of the per-element templates (ciede_tmpl.h,
 * psnr_hvs_tmpl.h), which select and flip signs in the bits as their
 * vector instantiations do, and for the float tables and sums the CPU
 * metrics share with their CUDA twins.  memcpy is the portable spelling,
 * which compilers turn into a register move; device code has intrinsics.
 */
#ifndef QUALE_SRC_METRICS_BITCAST_H
#define QUALE_SRC_METRICS_BITCAST_H

#include <stdint.h>
#include <string.h>

#include "host_device.h"

HOST_DEVICE_INLINE uint64_t bitcast_double_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof(u));
    return u;
}

HOST_DEVICE_INLINE double bitcast_bits_double(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof(x));
    return x;
}

HOST_DEVICE_INLINE uint32_t bitcast_float_bits(float x)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    uint32_t u;
    memcpy(&u, &x, sizeof(u));
    return u;
#endif
}

HOST_DEVICE_INLINE float bitcast_bits_float(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, sizeof(x));
    return x;
#endif
}

#endif /* QUALE_SRC_METRICS_BITCAST_H */
