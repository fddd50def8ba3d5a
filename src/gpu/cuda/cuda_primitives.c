/*
 * The CUDA primitives the twins and the backend build on: device and
 * pinned memory (device allocations counted against
 * QUALE_CUDA_MEMORY_LIMIT), kernels from a module, launches and readbacks,
 * each checked with a message naming what failed.  The frame scheduler is
 * cuda_backend.c's.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_primitives.h"

/* QUALE_CUDA_MEMORY_LIMIT (bytes) caps what the backend allocates on the
 * device, so that running out of device memory can be tested. */
static size_t memory_limit(void)
{
    const char *text = getenv("QUALE_CUDA_MEMORY_LIMIT");
    return text && *text ? (size_t)strtoull(text, NULL, 0) : SIZE_MAX;
}

static _Atomic size_t device_bytes_allocated;

int cuda_alloc(const CudaDevice *dev, CUdeviceptr *p, size_t bytes, const char *what,
               char *error, size_t error_size)
{
    *p = 0;
    if (bytes == 0) bytes = 1;
    const size_t before = atomic_fetch_add(&device_bytes_allocated, bytes);
    if (before + bytes > memory_limit()) {
        atomic_fetch_sub(&device_bytes_allocated, bytes);
        snprintf(error, error_size, "out of device memory for %s (%zu bytes; "
                 "QUALE_CUDA_MEMORY_LIMIT allows %zu)", what, bytes, memory_limit());
        return -ENOMEM;
    }
    const CUresult r = dev->api.MemAlloc(p, bytes);
    if (r != CUDA_SUCCESS) {
        atomic_fetch_sub(&device_bytes_allocated, bytes);
        *p = 0;
        snprintf(error, error_size, "allocating %zu bytes of device memory for %s failed: %s",
                 bytes, what, cuda_error_text(&dev->api, r));
        return r == CUDA_ERROR_OUT_OF_MEMORY ? -ENOMEM : -EIO;
    }
    return 0;
}

void cuda_free(const CudaDevice *dev, CUdeviceptr p, size_t bytes)
{
    if (!p) return;
    dev->api.MemFree(p);
    atomic_fetch_sub(&device_bytes_allocated, bytes ? bytes : 1);
}

int cuda_alloc_host(const CudaDevice *dev, void **p, size_t bytes, const char *what,
                    char *error, size_t error_size)
{
    *p = NULL;
    const CUresult r = dev->api.MemHostAlloc(p, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS) {
        *p = NULL;
        snprintf(error, error_size, "allocating %zu bytes of pinned host memory for %s failed: %s",
                 bytes, what, cuda_error_text(&dev->api, r));
        return r == CUDA_ERROR_OUT_OF_MEMORY ? -ENOMEM : -EIO;
    }
    return 0;
}

int cuda_function(const CudaDevice *dev, CUmodule module, const char *name, CUfunction *f,
                  char *error, size_t error_size)
{
    CU_TRY(dev, dev->api.ModuleGetFunction(f, module, name), name);
    return 0;
}

int cuda_launch(const CudaDevice *dev, CUfunction f, const char *name, unsigned grid_x,
                unsigned grid_y, unsigned block_x, unsigned shared_bytes, CUstream stream,
                void **params, char *error, size_t error_size)
{
    return cuda_launch_3d(dev, f, name, grid_x, grid_y, 1, block_x, shared_bytes, stream, params,
                          error, error_size);
}

int cuda_launch_3d(const CudaDevice *dev, CUfunction f, const char *name, unsigned grid_x,
                   unsigned grid_y, unsigned grid_z, unsigned block_x, unsigned shared_bytes,
                   CUstream stream, void **params, char *error, size_t error_size)
{
    CU_TRY(dev, dev->api.LaunchKernel(f, grid_x, grid_y, grid_z, block_x, 1, 1, shared_bytes,
                                      stream, params, NULL),
           name);
    return 0;
}

int cuda_read_back(const CudaDevice *dev, void *host, CUdeviceptr src, size_t bytes,
                   CUstream stream, const char *what, char *error, size_t error_size)
{
    const CUresult r = dev->api.MemcpyDtoHAsync(host, src, bytes, stream);
    if (r != CUDA_SUCCESS) {
        snprintf(error, error_size, "reading back %s failed: %s", what,
                 cuda_error_text(&dev->api, r));
        return -EIO;
    }
    return 0;
}
