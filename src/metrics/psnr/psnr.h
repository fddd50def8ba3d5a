/*
 * PSNR's state and the step from a plane's sum of squared errors to its
 * keys, shared by the C reference and its GPU twins.
 */
#ifndef QUALE_SRC_METRICS_PSNR_H
#define QUALE_SRC_METRICS_PSNR_H

#include <stdbool.h>
#include <stdint.h>

#include "metric.h"

typedef struct PsnrState {
    /* options */
    bool enable_chroma;
    bool enable_mse;
    bool enable_apsnr;
    bool reduced_hbd_peak;
    double min_sse;

    /* set by init */
    unsigned planes;
    uint32_t peak;
    double psnr_max[3];
    unsigned psnr_key[3], mse_key[3];

    /* aggregate PSNR over the whole run: exact integer sums, so the order
     * in which the workers add their frames does not matter */
    _Atomic uint64_t apsnr_sse[3];
    _Atomic uint64_t apsnr_pixels[3];
} PsnrState;

/* Writes psnr (and mse) of plane p of the frame from its exact SSE, and
 * adds it to the aggregate when enabled. */
int psnr_write_plane(const PsnrState *state, FeatureSink *sink, const MetricFrame *frame,
                     unsigned p, uint64_t sse);

extern const Metric metric_psnr;

#endif /* QUALE_SRC_METRICS_PSNR_H */
