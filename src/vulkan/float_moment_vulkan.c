/* float_moment on Vulkan: the device sums each picture's samples and
 * squares as exact integers (float_moment.comp), in per-workgroup
 * partials; the host adds them and finishes through the C reference's own
 * steps (float_moment_sums, float_moment_write of
 * src/metrics/float_moment.h), as the CUDA twin does. */
#include <errno.h>
#include <stdlib.h>

#include "metrics/float_moment.h"
#include "picture_float_vulkan.h"

extern const unsigned char vulkan_shader_float_moment[];
extern const size_t vulkan_shader_float_moment_size;

typedef struct FloatMomentTwin {
    const FloatMomentState *metric;
    LumaSums sums; /* [picture][first, second][workgroup] */
} FloatMomentTwin;

static bool float_moment_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    (void)dev;
    (void)state; /* no options; every format the C reference takes */
    return true;
}

static unsigned float_moment_vulkan_planes(const void *state)
{
    (void)state;
    return 1;
}

static void float_moment_vulkan_close(void *twin)
{
    FloatMomentTwin *t = twin;
    if (!t) return;
    luma_sums_close(&t->sums);
    free(t);
}

static int float_moment_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                    const void *metric_state, const QualeVideoFormat *format,
                                    unsigned slots, void **out, char *error, size_t error_size)
{
    FloatMomentTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->metric = metric_state;
    /* a pass per picture, two sums each */
    int err = luma_sums_init(&t->sums, dev, ring, frames, vulkan_shader_float_moment,
                             vulkan_shader_float_moment_size, format, t->metric->exact_sums,
                             t->metric->scaler, 2, 4, slots, "float_moment's shader", error,
                             error_size);
    if (err) {
        free(t);
        return err;
    }
    *out = t;
    return 0;
}

static int float_moment_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame,
                                      VkCommandBuffer cb, char *error, size_t error_size)
{
    (void)error;
    (void)error_size;
    FloatMomentTwin *t = twin;
    luma_sums_record(&t->sums, slot, frame, cb);
    return 0;
}

static int float_moment_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                       FeatureSink *sink)
{
    FloatMomentTwin *t = twin;
    const unsigned groups = t->sums.groups;
    FloatMomentSums sums[2];
    for (unsigned p = 0; p < 2; p++) {
        const uint64_t first = luma_sums_total(&t->sums, slot, (2 * p) * groups, groups);
        const uint64_t second = luma_sums_total(&t->sums, slot, (2 * p + 1) * groups, groups);
        sums[p] = float_moment_sums(t->metric, first, second);
    }
    return float_moment_write(t->metric, sink, frame, sums[0], sums[1]);
}

const VulkanTwin vulkan_twin_float_moment = {
    .metric = &metric_float_moment,
    .planes = float_moment_vulkan_planes,
    .supports = float_moment_vulkan_supports,
    .init = float_moment_vulkan_init,
    .record = float_moment_vulkan_record,
    .collect = float_moment_vulkan_collect,
    .close = float_moment_vulkan_close,
};
