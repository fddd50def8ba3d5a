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

#include "cuda_api.h"
#include "metric.h"

typedef struct CudaDevice {
    CudaApi api;
    CUdevice device;
    CUcontext context;
    bool external; /* the caller's context, not the device's primary one */
    int multiprocessors;
    char name[128];
} CudaDevice;

/* A frame on the device: plane p of the reference at ref[p], with the same
 * row stride (bytes) as the host picture; prev_ref[k] is the reference luma
 * of frame index - 1 - k (0 when there is none), prev_dist[k] the
 * distorted one's where a twin asked for them (dist_history). */
typedef struct CudaFrame {
    unsigned index;
    CUdeviceptr ref[3], dist[3];
    size_t stride[3];
    unsigned width[3], height[3];
    CUdeviceptr prev_ref[2], prev_dist[2];
} CudaFrame;

typedef struct CudaTwin {
    const Metric *metric;
    const unsigned char *module_image; /* the embedded fatbin */
    unsigned history;                  /* previous reference lumas it reads */
    bool dist_history;                 /* and the previous distorted lumas */

    /* The planes it reads under these options: bit p for plane p (NULL:
     * the luma alone). */
    unsigned (*planes)(const void *metric_state);

    /* Whether the twin covers the metric with these options (NULL: every
     * option the metric has). */
    bool (*supports)(const void *metric_state);

    /* Loads functions from the module and allocates per-slot buffers (device
     * partial sums and pinned readback).  Errors name what failed. */
    int (*init)(const CudaDevice *dev, CUmodule module, const void *metric_state,
                const QualeVideoFormat *format, unsigned slots, void **twin,
                char *error, size_t error_size);

    /* Queues the kernels and the readback of one frame on the slot's stream. */
    int (*enqueue)(void *twin, unsigned slot, const CudaFrame *frame, CUstream stream,
                   char *error, size_t error_size);

    /* After the stream finished: reduces the read-back partials and writes
     * the frame's feature values. */
    int (*collect)(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink);

    void (*close)(void *twin);
} CudaTwin;

/* Every twin this build has (src/cuda/cuda_twins.c). */
extern const CudaTwin *const cuda_twins[];

/* A launch, checked: on failure error names the kernel and the reason. */
int cuda_launch(const CudaDevice *dev, CUfunction f, const char *name, unsigned grid_x,
                unsigned grid_y, unsigned block_x, unsigned shared_bytes, CUstream stream,
                void **params, char *error, size_t error_size);

/* The same with a third grid dimension (a frame's pictures, say). */
int cuda_launch_3d(const CudaDevice *dev, CUfunction f, const char *name, unsigned grid_x,
                   unsigned grid_y, unsigned grid_z, unsigned block_x, unsigned shared_bytes,
                   CUstream stream, void **params, char *error, size_t error_size);

/* A copy of `bytes` from the device to pinned host memory, queued on
 * stream, checked: on failure error says "reading back <what> failed". */
int cuda_read_back(const CudaDevice *dev, void *host, CUdeviceptr src, size_t bytes,
                   CUstream stream, const char *what, char *error, size_t error_size);

/* Device and pinned allocations, checked, with a message naming what for. */
int cuda_alloc(const CudaDevice *dev, CUdeviceptr *p, size_t bytes, const char *what,
               char *error, size_t error_size);
void cuda_free(const CudaDevice *dev, CUdeviceptr p, size_t bytes);
int cuda_alloc_host(const CudaDevice *dev, void **p, size_t bytes, const char *what,
                    char *error, size_t error_size);
int cuda_function(const CudaDevice *dev, CUmodule module, const char *name, CUfunction *f,
                  char *error, size_t error_size);

/* Layout and launch arithmetic every twin uses: n rounded up to a multiple
 * of a, the blocks that cover n items, and a grid's y extent (CUDA's
 * limit; kernels step through the rows beyond it). */
enum { CUDA_MAX_GRID_Y = 65535 };

static inline size_t cuda_align_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

static inline unsigned cuda_blocks_for(size_t n, unsigned per_block)
{
    return (unsigned)((n + per_block - 1) / per_block);
}

static inline unsigned cuda_grid_rows(unsigned n)
{
    return n < CUDA_MAX_GRID_Y ? n : CUDA_MAX_GRID_Y;
}

/*
 * The float twins' rows kernels (float_vif, float_adm, float_motion) give a
 * block one row and walk it in segments, a barrier between the phases of
 * each: as few segments as the shared memory allows (at most `max` columns,
 * the twin's 48 KiB budget), of even width.  Fewer segments put more of a
 * row's loads in flight at once; one row per block keeps every block short.
 */
static inline unsigned cuda_row_segment(unsigned width, unsigned max)
{
    const unsigned segments = width ? (width + max - 1) / max : 1;
    const unsigned segment = (width + segments - 1) / segments;
    return segment ? segment : 1;
}

#endif /* QUALE_SRC_CUDA_CUDA_TWIN_H */
