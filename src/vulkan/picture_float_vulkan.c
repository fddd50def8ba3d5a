/* The host side of the luma-sum shaders of float_psnr and float_moment,
 * and what every float twin may use: see picture_float_vulkan.h. */
#include <errno.h>
#include <stdlib.h>

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

int luma_sums_new(const LumaSumsShader *shader, const VulkanDevice *dev, VkBuffer ring,
                  VkBuffer frames, const void *metric, bool exact_sums, float scaler,
                  const QualeVideoFormat *format, unsigned slots, void **out, char *error,
                  size_t error_size)
{
    LumaSums *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric;
    t->groups = (format->height + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP;
    t->passes = shader->passes;
    t->per_slot = t->groups * shader->partials_per_group;
    t->bytes_per_sample = format->bitdepth > 8 ? 2 : 1;
    t->float_squares = !exact_sums;
    t->inv_scaler = 1.0f / scaler; /* exact: a power of two */
    t->scaler_sq = scaler * scaler;
    int err = vulkan_buffer_create(dev, (VkDeviceSize)slots * t->per_slot * sizeof(uint64_t),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->partials,
                                   shader->what, error, error_size);
    const VkBuffer buffers[3] = { ring, frames, t->partials.buffer };
    if (!err)
        err = vulkan_pipeline_create(dev, (const uint32_t *)shader->spirv, shader->spirv_size,
                                     buffers, 3, VULKAN_PUSH(LumaSumsPush, ref_offset, dist_offset, stride, width, height, rows_per_group, bytes_per_sample, float_squares, inv_scaler, scaler_sq, out_offset), &t->pipeline, shader->what,
                                     error, error_size);
    if (err) {
        luma_sums_close(t);
        return err;
    }
    *out = t;
    return 0;
}

int luma_sums_record(void *twin, unsigned slot, const VulkanFrame *frame, VkCommandBuffer cb,
                     char *error, size_t error_size)
{
    (void)error;
    (void)error_size;
    const LumaSums *t = twin;
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
        .out_offset = slot * t->per_slot,
    };
    vulkan_dispatch(t->dev, cb, &t->pipeline, &push, t->groups, t->passes);
    return 0;
}

void luma_sums_close(void *twin)
{
    LumaSums *t = twin;
    if (!t) return;
    vulkan_pipeline_destroy(t->dev, &t->pipeline);
    vulkan_buffer_destroy(t->dev, &t->partials);
    free(t);
}

uint64_t luma_sums_total(const LumaSums *t, unsigned slot, unsigned first, unsigned count)
{
    const uint64_t *p = (const uint64_t *)t->partials.mapped + (size_t)slot * t->per_slot + first;
    uint64_t sum = 0;
    for (unsigned i = 0; i < count; i++) sum += p[i];
    return sum;
}
