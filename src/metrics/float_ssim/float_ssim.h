/*
 * float_ssim's state and the host steps that the C reference (float_ssim.c)
 * and its CUDA twin (src/cuda/float_ssim_cuda.c) share: the geometry of the
 * automatic downscale with its size check, and the step from the means of
 * the SSIM terms to the feature values.  The arithmetic per sample is
 * iqa.h's.
 */
#ifndef QUALE_SRC_METRICS_FLOAT_SSIM_H
#define QUALE_SRC_METRICS_FLOAT_SSIM_H

#include <stdbool.h>
#include <stddef.h>

#include "metrics/common/iqa.h"
#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

enum FloatSsimKey {
    FLOAT_SSIM_KEY_SSIM,
    FLOAT_SSIM_KEY_L, /* with enable_lcs: l, c, s */
    FLOAT_SSIM_KEY_C,
    FLOAT_SSIM_KEY_S,
    FLOAT_SSIM_KEY_COUNT,
};

typedef struct FloatSsimState {
    /* options */
    bool enable_lcs;
    bool enable_db;
    bool clip_db;
    int scale_option;

    /* set by init (float_ssim_setup) */
    unsigned bitdepth;
    int w, h;             /* luma */
    int scale;            /* decimation factor, 1 = none */
    int scaled_w, scaled_h;
    double max_db;
    float box[IQA_MAX_TAPS * IQA_MAX_TAPS]; /* the decimation kernel */
    IqaDsp dsp;
    unsigned key[FLOAT_SSIM_KEY_COUNT];
} FloatSsimState;

/*
 * Sets the geometry (scale, scaled size, box kernel) and the dB cap of a
 * state whose options are set, for pictures of format f; the keys are not
 * declared.  -EINVAL with the reason in error (the message init logs) when
 * the picture SSIM sees is smaller than its window.
 */
int float_ssim_setup(FloatSsimState *s, const QualeVideoFormat *f, char *error,
                     size_t error_size);

/* The frame's feature values from the means of the SSIM terms, in key
 * order; returns how many keys the state writes (1, or 4 with enable_lcs). */
unsigned float_ssim_values(const FloatSsimState *s, const IqaSsimMeans *m,
                           double value[FLOAT_SSIM_KEY_COUNT]);

/* Writes the frame's values from the means. */
int float_ssim_write(const FloatSsimState *s, FeatureSink *sink, unsigned index,
                     const IqaSsimMeans *m);

extern const Metric metric_float_ssim;

#ifdef __cplusplus
}
#endif

#endif /* QUALE_SRC_METRICS_FLOAT_SSIM_H */
