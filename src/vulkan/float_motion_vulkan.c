/* float_motion on Vulkan: the device blurs the reference lumas of frames
 * i - 2 .. i where the backend's ring keeps them and sums each row's SADs
 * (float_motion.comp); the host adds the rows' float sums in row order and
 * writes the frame's keys through the C reference's float_motion_put_rows()
 * (src/metrics/float_motion.h), which remembers the score for the metric's
 * own flush() (the last frame's motion2 and motion3), as the CUDA twin
 * does.  Frames the reference refuses (a picture smaller than the blur)
 * fail in collect() with its message.
 *
 * motion_add_scale1 and motion_add_uv are not on the device: the twin
 * declines them and the metric stays on the CPU. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/float_motion.h"
#include "picture_float_vulkan.h"

extern const unsigned char vulkan_shader_float_motion[];
extern const size_t vulkan_shader_float_motion_size;

/* ROWS of float_motion.comp: rows per workgroup. */
enum { ROWS_PER_GROUP = 2 };

/* Mirrors the push constants of float_motion.comp. */
typedef struct FloatMotionPush {
    uint32_t pic_offset[3], stride;
    int32_t width, height, taps, pictures;
    uint32_t bytes_per_sample;
    float inv_scaler;
    float filter[FLOAT_MOTION_MAX_TAPS];
    uint32_t out_offset;
} FloatMotionPush;

typedef struct FloatMotionTwin {
    const VulkanDevice *dev;
    FloatMotionState *metric; /* float_motion_put() remembers the last score */
    unsigned bitdepth;
    size_t slot_floats;       /* 2 x height */
    VulkanBuffer row_sums;    /* host-visible: slots x slot_floats */
    VulkanPipeline pipeline;
} FloatMotionTwin;

static bool float_motion_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    (void)dev;
    const FloatMotionState *s = state;
    return !s->add_scale1 && !s->add_uv && (s->taps == 5 || s->taps == 3);
}

static void float_motion_vulkan_close(void *twin)
{
    FloatMotionTwin *t = twin;
    if (!t) return;
    vulkan_pipeline_destroy(t->dev, &t->pipeline);
    vulkan_buffer_destroy(t->dev, &t->row_sums);
    free(t);
}

static int float_motion_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                    const void *metric_state, const QualeVideoFormat *format,
                                    unsigned slots, void **out, char *error, size_t error_size)
{
    (void)frames;
    FloatMotionTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    /* float_motion_put() writes the state's atomic last score, as the
     * reference's extract() does */
    t->metric = (FloatMotionState *)metric_state;
    t->bitdepth = format->bitdepth;
    t->slot_floats = 2 * (size_t)format->height;
    int err = vulkan_buffer_create(dev, (VkDeviceSize)slots * t->slot_floats * sizeof(float),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->row_sums,
                                   "float motion row sums", error, error_size);
    const VkBuffer buffers[2] = { ring, t->row_sums.buffer };
    if (!err)
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_float_motion,
                                     vulkan_shader_float_motion_size, buffers, 2,
                                     VULKAN_PUSH(FloatMotionPush, pic_offset, stride, width, height, taps, pictures, bytes_per_sample, inv_scaler, filter, out_offset), &t->pipeline,
                                     "float motion's shader", error, error_size);
    if (err) {
        float_motion_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int float_motion_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame,
                                      VkCommandBuffer cb, char *error, size_t error_size)
{
    FloatMotionTwin *t = twin;
    const FloatMotionState *s = t->metric;
    const unsigned index = frame->index;
    /* Nothing to compute where the C reference computes nothing, or
     * refuses (collect() says why). */
    if (!float_motion_scored(s, index) || s->w <= s->taps / 2 || s->h <= s->taps / 2) return 0;
    if (!frame->has_prev[0] || (index >= 2 && !frame->has_prev[1])) {
        snprintf(error, error_size, "float motion: frame %u has no earlier frames on the device",
                 index);
        return -EINVAL;
    }
    FloatMotionPush push = {
        .pic_offset = { (uint32_t)frame->prev_ref_offset[0], (uint32_t)frame->ref_offset[0],
                        index >= 2 ? (uint32_t)frame->prev_ref_offset[1] : 0 },
        .stride = frame->stride[0],
        .width = s->w,
        .height = s->h,
        .taps = s->taps,
        .pictures = index >= 2 ? 3 : 2,
        .bytes_per_sample = t->bitdepth > 8 ? 2 : 1,
        /* exact: a power of two */
        .inv_scaler = 1.0f / (float)(1u << (t->bitdepth - 8)),
        .out_offset = (uint32_t)(slot * t->slot_floats),
    };
    memcpy(push.filter, s->filter, (size_t)s->taps * sizeof(float));
    vulkan_dispatch(t->dev, cb, &t->pipeline, &push,
                    (unsigned)(s->h + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP, 1);
    return 0;
}

static int float_motion_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                       FeatureSink *sink)
{
    FloatMotionTwin *t = twin;
    return float_motion_put_rows(t->metric, sink, frame->index,
                                 (const float *)t->row_sums.mapped + (size_t)slot * t->slot_floats);
}

const VulkanTwin vulkan_twin_float_motion = {
    .metric = &metric_float_motion,
    .concurrent = true, /* its only buffers are per slot */
    .supports = float_motion_vulkan_supports,
    .init = float_motion_vulkan_init,
    .record = float_motion_vulkan_record,
    .collect_own = float_motion_vulkan_collect,
    .close = float_motion_vulkan_close,
};
