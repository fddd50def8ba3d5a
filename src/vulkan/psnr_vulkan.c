/* PSNR on Vulkan: the device sums squared errors, the host finishes exactly
 * as the C reference does (psnr_write_plane). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/psnr.h"
#include "vulkan_twin.h"

extern const unsigned char vulkan_shader_psnr[];
extern const size_t vulkan_shader_psnr_size;

enum { ROWS_PER_GROUP = 8 };

/* Mirrors the push constants of psnr.comp. */
typedef struct PsnrPush {
    uint32_t ref_offset[3], dist_offset[3], stride[3], width[3], height[3];
    uint32_t rows_per_group, bytes_per_sample, out_offset;
} PsnrPush;

typedef struct PsnrTwin {
    const VulkanDevice *dev;
    const PsnrState *metric;
    unsigned groups; /* per plane */
    VulkanBuffer partials; /* host-visible: slots x 3 x groups x uint64 */
    VulkanPipeline pipeline;
    unsigned bytes_per_sample;
} PsnrTwin;

static void psnr_vulkan_close(void *twin)
{
    PsnrTwin *t = twin;
    if (!t) return;
    vulkan_pipeline_destroy(t->dev, &t->pipeline);
    vulkan_buffer_destroy(t->dev, &t->partials);
    free(t);
}

static int psnr_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                            const void *metric_state, const QualeVideoFormat *format, unsigned slots,
                            void **out, char *error, size_t error_size)
{
    PsnrTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->groups = (format->height + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP;
    t->bytes_per_sample = format->bitdepth > 8 ? 2 : 1;
    int err = vulkan_buffer_create(dev, (VkDeviceSize)slots * 3 * t->groups * sizeof(uint64_t),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->partials,
                                   "PSNR partial sums", error, error_size);
    const VkBuffer buffers[3] = { ring, frames, t->partials.buffer };
    if (!err)
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_psnr, vulkan_shader_psnr_size,
                                     buffers, 3, VULKAN_PUSH(PsnrPush, ref_offset, dist_offset, stride, width, height, rows_per_group, bytes_per_sample, out_offset), &t->pipeline, "the PSNR shader",
                                     error, error_size);
    if (err) {
        psnr_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int psnr_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame, VkCommandBuffer cb,
                              char *error, size_t error_size)
{
    (void)error;
    (void)error_size;
    PsnrTwin *t = twin;
    PsnrPush push;
    memset(&push, 0, sizeof(push));
    for (unsigned p = 0; p < t->metric->planes; p++) {
        push.ref_offset[p] = (uint32_t)frame->ref_offset[p];
        push.dist_offset[p] = (uint32_t)frame->dist_offset[p];
        push.stride[p] = frame->stride[p];
        push.width[p] = frame->width[p];
        push.height[p] = frame->height[p];
    }
    push.rows_per_group = ROWS_PER_GROUP;
    push.bytes_per_sample = t->bytes_per_sample;
    push.out_offset = slot * 3 * t->groups;
    vulkan_dispatch(t->dev, cb, &t->pipeline, &push, t->groups, t->metric->planes);
    return 0;
}

static int psnr_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink)
{
    PsnrTwin *t = twin;
    const uint32_t *words = (const uint32_t *)t->partials.mapped + (size_t)slot * 3 * t->groups * 2;
    for (unsigned p = 0; p < t->metric->planes; p++) {
        uint64_t sse = 0;
        for (unsigned g = 0; g < t->groups; g++) {
            const uint32_t *w = words + ((size_t)p * t->groups + g) * 2;
            sse += (uint64_t)w[0] | (uint64_t)w[1] << 32;
        }
        int err = psnr_write_plane(t->metric, sink, frame, p, sse);
        if (err) return err;
    }
    return 0;
}

const VulkanTwin vulkan_twin_psnr = {
    .metric = &metric_psnr,
    .concurrent = true, /* its only buffers are per slot */
    .init = psnr_vulkan_init,
    .record = psnr_vulkan_record,
    .collect = psnr_vulkan_collect,
    .close = psnr_vulkan_close,
};
