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
#include <string.h>

#include "metrics/float_motion/float_motion.h"
#include "metrics/common/vulkan/picture_float_vulkan.h"

VULKAN_SHADER(float_motion);

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

static bool float_motion_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    (void)dev;
    const FloatMotionState *s = state;
    return !s->add_scale1 && !s->add_uv && (s->taps == 5 || s->taps == 3);
}

/* The plan's buffers. */
enum { RESULTS, BUFFERS };


/* One pipeline over the ring and the results: per slot the rows' two sums,
 * 2 x height floats. */
static int float_motion_vulkan_plan(const VulkanDevice *dev, const void *state,
                                    const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                                    size_t error_size)
{
    const VulkanPlanPipeline shader = {
        VULKAN_SPIRV(float_motion), .what = "float motion's shader",
        .push = *VULKAN_PUSH(FloatMotionPush, pic_offset, stride, width, height, taps, pictures,
                             bytes_per_sample, inv_scaler, filter, out_offset),
        VULKAN_BINDINGS(VULKAN_BIND_RING, RESULTS),
    };
    return vulkan_plan_one_shader(plan, &shader, RESULTS, "float motion row sums",
                                  2 * (size_t)format->height * sizeof(float), BUFFERS);
}

static int float_motion_vulkan_round(const VulkanPlan *plan, unsigned round,
                                     const VulkanPlanMemory *memory, VulkanStep *steps,
                                     char *error, size_t error_size)
{
    const FloatMotionState *s = plan->state;
    const VulkanFrame *frame = memory->frame;
    const unsigned index = frame->index, bitdepth = plan->format.bitdepth;
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
        .bytes_per_sample = bitdepth > 8 ? 2 : 1,
        /* exact: a power of two */
        .inv_scaler = 1.0f / (float)(1u << (bitdepth - 8)),
        .out_offset = (uint32_t)(memory->offset[RESULTS] / sizeof(float)),
    };
    memcpy(push.filter, s->filter, (size_t)s->taps * sizeof(float));
    VULKAN_STEP_SET(&steps[0], 0, (unsigned)(s->h + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP, 1,
                    push);
    return 1;
}

static int float_motion_vulkan_collect(const VulkanPlan *plan, const void *results,
                                       const MetricFrame *frame, FeatureSink *sink)
{
    /* float_motion_put() remembers the last score in the state, as the
     * reference's extract() does */
    return float_motion_put_rows((FloatMotionState *)plan->state, sink, frame->index, results);
}

const VulkanTwin vulkan_twin_float_motion = {
    VULKAN_TWIN_OF(float_motion),
    .concurrent = true, /* its only buffer is per slot */
    .supports = float_motion_vulkan_supports,
};
