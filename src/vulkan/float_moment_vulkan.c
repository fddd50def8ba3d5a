/* float_moment on Vulkan: the device sums each picture's samples and
 * squares as exact integers (float_moment.comp), in per-workgroup
 * partials; the host adds them and finishes through the C reference's own
 * steps (float_moment_sums, float_moment_write of
 * src/metrics/float_moment.h), as the CUDA twin does.  The rest of the
 * twin is picture_float_vulkan.h's. */
#include "metrics/float_moment.h"
#include "picture_float_vulkan.h"

extern const unsigned char vulkan_shader_float_moment[];
extern const size_t vulkan_shader_float_moment_size;

static int float_moment_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                    const void *metric_state, const QualeVideoFormat *format,
                                    unsigned slots, void **out, char *error, size_t error_size)
{
    /* a pass per picture, two sums each: [picture][first, second][workgroup] */
    const LumaSumsShader shader = { vulkan_shader_float_moment, vulkan_shader_float_moment_size,
                                    "float_moment's shader", 2, 4 };
    const FloatMomentState *s = metric_state;
    return luma_sums_new(&shader, dev, ring, frames, s, s->exact_sums, s->scaler, format, slots,
                         out, error, error_size);
}

static int float_moment_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                       FeatureSink *sink)
{
    const LumaSums *t = twin;
    const FloatMomentState *s = t->metric;
    const unsigned groups = t->groups;
    FloatMomentSums sums[2];
    for (unsigned p = 0; p < 2; p++) {
        const uint64_t first = luma_sums_total(t, slot, (2 * p) * groups, groups);
        const uint64_t second = luma_sums_total(t, slot, (2 * p + 1) * groups, groups);
        sums[p] = float_moment_sums(s, first, second);
    }
    return float_moment_write(s, sink, frame, sums[0], sums[1]);
}

const VulkanTwin vulkan_twin_float_moment = {
    .metric = &metric_float_moment,
    .concurrent = true, /* its only buffers are per slot */
    .init = float_moment_vulkan_init,
    .record = luma_sums_record,
    .collect = float_moment_vulkan_collect,
    .close = luma_sums_close,
};
