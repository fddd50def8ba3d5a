/* PSNR on Vulkan: the device sums squared errors, the host finishes exactly
 * as the C reference does (psnr_write_plane). */
#include <string.h>

#include "metrics/psnr/psnr.h"
#include "gpu/vulkan/vulkan_twin.h"

VULKAN_SHADER(psnr);

enum { ROWS_PER_GROUP = 8 };

/* Mirrors the push constants of psnr.comp. */
typedef struct PsnrPush {
    uint32_t ref_offset[3], dist_offset[3], stride[3], width[3], height[3];
    uint32_t rows_per_group, bytes_per_sample, out_offset;
} PsnrPush;

static unsigned psnr_groups(const VulkanPlan *plan)
{
    return (plan->format.height + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP;
}

/* The plan's buffers. */
enum { RESULTS, BUFFERS };


/* One pipeline over the ring, the frames and the results: per slot a
 * 64-bit partial per workgroup of each plane. */
static int psnr_vulkan_plan(const VulkanDevice *dev, const void *state,
                            const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                            size_t error_size)
{
    const VulkanPlanPipeline shader = {
        VULKAN_SPIRV(psnr), .what = "the PSNR shader",
        .push = *VULKAN_PUSH(PsnrPush, ref_offset, dist_offset, stride, width, height,
                            rows_per_group, bytes_per_sample, out_offset),
        VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, RESULTS),
    };
    return vulkan_plan_one_shader(plan, &shader, RESULTS, "PSNR partial sums",
                                  3 * (size_t)psnr_groups(plan) * sizeof(uint64_t), BUFFERS);
}

static int psnr_vulkan_round(const VulkanPlan *plan, unsigned round,
                             const VulkanPlanMemory *memory, VulkanStep *steps, char *error,
                             size_t error_size)
{
    const PsnrState *s = plan->state;
    PsnrPush push = {
        .rows_per_group = ROWS_PER_GROUP,
        .bytes_per_sample = plan->format.bitdepth > 8 ? 2 : 1,
        .out_offset = (uint32_t)(memory->offset[RESULTS] / sizeof(uint64_t)),
    };
    /* (the planes past s->planes stay 0) */
    vulkan_push_planes(memory->frame, s->planes, push.ref_offset, push.dist_offset, push.stride,
                       push.width, push.height);
    VULKAN_STEP_SET(&steps[0], 0, psnr_groups(plan), s->planes, push);
    return 1;
}

static int psnr_vulkan_collect(const VulkanPlan *plan, const void *results,
                               const MetricFrame *frame, FeatureSink *sink)
{
    const PsnrState *s = plan->state;
    const unsigned groups = psnr_groups(plan);
    const uint32_t *words = results;
    for (unsigned p = 0; p < s->planes; p++) {
        uint64_t sse = 0;
        for (unsigned g = 0; g < groups; g++) {
            const uint32_t *w = words + ((size_t)p * groups + g) * 2;
            sse += (uint64_t)w[0] | (uint64_t)w[1] << 32;
        }
        const int err = psnr_write_plane(s, sink, frame, p, sse);
        if (err) return err;
    }
    return 0;
}

const VulkanTwin vulkan_twin_psnr = {
    VULKAN_TWIN_OF(psnr),
    .concurrent = true, /* its only buffer is per slot */
};
