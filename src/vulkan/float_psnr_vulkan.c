/* float_psnr on Vulkan: the device sums the frame's noise as an exact
 * integer (float_psnr.comp), in per-workgroup partials; the host adds them
 * and finishes through the C reference's own steps (float_psnr_noise,
 * float_psnr_write of src/metrics/float_psnr.h), as the CUDA twin does.
 * The rest of the twin is picture_float_vulkan.h's. */
#include "metrics/float_psnr.h"
#include "picture_float_vulkan.h"

extern const unsigned char vulkan_shader_float_psnr[];
extern const size_t vulkan_shader_float_psnr_size;

static int float_psnr_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                  const void *metric_state, const QualeVideoFormat *format,
                                  unsigned slots, void **out, char *error, size_t error_size)
{
    /* one sum per workgroup */
    const LumaSumsShader shader = { vulkan_shader_float_psnr, vulkan_shader_float_psnr_size,
                                    "float_psnr's shader", 1, 1 };
    const FloatPsnrState *s = metric_state;
    return luma_sums_new(&shader, dev, ring, frames, s, s->exact_sums, s->scaler, format, slots,
                         out, error, error_size);
}

static int float_psnr_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                     FeatureSink *sink)
{
    const LumaSums *t = twin;
    const FloatPsnrState *s = t->metric;
    const uint64_t units = luma_sums_total(t, slot, 0, t->groups);
    return float_psnr_write(s, sink, frame, float_psnr_noise(s, units));
}

const VulkanTwin vulkan_twin_float_psnr = {
    .metric = &metric_float_psnr,
    .concurrent = true, /* its only buffers are per slot */
    .init = float_psnr_vulkan_init,
    .record = luma_sums_record,
    .collect = float_psnr_vulkan_collect,
    .close = luma_sums_close,
};
