/* float_ansnr on Vulkan: the device filters both pictures and sums each
 * row's squares in float, bit for bit as the C reference
 * (float_ansnr.comp); the host adds the rows' sums in float in row order,
 * as the C reference does, and finishes through its own
 * float_ansnr_write() (src/metrics/float_ansnr.h). */
#include <string.h>

#include "metrics/float_ansnr/float_ansnr.h"
#include "metrics/common/vulkan/picture_float_vulkan.h"

VULKAN_SHADER(float_ansnr);

/* Mirrors the push constants of float_ansnr.comp. */
typedef struct FloatAnsnrPush {
    uint32_t ref_offset, dist_offset, stride;
    int32_t width, height;
    uint32_t bytes_per_sample;
    float inv_scaler;
    uint32_t out_offset;
    float dis_weight[6];
} FloatAnsnrPush;

/* The plan's buffers. */
enum { RESULTS, BUFFERS };


/* One pipeline over the ring, the frames and the results: per slot the
 * rows' two sums, 2 x height floats. */
static int float_ansnr_vulkan_plan(const VulkanDevice *dev, const void *state,
                                   const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                                   size_t error_size)
{
    const int err = float_ansnr_check_size(format->width, format->height, error, error_size);
    if (err) return err;
    const VulkanPlanPipeline shader = {
        VULKAN_SPIRV(float_ansnr), .what = "float_ansnr's shader",
        .push = *VULKAN_PUSH(FloatAnsnrPush, ref_offset, dist_offset, stride, width, height,
                             bytes_per_sample, inv_scaler, out_offset, dis_weight),
        VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, RESULTS),
    };
    return vulkan_plan_one_shader(plan, &shader, RESULTS, "float_ansnr row sums",
                                  2 * (size_t)format->height * sizeof(float), BUFFERS);
}

/* A workgroup a row. */
static int float_ansnr_vulkan_round(const VulkanPlan *plan, unsigned round,
                                    const VulkanPlanMemory *memory, VulkanStep *steps, char *error,
                                    size_t error_size)
{
    const VulkanFrame *frame = memory->frame;
    const unsigned bitdepth = plan->format.bitdepth;
    FloatAnsnrPush push = {
        .ref_offset = (uint32_t)frame->ref_offset[0],
        .dist_offset = (uint32_t)frame->dist_offset[0],
        .stride = frame->stride[0],
        .width = (int32_t)frame->width[0],
        .height = (int32_t)frame->height[0],
        .bytes_per_sample = bitdepth > 8 ? 2 : 1,
        /* exact: a power of two */
        .inv_scaler = 1.0f / (float)(1u << (bitdepth - 8)),
        .out_offset = (uint32_t)(memory->offset[RESULTS] / sizeof(float)),
    };
    /* The distinct weights, in the shader's order, as the C computes them. */
    static const float dis_weight[6] = {
        ANSNR_DIS_WEIGHT(2), ANSNR_DIS_WEIGHT(7), ANSNR_DIS_WEIGHT(12),
        ANSNR_DIS_WEIGHT(31), ANSNR_DIS_WEIGHT(52), ANSNR_DIS_WEIGHT(127),
    };
    memcpy(push.dis_weight, dis_weight, sizeof(dis_weight));
    VULKAN_STEP_SET(&steps[0], 0, frame->height[0], 1, push);
    return 1;
}

static int float_ansnr_vulkan_collect(const VulkanPlan *plan, const void *results,
                                      const MetricFrame *frame, FeatureSink *sink)
{
    return float_ansnr_write_rows(plan->state, sink, frame->index, results);
}

const VulkanTwin vulkan_twin_float_ansnr = {
    VULKAN_TWIN_OF(float_ansnr),
    .concurrent = true, /* its only buffer is per slot */
};
