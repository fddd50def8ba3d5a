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

#include "metrics/psnr_hvs.h"
#include "vulkan_twin.h"

extern const unsigned char vulkan_shader_psnr_hvs_terms[];
extern const size_t vulkan_shader_psnr_hvs_terms_size;
extern const unsigned char vulkan_shader_psnr_hvs_prefix[];
extern const size_t vulkan_shader_psnr_hvs_prefix_size;
extern const unsigned char vulkan_shader_psnr_hvs_cand[];
extern const size_t vulkan_shader_psnr_hvs_cand_size;
extern const unsigned char vulkan_shader_psnr_hvs_walk[];
extern const size_t vulkan_shader_psnr_hvs_walk_size;

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

typedef struct HvsTwin {
    const VulkanDevice *dev;
    const PsnrHvsState *metric;
    PsnrHvsLayout layout;
    uint32_t groups_x, groups_y; /* the per-block-position passes */
    VulkanBuffer tables, terms, prefix, cand;
    VulkanBuffer sums; /* host-visible: slots x 4 floats */
    VulkanPipeline pipelines[PASSES];
} HvsTwin;

static bool hvs_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    (void)state; /* every format the C reference accepts */
    const VkPhysicalDeviceLimits *limits = &dev->properties.limits;
    return dev->features.shaderFloat64 && limits->maxComputeWorkGroupInvocations >= WALK_THREADS &&
           limits->maxComputeWorkGroupSize[0] >= WALK_THREADS;
}

static void hvs_vulkan_close(void *twin)
{
    HvsTwin *t = twin;
    if (!t) return;
    for (unsigned i = 0; i < PASSES; i++) vulkan_pipeline_destroy(t->dev, &t->pipelines[i]);
    vulkan_buffer_destroy(t->dev, &t->tables);
    vulkan_buffer_destroy(t->dev, &t->terms);
    vulkan_buffer_destroy(t->dev, &t->prefix);
    vulkan_buffer_destroy(t->dev, &t->cand);
    vulkan_buffer_destroy(t->dev, &t->sums);
    free(t);
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

static int hvs_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                           const void *metric_state, const QualeVideoFormat *format, unsigned slots,
                           void **out, char *error, size_t error_size)
{
    int err = psnr_hvs_check_format(format, error, error_size);
    if (err) return err;
    HvsTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    psnr_hvs_layout(format, &t->layout);
    const PsnrHvsLayout *l = &t->layout;
    /* Workgroups of the per-block-position passes, in rows of at most
     * 65535 (the least maxComputeWorkGroupCount a device has). */
    const uint32_t groups = (l->total + THREADS - 1) / THREADS;
    t->groups_y = (groups + 65534) / 65535;
    t->groups_x = (groups + t->groups_y - 1) / t->groups_y;

    const VkDeviceSize terms_bytes = (VkDeviceSize)l->total * 64 * sizeof(float);
    if (terms_bytes > dev->properties.limits.maxStorageBufferRange) {
        snprintf(error, error_size, "psnr_hvs: the terms of a %ux%u frame (%llu bytes) exceed the "
                 "device's largest storage buffer (%u bytes)", format->width, format->height,
                 (unsigned long long)terms_bytes, dev->properties.limits.maxStorageBufferRange);
        hvs_vulkan_close(t);
        return -E2BIG;
    }
    const VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    float tables[TABLE_FLOATS];
    hvs_tables(t->metric, tables);
    err = vulkan_buffer_create_constant(dev, tables, sizeof(tables), &t->tables,
                                        "the PSNR-HVS tables", error, error_size);
    if (!err)
        err = vulkan_buffer_create(dev, terms_bytes, storage, false, &t->terms, "PSNR-HVS terms",
                                   error, error_size);
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)l->total * sizeof(double), storage, false,
                                   &t->prefix, "PSNR-HVS estimates", error, error_size);
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)l->total * CAND_WORDS * sizeof(uint32_t),
                                   storage, false, &t->cand, "PSNR-HVS candidates", error,
                                   error_size);
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)slots * 4 * sizeof(float), storage, true,
                                   &t->sums, "PSNR-HVS sums", error, error_size);
    static const struct {
        const unsigned char *code;
        const size_t *size;
        const char *what;
    } shaders[PASSES] = {
        { vulkan_shader_psnr_hvs_terms, &vulkan_shader_psnr_hvs_terms_size, "the PSNR-HVS terms shader" },
        { vulkan_shader_psnr_hvs_prefix, &vulkan_shader_psnr_hvs_prefix_size, "the PSNR-HVS prefix shader" },
        { vulkan_shader_psnr_hvs_cand, &vulkan_shader_psnr_hvs_cand_size, "the PSNR-HVS candidates shader" },
        { vulkan_shader_psnr_hvs_walk, &vulkan_shader_psnr_hvs_walk_size, "the PSNR-HVS walk shader" },
    };
    const VkBuffer buffers[BINDINGS] = { ring, frames, t->tables.buffer, t->terms.buffer,
                                         t->prefix.buffer, t->cand.buffer, t->sums.buffer };
    for (unsigned i = 0; i < PASSES && !err; i++)
        err = vulkan_pipeline_create(dev, (const uint32_t *)shaders[i].code, *shaders[i].size, buffers,
                                     BINDINGS, VULKAN_PUSH(HvsPush, ref_offset, dist_offset, stride, cols, blocks, base, total, bytes_per_sample, sums_offset), &t->pipelines[i], shaders[i].what,
                                     error, error_size);
    if (err) {
        hvs_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int hvs_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame, VkCommandBuffer cb,
                             char *error, size_t error_size)
{
    HvsTwin *t = twin;
    const PsnrHvsLayout *l = &t->layout;
    HvsPush push;
    memset(&push, 0, sizeof(push));
    for (unsigned p = 0; p < 3; p++) {
        if (frame->width[p] != l->width[p] || frame->height[p] != l->height[p]) {
            snprintf(error, error_size, "psnr_hvs: plane %u is %ux%u, the twin was set up for %ux%u",
                     p, frame->width[p], frame->height[p], l->width[p], l->height[p]);
            return -EINVAL;
        }
        push.ref_offset[p] = (uint32_t)frame->ref_offset[p];
        push.dist_offset[p] = (uint32_t)frame->dist_offset[p];
        push.stride[p] = frame->stride[p];
        push.cols[p] = l->cols[p];
        push.blocks[p] = l->blocks[p];
        push.base[p] = l->base[p];
    }
    push.total = l->total;
    push.bytes_per_sample = t->metric->bitdepth > 8 ? 2 : 1;
    push.sums_offset = slot * 4;
    /* The terms, estimates and candidates are the previous frame's until
     * its passes are done. */
    vulkan_compute_barrier(t->dev, cb);
    for (unsigned i = 0; i < PASSES; i++) {
        const bool per_plane = i == 1 || i == 3;
        if (i > 0) vulkan_compute_barrier(t->dev, cb);
        vulkan_dispatch(t->dev, cb, &t->pipelines[i], &push, per_plane ? 3 : t->groups_x,
                        per_plane ? 1 : t->groups_y);
    }
    return 0;
}

static int hvs_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink)
{
    HvsTwin *t = twin;
    uint64_t count[3];
    for (unsigned p = 0; p < 3; p++) count[p] = 64 * (uint64_t)t->layout.blocks[p];
    const float *sums = (const float *)t->sums.mapped + (size_t)slot * 4;
    return psnr_hvs_write(t->metric, sink, frame->index, sums, count);
}

const VulkanTwin vulkan_twin_psnr_hvs = {
    .metric = &metric_psnr_hvs,
    .supports = hvs_vulkan_supports,
    .init = hvs_vulkan_init,
    .record = hvs_vulkan_record,
    .collect_own = hvs_vulkan_collect,
    .close = hvs_vulkan_close,
};
