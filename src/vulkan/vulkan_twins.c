/* Every Vulkan twin of this build. */
#include "vulkan_twin.h"

extern const VulkanTwin vulkan_twin_psnr;
extern const VulkanTwin vulkan_twin_integer_motion;
extern const VulkanTwin vulkan_twin_integer_vif;
extern const VulkanTwin vulkan_twin_integer_adm;
extern const VulkanTwin vulkan_twin_float_psnr;
extern const VulkanTwin vulkan_twin_float_moment;
extern const VulkanTwin vulkan_twin_float_ansnr;
extern const VulkanTwin vulkan_twin_float_motion;
extern const VulkanTwin vulkan_twin_float_ssim;
extern const VulkanTwin vulkan_twin_float_ms_ssim;
extern const VulkanTwin vulkan_twin_psnr_hvs;
extern const VulkanTwin vulkan_twin_ciede;
extern const VulkanTwin vulkan_twin_float_vif;
extern const VulkanTwin vulkan_twin_float_adm;
extern const VulkanTwin vulkan_twin_cambi;
extern const VulkanTwin vulkan_twin_speed_chroma;
extern const VulkanTwin vulkan_twin_speed_temporal;

const VulkanTwin *const vulkan_twins[] = {
    &vulkan_twin_psnr,
    &vulkan_twin_integer_motion,
    &vulkan_twin_integer_vif,
    &vulkan_twin_integer_adm,
    &vulkan_twin_float_psnr,
    &vulkan_twin_float_moment,
    &vulkan_twin_float_ansnr,
    &vulkan_twin_float_motion,
    &vulkan_twin_float_ssim,
    &vulkan_twin_float_ms_ssim,
    &vulkan_twin_psnr_hvs,
    &vulkan_twin_ciede,
    &vulkan_twin_float_vif,
    &vulkan_twin_float_adm,
    &vulkan_twin_cambi,
    &vulkan_twin_speed_chroma,
    &vulkan_twin_speed_temporal,
    NULL,
};
