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

/* The block's members in their order, each's byte offset and the bytes it
 * spans: 0 with *count the block's number of members (the first `max`
 * written); 1 and -1 as above. */
typedef struct SpirvMember {
    uint32_t offset, size;
    int is_struct; /* a struct's size ends at its last member (no padding) */
} SpirvMember;
int spirv_push_constant_members(const uint32_t *words, size_t bytes, SpirvMember *members,
                                unsigned max, unsigned *count);

#endif /* QUALE_SRC_VULKAN_SPIRV_REFLECT_H */
