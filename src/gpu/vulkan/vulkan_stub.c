/* The Vulkan backend of a build without glslc or the Vulkan headers. */
#include "gpu/gpu.h"

const GpuOps gpu_vulkan_ops = {
    .kind = QUALE_BACKEND_VULKAN,
    .unavailable = "this build of quale has no Vulkan backend "
                   "(glslc or the Vulkan headers were missing when it was built)",
};
