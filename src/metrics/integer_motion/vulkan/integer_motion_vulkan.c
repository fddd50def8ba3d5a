/* Integer motion on Vulkan: the device computes the SAD of each segment of
 * each row, the host adds them (a row's modulo 2^32, as the C reference's
 * row sum wraps) and writes the score through the C reference's own step
 * (motion_write_sad); motion2 and motion3 come from the metric's flush. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "metrics/integer_motion/integer_motion.h"
#include "gpu/vulkan/vulkan_twin.h"

VULKAN_SHADER(integer_motion);

enum { OUTPUTS = 252 }; /* integer_motion.comp: columns per workgroup */

/* Mirrors the push constants of integer_motion.comp. */
typedef struct MotionPush {
    uint32_t prev_offset, cur_offset, stride; /* words */
    int32_t width, height;
    uint32_t bitdepth, out_offset;
} MotionPush;

static unsigned motion_groups(const VulkanPlan *plan)
{
    return (plan->format.width + OUTPUTS - 1) / OUTPUTS;
}

/* The plan's buffers. */
enum { RESULTS, BUFFERS };


/* One pipeline over the ring and the results: per slot a 32-bit sum per
 * segment of each row. */
static int integer_motion_vulkan_plan(const VulkanDevice *dev, const void *state,
                                      const QualeVideoFormat *format, VulkanPlan *plan,
                                      char *error, size_t error_size)
{
    const VulkanPlanPipeline shader = {
        VULKAN_SPIRV(integer_motion), .what = "the motion shader",
        .push = *VULKAN_PUSH(MotionPush, prev_offset, cur_offset, stride, width, height, bitdepth,
                             out_offset),
        VULKAN_BINDINGS(VULKAN_BIND_RING, RESULTS),
        .constant_count = 1,
        .constants = { format->bitdepth > 8 ? 2 : 1 }, /* bytes per sample */
    };
    return vulkan_plan_one_shader(plan, &shader, RESULTS, "motion row sums",
                                  (size_t)format->height * motion_groups(plan) * sizeof(uint32_t),
                                  BUFFERS);
}

static int integer_motion_vulkan_round(const VulkanPlan *plan, unsigned round,
                                       const VulkanPlanMemory *memory, VulkanStep *steps,
                                       char *error, size_t error_size)
{
    const MotionState *s = plan->state;
    const VulkanFrame *frame = memory->frame;
    /* Nothing to do where the C reference computes nothing, or refuses. */
    if (!motion_needs_sad(s, frame->index) || s->width < 3 || s->height < 3) return 0;
    const unsigned k = s->five_frame_window ? 1 : 0;
    if (!frame->has_prev[k]) {
        snprintf(error, error_size, "motion: frame %u has no earlier frame on the device",
                 frame->index);
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
        .out_offset = (uint32_t)(memory->offset[RESULTS] / sizeof(uint32_t)),
    };
    VULKAN_STEP_SET(&steps[0], 0, motion_groups(plan), s->height, push);
    return 1;
}

static int integer_motion_vulkan_collect(const VulkanPlan *plan, const void *results,
                                         const MetricFrame *frame, FeatureSink *sink)
{
    /* a partial per workgroup of each row */
    return motion_write_sad_partials(plan->state, sink, frame->index, results,
                                     motion_groups(plan));
}

const VulkanTwin vulkan_twin_integer_motion = {
    VULKAN_TWIN_OF(integer_motion),
    .first_round_cost = 8, /* 1080p, H200: 0.016 ms */
    .concurrent = true, /* its only buffer is per slot */
};
