/* The CUDA backend of a build without nvcc: it says so when asked for. */
#include "gpu.h"

const GpuOps gpu_cuda_ops = {
    .kind = QUALE_BACKEND_CUDA,
    .unavailable = "this build of quale has no CUDA backend (nvcc was not found when it was built)",
};
