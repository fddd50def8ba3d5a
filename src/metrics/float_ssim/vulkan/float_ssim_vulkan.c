/*
 * float_ssim on Vulkan, and the SSIM machinery float_ms_ssim's twin shares
 * (float_ssim_vulkan.h).  The device shrinks the luma when the scale asks
 * (float_ssim_decimate.comp) and sums the SSIM terms per workgroup
 * (float_ssim.comp); the host adds the workgroups' sums in workgroup order
 * and finishes through the C reference's own iqa_ssim_means() and
 * float_ssim_write() (src/metrics/float_ssim.h), as the CUDA twin does.
 *
 * Device memory: the shrunk pictures of one frame (the frames take turns:
 * record() starts with a compute barrier), and per slot the partial sums
 * (4 doubles a workgroup, host-visible).  At scale 1 SSIM reads the frame's
 * luma where the backend uploaded it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "float_ssim_vulkan.h"
#include "metrics/float_ssim/float_ssim.h"
#include "metrics/common/vulkan/picture_float_vulkan.h"

VULKAN_SHADER(float_ssim);
VULKAN_SHADER(float_ssim_decimate);

enum {
    STRIP = 64,          /* float_ssim.comp: positions (columns) per workgroup */
    ROWS_PER_GROUP = 32, /* and rows */
    DECIMATE_GROUP = 64, /* float_ssim_decimate.comp: outputs per workgroup */
    SUMS = 4,            /* l c s, l, c, s */
};

/* Mirrors the push constants of float_ssim.comp. */
typedef struct SsimPush {
    uint32_t ref_offset, dist_offset, stride;
    int32_t width, height;
    uint32_t bytes_per_sample;
    float inv_scaler;
    int32_t rows_per_group;
    uint32_t out_offset;
    float c1, c2, c3;
    float g[IQA_GAUSSIAN_TAPS];
} SsimPush;

/* Mirrors the push constants of float_ssim_decimate.comp. */
typedef struct DecimatePush {
    uint32_t ref_offset, dist_offset, stride;
    int32_t width, height;
    uint32_t bytes_per_sample;
    float inv_scaler;
    uint32_t dst_ref, dst_dist, dst_width, dst_height;
    int32_t taps, factor;
    float weight[SSIM_VULKAN_ORBITS];
} DecimatePush;

_Static_assert(sizeof(DecimatePush) <= 128 && sizeof(SsimPush) <= 128,
               "push constants: 128 bytes are all every device offers");

/* ---- shared with float_ms_ssim (float_ssim_vulkan.h) --------------------- */

/* The helper's buffers. */
enum { PLANES, PARTIALS, BUFFERS };

void ssim_vulkan_plan(VulkanPlan *plan, size_t plane_floats, unsigned partials_per_slot)
{
    plan->buffers[PLANES] = (VulkanPlanBuffer){ .what = "SSIM pictures",
                                                .bytes = plane_floats * sizeof(float),
                                                .scope = VULKAN_PER_RUN };
    vulkan_plan_results(plan, PARTIALS, "SSIM partial sums",
                        (VkDeviceSize)partials_per_slot * sizeof(double));
    plan->buffer_count = BUFFERS;
    plan->pipelines[SSIM_VULKAN_PIPELINE] = (VulkanPlanPipeline){
        VULKAN_SPIRV(float_ssim), .what = "the SSIM shader",
        .push = *VULKAN_PUSH(SsimPush, ref_offset, dist_offset, stride, width, height,
                             bytes_per_sample, inv_scaler, rows_per_group, out_offset, c1, c2, c3,
                             g),
        VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, PLANES, PARTIALS),
    };
    plan->pipeline_count = 1;
    if (plane_floats) {
        plan->pipelines[SSIM_VULKAN_DECIMATE] = (VulkanPlanPipeline){
            VULKAN_SPIRV(float_ssim_decimate), .what = "the SSIM decimation shader",
            .push = *VULKAN_PUSH(DecimatePush, ref_offset, dist_offset, stride, width, height,
                                 bytes_per_sample, inv_scaler, dst_ref, dst_dist, dst_width,
                                 dst_height, taps, factor, weight),
            VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, PLANES),
        };
        plan->pipeline_count = 2;
    }
}

/* exact: a power of two */
static float inv_scaler(const VulkanPlan *plan)
{
    return 1.0f / (float)(1u << (plan->format.bitdepth - 8));
}

bool ssim_vulkan_twin_supports(const VulkanDevice *dev, const void *metric_state)
{
    (void)metric_state;
    return dev->features.shaderFloat64;
}

SsimVulkanPair ssim_vulkan_luma(const VulkanPlan *plan, const VulkanFrame *frame)
{
    return (SsimVulkanPair){
        .ref = (uint32_t)frame->ref_offset[0],
        .dist = (uint32_t)frame->dist_offset[0],
        .stride = frame->stride[0],
        .bytes_per_sample = plan->format.bitdepth > 8 ? 2 : 1,
        .w = (int)frame->width[0],
        .h = (int)frame->height[0],
    };
}

SsimVulkanPair ssim_vulkan_planes(uint32_t ref, uint32_t dist, int w, int h)
{
    return (SsimVulkanPair){ .ref = ref, .dist = dist, .stride = (uint32_t)w, .w = w, .h = h };
}

/* The orbit of tap (v, u): float_ssim_decimate.comp's orbit(). */
static int orbit(int taps, int v, int u)
{
    const int a = v < taps - 1 - v ? v : taps - 1 - v;
    const int b = u < taps - 1 - u ? u : taps - 1 - u;
    const int lo = a < b ? a : b, hi = a < b ? b : a;
    return hi * (hi + 1) / 2 + lo;
}

int ssim_vulkan_orbits(const float *kernel, int taps, float weight[SSIM_VULKAN_ORBITS],
                       char *error, size_t error_size)
{
    bool set[SSIM_VULKAN_ORBITS] = { false };
    for (int v = 0; v < taps; v++) {
        for (int u = 0; u < taps; u++) {
            const int o = orbit(taps, v, u);
            const float k = kernel[v * taps + u];
            if (o >= SSIM_VULKAN_ORBITS || (set[o] && memcmp(&weight[o], &k, sizeof(k)))) {
                snprintf(error, error_size, "a %dx%d decimation kernel without the symmetries "
                         "of the Vulkan shader", taps, taps);
                return -EINVAL;
            }
            weight[o] = k;
            set[o] = true;
        }
    }
    return 0;
}

void ssim_vulkan_decimate(const VulkanPlan *plan, VulkanStep *step, const SsimVulkanPair *src,
                          const SsimVulkanPair *dst, int taps, int factor,
                          const float weight[SSIM_VULKAN_ORBITS])
{
    DecimatePush push = {
        .ref_offset = src->ref,
        .dist_offset = src->dist,
        .stride = src->stride,
        .width = src->w,
        .height = src->h,
        .bytes_per_sample = src->bytes_per_sample,
        .inv_scaler = inv_scaler(plan),
        .dst_ref = dst->ref,
        .dst_dist = dst->dist,
        .dst_width = (uint32_t)dst->w,
        .dst_height = (uint32_t)dst->h,
        .taps = taps,
        .factor = factor,
    };
    memcpy(push.weight, weight, sizeof(push.weight));
    VULKAN_STEP_SET(step, SSIM_VULKAN_DECIMATE,
                    ((unsigned)dst->w + DECIMATE_GROUP - 1) / DECIMATE_GROUP, (unsigned)dst->h,
                    push);
}

static unsigned groups_x(int w)
{
    return ((unsigned)(w - (IQA_GAUSSIAN_TAPS - 1)) + STRIP - 1) / STRIP;
}

static unsigned groups_y(int h)
{
    return ((unsigned)(h - (IQA_GAUSSIAN_TAPS - 1)) + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP;
}

unsigned ssim_vulkan_groups(int w, int h)
{
    return groups_x(w) * groups_y(h);
}

void ssim_vulkan_ssim(const VulkanPlan *plan, VulkanStep *step, const VulkanPlanMemory *memory,
                      const SsimVulkanPair *pair, unsigned first)
{
    static const float gaussian[IQA_GAUSSIAN_TAPS] = { IQA_GAUSSIAN_WINDOW };
    SsimPush push = {
        .ref_offset = pair->ref,
        .dist_offset = pair->dist,
        .stride = pair->stride,
        .width = pair->w,
        .height = pair->h,
        .bytes_per_sample = pair->bytes_per_sample,
        .inv_scaler = inv_scaler(plan),
        .rows_per_group = ROWS_PER_GROUP,
        .out_offset = (uint32_t)(memory->offset[PARTIALS] / sizeof(double)) + first,
        .c1 = IQA_SSIM_C1,
        .c2 = IQA_SSIM_C2,
        .c3 = IQA_SSIM_C3,
    };
    memcpy(push.g, gaussian, sizeof(gaussian));
    VULKAN_STEP_SET(step, SSIM_VULKAN_PIPELINE, groups_x(pair->w), groups_y(pair->h), push);
}

IqaSsimMeans ssim_vulkan_means(const void *results, unsigned first, int w, int h)
{
    const double *p = (const double *)results + first;
    IqaSsimSums sums = { 0.0, 0.0, 0.0, 0.0 };
    for (unsigned g = 0; g < ssim_vulkan_groups(w, h); g++, p += SUMS) {
        sums.ssim += p[0];
        sums.l += p[1];
        sums.c += p[2];
        sums.s += p[3];
    }
    return iqa_ssim_means(&sums, w, h);
}

/* ---- float_ssim's twin ------------------------------------------------------ */

/* The plan of a run: the box's weights, with a downscale. */
typedef struct FloatSsimRun {
    float weight[SSIM_VULKAN_ORBITS];
} FloatSsimRun;

static int float_ssim_vulkan_plan(const VulkanDevice *dev, const void *state,
                                  const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                                  size_t error_size)
{
    const FloatSsimState *s = state;
    /* The C reference's size check, on a copy of the state init set up. */
    FloatSsimState check = *s;
    int err = float_ssim_setup(&check, format, error, error_size);
    if (err) return err;
    FloatSsimRun *r = calloc(1, sizeof(*r));
    if (!r) return -ENOMEM;
    plan->own = r;
    const size_t plane = (size_t)s->scaled_w * (size_t)s->scaled_h;
    if (s->scale > 1) err = ssim_vulkan_orbits(s->box, s->scale, r->weight, error, error_size);
    if (err) return err;
    ssim_vulkan_plan(plan, s->scale > 1 ? 2 * plane : 0,
                     SUMS * ssim_vulkan_groups(s->scaled_w, s->scaled_h));
    /* with a downscale: the shrunk pictures, then their SSIM */
    plan->rounds = s->scale > 1 ? 2 : 1;
    return 0;
}

static int float_ssim_vulkan_round(const VulkanPlan *plan, unsigned round,
                                   const VulkanPlanMemory *memory, VulkanStep *steps, char *error,
                                   size_t error_size)
{
    const FloatSsimState *s = plan->state;
    const FloatSsimRun *r = plan->own;
    const SsimVulkanPair luma = ssim_vulkan_luma(plan, memory->frame);
    const SsimVulkanPair shrunk =
        ssim_vulkan_planes(0, (uint32_t)(s->scaled_w * s->scaled_h), s->scaled_w, s->scaled_h);
    if (s->scale > 1 && round == 0)
        ssim_vulkan_decimate(plan, &steps[0], &luma, &shrunk, s->scale, s->scale, r->weight);
    else
        ssim_vulkan_ssim(plan, &steps[0], memory, s->scale > 1 ? &shrunk : &luma, 0);
    return 1;
}

static int float_ssim_vulkan_collect(const VulkanPlan *plan, const void *results,
                                     const MetricFrame *frame, FeatureSink *sink)
{
    const FloatSsimState *s = plan->state;
    const IqaSsimMeans m = ssim_vulkan_means(results, 0, s->scaled_w, s->scaled_h);
    return float_ssim_write(s, sink, frame->index, &m);
}

const VulkanTwin vulkan_twin_float_ssim = {
    VULKAN_TWIN_OF(float_ssim),
    .supports = ssim_vulkan_twin_supports,
};
