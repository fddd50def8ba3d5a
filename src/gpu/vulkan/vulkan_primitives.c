/*
 * The Vulkan primitives the twins and the backend build on: buffers
 * (device-local, host-visible, constant), compute pipelines with their
 * push-constant layout checked against the shader, dispatches and
 * barriers.  The frame scheduler is vulkan_backend.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spirv_reflect.h"
#include "vulkan_primitives.h"

/* ---- queues shared by the contexts of a process (vulkan_device.c) -------- */

VkResult vulkan_queue_submit(const VulkanDevice *dev, VkQueue queue, uint32_t count,
                             const VkSubmitInfo *submits, VkFence fence)
{
    if (dev->submit_lock) pthread_mutex_lock(dev->submit_lock);
    const VkResult r = dev->api.vkQueueSubmit(queue, count, submits, fence);
    if (dev->submit_lock) pthread_mutex_unlock(dev->submit_lock);
    return r;
}

VkResult vulkan_device_wait_idle(const VulkanDevice *dev)
{
    if (dev->submit_lock) pthread_mutex_lock(dev->submit_lock);
    const VkResult r = dev->api.vkDeviceWaitIdle(dev->device);
    if (dev->submit_lock) pthread_mutex_unlock(dev->submit_lock);
    return r;
}

/* QUALE_VULKAN_MEMORY_LIMIT (bytes) caps device allocations, so that running
 * out of device memory can be tested. */
static _Atomic size_t device_bytes_allocated;

static size_t memory_limit(void)
{
    const char *text = getenv("QUALE_VULKAN_MEMORY_LIMIT");
    return text && *text ? (size_t)strtoull(text, NULL, 0) : SIZE_MAX;
}

static int find_memory_type(const VulkanDevice *dev, uint32_t bits, VkMemoryPropertyFlags want,
                            VkMemoryPropertyFlags prefer)
{
    for (int pass = 0; pass < 2; pass++) {
        const VkMemoryPropertyFlags flags = pass == 0 ? want | prefer : want;
        for (uint32_t i = 0; i < dev->memory.memoryTypeCount; i++) {
            if ((bits & (1u << i)) && (dev->memory.memoryTypes[i].propertyFlags & flags) == flags)
                return (int)i;
        }
    }
    return -1;
}

static int buffer_create(const VulkanDevice *dev, VkDeviceSize size, VkBufferUsageFlags usage,
                         bool host_visible, bool shared, VulkanBuffer *b, const char *what,
                         char *error, size_t error_size)
{
    memset(b, 0, sizeof(*b));
    if (size == 0) size = 4;
    b->size = size;
    if (!host_visible) {
        const size_t before = atomic_fetch_add(&device_bytes_allocated, (size_t)size);
        if (before + size > memory_limit()) {
            atomic_fetch_sub(&device_bytes_allocated, (size_t)size);
            snprintf(error, error_size, "out of device memory for %s (%llu bytes; "
                     "QUALE_VULKAN_MEMORY_LIMIT allows %zu)", what, (unsigned long long)size,
                     memory_limit());
            return -ENOMEM;
        }
    }
    const uint32_t families[2] = { dev->queue_family, dev->transfer_family };
    shared = shared && dev->transfer_family != UINT32_MAX;
    const VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = usage,
        .sharingMode = shared ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE,
        .queueFamilyIndexCount = shared ? 2 : 0,
        .pQueueFamilyIndices = shared ? families : NULL,
    };
    int err = 0;
    VkResult r = dev->api.vkCreateBuffer(dev->device, &info, NULL, &b->buffer);
    VkMemoryRequirements req;
    if (r == VK_SUCCESS) {
        dev->api.vkGetBufferMemoryRequirements(dev->device, b->buffer, &req);
        /* Host-visible memory is also read by the CPU metrics: cached is
         * much faster to read where the device offers it. */
        const int type = host_visible
            ? find_memory_type(dev, req.memoryTypeBits,
                               VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                               VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
            : find_memory_type(dev, req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        if (type < 0) {
            snprintf(error, error_size, "no suitable memory type for %s", what);
            err = -ENOMEM;
        } else {
            const VkMemoryAllocateInfo alloc = {
                .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                .allocationSize = req.size,
                .memoryTypeIndex = (uint32_t)type,
            };
            r = dev->api.vkAllocateMemory(dev->device, &alloc, NULL, &b->memory);
            if (r == VK_SUCCESS) r = dev->api.vkBindBufferMemory(dev->device, b->buffer, b->memory, 0);
            if (r == VK_SUCCESS && host_visible)
                r = dev->api.vkMapMemory(dev->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
        }
    }
    if (!err && r != VK_SUCCESS) {
        snprintf(error, error_size, "allocating %llu bytes for %s failed: %s",
                 (unsigned long long)size, what, vulkan_result_text(r));
        err = (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) ? -ENOMEM : -EIO;
    }
    b->device_local = !host_visible;
    if (err) vulkan_buffer_destroy(dev, b);
    return err;
}

int vulkan_buffer_create(const VulkanDevice *dev, VkDeviceSize size, VkBufferUsageFlags usage,
                         bool host_visible, VulkanBuffer *b, const char *what, char *error,
                         size_t error_size)
{
    return buffer_create(dev, size, usage, host_visible, false, b, what, error, error_size);
}

int vulkan_buffer_import_host(const VulkanDevice *dev, void *host, size_t size,
                              VkBufferUsageFlags usage, VulkanBuffer *b, const char *what,
                              char *error, size_t error_size)
{
    memset(b, 0, sizeof(*b));
    const VkExternalMemoryHandleTypeFlagBits kind =
        VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    if (!dev->host_import_alignment || (uintptr_t)host % dev->host_import_alignment ||
        size % dev->host_import_alignment) {
        snprintf(error, error_size, "the device cannot import %s from host memory", what);
        return -ENOSYS;
    }
    const VkExternalMemoryBufferCreateInfo external = {
        .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
        .handleTypes = kind,
    };
    const VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .pNext = &external,
        .size = size,
        .usage = usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    b->size = size;
    VkMemoryHostPointerPropertiesEXT pointer = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT,
    };
    VkResult r = dev->api.vkCreateBuffer(dev->device, &info, NULL, &b->buffer);
    if (r == VK_SUCCESS) r = dev->get_host_pointer_properties(dev->device, kind, host, &pointer);
    int type = -1;
    VkMemoryRequirements req = { 0 };
    if (r == VK_SUCCESS) {
        dev->api.vkGetBufferMemoryRequirements(dev->device, b->buffer, &req);
        type = find_memory_type(dev, req.memoryTypeBits & pointer.memoryTypeBits,
                                VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    }
    if (r == VK_SUCCESS && type >= 0 && req.size <= size) {
        const VkImportMemoryHostPointerInfoEXT import = {
            .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
            .handleType = kind,
            .pHostPointer = host,
        };
        const VkMemoryAllocateInfo alloc = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
            .pNext = &import,
            .allocationSize = size,
            .memoryTypeIndex = (uint32_t)type,
        };
        r = dev->api.vkAllocateMemory(dev->device, &alloc, NULL, &b->memory);
        if (r == VK_SUCCESS) r = dev->api.vkBindBufferMemory(dev->device, b->buffer, b->memory, 0);
    }
    if (r != VK_SUCCESS || type < 0 || req.size > size) {
        snprintf(error, error_size, "importing %zu bytes of host memory for %s failed: %s", size,
                 what, r != VK_SUCCESS ? vulkan_result_text(r) : "no memory type fits");
        vulkan_buffer_destroy(dev, b);
        return r == VK_ERROR_OUT_OF_HOST_MEMORY ? -ENOMEM : -EIO;
    }
    return 0;
}

int vulkan_buffer_create_shared(const VulkanDevice *dev, VkDeviceSize size,
                                VkBufferUsageFlags usage, VulkanBuffer *b, const char *what,
                                char *error, size_t error_size)
{
    return buffer_create(dev, size, usage, false, true, b, what, error, error_size);
}

void vulkan_buffer_destroy(const VulkanDevice *dev, VulkanBuffer *b)
{
    if (b->device_local) atomic_fetch_sub(&device_bytes_allocated, (size_t)b->size);
    if (b->mapped) dev->api.vkUnmapMemory(dev->device, b->memory);
    if (b->buffer) dev->api.vkDestroyBuffer(dev->device, b->buffer, NULL);
    if (b->memory) dev->api.vkFreeMemory(dev->device, b->memory, NULL);
    memset(b, 0, sizeof(*b));
}

int vulkan_pipeline_create(const VulkanDevice *dev, const uint32_t *spirv, size_t spirv_size,
                           const VkBuffer *buffers, unsigned bindings,
                           const VulkanPushLayout *push, VulkanPipeline *p, const char *what,
                           char *error, size_t error_size)
{
    const VulkanPipelineInfo info = {
        .spirv = spirv, .spirv_size = spirv_size, .buffers = buffers, .bindings = bindings,
        .sets = 1, .push = push, .what = what,
    };
    return vulkan_pipeline_create_ex(dev, &info, p, error, error_size);
}

/* The C struct that fills the push constants and the shader's block must
 * be one layout, member by member: 0, or -EINVAL saying where they part.
 * Only a struct member, and the struct itself, may be longer in C, by the
 * padding that ends it (under 8 bytes): the block's size ends at its last
 * member. */
static int check_push_layout(const VulkanPipelineInfo *info, char *error, size_t error_size)
{
    const VulkanPushLayout *push = info->push;
    const char *what = info->what;
    SpirvMember shader[VULKAN_PUSH_MAX_MEMBERS];
    unsigned count = 0;
    const int reflected = spirv_push_constant_members(info->spirv, info->spirv_size, shader,
                                                      VULKAN_PUSH_MAX_MEMBERS, &count);
    if (reflected < 0) return 0; /* a type the reader does not know: Vulkan checks the size */
    unsigned c_count = 0;
    while (push && c_count < VULKAN_PUSH_MAX_MEMBERS && push->member[c_count].size) c_count++;
    if (reflected == 1 && !push) return 0;
    if (reflected == 1 || !push) {
        snprintf(error, error_size, "%s: push constants %s", what,
                 push ? "in the C code but none in the shader"
                      : "in the shader but none in the C code");
        return -EINVAL;
    }
    if (count != c_count) {
        snprintf(error, error_size, "%s: its push constants have %u members in the shader and %u "
                 "in the C struct that fills them", what, count, c_count);
        return -EINVAL;
    }
    uint32_t end = 0;
    for (unsigned k = 0; k < count; k++) {
        const VulkanPushMember c = push->member[k];
        const uint32_t padding = shader[k].is_struct ? 8 : 1;
        if (shader[k].offset != c.offset || shader[k].size > c.size ||
            c.size - shader[k].size >= padding) {
            snprintf(error, error_size, "%s: push constant member %u is %u bytes at byte %u in "
                     "the shader and %u bytes at byte %u in the C struct", what, k,
                     shader[k].size, shader[k].offset, c.size, c.offset);
            return -EINVAL;
        }
        if (shader[k].offset + shader[k].size > end) end = shader[k].offset + shader[k].size;
    }
    if (end > push->size || push->size - end >= 8) {
        snprintf(error, error_size, "%s: its push constants are %u bytes in the shader and %u in "
                 "the C struct that fills them", what, end, push->size);
        return -EINVAL;
    }
    return 0;
}

int vulkan_pipeline_create_ex(const VulkanDevice *dev, const VulkanPipelineInfo *info,
                              VulkanPipeline *p, char *error, size_t error_size)
{
    const char *what = info->what;
    const unsigned bindings = info->bindings, sets = info->sets ? info->sets : 1;
    memset(p, 0, sizeof(*p));
    p->push_size = info->push ? info->push->size : 0;
    if (check_push_layout(info, error, error_size)) return -EINVAL;
    VkDescriptorSetLayoutBinding binding[8];
    VkSpecializationMapEntry entries[16];
    if (bindings > 8 || sets > VULKAN_MAX_SETS || info->constant_count > 16) {
        snprintf(error, error_size, "%s: too many bindings, sets or constants", what);
        return -EINVAL;
    }
    for (unsigned i = 0; i < bindings; i++) {
        binding[i] = (VkDescriptorSetLayoutBinding){
            .binding = i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    }
    const VkDescriptorSetLayoutCreateInfo set_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = bindings,
        .pBindings = binding,
    };
    VK_TRY(dev, dev->api.vkCreateDescriptorSetLayout(dev->device, &set_info, NULL, &p->set_layout),
           what);
    const VkPushConstantRange range = {
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        .size = p->push_size,
    };
    const VkPipelineLayoutCreateInfo layout_info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &p->set_layout,
        .pushConstantRangeCount = p->push_size ? 1 : 0,
        .pPushConstantRanges = &range,
    };
    VK_TRY(dev, dev->api.vkCreatePipelineLayout(dev->device, &layout_info, NULL, &p->layout), what);
    const VkShaderModuleCreateInfo module_info = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = info->spirv_size,
        .pCode = info->spirv,
    };
    VkShaderModule module;
    VK_TRY(dev, dev->api.vkCreateShaderModule(dev->device, &module_info, NULL, &module), what);
    for (unsigned i = 0; i < info->constant_count; i++)
        entries[i] = (VkSpecializationMapEntry){ i, (uint32_t)(i * sizeof(uint32_t)), sizeof(uint32_t) };
    const VkSpecializationInfo specialization = {
        .mapEntryCount = info->constant_count,
        .pMapEntries = entries,
        .dataSize = info->constant_count * sizeof(uint32_t),
        .pData = info->constants,
    };
    const VkComputePipelineCreateInfo pipe_info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
            .stage = VK_SHADER_STAGE_COMPUTE_BIT,
            .module = module,
            .pName = "main",
            .pSpecializationInfo = info->constant_count ? &specialization : NULL,
        },
        .layout = p->layout,
    };
    const VkResult r = dev->api.vkCreateComputePipelines(dev->device, dev->pipeline_cache, 1,
                                                         &pipe_info, NULL, &p->pipeline);
    dev->api.vkDestroyShaderModule(dev->device, module, NULL);
    VK_TRY(dev, r, what);

    const VkDescriptorPoolSize size = { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, bindings * sets };
    const VkDescriptorPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = sets,
        .poolSizeCount = 1,
        .pPoolSizes = &size,
    };
    VK_TRY(dev, dev->api.vkCreateDescriptorPool(dev->device, &pool_info, NULL, &p->pool), what);
    for (unsigned k = 0; k < sets; k++) {
        const VkDescriptorSetAllocateInfo set_alloc = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
            .descriptorPool = p->pool,
            .descriptorSetCount = 1,
            .pSetLayouts = &p->set_layout,
        };
        VK_TRY(dev, dev->api.vkAllocateDescriptorSets(dev->device, &set_alloc, &p->sets[k]), what);
        p->set_count = k + 1;
        VkDescriptorBufferInfo infos[8];
        VkWriteDescriptorSet writes[8];
        for (unsigned i = 0; i < bindings; i++) {
            infos[i] = (VkDescriptorBufferInfo){ info->buffers[k * bindings + i], 0, VK_WHOLE_SIZE };
            writes[i] = (VkWriteDescriptorSet){
                .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                .dstSet = p->sets[k],
                .dstBinding = i,
                .descriptorCount = 1,
                .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                .pBufferInfo = &infos[i],
            };
        }
        dev->api.vkUpdateDescriptorSets(dev->device, bindings, writes, 0, NULL);
    }
    return 0;
}

void vulkan_pipeline_destroy(const VulkanDevice *dev, VulkanPipeline *p)
{
    if (p->pool) dev->api.vkDestroyDescriptorPool(dev->device, p->pool, NULL);
    if (p->pipeline) dev->api.vkDestroyPipeline(dev->device, p->pipeline, NULL);
    if (p->layout) dev->api.vkDestroyPipelineLayout(dev->device, p->layout, NULL);
    if (p->set_layout) dev->api.vkDestroyDescriptorSetLayout(dev->device, p->set_layout, NULL);
    memset(p, 0, sizeof(*p));
}

void vulkan_dispatch(const VulkanDevice *dev, VkCommandBuffer cb, const VulkanPipeline *p,
                     const void *push, uint32_t groups_x, uint32_t groups_y)
{
    vulkan_dispatch_set(dev, cb, p, 0, push, groups_x, groups_y);
}

void vulkan_dispatch_set(const VulkanDevice *dev, VkCommandBuffer cb, const VulkanPipeline *p,
                         unsigned set, const void *push, uint32_t groups_x, uint32_t groups_y)
{
    dev->api.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
    dev->api.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1,
                                     &p->sets[set], 0, NULL);
    if (p->push_size)
        dev->api.vkCmdPushConstants(cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p->push_size, push);
    dev->api.vkCmdDispatch(cb, groups_x, groups_y, 1);
}

void vulkan_barrier(const VulkanDevice *dev, VkCommandBuffer cb, VkPipelineStageFlags src,
                    VkAccessFlags src_access, VkPipelineStageFlags dst, VkAccessFlags dst_access)
{
    const VkMemoryBarrier b = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = src_access,
        .dstAccessMask = dst_access,
    };
    dev->api.vkCmdPipelineBarrier(cb, src, dst, 0, 1, &b, 0, NULL, 0, NULL);
}

void vulkan_compute_barrier(const VulkanDevice *dev, VkCommandBuffer cb)
{
    vulkan_barrier(dev, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

int vulkan_buffer_create_constant(const VulkanDevice *dev, const void *data, size_t size,
                                  VulkanBuffer *dst, const char *what, char *error,
                                  size_t error_size)
{
    int err = vulkan_buffer_create(dev, size,
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                   false, dst, what, error, error_size);
    if (err) return err;
    VulkanBuffer staging;
    err = vulkan_buffer_create(dev, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true, &staging, what,
                               error, error_size);
    if (err) {
        vulkan_buffer_destroy(dev, dst);
        return err;
    }
    memcpy(staging.mapped, data, size);
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    const VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .queueFamilyIndex = dev->queue_family,
    };
    VkResult r = dev->api.vkCreateCommandPool(dev->device, &pool_info, NULL, &pool);
    if (r == VK_SUCCESS) {
        const VkCommandBufferAllocateInfo cb_info = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
            .commandPool = pool,
            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
            .commandBufferCount = 1,
        };
        r = dev->api.vkAllocateCommandBuffers(dev->device, &cb_info, &cb);
    }
    if (r == VK_SUCCESS) {
        const VkFenceCreateInfo fence_info = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
        r = dev->api.vkCreateFence(dev->device, &fence_info, NULL, &fence);
    }
    if (r == VK_SUCCESS) {
        const VkCommandBufferBeginInfo begin = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
            .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
        };
        r = dev->api.vkBeginCommandBuffer(cb, &begin);
    }
    if (r == VK_SUCCESS) {
        const VkBufferCopy region = { 0, 0, size };
        dev->api.vkCmdCopyBuffer(cb, staging.buffer, dst->buffer, 1, &region);
        vulkan_barrier(dev, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
        r = dev->api.vkEndCommandBuffer(cb);
    }
    if (r == VK_SUCCESS) {
        const VkSubmitInfo submit = {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = 1,
            .pCommandBuffers = &cb,
        };
        r = vulkan_queue_submit(dev, dev->queue, 1, &submit, fence);
    }
    if (r == VK_SUCCESS) r = dev->api.vkWaitForFences(dev->device, 1, &fence, VK_TRUE, UINT64_MAX);
    if (fence) dev->api.vkDestroyFence(dev->device, fence, NULL);
    if (pool) dev->api.vkDestroyCommandPool(dev->device, pool, NULL);
    vulkan_buffer_destroy(dev, &staging);
    if (r != VK_SUCCESS) {
        vulkan_buffer_destroy(dev, dst);
        snprintf(error, error_size, "uploading %s failed: %s", what, vulkan_result_text(r));
        return r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? -ENOMEM : -EIO;
    }
    return 0;
}
