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

#include "metrics/common/iqa.h"
#include "gpu/vulkan/vulkan_twin.h"

/* The weights a decimation sends: one per orbit of the kernel's
 * symmetries (float_ssim_decimate.comp). */
#define SSIM_VULKAN_ORBITS 15

/* A picture pair a shader reads: the frame's luma, or float planes (dense
 * rows) in the planes buffer. */
typedef struct SsimVulkanPair {
    uint32_t ref, dist;     /* luma: byte offsets (ring, frames); planes: float indices */
    uint32_t stride;        /* luma: bytes; planes: floats */
    uint32_t bytes_per_sample; /* 0 for float planes */
    int w, h;
} SsimVulkanPair;

/* The plan's buffers and pipelines (the twin adds its rounds and collect):
 * plane_floats floats of pictures (one set, reused by every frame: the
 * twins keep the run on one lane), partials_per_slot doubles of sums per
 * slot, the SSIM pipeline (0) and, with pictures, the decimation (1). */
enum { SSIM_VULKAN_PIPELINE = 0, SSIM_VULKAN_DECIMATE = 1 };
void ssim_vulkan_plan(VulkanPlan *plan, size_t plane_floats, unsigned partials_per_slot);

bool ssim_vulkan_twin_supports(const VulkanDevice *dev, const void *metric_state);

/* The frame's luma, and float planes of the planes buffer. */
SsimVulkanPair ssim_vulkan_luma(const VulkanPlan *plan, const VulkanFrame *frame);
SsimVulkanPair ssim_vulkan_planes(uint32_t ref, uint32_t dist, int w, int h);

/* The weight of each orbit of a taps x taps kernel (row-major), or -EINVAL
 * with the reason in error where the kernel does not have the symmetries
 * the shader assumes. */
int ssim_vulkan_orbits(const float *kernel, int taps, float weight[SSIM_VULKAN_ORBITS],
                       char *error, size_t error_size);

/* A step: the decimation of src into dst (planes, dst_w x dst_h) by the
 * kernel's orbit weights, `factor` to one. */
void ssim_vulkan_decimate(const VulkanPlan *plan, VulkanStep *step, const SsimVulkanPair *src,
                          const SsimVulkanPair *dst, int taps, int factor,
                          const float weight[SSIM_VULKAN_ORBITS]);

/* The workgroups (partial sums / 4) of the SSIM of a w x h pair. */
unsigned ssim_vulkan_groups(int w, int h);

/* A step: the SSIM of a pair into the slot's partials from `first`. */
void ssim_vulkan_ssim(const VulkanPlan *plan, VulkanStep *step, const VulkanPlanMemory *memory,
                      const SsimVulkanPair *pair, unsigned first);

/* The means of a w x h pair from the slot's partials (results) from
 * `first`, the C reference's way (iqa_ssim_means). */
IqaSsimMeans ssim_vulkan_means(const void *results, unsigned first, int w, int h);

#endif /* QUALE_SRC_VULKAN_FLOAT_SSIM_VULKAN_H */
