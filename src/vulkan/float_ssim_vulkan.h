/*
 * What the Vulkan twins of float_ssim and float_ms_ssim share
 * (float_ssim_vulkan.c): the SSIM shader (float_ssim.comp), which sums the
 * SSIM terms of a picture pair per workgroup, the decimation shader
 * (float_ssim_decimate.comp), the device memory for the float pictures
 * they make, and the step from the partial sums to the means.
 *
 * Both shaders compute in double: the twins need shaderFloat64.
 */
#ifndef QUALE_SRC_VULKAN_FLOAT_SSIM_VULKAN_H
#define QUALE_SRC_VULKAN_FLOAT_SSIM_VULKAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/iqa.h"
#include "vulkan_twin.h"

/* The weights a decimation sends: one per orbit of the kernel's
 * symmetries (float_ssim_decimate.comp). */
#define SSIM_VULKAN_ORBITS 15

typedef struct SsimVulkan {
    const VulkanDevice *dev;
    VulkanPipeline ssim, decimate;
    VulkanBuffer planes;   /* device: one frame's float pictures (the slots take turns) */
    VulkanBuffer partials; /* host-visible: slots x per_slot doubles */
    unsigned per_slot;
    uint32_t bytes_per_sample;
    float inv_scaler;
} SsimVulkan;

/* A picture pair a shader reads: the frame's luma, or float planes (dense
 * rows) in the planes buffer. */
typedef struct SsimVulkanPair {
    uint32_t ref, dist;     /* luma: byte offsets (ring, frames); planes: float indices */
    uint32_t stride;        /* luma: bytes; planes: floats */
    uint32_t bytes_per_sample; /* 0 for float planes */
    int w, h;
} SsimVulkanPair;

/* The pipelines, plane_floats floats of device memory for the pictures
 * (none: 0) and partials_per_slot partial sums per slot (ssim_vulkan_groups
 * x 4 for every pair a frame sums). */
int ssim_vulkan_init(SsimVulkan *v, const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                     const QualeVideoFormat *format, size_t plane_floats,
                     unsigned partials_per_slot, unsigned slots, char *error, size_t error_size);
void ssim_vulkan_close(SsimVulkan *v);

/* The twins' state starts with their SsimVulkan: these are both twins'
 * close() and supports() (every option, where the device has
 * shaderFloat64). */
void ssim_vulkan_twin_close(void *twin);
bool ssim_vulkan_twin_supports(const VulkanDevice *dev, const void *metric_state);

/* The frame's luma, and float planes of the planes buffer. */
SsimVulkanPair ssim_vulkan_luma(const SsimVulkan *v, const VulkanFrame *frame);
SsimVulkanPair ssim_vulkan_planes(uint32_t ref, uint32_t dist, int w, int h);

/* The weight of each orbit of a taps x taps kernel (row-major), or -EINVAL
 * with the reason in error where the kernel does not have the symmetries
 * the shader assumes. */
int ssim_vulkan_orbits(const float *kernel, int taps, float weight[SSIM_VULKAN_ORBITS],
                       char *error, size_t error_size);

/* Records the decimation of src into dst (planes, dst_w x dst_h) by the
 * kernel of `taps` and these orbit weights at every factor-th sample. */
void ssim_vulkan_decimate(const SsimVulkan *v, VkCommandBuffer cb, const SsimVulkanPair *src,
                          const SsimVulkanPair *dst, int taps, int factor,
                          const float weight[SSIM_VULKAN_ORBITS]);

/* The workgroups (partial sums / 4) of the SSIM of a w x h pair. */
unsigned ssim_vulkan_groups(int w, int h);

/* Records the SSIM of a pair into the slot's partials from `first`. */
void ssim_vulkan_record(const SsimVulkan *v, VkCommandBuffer cb, const SsimVulkanPair *pair,
                        unsigned slot, unsigned first);

/* The means of a w x h pair from the slot's partials from `first`, the
 * workgroups' sums added in workgroup order (iqa_ssim_means). */
IqaSsimMeans ssim_vulkan_means(const SsimVulkan *v, unsigned slot, unsigned first, int w, int h);

#endif /* QUALE_SRC_VULKAN_FLOAT_SSIM_VULKAN_H */
