/* Integer motion on Vulkan: the device computes each row's SAD, the host
 * adds the rows and writes the score through the C reference's own step
 * (motion_write_sad); motion2 and motion3 come from the metric's flush. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/integer_motion.h"
#include "vulkan_twin.h"

extern const unsigned char vulkan_shader_integer_motion[];
extern const size_t vulkan_shader_integer_motion_size;

enum { SEGMENT = 256 };

/* Mirrors the push constants of integer_motion.comp. */
typedef struct MotionPush {
    uint32_t prev_offset, cur_offset, stride;
    int32_t width, height;
    uint32_t bitdepth, bytes_per_sample, out_offset;
} MotionPush;

typedef struct MotionTwin {
    const VulkanDevice *dev;
    const MotionState *metric;
    VulkanBuffer rows; /* host-visible: slots x height uint32 */
    VulkanPipeline pipeline;
} MotionTwin;

static bool motion_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    (void)state;
    return true;
}

static unsigned motion_vulkan_planes(const void *state)
{
    (void)state;
    return 1;
}

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
    int err = vulkan_buffer_create(dev, (VkDeviceSize)slots * format->height * sizeof(uint32_t),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                   true, &t->rows, "motion row sums", error, error_size);
    const VkBuffer buffers[2] = { ring, t->rows.buffer };
    if (!err)
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_integer_motion,
                                     vulkan_shader_integer_motion_size, buffers, 2, sizeof(MotionPush),
                                     &t->pipeline, "the motion shader", error, error_size);
    if (err) {
        motion_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int motion_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame, VkCommandBuffer cb,
                                char *error, size_t error_size)
{
    MotionTwin *t = twin;
    const MotionState *s = t->metric;
    /* Nothing to do where the C reference computes nothing, or refuses. */
    if (!motion_needs_sad(s, frame->index) || s->width < 3 || s->height < 3) return 0;
    const unsigned k = s->five_frame_window ? 1 : 0;
    if (!frame->has_prev[k]) {
        snprintf(error, error_size, "motion: frame %u has no earlier frame on the device", frame->index);
        return -EINVAL;
    }
    const VkDeviceSize row_bytes = (VkDeviceSize)s->height * sizeof(uint32_t);
    t->dev->api.vkCmdFillBuffer(cb, t->rows.buffer, slot * row_bytes, row_bytes, 0);
    const VkMemoryBarrier clear = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
    };
    t->dev->api.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &clear, 0, NULL, 0, NULL);
    const MotionPush push = {
        .prev_offset = (uint32_t)frame->prev_ref_offset[k],
        .cur_offset = (uint32_t)frame->ref_offset[0],
        .stride = frame->stride[0],
        .width = (int32_t)s->width,
        .height = (int32_t)s->height,
        .bitdepth = s->bitdepth,
        .bytes_per_sample = s->bitdepth > 8 ? 2 : 1,
        .out_offset = slot * s->height,
    };
    vulkan_dispatch(t->dev, cb, &t->pipeline, &push, (s->width + SEGMENT - 1) / SEGMENT, s->height);
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
        const uint32_t *rows = (const uint32_t *)t->rows.mapped + (size_t)slot * s->height;
        for (unsigned y = 0; y < s->height; y++) sad += rows[y];
    }
    return motion_write_sad(s, sink, frame->index, sad);
}

const VulkanTwin vulkan_twin_integer_motion = {
    .metric = &metric_integer_motion,
    .concurrent = true,
    .history = 2,
    .planes = motion_vulkan_planes,
    .supports = motion_vulkan_supports,
    .init = motion_vulkan_init,
    .record = motion_vulkan_record,
    .collect = motion_vulkan_collect,
    .close = motion_vulkan_close,
};
