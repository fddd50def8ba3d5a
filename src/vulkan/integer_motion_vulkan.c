/* Integer motion on Vulkan: the device computes the SAD of each segment of
 * each row, the host adds them (a row's modulo 2^32, as the C reference's
 * row sum wraps) and writes the score through the C reference's own step
 * (motion_write_sad); motion2 and motion3 come from the metric's flush. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/integer_motion.h"
#include "vulkan_twin.h"

extern const unsigned char vulkan_shader_integer_motion[];
extern const size_t vulkan_shader_integer_motion_size;

enum { OUTPUTS = 252 }; /* integer_motion.comp: columns per workgroup */

/* Mirrors the push constants of integer_motion.comp. */
typedef struct MotionPush {
    uint32_t prev_offset, cur_offset, stride; /* words */
    int32_t width, height;
    uint32_t bitdepth, out_offset;
} MotionPush;

typedef struct MotionTwin {
    const VulkanDevice *dev;
    const MotionState *metric;
    unsigned groups;   /* workgroups (segments) a row */
    VulkanBuffer rows; /* host-visible: slots x height x groups uint32 */
    VulkanPipeline pipeline;
} MotionTwin;

static void motion_vulkan_close(void *twin)
{
    MotionTwin *t = twin;
    if (!t) return;
    vulkan_pipeline_destroy(t->dev, &t->pipeline);
    vulkan_buffer_destroy(t->dev, &t->rows);
    free(t);
}

static int motion_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                              const void *metric_state, const QualeVideoFormat *format, unsigned slots,
                              void **out, char *error, size_t error_size)
{
    (void)frames;
    MotionTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->groups = (format->width + OUTPUTS - 1) / OUTPUTS;
    int err = vulkan_buffer_create(dev, (VkDeviceSize)slots * format->height * t->groups * sizeof(uint32_t),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->rows,
                                   "motion row sums", error, error_size);
    const VkBuffer buffers[2] = { ring, t->rows.buffer };
    const uint32_t bytes_per_sample = t->metric->bitdepth > 8 ? 2 : 1;
    const VulkanPipelineInfo info = {
        .spirv = (const uint32_t *)vulkan_shader_integer_motion,
        .spirv_size = vulkan_shader_integer_motion_size,
        .constants = &bytes_per_sample, .constant_count = 1,
        .buffers = buffers, .bindings = 2, .sets = 1,
        .push = VULKAN_PUSH(MotionPush, prev_offset, cur_offset, stride, width, height, bitdepth, out_offset), .what = "the motion shader",
    };
    if (!err) err = vulkan_pipeline_create_ex(dev, &info, &t->pipeline, error, error_size);
    if (err) {
        motion_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

/* One round: a single dispatch. */
static int motion_vulkan_record_round(void *twin, unsigned round, unsigned slot,
                                      const VulkanFrame *frame, VkCommandBuffer cb, char *error,
                                      size_t error_size)
{
    (void)round;
    MotionTwin *t = twin;
    const MotionState *s = t->metric;
    /* Nothing to do where the C reference computes nothing, or refuses. */
    if (!motion_needs_sad(s, frame->index) || s->width < 3 || s->height < 3) return 0;
    const unsigned k = s->five_frame_window ? 1 : 0;
    if (!frame->has_prev[k]) {
        snprintf(error, error_size, "motion: frame %u has no earlier frame on the device", frame->index);
        return -EINVAL;
    }
    /* Planes and rows start on 64-byte boundaries: offsets in words. */
    const MotionPush push = {
        .prev_offset = (uint32_t)(frame->prev_ref_offset[k] / 4),
        .cur_offset = (uint32_t)(frame->ref_offset[0] / 4),
        .stride = frame->stride[0] / 4,
        .width = (int32_t)s->width,
        .height = (int32_t)s->height,
        .bitdepth = s->bitdepth,
        .out_offset = slot * s->height * t->groups,
    };
    vulkan_dispatch(t->dev, cb, &t->pipeline, &push, t->groups, s->height);
    return 0;
}

static int motion_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink)
{
    MotionTwin *t = twin;
    const MotionState *s = t->metric;
    uint64_t sad = 0;
    if (motion_needs_sad(s, frame->index)) {
        int err = motion_check_size(s, sink);
        if (err) return err;
        const uint32_t *part = (const uint32_t *)t->rows.mapped + (size_t)slot * s->height * t->groups;
        for (unsigned y = 0; y < s->height; y++) {
            uint32_t row = 0;
            for (unsigned g = 0; g < t->groups; g++) row += part[(size_t)y * t->groups + g];
            sad += row;
        }
    }
    return motion_write_sad(s, sink, frame->index, sad);
}

const VulkanTwin vulkan_twin_integer_motion = {
    .metric = &metric_integer_motion,
    .concurrent = true, /* its only buffers are per slot */
    .init = motion_vulkan_init,
    .record_round = motion_vulkan_record_round,
    .collect = motion_vulkan_collect,
    .close = motion_vulkan_close,
};
