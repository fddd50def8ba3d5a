/* What integer VIF's Vulkan twin shares with its test
 * (tests/test_integer_vif_vulkan.c): the table its shaders read. */
#ifndef QUALE_SRC_VULKAN_INTEGER_VIF_VULKAN_H
#define QUALE_SRC_VULKAN_INTEGER_VIF_VULKAN_H

#include <stdint.h>

#include "metrics/integer_vif/integer_vif.h"

/* The words of the table buffer: the log2 table, two entries a word, then
 * the eps adders (integer_vif_pixel.glsl's VIF_EPS_WORDS). */
#define VIF_VULKAN_TABLE_WORDS (VIF_LOG2_TABLE_SIZE / 2 + 32)

/* Fills the table from the log2 table of the state (VIF_LOG2_TABLE_SIZE
 * entries). */
void vif_vulkan_table(const uint16_t *log2_table, uint32_t words[VIF_VULKAN_TABLE_WORDS]);

#endif /* QUALE_SRC_VULKAN_INTEGER_VIF_VULKAN_H */
