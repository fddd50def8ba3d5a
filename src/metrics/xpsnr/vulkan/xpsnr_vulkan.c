/* XPSNR on Vulkan: the device makes a frame's integer block sums
 * (xpsnr.comp), the host its values with the C reference's own finish
 * (xpsnr_finish), so the twin's values are the reference's to the bit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/xpsnr/xpsnr.h"
#include "gpu/vulkan/vulkan_twin.h"

VULKAN_SHADER(xpsnr);

/* Mirrors the push constants of xpsnr.comp. */
typedef struct XpsnrPush {
    uint32_t ref_offset[3], dist_offset[3], stride[3], width[3], height[3];
    uint32_t prev_offset[2], flags, block, blocks_x, step, luma_blocks, out_offset;
} XpsnrPush;

enum { PREV_0 = 1, PREV_1 = 2, SECOND_ORDER = 4, TWO_BYTES = 8 };

/* The plan's buffers. */
enum { RESULTS, BUFFERS };

static unsigned luma_blocks(const XpsnrState *s)
{
    return s->blocks_x * s->blocks_y;
}

static bool xpsnr_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    (void)dev;
    return xpsnr_twin_supports(state);
}

/* One pipeline over the ring, the frames and the sums: per slot three
 * 64-bit sums per luma block, then one per chroma block of each chroma
 * plane. */
static int xpsnr_vulkan_plan(const VulkanDevice *dev, const void *state,
                             const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                             size_t error_size)
{
    const XpsnrState *s = state;
    const VulkanPlanPipeline shader = {
        VULKAN_SPIRV(xpsnr), .what = "the XPSNR shader",
        .push = *VULKAN_PUSH(XpsnrPush, ref_offset, dist_offset, stride, width, height,
                            prev_offset, flags, block, blocks_x, step, luma_blocks, out_offset),
        VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, RESULTS),
    };
    return vulkan_plan_one_shader(plan, &shader, RESULTS, "XPSNR block sums",
                                  xpsnr_sum_count(s) * sizeof(uint64_t), BUFFERS);
}

static int xpsnr_vulkan_round(const VulkanPlan *plan, unsigned round,
                              const VulkanPlanMemory *memory, VulkanStep *steps, char *error,
                              size_t error_size)
{
    const XpsnrState *s = plan->state;
    const VulkanFrame *frame = memory->frame;
    XpsnrPush push = {
        .flags = (s->second_order ? SECOND_ORDER : 0) | (s->bitdepth > 8 ? TWO_BYTES : 0),
        .block = s->block,
        .blocks_x = s->blocks_x,
        .step = s->step,
        .luma_blocks = luma_blocks(s),
        .out_offset = (uint32_t)(memory->offset[RESULTS] / sizeof(uint64_t)),
    };
    /* (the planes past s->planes stay 0) */
    vulkan_push_planes(frame, s->planes, push.ref_offset, push.dist_offset, push.stride,
                       push.width, push.height);
    /* The previous pictures before the first frame are 0, as in the C. */
    for (unsigned k = 0; k < 2; k++) {
        if (!frame->has_prev[k]) continue;
        push.prev_offset[k] = (uint32_t)frame->prev_ref_offset[k];
        push.flags |= k ? PREV_1 : PREV_0;
    }
    /* as many chroma blocks as luma blocks at most (xpsnr_twin_supports) */
    const unsigned groups = luma_blocks(s);
    VULKAN_STEP_SET(&steps[0], 0, groups, s->planes, push);
    return 1;
}

static int xpsnr_vulkan_collect(const VulkanPlan *plan, const void *results,
                                const MetricFrame *frame, FeatureSink *sink)
{
    const XpsnrState *s = plan->state;
    const size_t count = xpsnr_sum_count(s);
    uint64_t *sums = malloc(count * sizeof(uint64_t));
    if (!sums) return -ENOMEM;
    const uint32_t *words = results;
    for (size_t i = 0; i < count; i++)
        sums[i] = (uint64_t)words[2 * i] | (uint64_t)words[2 * i + 1] << 32;
    const int err = xpsnr_finish_array(s, sums, frame->index, sink);
    free(sums);
    return err;
}

const VulkanTwin vulkan_twin_xpsnr = {
    VULKAN_TWIN_OF(xpsnr),
    .concurrent = true, /* its only buffer is per slot */
    .supports = xpsnr_vulkan_supports,
};
