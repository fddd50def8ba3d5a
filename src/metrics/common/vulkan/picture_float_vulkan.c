/* The host side of the luma-sum shaders of float_psnr and float_moment,
 * and what every float twin may use: see picture_float_vulkan.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "picture_float_vulkan.h"

/* Rows per workgroup (a 1080p luma: 270 workgroups a picture). */
enum { ROWS_PER_GROUP = 4 };

/* Mirrors the push constants of picture_float.glsl's LUMA_SUMS block. */
typedef struct LumaSumsPush {
    uint32_t ref_offset, dist_offset, stride, width, height;
    uint32_t rows_per_group, bytes_per_sample, float_squares;
    float inv_scaler, scaler_sq;
    uint32_t out_offset;
} LumaSumsPush;

/* The plan's buffers. */
enum { RESULTS, BUFFERS };

/* What the dispatch needs beyond the frame. */
typedef struct LumaSums {
    unsigned groups;        /* workgroups of rows per picture pass */
    unsigned passes;        /* dispatch height: 1, or 2 (one per picture) */
    uint32_t bytes_per_sample, float_squares;
    float inv_scaler, scaler_sq;
} LumaSums;

int luma_sums_plan(const LumaSumsShader *shader, bool exact_sums, float scaler,
                   const QualeVideoFormat *format, VulkanPlan *plan)
{
    LumaSums *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    plan->own = t;
    t->groups = (format->height + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP;
    t->passes = shader->passes;
    t->bytes_per_sample = format->bitdepth > 8 ? 2 : 1;
    t->float_squares = !exact_sums;
    t->inv_scaler = 1.0f / scaler; /* exact: a power of two */
    t->scaler_sq = scaler * scaler;
    const VulkanPlanPipeline pipeline = {
        .spirv = shader->spirv,
        .spirv_size = shader->spirv_size,
        .what = shader->what,
        .push = *VULKAN_PUSH(LumaSumsPush, ref_offset, dist_offset, stride, width, height,
                             rows_per_group, bytes_per_sample, float_squares, inv_scaler,
                             scaler_sq, out_offset),
        VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, RESULTS),
    };
    const size_t partials = (size_t)t->groups * shader->partials_per_group;
    return vulkan_plan_one_shader(plan, &pipeline, RESULTS, shader->what,
                                  partials * sizeof(uint64_t), BUFFERS);
}

int luma_sums_round(const VulkanPlan *plan, unsigned round, const VulkanPlanMemory *memory,
                    VulkanStep *steps, char *error, size_t error_size)
{
    const LumaSums *t = plan->own;
    const VulkanFrame *frame = memory->frame;
    const LumaSumsPush push = {
        .ref_offset = (uint32_t)frame->ref_offset[0],
        .dist_offset = (uint32_t)frame->dist_offset[0],
        .stride = frame->stride[0],
        .width = frame->width[0],
        .height = frame->height[0],
        .rows_per_group = ROWS_PER_GROUP,
        .bytes_per_sample = t->bytes_per_sample,
        .float_squares = t->float_squares,
        .inv_scaler = t->inv_scaler,
        .scaler_sq = t->scaler_sq,
        .out_offset = (uint32_t)(memory->offset[RESULTS] / sizeof(uint64_t)),
    };
    VULKAN_STEP_SET(&steps[0], 0, t->groups, t->passes, push);
    return 1;
}

unsigned luma_sums_groups(const VulkanPlan *plan)
{
    const LumaSums *t = plan->own;
    return t->groups;
}

uint64_t luma_sums_total(const void *results, unsigned first, unsigned count)
{
    const uint64_t *p = (const uint64_t *)results + first;
    uint64_t sum = 0;
    for (unsigned i = 0; i < count; i++) sum += p[i];
    return sum;
}
