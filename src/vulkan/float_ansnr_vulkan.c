/* float_ansnr on Vulkan: the device filters both pictures and sums each
 * row's squares in float, bit for bit as the C reference
 * (float_ansnr.comp); the host adds the rows' sums in float in row order,
 * as the C reference does, and finishes through its own
 * float_ansnr_write() (src/metrics/float_ansnr.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/float_ansnr.h"
#include "picture_float_vulkan.h"

extern const unsigned char vulkan_shader_float_ansnr[];
extern const size_t vulkan_shader_float_ansnr_size;

/* Mirrors the push constants of float_ansnr.comp. */
typedef struct FloatAnsnrPush {
    uint32_t ref_offset, dist_offset, stride;
    int32_t width, height;
    uint32_t bytes_per_sample;
    float inv_scaler;
    uint32_t out_offset;
    float dis_weight[6];
} FloatAnsnrPush;

typedef struct FloatAnsnrTwin {
    const VulkanDevice *dev;
    const FloatAnsnrState *metric;
    QualeVideoFormat format;
    size_t slot_floats;   /* 2 x height */
    VulkanBuffer row_sums; /* host-visible: slots x slot_floats */
    VulkanPipeline pipeline;
} FloatAnsnrTwin;

static void float_ansnr_vulkan_close(void *twin)
{
    FloatAnsnrTwin *t = twin;
    if (!t) return;
    vulkan_pipeline_destroy(t->dev, &t->pipeline);
    vulkan_buffer_destroy(t->dev, &t->row_sums);
    free(t);
}

static int float_ansnr_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                   const void *metric_state, const QualeVideoFormat *format,
                                   unsigned slots, void **out, char *error, size_t error_size)
{
    int err = float_ansnr_check_size(format->width, format->height, error, error_size);
    if (err) return err;
    FloatAnsnrTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->format = *format;
    t->slot_floats = 2 * (size_t)format->height;
    err = vulkan_buffer_create(dev, (VkDeviceSize)slots * t->slot_floats * sizeof(float),
                               VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->row_sums,
                               "float_ansnr row sums", error, error_size);
    const VkBuffer buffers[3] = { ring, frames, t->row_sums.buffer };
    if (!err)
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_float_ansnr,
                                     vulkan_shader_float_ansnr_size, buffers, 3,
                                     VULKAN_PUSH(FloatAnsnrPush, ref_offset, dist_offset, stride, width, height, bytes_per_sample, inv_scaler, out_offset, dis_weight), &t->pipeline,
                                     "float_ansnr's shader", error, error_size);
    if (err) {
        float_ansnr_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int float_ansnr_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame,
                                     VkCommandBuffer cb, char *error, size_t error_size)
{
    (void)error;
    (void)error_size;
    FloatAnsnrTwin *t = twin;
    FloatAnsnrPush push = {
        .ref_offset = (uint32_t)frame->ref_offset[0],
        .dist_offset = (uint32_t)frame->dist_offset[0],
        .stride = frame->stride[0],
        .width = (int32_t)frame->width[0],
        .height = (int32_t)frame->height[0],
        .bytes_per_sample = t->format.bitdepth > 8 ? 2 : 1,
        /* exact: a power of two */
        .inv_scaler = 1.0f / (float)(1u << (t->format.bitdepth - 8)),
        .out_offset = (uint32_t)(slot * t->slot_floats),
    };
    /* The distinct weights, in the shader's order, as the C computes them. */
    static const float dis_weight[6] = {
        ANSNR_DIS_WEIGHT(2), ANSNR_DIS_WEIGHT(7), ANSNR_DIS_WEIGHT(12),
        ANSNR_DIS_WEIGHT(31), ANSNR_DIS_WEIGHT(52), ANSNR_DIS_WEIGHT(127),
    };
    memcpy(push.dis_weight, dis_weight, sizeof(dis_weight));
    vulkan_dispatch(t->dev, cb, &t->pipeline, &push, frame->height[0], 1);
    return 0;
}

static int float_ansnr_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                      FeatureSink *sink)
{
    FloatAnsnrTwin *t = twin;
    const float *rows = (const float *)t->row_sums.mapped + (size_t)slot * t->slot_floats;
    return float_ansnr_write_rows(t->metric, sink, frame->index, rows);
}

const VulkanTwin vulkan_twin_float_ansnr = {
    .metric = &metric_float_ansnr,
    .concurrent = true, /* its only buffers are per slot */
    .init = float_ansnr_vulkan_init,
    .record = float_ansnr_vulkan_record,
    .collect = float_ansnr_vulkan_collect,
    .close = float_ansnr_vulkan_close,
};
