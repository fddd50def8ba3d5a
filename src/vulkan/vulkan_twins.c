/* Every Vulkan twin of this build. */
#include "vulkan_twin.h"

extern const VulkanTwin vulkan_twin_psnr;
extern const VulkanTwin vulkan_twin_integer_motion;

const VulkanTwin *const vulkan_twins[] = {
    &vulkan_twin_psnr,
    &vulkan_twin_integer_motion,
    NULL,
};
