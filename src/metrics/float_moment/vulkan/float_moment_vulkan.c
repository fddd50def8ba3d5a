/* float_moment on Vulkan: the device sums each picture's samples and
 * squares as exact integers (float_moment.comp), in per-workgroup
 * partials; the host adds them and finishes through the C reference's own
 * steps (float_moment_sums, float_moment_write of
 * src/metrics/float_moment.h), as the CUDA twin does.  The rest of the
 * twin is picture_float_vulkan.h's. */
#include "metrics/float_moment/float_moment.h"
#include "metrics/common/vulkan/picture_float_vulkan.h"

VULKAN_SHADER(float_moment);

static int float_moment_vulkan_plan(const VulkanDevice *dev, const void *state,
                                    const QualeVideoFormat *format, VulkanPlan *plan,
                                    char *error, size_t error_size)
{
    /* a pass per picture, two sums each: [picture][first, second][workgroup] */
    const LumaSumsShader shader = { vulkan_shader_float_moment, vulkan_shader_float_moment_size,
                                    "float_moment's shader", 2, 4 };
    const FloatMomentState *s = state;
    return luma_sums_plan(&shader, s->exact_sums, s->scaler, format, plan);
}

static int float_moment_vulkan_collect(const VulkanPlan *plan, const void *results,
                                       const MetricFrame *frame, FeatureSink *sink)
{
    const FloatMomentState *s = plan->state;
    const unsigned groups = luma_sums_groups(plan);
    FloatMomentSums sums[2];
    for (unsigned p = 0; p < 2; p++) {
        const uint64_t first = luma_sums_total(results, (2 * p) * groups, groups);
        const uint64_t second = luma_sums_total(results, (2 * p + 1) * groups, groups);
        sums[p] = float_moment_sums(s, first, second);
    }
    return float_moment_write(s, sink, frame, sums[0], sums[1]);
}

/* its round is the shared shader's (picture_float_vulkan.h) */
const VulkanTwin vulkan_twin_float_moment = {
    .metric = &metric_float_moment, .plan = float_moment_vulkan_plan, .round = luma_sums_round,
    .collect = float_moment_vulkan_collect, .concurrent = true, /* its only buffer is per slot */
};
