/*
 * What the Vulkan twins of float_psnr and float_moment share: one shader
 * over the frame's luma (picture_float.glsl's LUMA_SUMS interface) that
 * writes exact 64-bit integer partial sums per workgroup of rows, read
 * back from the slot's results after its fence.  These functions are the
 * twin's plan() and round(); the twin adds its collect().
 */
#ifndef QUALE_SRC_VULKAN_PICTURE_FLOAT_VULKAN_H
#define QUALE_SRC_VULKAN_PICTURE_FLOAT_VULKAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/vulkan/vulkan_twin.h"

/* The shader and what it computes: partials_per_group sums per workgroup
 * in `passes` passes. */
typedef struct LumaSumsShader {
    const unsigned char *spirv;
    size_t spirv_size;
    const char *what;
    unsigned passes, partials_per_group;
} LumaSumsShader;

/* The twin's plan(): the shader's pipeline over the ring, the frames and
 * the results, one round of one dispatch; exact_sums and scaler are the
 * metric's (picture_float_sums_exact, picture_float_scaler). */
int luma_sums_plan(const LumaSumsShader *shader, bool exact_sums, float scaler,
                   const QualeVideoFormat *format, VulkanPlan *plan);

/* The twin's round(). */
int luma_sums_round(const VulkanPlan *plan, unsigned round, const VulkanPlanMemory *memory,
                    VulkanStep *steps, char *error, size_t error_size);

/* For collect(): the workgroups of a pass, and the sum of `count`
 * consecutive partials from `first` of the slot's results. */
unsigned luma_sums_groups(const VulkanPlan *plan);
uint64_t luma_sums_total(const void *results, unsigned first, unsigned count);

#endif /* QUALE_SRC_VULKAN_PICTURE_FLOAT_VULKAN_H */
