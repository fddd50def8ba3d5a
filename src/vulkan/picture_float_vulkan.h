/*
 * What the Vulkan twins of float_psnr and float_moment share: one shader
 * over the frame's luma (picture_float.glsl's LUMA_SUMS interface) that
 * writes exact 64-bit integer partial sums per workgroup of rows, read
 * back from host-visible memory after the slot's fence.
 */
#ifndef QUALE_SRC_VULKAN_PICTURE_FLOAT_VULKAN_H
#define QUALE_SRC_VULKAN_PICTURE_FLOAT_VULKAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vulkan_twin.h"

typedef struct LumaSums {
    const VulkanDevice *dev;
    unsigned groups;        /* workgroups of rows per picture pass */
    unsigned passes;        /* dispatch height: 1, or 2 (one per picture) */
    unsigned per_slot;      /* partials per slot */
    uint32_t bytes_per_sample, float_squares;
    float inv_scaler, scaler_sq;
    VulkanBuffer partials;  /* host-visible: slots x per_slot x uint64 */
    VulkanPipeline pipeline;
} LumaSums;

/* The pipeline and the partials of a shader that writes partials_per_group
 * sums per workgroup; exact_sums and scaler are the metric's
 * (picture_float_sums_exact, picture_float_scaler).  On failure everything
 * made is released. */
int luma_sums_init(LumaSums *t, const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                   const unsigned char *spirv, size_t spirv_size, const QualeVideoFormat *format,
                   bool exact_sums, float scaler, unsigned passes, unsigned partials_per_group,
                   unsigned slots, const char *what, char *error, size_t error_size);

/* Records the frame's dispatch into the slot's partials. */
void luma_sums_record(const LumaSums *t, unsigned slot, const VulkanFrame *frame,
                      VkCommandBuffer cb);

/* The sum of `count` consecutive partials from `first` of the slot's. */
uint64_t luma_sums_total(const LumaSums *t, unsigned slot, unsigned first, unsigned count);

void luma_sums_close(LumaSums *t);

#endif /* QUALE_SRC_VULKAN_PICTURE_FLOAT_VULKAN_H */
