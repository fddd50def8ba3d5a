/*
 * Samples to float, as libvmaf's floating-point extractors see them.
 *
 * libvmaf's picture_copy() turns a plane into floats before every float
 * metric: an 8-bit sample d becomes (float)d + offset, a deeper one
 * (float)d / 2^(bitdepth - 8) + offset, so that every bit depth lands on the
 * 8-bit scale (1023 at 10 bits becomes 255.75).  The offset is 0 for most
 * metrics and -128 for ANSNR.  It knows 8, 10, 12 and 16 bits only: other
 * depths are read as 8-bit bytes there, and float_psnr and float_ansnr
 * refuse them, so every float metric here refuses them with
 * picture_float_check().
 */
#ifndef QUALE_SRC_METRICS_PICTURE_FLOAT_H
#define QUALE_SRC_METRICS_PICTURE_FLOAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

/* Whether libvmaf's float conversion handles the format; if not, logs why
 * through the sink, naming the metric, and returns -EINVAL. */
int picture_float_check(const QualeVideoFormat *format, const char *metric,
                        FeatureSink *sink);

/* The divisor of the conversion: 2^(bitdepth - 8). */
static inline float picture_float_scaler(unsigned bitdepth)
{
    return (float)(1u << (bitdepth - 8));
}

/* The largest converted sample, libvmaf's "peak" of float_psnr and
 * float_ansnr: 255, 255.75, 255.9375 or 255.99609375. */
static inline double picture_float_peak(unsigned bitdepth)
{
    return (double)((1u << bitdepth) - 1) / (double)(1u << (bitdepth - 8));
}

/* libvmaf's ceiling of float_psnr and float_anpsnr: 60, 72, 84 or 108 dB. */
static inline double picture_float_psnr_max(unsigned bitdepth)
{
    return 6.0 * bitdepth + 12.0;
}

#if defined(__GNUC__)
#define PICTURE_FLOAT_INLINE static inline __attribute__((always_inline))
#else
#define PICTURE_FLOAT_INLINE static inline
#endif

/* Row y of a plane, and its sample x: uint8_t at 8 bits, else uint16_t.
 * Functions that take a constant `hbd` and are always inlined make the
 * 8-bit and the deeper variant of one loop. */
PICTURE_FLOAT_INLINE const void *picture_row(const QualePicture *pic, unsigned plane,
                                             unsigned y)
{
    return (const uint8_t *)pic->data[plane] + (ptrdiff_t)y * pic->stride[plane];
}

PICTURE_FLOAT_INLINE unsigned picture_sample(const void *row, unsigned x, bool hbd)
{
    return hbd ? ((const uint16_t *)row)[x] : ((const uint8_t *)row)[x];
}

/* Converts row y of a plane into w floats at dst. */
void picture_float_row(const QualePicture *pic, unsigned plane, unsigned y,
                       float offset, float *dst);

/*
 * Whether sums over a whole plane of converted samples, of their squares
 * and of squared differences of two planes are exact in float products and
 * double sums: true up to 12 bits while count * (2^bitdepth - 1)^2 < 2^53.
 * Every such sum then equals the integer sum scaled by a power of two,
 * whatever the order of the additions, which lets the metrics that only
 * sum (float_psnr, float_moment) add integers instead.
 */
bool picture_float_sums_exact(const QualeVideoFormat *format);

#endif /* QUALE_SRC_METRICS_PICTURE_FLOAT_H */
