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

#include "float_ssim_vulkan.h"
#include "metrics/float_ms_ssim.h"
#include "picture_float_vulkan.h"

typedef struct FloatMsSsimTwin {
    SsimVulkan v; /* first: ssim_vulkan_twin_close() */
    const FloatMsSsimState *metric;
    uint32_t ref[MS_SSIM_SCALES], dist[MS_SSIM_SCALES]; /* scales 1 .. 4 in planes */
    unsigned first[MS_SSIM_SCALES];                     /* each scale's first partial */
    float weight[SSIM_VULKAN_ORBITS];                   /* the low-pass */
} FloatMsSsimTwin;

static int float_ms_ssim_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                     const void *metric_state, const QualeVideoFormat *format,
                                     unsigned slots, void **out, char *error, size_t error_size)
{
    const FloatMsSsimState *s = metric_state;
    /* The C reference's size check, on a copy of the state init set up. */
    FloatMsSsimState check = *s;
    int err = float_ms_ssim_setup(&check, format, error, error_size);
    if (err) return err;
    FloatMsSsimTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->metric = s;
    size_t floats = 0;
    unsigned partials = 0;
    for (unsigned i = 0; i < MS_SSIM_SCALES; i++) {
        if (i > 0) {
            const size_t plane = (size_t)s->w[i] * (size_t)s->h[i];
            t->ref[i] = (uint32_t)floats;
            t->dist[i] = (uint32_t)(floats + plane);
            floats += 2 * plane;
        }
        t->first[i] = partials;
        partials += 4 * ssim_vulkan_groups(s->w[i], s->h[i]);
    }
    static const float lpf[MS_SSIM_LPF_TAPS * MS_SSIM_LPF_TAPS] = { MS_SSIM_LPF };
    err = ssim_vulkan_orbits(lpf, MS_SSIM_LPF_TAPS, t->weight, error, error_size);
    if (!err)
        err = ssim_vulkan_init(&t->v, dev, ring, frames, format, floats, partials, slots, error,
                               error_size);
    if (err) {
        free(t);
        return err;
    }
    *out = t;
    return 0;
}

static int float_ms_ssim_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame,
                                       VkCommandBuffer cb, char *error, size_t error_size)
{
    (void)error;
    (void)error_size;
    FloatMsSsimTwin *t = twin;
    const FloatMsSsimState *s = t->metric;
    SsimVulkanPair pair[MS_SSIM_SCALES];
    pair[0] = ssim_vulkan_luma(&t->v, frame);
    for (unsigned i = 1; i < MS_SSIM_SCALES; i++)
        pair[i] = ssim_vulkan_planes(t->ref[i], t->dist[i], s->w[i], s->h[i]);
    /* the scales are the previous frame's until its shaders are done */
    vulkan_compute_barrier(t->v.dev, cb);
    for (unsigned i = 0; i < MS_SSIM_SCALES; i++) {
        ssim_vulkan_record(&t->v, cb, &pair[i], slot, t->first[i]);
        if (i + 1 < MS_SSIM_SCALES) {
            ssim_vulkan_decimate(&t->v, cb, &pair[i], &pair[i + 1], MS_SSIM_LPF_TAPS, 2,
                                 t->weight);
            vulkan_compute_barrier(t->v.dev, cb);
        }
    }
    return 0;
}

static int float_ms_ssim_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                        FeatureSink *sink)
{
    FloatMsSsimTwin *t = twin;
    const FloatMsSsimState *s = t->metric;
    IqaSsimMeans m[MS_SSIM_SCALES];
    for (unsigned i = 0; i < MS_SSIM_SCALES; i++)
        m[i] = ssim_vulkan_means(&t->v, slot, t->first[i], s->w[i], s->h[i]);
    return float_ms_ssim_write(s, sink, frame->index, m);
}

const VulkanTwin vulkan_twin_float_ms_ssim = {
    .metric = &metric_float_ms_ssim,
    .supports = ssim_vulkan_twin_supports,
    .init = float_ms_ssim_vulkan_init,
    .record = float_ms_ssim_vulkan_record,
    .collect_own = float_ms_ssim_vulkan_collect,
    .close = ssim_vulkan_twin_close,
};
