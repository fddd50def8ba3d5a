/*
 * The CUDA twin of a metric: the kernels that compute on the device what
 * the metric's C reference computes on the host, and the host code that
 * turns their partial sums into the same feature values.
 *
 * A twin lives in src/cuda/<metric>_cuda.c with its kernels in
 * src/cuda/<metric>.cu, compiled by nvcc into a fatbin that the build
 * embeds; the backend loads each twin's module once.
 *
 * The backend owns the frame memory on the device: every plane a twin needs
 * is uploaded once per frame, into the slot of that frame; the reference
 * luma of the frames before it stays on the device for temporal twins.
 */
#ifndef QUALE_SRC_CUDA_CUDA_TWIN_H
#define QUALE_SRC_CUDA_CUDA_TWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_plan.h"
#include "cuda_primitives.h"
#include "metric.h"

typedef struct CudaTwin {
    const Metric *metric;
    const unsigned char *module_image; /* the embedded fatbin */
    /* It reads the previous distorted lumas too, as many as the metric's
     * history (the backend keeps that many reference lumas for every
     * temporal twin; the planes come from metric_planes()). */
    bool dist_history;

    /* Whether the twin covers the metric with these options (NULL: every
     * option the metric has). */
    bool (*supports)(const void *metric_state);

    /* Its work as a plan (cuda_plan.h), run by cuda_plan.c:
     * plan() describes it for a run (errors name what the format lacks),
     * setup_step() the steps that fill the constants (NULL: none), step()
     * a frame's launches, collect() the frame's values from the read-back
     * bytes. */
    int (*plan)(const void *metric_state, const QualeVideoFormat *format, CudaPlan *plan,
                char *error, size_t error_size);
    void (*setup_step)(const CudaPlan *plan, unsigned index, const CudaPlanMemory *memory,
                       CudaStep *step);
    void (*step)(const CudaPlan *plan, unsigned index, const CudaPlanMemory *memory,
                 CudaStep *step);
    int (*collect)(const CudaPlan *plan, const void *readback, const MetricFrame *frame,
                   FeatureSink *sink);

} CudaTwin;

/* The fields a twin names after its metric's stem (one metric, one stem):
 * the metric metric_<stem>, the kernels' module cuda_module_<stem>, and the
 * twin's own functions <stem>_cuda_twin_plan, <stem>_cuda_twin_step and
 * <stem>_cuda_twin_collect ("twin" keeps them apart from the kernels'
 * launch helpers, <stem>_cuda_step, that the host tests call).  A twin's
 * initializer adds what it has besides (supports, setup_step,
 * dist_history):
 *     const CudaTwin cuda_twin_psnr = { CUDA_TWIN_OF(psnr) };           */
#define CUDA_TWIN_OF(stem)                                                         \
    .metric = &metric_##stem, .module_image = cuda_module_##stem,                   \
    .plan = stem##_cuda_twin_plan, .step = stem##_cuda_twin_step,                   \
    .collect = stem##_cuda_twin_collect

/* A twin's plan run by the executor (cuda_plan.c): the backend's four calls. */
int cuda_twin_init(const CudaTwin *twin, const CudaDevice *dev, CUmodule module,
                   const void *metric_state, const QualeVideoFormat *format, unsigned slots,
                   void **run, char *error, size_t error_size);
int cuda_twin_enqueue(const CudaTwin *twin, void *run, unsigned slot, const CudaFrame *frame,
                      CUstream stream, char *error, size_t error_size);
int cuda_twin_collect(const CudaTwin *twin, void *run, unsigned slot, const MetricFrame *frame,
                      FeatureSink *sink);
void cuda_twin_close(const CudaTwin *twin, void *run);

/* Every twin this build has (src/cuda/cuda_twins.c). */
extern const CudaTwin *const cuda_twins[];

#endif /* QUALE_SRC_CUDA_CUDA_TWIN_H */
