/*
 * PSNR-HVS on Vulkan: the device computes each plane's float sum of terms,
 * bit for bit the C reference's, with the CUDA twin's decomposition
 * (src/cuda/psnr_hvs.cu says how an exact float sum runs in parallel):
 *
 *   psnr_hvs_terms   one invocation per block position: its 64 terms, and
 *                    their double sum (an estimate);
 *   psnr_hvs_prefix  one workgroup per plane: the estimates' prefix sums;
 *   psnr_hvs_cand    one invocation per block position: its pairs for the
 *                    binades around its estimated start;
 *   psnr_hvs_walk    one workgroup per plane: the exact float sum, written
 *                    to host-visible memory (3 floats per slot);
 *
 * with a barrier between passes.  The host finishes through the C
 * reference's own psnr_hvs_write(), as its extract() does.
 *
 * Memory: the csf and mask tables (device, uploaded once) and the terms,
 * estimates and candidates of one frame (device, 296 bytes per block
 * position: 18 MiB at 1080p), shared by the slots: record() starts with a
 * barrier, so a frame's passes run after the previous frame's (the backend
 * orders every frame's compute after the one before anyway).  The shaders
 * need shaderFloat64 (fp64.glsl) and workgroups of HVS_WALK_THREADS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/psnr_hvs/psnr_hvs.h"
#include "gpu/vulkan/vulkan_twin.h"

VULKAN_SHADER(psnr_hvs_terms);
VULKAN_SHADER(psnr_hvs_prefix);
VULKAN_SHADER(psnr_hvs_cand);
VULKAN_SHADER(psnr_hvs_walk);

enum {
    THREADS = 64,          /* psnr_hvs.glsl: HVS_THREADS */
    WALK_THREADS = 1024,   /* psnr_hvs.glsl: HVS_WALK_THREADS */
    CAND_WORDS = 8,        /* psnr_hvs.glsl: HVS_CAND_WORDS */
    TABLE_FLOATS = 2 * 3 * 64 + 2,
    BINDINGS = 7,
    PASSES = 4,
};

/* Mirrors the push constants of psnr_hvs.glsl. */
typedef struct HvsPush {
    uint32_t ref_offset[3], dist_offset[3], stride[3];
    uint32_t cols[3], blocks[3], base[3];
    uint32_t total, bytes_per_sample, sums_offset;
} HvsPush;

/* The plan's buffers: the tables (constants), the passes' terms,
 * estimates and candidates (one set, reused by every frame: the twin keeps
 * the run on one lane), and per slot the sums read back. */
enum { TABLES, TERMS, PREFIX, CAND, SUMS, BUFFERS };

/* The plan of a run: the layout, the grid of the per-block-position
 * passes, and the tables' values. */
typedef struct HvsRun {
    PsnrHvsLayout layout;
    uint32_t groups_x, groups_y;
    float tables[TABLE_FLOATS];
} HvsRun;

static bool hvs_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    (void)state; /* every format the C reference accepts */
    const VkPhysicalDeviceLimits *limits = &dev->properties.limits;
    return dev->features.shaderFloat64 && limits->maxComputeWorkGroupInvocations >= WALK_THREADS &&
           limits->maxComputeWorkGroupSize[0] >= WALK_THREADS;
}

/* The device's tables: csf[3][64], mask[3][64], then the unbiased
 * variance factors exactly as the C reference writes them. */
static void hvs_tables(const PsnrHvsState *s, float tables[TABLE_FLOATS])
{
    memcpy(tables, s->csf, sizeof(s->csf));
    memcpy(tables + 3 * 64, s->mask, sizeof(s->mask));
    tables[2 * 3 * 64] = 1 / 63.f * 64;
    tables[2 * 3 * 64 + 1] = 1 / 15.f * 16;
}

static int psnr_hvs_vulkan_plan(const VulkanDevice *dev, const void *state,
                                const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                                size_t error_size)
{
    const int err = psnr_hvs_check_format(format, error, error_size);
    if (err) return err;
    HvsRun *r = calloc(1, sizeof(*r));
    if (!r) return -ENOMEM;
    plan->own = r;
    psnr_hvs_layout(format, &r->layout);
    const PsnrHvsLayout *l = &r->layout;
    /* Workgroups of the per-block-position passes, in rows of at most
     * 65535 (the least maxComputeWorkGroupCount a device has). */
    const uint32_t groups = (l->total + THREADS - 1) / THREADS;
    r->groups_y = (groups + 65534) / 65535;
    r->groups_x = (groups + r->groups_y - 1) / r->groups_y;

    /* (the executor refuses buffers larger than the device binds) */
    const VkDeviceSize terms_bytes = (VkDeviceSize)l->total * 64 * sizeof(float);
    hvs_tables(state, r->tables);
    plan->buffers[TABLES] = (VulkanPlanBuffer){
        .what = "the PSNR-HVS tables",
        .bytes = sizeof(r->tables),
        .scope = VULKAN_PER_RUN,
        .data = r->tables,
    };
    plan->buffers[TERMS] = (VulkanPlanBuffer){ .what = "PSNR-HVS terms", .bytes = terms_bytes,
                                               .scope = VULKAN_PER_RUN };
    plan->buffers[PREFIX] = (VulkanPlanBuffer){ .what = "PSNR-HVS estimates",
                                                .bytes = (VkDeviceSize)l->total * sizeof(double),
                                                .scope = VULKAN_PER_RUN };
    plan->buffers[CAND] = (VulkanPlanBuffer){
        .what = "PSNR-HVS candidates",
        .bytes = (VkDeviceSize)l->total * CAND_WORDS * sizeof(uint32_t),
        .scope = VULKAN_PER_RUN,
    };
    vulkan_plan_results(plan, SUMS, "PSNR-HVS sums", 4 * sizeof(float));
    plan->buffer_count = BUFFERS;
    static const struct {
        const unsigned char *code;
        const size_t *size;
        const char *what;
    } shaders[PASSES] = {
        { vulkan_shader_psnr_hvs_terms, &vulkan_shader_psnr_hvs_terms_size,
          "the PSNR-HVS terms shader" },
        { vulkan_shader_psnr_hvs_prefix, &vulkan_shader_psnr_hvs_prefix_size,
          "the PSNR-HVS prefix shader" },
        { vulkan_shader_psnr_hvs_cand, &vulkan_shader_psnr_hvs_cand_size,
          "the PSNR-HVS candidates shader" },
        { vulkan_shader_psnr_hvs_walk, &vulkan_shader_psnr_hvs_walk_size,
          "the PSNR-HVS walk shader" },
    };
    for (unsigned i = 0; i < PASSES; i++)
        plan->pipelines[i] = (VulkanPlanPipeline){
            .spirv = shaders[i].code,
            .spirv_size = *shaders[i].size,
            .what = shaders[i].what,
            .push = *VULKAN_PUSH(HvsPush, ref_offset, dist_offset, stride, cols, blocks, base,
                                 total, bytes_per_sample, sums_offset),
            .binding_count = BINDINGS,
            .bindings = { VULKAN_BIND_RING, VULKAN_BIND_FRAMES, TABLES, TERMS, PREFIX, CAND,
                          SUMS },
        };
    plan->pipeline_count = PASSES;
    /* each pass reads what the one before wrote */
    plan->rounds = PASSES;
    return 0;
}

static int psnr_hvs_vulkan_round(const VulkanPlan *plan, unsigned round,
                                 const VulkanPlanMemory *memory, VulkanStep *steps, char *error,
                                 size_t error_size)
{
    const HvsRun *r = plan->own;
    const PsnrHvsLayout *l = &r->layout;
    const VulkanFrame *frame = memory->frame;
    HvsPush push;
    memset(&push, 0, sizeof(push));
    vulkan_push_planes(frame, 3, push.ref_offset, push.dist_offset, push.stride, NULL, NULL);
    for (unsigned p = 0; p < 3; p++) {
        push.cols[p] = l->cols[p];
        push.blocks[p] = l->blocks[p];
        push.base[p] = l->base[p];
    }
    push.total = l->total;
    push.bytes_per_sample = plan->format.bitdepth > 8 ? 2 : 1;
    push.sums_offset = (uint32_t)(memory->offset[SUMS] / sizeof(float));
    const bool per_plane = round == 1 || round == 3;
    VULKAN_STEP_SET(&steps[0], round, per_plane ? 3 : r->groups_x, per_plane ? 1 : r->groups_y,
                    push);
    return 1;
}

static int psnr_hvs_vulkan_collect(const VulkanPlan *plan, const void *results,
                                   const MetricFrame *frame, FeatureSink *sink)
{
    const HvsRun *r = plan->own;
    uint64_t count[3];
    for (unsigned p = 0; p < 3; p++) count[p] = 64 * (uint64_t)r->layout.blocks[p];
    return psnr_hvs_write(plan->state, sink, frame->index, results, count);
}

const VulkanTwin vulkan_twin_psnr_hvs = {
    VULKAN_TWIN_OF(psnr_hvs),
    .supports = hvs_vulkan_supports,
};
