/*
 * What the Vulkan twins of float_psnr and float_moment share: one shader
 * over the frame's luma (picture_float.glsl's LUMA_SUMS interface) that
 * writes exact 64-bit integer partial sums per workgroup of rows, read
 * back from host-visible memory after the slot's fence.  A LumaSums is the
 * twin's whole state: these functions are its init, record and close; the
 * twin adds its collect().  And what every float twin may use.
 */
#ifndef QUALE_SRC_VULKAN_PICTURE_FLOAT_VULKAN_H
#define QUALE_SRC_VULKAN_PICTURE_FLOAT_VULKAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vulkan_twin.h"

typedef struct LumaSums {
    const VulkanDevice *dev;
    const void *metric;     /* the metric's state */
    unsigned groups;        /* workgroups of rows per picture pass */
    unsigned passes;        /* dispatch height: 1, or 2 (one per picture) */
    unsigned per_slot;      /* partials per slot */
    uint32_t bytes_per_sample, float_squares;
    float inv_scaler, scaler_sq;
    VulkanBuffer partials;  /* host-visible: slots x per_slot x uint64 */
    VulkanPipeline pipeline;
} LumaSums;

/* The shader and what it computes: partials_per_group sums per workgroup
 * in `passes` passes; exact_sums and scaler are the metric's
 * (picture_float_sums_exact, picture_float_scaler). */
typedef struct LumaSumsShader {
    const unsigned char *spirv;
    size_t spirv_size;
    const char *what;
    unsigned passes, partials_per_group;
} LumaSumsShader;

/* init(): a new LumaSums in *out. */
int luma_sums_new(const LumaSumsShader *shader, const VulkanDevice *dev, VkBuffer ring,
                  VkBuffer frames, const void *metric, bool exact_sums, float scaler,
                  const QualeVideoFormat *format, unsigned slots, void **out, char *error,
                  size_t error_size);

/* record(): the frame's dispatch into the slot's partials. */
int luma_sums_record(void *twin, unsigned slot, const VulkanFrame *frame, VkCommandBuffer cb,
                     char *error, size_t error_size);

void luma_sums_close(void *twin);

/* For collect(): the sum of `count` consecutive partials from `first` of
 * the slot's. */
uint64_t luma_sums_total(const LumaSums *t, unsigned slot, unsigned first, unsigned count);

#endif /* QUALE_SRC_VULKAN_PICTURE_FLOAT_VULKAN_H */
