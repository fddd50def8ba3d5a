/* What a SPIR-V module says about itself (spirv_reflect.c). */
#ifndef QUALE_SRC_VULKAN_SPIRV_REFLECT_H
#define QUALE_SRC_VULKAN_SPIRV_REFLECT_H

#include <stddef.h>
#include <stdint.h>

/* The bytes the module's push-constant block spans (the end of its last
 * member): 0 and *size set; 1 when it has no push constants; -1 when the
 * module is not SPIR-V or the block holds a type this reader does not
 * know. */
int spirv_push_constant_size(const uint32_t *words, size_t bytes, uint32_t *size);

#endif /* QUALE_SRC_VULKAN_SPIRV_REFLECT_H */
