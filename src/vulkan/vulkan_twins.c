/* Every Vulkan twin of this build. */
#include "vulkan_twin.h"

extern const VulkanTwin vulkan_twin_psnr;
extern const VulkanTwin vulkan_twin_integer_motion;
extern const VulkanTwin vulkan_twin_integer_vif;
extern const VulkanTwin vulkan_twin_integer_adm;
extern const VulkanTwin vulkan_twin_float_vif;
extern const VulkanTwin vulkan_twin_float_adm;

const VulkanTwin *const vulkan_twins[] = {
    &vulkan_twin_psnr,
    &vulkan_twin_integer_motion,
    &vulkan_twin_integer_vif,
    &vulkan_twin_integer_adm,
    &vulkan_twin_float_vif,
    &vulkan_twin_float_adm,
    NULL,
};
