/* float_psnr on Vulkan: the device sums the frame's noise as an exact
 * integer (float_psnr.comp), in per-workgroup partials; the host adds them
 * and finishes through the C reference's own steps (float_psnr_noise,
 * float_psnr_write of src/metrics/float_psnr.h), as the CUDA twin does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/float_psnr.h"
#include "vulkan_twin.h"

extern const unsigned char vulkan_shader_float_psnr[];
extern const size_t vulkan_shader_float_psnr_size;

enum { ROWS_PER_GROUP = 4 };

/* Mirrors the push constants of float_psnr.comp. */
typedef struct FloatPsnrPush {
    uint32_t ref_offset, dist_offset, stride, width, height;
    uint32_t rows_per_group, bytes_per_sample, float_squares;
    float inv_scaler, scaler_sq;
    uint32_t out_offset;
} FloatPsnrPush;

typedef struct FloatPsnrTwin {
    const VulkanDevice *dev;
    const FloatPsnrState *metric;
    QualeVideoFormat format;
    unsigned groups;
    VulkanBuffer partials; /* host-visible: slots x groups x uint64 */
    VulkanPipeline pipeline;
} FloatPsnrTwin;

static bool float_psnr_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    (void)dev;
    (void)state; /* no options; every format the C reference takes */
    return true;
}

static unsigned float_psnr_vulkan_planes(const void *state)
{
    (void)state;
    return 1;
}

static void float_psnr_vulkan_close(void *twin)
{
    FloatPsnrTwin *t = twin;
    if (!t) return;
    vulkan_pipeline_destroy(t->dev, &t->pipeline);
    vulkan_buffer_destroy(t->dev, &t->partials);
    free(t);
}

static int float_psnr_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                  const void *metric_state, const QualeVideoFormat *format,
                                  unsigned slots, void **out, char *error, size_t error_size)
{
    FloatPsnrTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->format = *format;
    t->groups = (format->height + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP;
    int err = vulkan_buffer_create(dev, (VkDeviceSize)slots * t->groups * sizeof(uint64_t),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->partials,
                                   "float_psnr partial sums", error, error_size);
    const VkBuffer buffers[3] = { ring, frames, t->partials.buffer };
    if (!err)
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_float_psnr,
                                     vulkan_shader_float_psnr_size, buffers, 3,
                                     sizeof(FloatPsnrPush), &t->pipeline,
                                     "the float_psnr shader", error, error_size);
    if (err) {
        float_psnr_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int float_psnr_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame,
                                    VkCommandBuffer cb, char *error, size_t error_size)
{
    (void)error;
    (void)error_size;
    FloatPsnrTwin *t = twin;
    const float scaler = t->metric->scaler;
    const FloatPsnrPush push = {
        .ref_offset = (uint32_t)frame->ref_offset[0],
        .dist_offset = (uint32_t)frame->dist_offset[0],
        .stride = frame->stride[0],
        .width = frame->width[0],
        .height = frame->height[0],
        .rows_per_group = ROWS_PER_GROUP,
        .bytes_per_sample = t->format.bitdepth > 8 ? 2 : 1,
        .float_squares = !t->metric->exact_sums,
        .inv_scaler = 1.0f / scaler, /* exact: a power of two */
        .scaler_sq = scaler * scaler,
        .out_offset = slot * t->groups,
    };
    vulkan_dispatch(t->dev, cb, &t->pipeline, &push, t->groups, 1);
    return 0;
}

static int float_psnr_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                     FeatureSink *sink)
{
    FloatPsnrTwin *t = twin;
    const uint64_t *partials = (const uint64_t *)t->partials.mapped + (size_t)slot * t->groups;
    uint64_t units = 0;
    for (unsigned g = 0; g < t->groups; g++) units += partials[g];
    return float_psnr_write(t->metric, sink, frame, float_psnr_noise(t->metric, units));
}

const VulkanTwin vulkan_twin_float_psnr = {
    .metric = &metric_float_psnr,
    .planes = float_psnr_vulkan_planes,
    .supports = float_psnr_vulkan_supports,
    .init = float_psnr_vulkan_init,
    .record = float_psnr_vulkan_record,
    .collect = float_psnr_vulkan_collect,
    .close = float_psnr_vulkan_close,
};
