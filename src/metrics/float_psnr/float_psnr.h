/*
 * float_psnr's state and the steps the C reference and its GPU twins share:
 * the format check, the noise sum from integer sums, and the score.
 */
#ifndef QUALE_SRC_METRICS_FLOAT_PSNR_H
#define QUALE_SRC_METRICS_FLOAT_PSNR_H

#include <stdbool.h>
#include <stdint.h>

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct FloatPsnrState {
    double peak, psnr_max;
    float scaler;    /* 2^(bitdepth - 8) */
    bool exact_sums; /* picture_float_sums_exact() */
    unsigned key;
} FloatPsnrState;

/* The bit depths libvmaf's float conversion knows: an error with a message
 * naming float_psnr for the others. */
int float_psnr_check(const QualeVideoFormat *format, FeatureSink *sink);

/*
 * The noise sum (the double sum of the float squares of the differences on
 * the 8-bit scale) from its value in units of 2^-2(bitdepth - 8): the
 * integer SSE where the sums are exact; at 16 bits, the sum of every
 * float square times scaler^2, an integer, which is what libvmaf's double
 * sum gives while it stays below 2^53 units.
 */
double float_psnr_noise(const FloatPsnrState *s, uint64_t units);

/* Writes float_psnr of the frame from its noise sum. */
int float_psnr_write(const FloatPsnrState *s, FeatureSink *sink, const MetricFrame *frame,
                     double noise);

extern const Metric metric_float_psnr;

#ifdef __cplusplus
}
#endif

#endif /* QUALE_SRC_METRICS_FLOAT_PSNR_H */
