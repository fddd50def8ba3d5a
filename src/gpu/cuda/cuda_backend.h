/*
 * The CUDA backend over a runtime: CUDA's driver (gpu_cuda_ops, in
 * cuda_backend.c) or HIP's runtime through the same table of functions
 * (gpu_hip_ops, src/gpu/hip/hip_backend.c), with the same kernel sources
 * built for each.  What the HIP backend takes from the CUDA one.
 */
#ifndef QUALE_SRC_GPU_CUDA_CUDA_BACKEND_H
#define QUALE_SRC_GPU_CUDA_CUDA_BACKEND_H

#include <pthread.h>
#include <stdbool.h>

#include "cuda_api.h"
#include "gpu/gpu.h"

/* A runtime's library is loaded once per process and kept (as the CUDA
 * runtime does): loading and unloading it with every context costs time
 * and, with some drivers, static TLS that a process runs out of.  A
 * failure is remembered and repeated. */
typedef struct CudaRuntime {
    const char *name; /* in messages: "CUDA", "HIP" */
    enum QualeBackend kind;
    int (*load)(CudaApi *api, char *error, size_t error_size);
    /* The runtime's image of a kernel module from the CUDA fatbin's (NULL:
     * the fatbin itself); NULL where this build has none. */
    const unsigned char *(*module_image)(const unsigned char *cuda_image);
    pthread_mutex_t lock;
    bool tried;
    int status;
    char error[512];
    CudaApi api;
} CudaRuntime;

int cuda_backend_list_devices(CudaRuntime *rt, QualeDeviceInfo *devices, unsigned max,
                              unsigned *count, char *error, size_t error_size);
/* Whether the build has a twin of the metric with kernels for the runtime. */
bool cuda_backend_twin_built(const CudaRuntime *rt, const Metric *metric);
/* Opens the device (external: a context of the caller's, a CUcontext;
 * else ordinal's primary context). */
int cuda_backend_open(const LogSink *log, CudaRuntime *rt, int ordinal, void *external,
                      GpuBackend **out, char *error, size_t error_size);

/* The operations that are the same over either runtime. */
void cuda_describe(const GpuBackend *gpu, QualeDeviceInfo *info);
void cuda_close(GpuBackend *gpu);
const PictureAllocator *cuda_host_allocator(const GpuBackend *gpu);
const PictureAllocator *cuda_device_allocator(GpuBackend *gpu);
int cuda_download(GpuBackend *gpu, QualePicture *host, const QualePicture *device, char *error,
                  size_t error_size);
bool cuda_has_twin(const GpuBackend *gpu, const Metric *metric, const void *state);
int cuda_start(GpuBackend *gpu, const QualeVideoFormat *format, const GpuTwinRequest *twins,
               unsigned twin_count, unsigned *slots, char *error, size_t error_size);
int cuda_submit(GpuBackend *gpu, unsigned slot, const MetricFrame *frame);
int cuda_complete(GpuBackend *gpu, unsigned slot, const MetricFrame *frame);

#endif /* QUALE_SRC_GPU_CUDA_CUDA_BACKEND_H */
