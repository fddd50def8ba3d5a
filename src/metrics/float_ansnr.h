/*
 * float_ansnr's state and what the C reference and its GPU twins share:
 * the filters' weights, the size check, and the step from the picture's
 * float sums to the keys.
 */
#ifndef QUALE_SRC_METRICS_FLOAT_ANSNR_H
#define QUALE_SRC_METRICS_FLOAT_ANSNR_H

#define ANSNR_REF_TAPS 3
#define ANSNR_DIS_TAPS 5
/* The 5 x 5 mirror needs 3 samples a side. */
#define ANSNR_MIN_SIDE 3u
/* The conversion offset of libvmaf's ANSNR. */
#define ANSNR_OFFSET (-128.0f)

/* The filters' weights, row by row, each given to W(): the reference's
 * [1 2 1]^T [1 2 1] / 16 and the distorted picture's weights / 571, each
 * computed in double and rounded to float, as libvmaf. */
#define ANSNR_REF_WEIGHTS(W) \
    W(1), W(2), W(1),        \
    W(2), W(4), W(2),        \
    W(1), W(2), W(1)
#define ANSNR_REF_WEIGHT(n) ((n) / 16.0)
#define ANSNR_DIS_WEIGHTS(W)                 \
    W(2),  W(7),  W(12),  W(7),  W(2),       \
    W(7),  W(31), W(52),  W(31), W(7),       \
    W(12), W(52), W(127), W(52), W(12),      \
    W(7),  W(31), W(52),  W(31), W(7),       \
    W(2),  W(7),  W(12),  W(7),  W(2)
#define ANSNR_DIS_WEIGHT(n) ((n) / 571.0)

/* The rest is C: the kernels (src/cuda/float_ansnr.cu) take the weights. */
#if !defined(__CUDACC__)

#include <stdbool.h>
#include <stddef.h>

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct FloatAnsnrState {
    int w, h;
    double peak, psnr_max;
    unsigned key_ansnr, key_anpsnr;
} FloatAnsnrState;

/* The bit depths libvmaf's float conversion knows: an error with a message
 * naming float_ansnr for the others. */
int float_ansnr_check(const QualeVideoFormat *format, FeatureSink *sink);

/* Pictures below ANSNR_MIN_SIDE a side: -EINVAL, with the message. */
int float_ansnr_check_size(unsigned width, unsigned height, char *error, size_t error_size);

/* Writes float_ansnr and float_anpsnr of a frame from the picture's sums
 * (sig: of the filtered reference's squares; noise: of the squared
 * differences of the filtered pictures), each a float sum of the rows'
 * float sums in row order. */
int float_ansnr_write(const FloatAnsnrState *s, FeatureSink *sink, unsigned index, float sig,
                      float noise);

/* The same from each row's sums, as the GPU twins read them back
 * (row_sums[y]: row y's sig, row_sums[h + y]: its noise), added in float
 * in row order as the C reference adds its rows. */
int float_ansnr_write_rows(const FloatAnsnrState *s, FeatureSink *sink, unsigned index,
                           const float *row_sums);

extern const Metric metric_float_ansnr;

#ifdef __cplusplus
}
#endif

#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_FLOAT_ANSNR_H */
