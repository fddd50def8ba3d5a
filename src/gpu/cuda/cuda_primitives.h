/*
 * The CUDA primitives (cuda_primitives.c): a device, memory, kernels,
 * launches, readbacks and the launch arithmetic every twin uses.  Twins
 * and the backend use them; nothing here knows of metrics or frames.
 */
#ifndef QUALE_SRC_CUDA_CUDA_PRIMITIVES_H
#define QUALE_SRC_CUDA_CUDA_PRIMITIVES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_api.h"

/* In a function with `char *error, size_t error_size`: a failed call
 * writes "<what> failed: <reason>" and returns -ENOMEM or -EIO. */
#define CU_TRY(dev, call, what)                                                      \
    do {                                                                             \
        const CUresult cu_result_ = (call);                                          \
        if (cu_result_ != CUDA_SUCCESS) {                                            \
            snprintf(error, error_size, "%s failed: %s", (what),                    \
                     cuda_error_text(&(dev)->api, cu_result_));                      \
            return cu_result_ == CUDA_ERROR_OUT_OF_MEMORY ? -ENOMEM : -EIO;          \
        }                                                                            \
    } while (0)

typedef struct CudaDevice {
    CudaApi api;
    CUdevice device;
    CUcontext context;
    bool external; /* the caller's context, not the device's primary one */
    int multiprocessors;
    char name[128];
} CudaDevice;

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
    return n < CUDA_MAX_GRID_Y ? n : (unsigned)CUDA_MAX_GRID_Y;
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

#endif /* QUALE_SRC_CUDA_CUDA_PRIMITIVES_H */
