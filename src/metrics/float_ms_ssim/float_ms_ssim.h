/*
 * float_ms_ssim's state and the steps that the C reference
 * (float_ms_ssim.c) and its CUDA twin share.
 *
 * The first part is arithmetic that nvcc reads too (src/cuda/
 * float_ms_ssim.cu): the scales and the low-pass of the decimation.  The
 * second part (hidden from nvcc) is the host's: the state, the size check
 * and the step from the means of every scale to the feature values.
 */
#ifndef QUALE_SRC_METRICS_FLOAT_MS_SSIM_H
#define QUALE_SRC_METRICS_FLOAT_MS_SSIM_H

#include <stdbool.h>
#include <stddef.h>

#include "metrics/common/iqa.h"

#define MS_SSIM_SCALES 5
#define MS_SSIM_LPF_TAPS 9
/* The smallest side: 11 << 4. */
#define MS_SSIM_MIN_SIDE (IQA_GAUSSIAN_TAPS << (MS_SSIM_SCALES - 1))

/* libvmaf's 2-D low-pass (the 9/7 wavelet's), as its float constants, row
 * by row: an initialiser list of MS_SSIM_LPF_TAPS^2 floats. */
#define MS_SSIM_LPF                                                                          \
    0.000714f, -0.000450f, -0.002090f, 0.007132f, 0.016114f, 0.007132f, -0.002090f, -0.000450f, \
        0.000714f, -0.000450f, 0.000283f, 0.001316f, -0.004490f, -0.010146f, -0.004490f,        \
        0.001316f, 0.000283f, -0.000450f, -0.002090f, 0.001316f, 0.006115f, -0.020867f,         \
        -0.047149f, -0.020867f, 0.006115f, 0.001316f, -0.002090f, 0.007132f, -0.004490f,        \
        -0.020867f, 0.071207f, 0.160885f, 0.071207f, -0.020867f, -0.004490f, 0.007132f,         \
        0.016114f, -0.010146f, -0.047149f, 0.160885f, 0.363505f, 0.160885f, -0.047149f,         \
        -0.010146f, 0.016114f, 0.007132f, -0.004490f, -0.020867f, 0.071207f, 0.160885f,         \
        0.071207f, -0.020867f, -0.004490f, 0.007132f, -0.002090f, 0.001316f, 0.006115f,         \
        -0.020867f, -0.047149f, -0.020867f, 0.006115f, 0.001316f, -0.002090f, -0.000450f,       \
        0.000283f, 0.001316f, -0.004490f, -0.010146f, -0.004490f, 0.001316f, 0.000283f,         \
        -0.000450f, 0.000714f, -0.000450f, -0.002090f, 0.007132f, 0.016114f, 0.007132f,         \
        -0.002090f, -0.000450f, 0.000714f

#if !defined(__CUDACC__)

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

enum FloatMsSsimKey {
    FLOAT_MS_SSIM_KEY_MS_SSIM,
    FLOAT_MS_SSIM_KEY_L0, /* with enable_lcs: l0 .. l4, c0 .. c4, s0 .. s4 */
    FLOAT_MS_SSIM_KEY_COUNT = FLOAT_MS_SSIM_KEY_L0 + 3 * MS_SSIM_SCALES,
};

typedef struct FloatMsSsimState {
    /* options */
    bool enable_lcs;
    bool enable_db;
    bool clip_db;

    /* set by init (float_ms_ssim_setup) */
    unsigned bitdepth;
    int w[MS_SSIM_SCALES], h[MS_SSIM_SCALES];
    double max_db;
    IqaDsp dsp;
    unsigned key[FLOAT_MS_SSIM_KEY_COUNT];
} FloatMsSsimState;

/* Sets the sizes of the scales and the dB cap of a state whose options are
 * set, for pictures of format f; the keys are not declared.  -EINVAL with
 * the reason in error (the message init logs) when a side is too small. */
int float_ms_ssim_setup(FloatMsSsimState *s, const QualeVideoFormat *f, char *error,
                        size_t error_size);

/* The frame's feature values from the means of the scales, in key order;
 * returns how many keys the state writes (1, or FLOAT_MS_SSIM_KEY_COUNT
 * with enable_lcs). */
unsigned float_ms_ssim_values(const FloatMsSsimState *s, const IqaSsimMeans m[MS_SSIM_SCALES],
                              double value[FLOAT_MS_SSIM_KEY_COUNT]);

/* Writes the frame's values from the means of the scales. */
int float_ms_ssim_write(const FloatMsSsimState *s, FeatureSink *sink, unsigned index,
                        const IqaSsimMeans m[MS_SSIM_SCALES]);

extern const Metric metric_float_ms_ssim;

#ifdef __cplusplus
}
#endif

#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_FLOAT_MS_SSIM_H */
