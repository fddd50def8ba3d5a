/* float_psnr on Vulkan: the device sums the frame's noise as an exact
 * integer (float_psnr.comp), in per-workgroup partials; the host adds them
 * and finishes through the C reference's own steps (float_psnr_noise,
 * float_psnr_write of src/metrics/float_psnr.h), as the CUDA twin does.
 * The rest of the twin is picture_float_vulkan.h's. */
#include "metrics/float_psnr/float_psnr.h"
#include "metrics/common/vulkan/picture_float_vulkan.h"

VULKAN_SHADER(float_psnr);

static int float_psnr_vulkan_plan(const VulkanDevice *dev, const void *state,
                                  const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                                  size_t error_size)
{
    /* one sum per workgroup */
    const LumaSumsShader shader = { vulkan_shader_float_psnr, vulkan_shader_float_psnr_size,
                                    "float_psnr's shader", 1, 1 };
    const FloatPsnrState *s = state;
    return luma_sums_plan(&shader, s->exact_sums, s->scaler, format, plan);
}

static int float_psnr_vulkan_collect(const VulkanPlan *plan, const void *results,
                                     const MetricFrame *frame, FeatureSink *sink)
{
    const FloatPsnrState *s = plan->state;
    const uint64_t units = luma_sums_total(results, 0, luma_sums_groups(plan));
    return float_psnr_write(s, sink, frame, float_psnr_noise(s, units));
}

/* its round is the shared shader's (picture_float_vulkan.h) */
const VulkanTwin vulkan_twin_float_psnr = {
    .metric = &metric_float_psnr, .plan = float_psnr_vulkan_plan, .round = luma_sums_round,
    .collect = float_psnr_vulkan_collect, .concurrent = true, /* its only buffer is per slot */
};
