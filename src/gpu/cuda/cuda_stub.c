/* The CUDA backend of a build without nvcc: it says so when asked for. */
#include "gpu/gpu.h"

const GpuOps gpu_cuda_ops = {
    .kind = QUALE_BACKEND_CUDA,
    .unavailable = "this build of quale has no CUDA backend (nvcc was not found when it was built)",
};

const GpuOps gpu_hip_ops = {
    .kind = QUALE_BACKEND_HIP,
    .unavailable = "this build of quale has no HIP backend (it builds on the CUDA backend, and "
                   "nvcc was not found when it was built)",
};
