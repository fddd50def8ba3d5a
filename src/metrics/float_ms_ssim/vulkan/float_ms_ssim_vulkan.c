/*
 * float_ms_ssim on Vulkan: the device decimates the luma four times with
 * libvmaf's 9 x 9 low-pass (float_ssim_decimate.comp) and sums the SSIM
 * terms of the five scales per workgroup (float_ssim.comp), through what
 * float_ssim's twin shares (float_ssim_vulkan.h); the host adds each
 * scale's workgroup sums in workgroup order and finishes through the C
 * reference's own iqa_ssim_means() and float_ms_ssim_write()
 * (src/metrics/float_ms_ssim.h), as the CUDA twin does.
 *
 * Per frame, a compute barrier between the rounds (each reads what the one
 * before wrote): SSIM of scale 0 with the decimation to scale 1, SSIM of
 * scale 1 with the decimation to scale 2, ... SSIM of scale 4.  Device
 * memory: scales 1 to 4 of one frame (the frames take turns), and per
 * slot the partial sums (scale 0's workgroups first).
 */
#include <errno.h>
#include <stdlib.h>

#include "metrics/float_ssim/vulkan/float_ssim_vulkan.h"
#include "metrics/float_ms_ssim/float_ms_ssim.h"
#include "metrics/common/vulkan/picture_float_vulkan.h"

/* The plan of a run: where scales 1 .. 4 are in the pictures, where each
 * scale's partials start, and the low-pass's weights. */
typedef struct FloatMsSsimRun {
    uint32_t ref[MS_SSIM_SCALES], dist[MS_SSIM_SCALES];
    unsigned first[MS_SSIM_SCALES];
    float weight[SSIM_VULKAN_ORBITS];
} FloatMsSsimRun;

static int float_ms_ssim_vulkan_plan(const VulkanDevice *dev, const void *state,
                                     const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                                     size_t error_size)
{
    const FloatMsSsimState *s = state;
    /* The C reference's size check, on a copy of the state init set up. */
    FloatMsSsimState check = *s;
    int err = float_ms_ssim_setup(&check, format, error, error_size);
    if (err) return err;
    FloatMsSsimRun *r = calloc(1, sizeof(*r));
    if (!r) return -ENOMEM;
    plan->own = r;
    size_t floats = 0;
    unsigned partials = 0;
    for (unsigned i = 0; i < MS_SSIM_SCALES; i++) {
        if (i > 0) {
            const size_t plane = (size_t)s->w[i] * (size_t)s->h[i];
            r->ref[i] = (uint32_t)floats;
            r->dist[i] = (uint32_t)(floats + plane);
            floats += 2 * plane;
        }
        r->first[i] = partials;
        partials += 4 * ssim_vulkan_groups(s->w[i], s->h[i]);
    }
    static const float lpf[MS_SSIM_LPF_TAPS * MS_SSIM_LPF_TAPS] = { MS_SSIM_LPF };
    err = ssim_vulkan_orbits(lpf, MS_SSIM_LPF_TAPS, r->weight, error, error_size);
    if (err) return err;
    ssim_vulkan_plan(plan, floats, partials);
    /* round i: scale i's SSIM and its low-pass to scale i + 1 */
    plan->rounds = MS_SSIM_SCALES;
    return 0;
}

static SsimVulkanPair scale_pair(const VulkanPlan *plan, const VulkanFrame *frame, unsigned i)
{
    const FloatMsSsimState *s = plan->state;
    const FloatMsSsimRun *r = plan->own;
    return i == 0 ? ssim_vulkan_luma(plan, frame)
                  : ssim_vulkan_planes(r->ref[i], r->dist[i], s->w[i], s->h[i]);
}

static int float_ms_ssim_vulkan_round(const VulkanPlan *plan, unsigned i,
                                      const VulkanPlanMemory *memory, VulkanStep *steps,
                                      char *error, size_t error_size)
{
    const FloatMsSsimRun *r = plan->own;
    const SsimVulkanPair pair = scale_pair(plan, memory->frame, i);
    ssim_vulkan_ssim(plan, &steps[0], memory, &pair, r->first[i]);
    if (i + 1 == MS_SSIM_SCALES) return 1;
    const SsimVulkanPair next = scale_pair(plan, memory->frame, i + 1);
    ssim_vulkan_decimate(plan, &steps[1], &pair, &next, MS_SSIM_LPF_TAPS, 2, r->weight);
    return 2;
}

static int float_ms_ssim_vulkan_collect(const VulkanPlan *plan, const void *results,
                                        const MetricFrame *frame, FeatureSink *sink)
{
    const FloatMsSsimState *s = plan->state;
    const FloatMsSsimRun *r = plan->own;
    IqaSsimMeans m[MS_SSIM_SCALES];
    for (unsigned i = 0; i < MS_SSIM_SCALES; i++)
        m[i] = ssim_vulkan_means(results, r->first[i], s->w[i], s->h[i]);
    return float_ms_ssim_write(s, sink, frame->index, m);
}

const VulkanTwin vulkan_twin_float_ms_ssim = {
    VULKAN_TWIN_OF(float_ms_ssim),
    .supports = ssim_vulkan_twin_supports,
};
