/* float_psnr on Vulkan: the device sums the frame's noise as an exact
 * integer (float_psnr.comp), in per-workgroup partials; the host adds them
 * and finishes through the C reference's own steps (float_psnr_noise,
 * float_psnr_write of src/metrics/float_psnr.h), as the CUDA twin does. */
#include <errno.h>
#include <stdlib.h>

#include "metrics/float_psnr.h"
#include "picture_float_vulkan.h"

extern const unsigned char vulkan_shader_float_psnr[];
extern const size_t vulkan_shader_float_psnr_size;

typedef struct FloatPsnrTwin {
    const FloatPsnrState *metric;
    LumaSums sums; /* one partial per workgroup */
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
    luma_sums_close(&t->sums);
    free(t);
}

static int float_psnr_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                  const void *metric_state, const QualeVideoFormat *format,
                                  unsigned slots, void **out, char *error, size_t error_size)
{
    FloatPsnrTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->metric = metric_state;
    int err = luma_sums_init(&t->sums, dev, ring, frames, vulkan_shader_float_psnr,
                             vulkan_shader_float_psnr_size, format, t->metric->exact_sums,
                             t->metric->scaler, 1, 1, slots, "float_psnr's shader", error,
                             error_size);
    if (err) {
        free(t);
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
    luma_sums_record(&t->sums, slot, frame, cb);
    return 0;
}

static int float_psnr_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                     FeatureSink *sink)
{
    FloatPsnrTwin *t = twin;
    const uint64_t units = luma_sums_total(&t->sums, slot, 0, t->sums.groups);
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
