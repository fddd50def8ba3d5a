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
#include "metrics/float_ssim.h"
#include "picture_float_vulkan.h"

extern const unsigned char vulkan_shader_float_ssim[];
extern const size_t vulkan_shader_float_ssim_size;
extern const unsigned char vulkan_shader_float_ssim_decimate[];
extern const size_t vulkan_shader_float_ssim_decimate_size;

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

int ssim_vulkan_init(SsimVulkan *v, const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                     const QualeVideoFormat *format, size_t plane_floats,
                     unsigned partials_per_slot, unsigned slots, char *error, size_t error_size)
{
    memset(v, 0, sizeof(*v));
    v->dev = dev;
    v->per_slot = partials_per_slot;
    v->bytes_per_sample = format->bitdepth > 8 ? 2 : 1;
    /* exact: a power of two */
    v->inv_scaler = 1.0f / (float)(1u << (format->bitdepth - 8));
    int err = vulkan_buffer_create(dev, (VkDeviceSize)plane_floats * sizeof(float),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, false, &v->planes,
                                   "SSIM pictures", error, error_size);
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)slots * partials_per_slot * sizeof(double),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &v->partials,
                                   "SSIM partial sums", error, error_size);
    if (!err) {
        const VkBuffer buffers[4] = { ring, frames, v->planes.buffer, v->partials.buffer };
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_float_ssim,
                                     vulkan_shader_float_ssim_size, buffers, 4, VULKAN_PUSH(SsimPush, ref_offset, dist_offset, stride, width, height, bytes_per_sample, inv_scaler, rows_per_group, out_offset, c1, c2, c3, g),
                                     &v->ssim, "the SSIM shader", error, error_size);
    }
    if (!err && plane_floats) {
        const VkBuffer buffers[3] = { ring, frames, v->planes.buffer };
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_float_ssim_decimate,
                                     vulkan_shader_float_ssim_decimate_size, buffers, 3,
                                     VULKAN_PUSH(DecimatePush, ref_offset, dist_offset, stride, width, height, bytes_per_sample, inv_scaler, dst_ref, dst_dist, dst_width, dst_height, taps, factor, weight), &v->decimate,
                                     "the SSIM decimation shader", error, error_size);
    }
    if (err) ssim_vulkan_close(v);
    return err;
}

void ssim_vulkan_close(SsimVulkan *v)
{
    if (!v->dev) return;
    vulkan_pipeline_destroy(v->dev, &v->ssim);
    vulkan_pipeline_destroy(v->dev, &v->decimate);
    vulkan_buffer_destroy(v->dev, &v->planes);
    vulkan_buffer_destroy(v->dev, &v->partials);
    v->dev = NULL;
}

void ssim_vulkan_twin_close(void *twin)
{
    if (!twin) return;
    ssim_vulkan_close(twin);
    free(twin);
}

bool ssim_vulkan_twin_supports(const VulkanDevice *dev, const void *metric_state)
{
    (void)metric_state;
    return dev->features.shaderFloat64;
}

SsimVulkanPair ssim_vulkan_luma(const SsimVulkan *v, const VulkanFrame *frame)
{
    return (SsimVulkanPair){
        .ref = (uint32_t)frame->ref_offset[0],
        .dist = (uint32_t)frame->dist_offset[0],
        .stride = frame->stride[0],
        .bytes_per_sample = v->bytes_per_sample,
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

void ssim_vulkan_decimate(const SsimVulkan *v, VkCommandBuffer cb, const SsimVulkanPair *src,
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
        .inv_scaler = v->inv_scaler,
        .dst_ref = dst->ref,
        .dst_dist = dst->dist,
        .dst_width = (uint32_t)dst->w,
        .dst_height = (uint32_t)dst->h,
        .taps = taps,
        .factor = factor,
    };
    memcpy(push.weight, weight, sizeof(push.weight));
    vulkan_dispatch(v->dev, cb, &v->decimate, &push,
                    ((unsigned)dst->w + DECIMATE_GROUP - 1) / DECIMATE_GROUP, (unsigned)dst->h);
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

void ssim_vulkan_record(const SsimVulkan *v, VkCommandBuffer cb, const SsimVulkanPair *pair,
                        unsigned slot, unsigned first)
{
    static const float gaussian[IQA_GAUSSIAN_TAPS] = { IQA_GAUSSIAN_WINDOW };
    SsimPush push = {
        .ref_offset = pair->ref,
        .dist_offset = pair->dist,
        .stride = pair->stride,
        .width = pair->w,
        .height = pair->h,
        .bytes_per_sample = pair->bytes_per_sample,
        .inv_scaler = v->inv_scaler,
        .rows_per_group = ROWS_PER_GROUP,
        .out_offset = slot * v->per_slot + first,
        .c1 = IQA_SSIM_C1,
        .c2 = IQA_SSIM_C2,
        .c3 = IQA_SSIM_C3,
    };
    memcpy(push.g, gaussian, sizeof(gaussian));
    vulkan_dispatch(v->dev, cb, &v->ssim, &push, groups_x(pair->w), groups_y(pair->h));
}

IqaSsimMeans ssim_vulkan_means(const SsimVulkan *v, unsigned slot, unsigned first, int w, int h)
{
    const double *p = (const double *)v->partials.mapped + (size_t)slot * v->per_slot + first;
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

typedef struct FloatSsimTwin {
    SsimVulkan v; /* first: ssim_vulkan_twin_close() */
    const FloatSsimState *metric;
    float weight[SSIM_VULKAN_ORBITS]; /* the box, with a downscale */
} FloatSsimTwin;

static int float_ssim_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                  const void *metric_state, const QualeVideoFormat *format,
                                  unsigned slots, void **out, char *error, size_t error_size)
{
    const FloatSsimState *s = metric_state;
    /* The C reference's size check, on a copy of the state init set up. */
    FloatSsimState check = *s;
    int err = float_ssim_setup(&check, format, error, error_size);
    if (err) return err;
    FloatSsimTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->metric = s;
    const size_t plane = (size_t)s->scaled_w * (size_t)s->scaled_h;
    if (s->scale > 1) err = ssim_vulkan_orbits(s->box, s->scale, t->weight, error, error_size);
    if (!err)
        err = ssim_vulkan_init(&t->v, dev, ring, frames, format, s->scale > 1 ? 2 * plane : 0,
                               SUMS * ssim_vulkan_groups(s->scaled_w, s->scaled_h), slots, error,
                               error_size);
    if (err) {
        free(t);
        return err;
    }
    *out = t;
    return 0;
}

static int float_ssim_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame,
                                    VkCommandBuffer cb, char *error, size_t error_size)
{
    (void)error;
    (void)error_size;
    FloatSsimTwin *t = twin;
    const FloatSsimState *s = t->metric;
    SsimVulkanPair pair = ssim_vulkan_luma(&t->v, frame);
    if (s->scale > 1) {
        const SsimVulkanPair shrunk =
            ssim_vulkan_planes(0, (uint32_t)(s->scaled_w * s->scaled_h), s->scaled_w, s->scaled_h);
        /* the shrunk pictures are the previous frame's until its shaders are done */
        vulkan_compute_barrier(t->v.dev, cb);
        ssim_vulkan_decimate(&t->v, cb, &pair, &shrunk, s->scale, s->scale, t->weight);
        vulkan_compute_barrier(t->v.dev, cb);
        pair = shrunk;
    }
    ssim_vulkan_record(&t->v, cb, &pair, slot, 0);
    return 0;
}

static int float_ssim_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                     FeatureSink *sink)
{
    FloatSsimTwin *t = twin;
    const IqaSsimMeans m = ssim_vulkan_means(&t->v, slot, 0, t->metric->scaled_w,
                                             t->metric->scaled_h);
    return float_ssim_write(t->metric, sink, frame->index, &m);
}

const VulkanTwin vulkan_twin_float_ssim = {
    .metric = &metric_float_ssim,
    .supports = ssim_vulkan_twin_supports,
    .init = float_ssim_vulkan_init,
    .record = float_ssim_vulkan_record,
    .collect_own = float_ssim_vulkan_collect,
    .close = ssim_vulkan_twin_close,
};
