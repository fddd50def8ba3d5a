/*
 * The HIP backend: the CUDA backend's code and kernel sources over HIP's
 * runtime (hip_api.c, a table of CUDA's driver functions), with the
 * kernels built for HIP (hip_modules.c: each CUDA image's HIP twin).
 * Decoded frames (NVDEC) and a caller's own contexts are CUDA's alone.
 */
#include "gpu/cuda/cuda_backend.h"
#include "gpu/cuda/kernel_images.h"
#include "hip_api.h"

static CudaRuntime hip_runtime = { .name = "HIP", .kind = QUALE_BACKEND_HIP, .load = hip_api_load,
                                   .module_image = hip_module_for,
                                   .lock = PTHREAD_MUTEX_INITIALIZER };

static int hip_list_devices(QualeDeviceInfo *devices, unsigned max, unsigned *count,
                            char *error, size_t error_size)
{
    return cuda_backend_list_devices(&hip_runtime, devices, max, count, error, error_size);
}

static bool hip_twin_built(const Metric *metric)
{
    return cuda_backend_twin_built(&hip_runtime, metric);
}

static int hip_open(const LogSink *log, int device, GpuBackend **out, char *error,
                    size_t error_size)
{
    return cuda_backend_open(log, &hip_runtime, device, NULL, out, error, error_size);
}

const GpuOps gpu_hip_ops = {
    .kind = QUALE_BACKEND_HIP,
    .device = { CUDA_BACKEND_DEVICE_OPS, .list_devices = hip_list_devices, .open = hip_open },
    .twins = CUDA_BACKEND_TWIN_OPS(hip_twin_built),
};
