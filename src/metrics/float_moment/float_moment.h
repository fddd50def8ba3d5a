/*
 * float_moment's state and the steps the C reference and its GPU twins
 * share: the format check, the sums from integer sums, and the keys.
 */
#ifndef QUALE_SRC_METRICS_FLOAT_MOMENT_H
#define QUALE_SRC_METRICS_FLOAT_MOMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The keys, in libvmaf's order of writing. */
enum {
    FLOAT_MOMENT_REF1, FLOAT_MOMENT_DIS1, FLOAT_MOMENT_REF2, FLOAT_MOMENT_DIS2,
    FLOAT_MOMENT_KEYS
};

typedef struct FloatMomentState {
    float scaler;    /* 2^(bitdepth - 8) */
    bool exact_sums; /* picture_float_sums_exact() */
    unsigned key[FLOAT_MOMENT_KEYS];
} FloatMomentState;

/* The double sums of one picture's converted luma samples and of their
 * float squares. */
typedef struct FloatMomentSums {
    double first, second;
} FloatMomentSums;

/* The bit depths libvmaf's float conversion knows: an error with a message
 * naming float_moment for the others. */
int float_moment_check(const QualeVideoFormat *format, FeatureSink *sink);

/*
 * The sums from integers: first is the sum of the samples; second the sum
 * of their squares where the sums are exact, else (16 bits) the sum of
 * every float square times scaler^2, an integer, which is what libvmaf's
 * double sum gives while it stays below 2^53 units.
 */
FloatMomentSums float_moment_sums(const FloatMomentState *s, uint64_t first, uint64_t second);

/* Writes the four keys of the frame from the sums of its pictures. */
int float_moment_write(const FloatMomentState *s, FeatureSink *sink, const MetricFrame *frame,
                       FloatMomentSums ref, FloatMomentSums dis);

extern const Metric metric_float_moment;

#ifdef __cplusplus
}
#endif

#endif /* QUALE_SRC_METRICS_FLOAT_MOMENT_H */
