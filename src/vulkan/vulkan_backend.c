/*
 * The Vulkan backend: instance and device, memory, queues, and the flow of
 * frames through the twins.  It mirrors the CUDA backend:
 *
 *   - Pictures from the context's pool live in host-visible Vulkan memory,
 *     so a frame is copied to the device by the transfer engine straight
 *     from where the reader put it.  Other pictures go through per-slot
 *     staging.
 *   - The reference luma of every frame goes to a ring on the device, the
 *     other planes to the frame's slot; temporal twins read earlier frames
 *     from the ring.  Where a twin reads earlier distorted lumas too
 *     (speed_temporal), each ring entry holds the distorted luma after the
 *     reference one (a second copy: the slot keeps its own).
 *   - Each slot has command buffers and a fence.  submit() records the
 *     uploads and every twin's dispatches and submits them, in frame order,
 *     on the caller's thread (the only thread that touches the queues);
 *     complete() waits for the fence on a worker and collects.
 *   - Frames are spread over lanes, compute queues that run side by side
 *     as CUDA's streams do (frame n on lane n % lanes; the queues of a
 *     compute-only family where there is one), where the device
 *     has timeline semaphores and every twin of the run keeps its data
 *     per slot or per lane (VulkanTwin.concurrent).  Uploads go to a
 *     transfer-only queue (a copy engine) where there is one.
 *
 * QUALE_VULKAN_PROFILE=1 measures each twin's device time: one frame in
 * flight, the twins' work one after another (each round of each twin
 * between timestamps, a barrier after it), logged per frame at close as
 * milliseconds per twin and per round.  The rounds then run in a row, not
 * side by side, so the sum is more than a frame takes in a normal run.
 *
 * Synchronisation (vulkan_submit): with timeline semaphores each frame's
 * upload and work are ordered after exactly what they depend on, nothing
 * more; without, each frame's command buffer starts with a barrier from all
 * earlier compute work to its transfers (the ring entry and slot it
 * overwrites may still be read by earlier frames), then the copies, then a
 * barrier from transfers to compute.  Either way the twins' dispatches end
 * with a barrier to the host for the partial sums it reads after the fence.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "context.h"
#include "gpu.h"
#include "spirv_reflect.h"
#include "vulkan_twin.h"

typedef struct VulkanSlot {
    VkCommandBuffer cb;        /* the twins' work (and, without timelines, the upload) */
    VkCommandBuffer upload_cb; /* the upload, with timelines */
    VkFence fence;
    VulkanBuffer staging; /* made on first need */
} VulkanSlot;

/* A point of a timeline: where a frame's upload or work ends. */
typedef struct SyncPoint {
    unsigned timeline; /* index into GpuBackend.timeline */
    uint64_t value;
} SyncPoint;

/* The timelines of a run: one per lane, then the uploads' when they have
 * a queue of their own. */
#define TIMELINES (VULKAN_MAX_LANES + 1)
#define UPLOAD_TIMELINE VULKAN_MAX_LANES

typedef struct ActiveTwin {
    const VulkanTwin *twin;
    void *state;
    FeatureSink *sink;
    bool pending; /* while recording a frame: it has rounds left */
} ActiveTwin;

typedef struct HostBlock {
    void *pointer;
    VulkanBuffer buffer;
} HostBlock;

struct GpuBackend {
    QualeContext *ctx;
    VulkanDevice dev;
    atomic_uint refs; /* the context, and the picture pool's allocator */
    PictureAllocator host;
    pthread_mutex_t host_lock;
    HostBlock *blocks;
    size_t block_count, block_capacity;

    QualeVideoFormat format;
    unsigned planes, history;
    bool dist_history;      /* ring entries hold the distorted luma too */
    VkDeviceSize ring_entry; /* bytes of one ring entry */
    size_t plane_offset[3], plane_bytes[3], frame_bytes, slot_bytes;
    VkCommandPool pool, upload_pool; /* the compute family's, the transfer family's */
    VulkanSlot *slots;
    unsigned slot_count;
    VulkanBuffer ring, frames;
    unsigned ring_size;
    ActiveTwin *twins;
    unsigned twin_count;
    /* With timelines: a timeline semaphore per lane (and for the uploads,
     * when they go to a queue of their own: `upload_queue`, else NULL) and
     * the last value signalled on each; per ring entry, the points where
     * its frame's upload and its frame's work end. */
    VkSemaphore timeline[TIMELINES];
    uint64_t timeline_value[TIMELINES];
    VkQueue upload_queue;
    SyncPoint *uploaded, *done;
    /* QUALE_VULKAN_PROFILE: timestamps of each twin's rounds, and the
     * nanoseconds they added up to over the frames profiled. */
    bool profile;
    VkQueryPool queries;
    double *round_ns; /* twin_count x PROFILE_ROUNDS */
    unsigned profiled_frames;
};

/* The rounds of a twin the profile tells apart (later ones add to the last). */
#define PROFILE_ROUNDS 16

#define VK_TRY(dev, call, what)                                                          \
    do {                                                                                 \
        const VkResult vk_result_ = (call);                                              \
        if (vk_result_ != VK_SUCCESS) {                                                  \
            snprintf(error, error_size, "%s failed: %s", (what),                        \
                     vulkan_result_text(vk_result_));                                    \
            return vk_result_ == VK_ERROR_OUT_OF_DEVICE_MEMORY ||                         \
                           vk_result_ == VK_ERROR_OUT_OF_HOST_MEMORY                      \
                       ? -ENOMEM                                                          \
                       : -EIO;                                                            \
        }                                                                                \
    } while (0)

/* ---- helpers the twins use ------------------------------------------------ */

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
                         char *error, size_t error_size);

int vulkan_buffer_create(const VulkanDevice *dev, VkDeviceSize size, VkBufferUsageFlags usage,
                         bool host_visible, VulkanBuffer *b, const char *what, char *error,
                         size_t error_size)
{
    return buffer_create(dev, size, usage, host_visible, false, b, what, error, error_size);
}

/* shared: the compute and the transfer family both use it. */
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
    const VkResult r = dev->api.vkCreateComputePipelines(dev->device, VK_NULL_HANDLE, 1, &pipe_info,
                                                         NULL, &p->pipeline);
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

static void barrier(const VulkanDevice *dev, VkCommandBuffer cb, VkPipelineStageFlags src,
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
    barrier(dev, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
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
        barrier(dev, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
        r = dev->api.vkEndCommandBuffer(cb);
    }
    if (r == VK_SUCCESS) {
        const VkSubmitInfo submit = {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = 1,
            .pCommandBuffers = &cb,
        };
        r = dev->api.vkQueueSubmit(dev->queue, 1, &submit, fence);
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

/* ---- host memory for the context's pictures ----------------------------- */

static void backend_release(GpuBackend *gpu);

static void *host_alloc(void *opaque, size_t size)
{
    GpuBackend *gpu = opaque;
    HostBlock block = { 0 };
    char error[256];
    if (vulkan_buffer_create(&gpu->dev, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true, &block.buffer,
                             "a picture", error, sizeof(error)) ||
        ((uintptr_t)block.buffer.mapped & (QUALE_ALIGNMENT - 1))) {
        /* Plain memory still works, through the staging copy. */
        vulkan_buffer_destroy(&gpu->dev, &block.buffer);
        return quale_aligned_alloc(size);
    }
    block.pointer = block.buffer.mapped;
    pthread_mutex_lock(&gpu->host_lock);
    if (gpu->block_count == gpu->block_capacity) {
        const size_t cap = gpu->block_capacity ? 2 * gpu->block_capacity : 64;
        HostBlock *list = realloc(gpu->blocks, cap * sizeof(*list));
        if (!list) {
            pthread_mutex_unlock(&gpu->host_lock);
            vulkan_buffer_destroy(&gpu->dev, &block.buffer);
            return NULL;
        }
        gpu->blocks = list;
        gpu->block_capacity = cap;
    }
    gpu->blocks[gpu->block_count++] = block;
    pthread_mutex_unlock(&gpu->host_lock);
    return block.pointer;
}

static void host_free(void *opaque, void *p)
{
    GpuBackend *gpu = opaque;
    HostBlock block = { 0 };
    pthread_mutex_lock(&gpu->host_lock);
    for (size_t i = 0; i < gpu->block_count; i++) {
        if (gpu->blocks[i].pointer == p) {
            block = gpu->blocks[i];
            gpu->blocks[i] = gpu->blocks[--gpu->block_count];
            break;
        }
    }
    pthread_mutex_unlock(&gpu->host_lock);
    if (block.pointer) vulkan_buffer_destroy(&gpu->dev, &block.buffer);
    else quale_aligned_free(p);
}

static void host_release(void *opaque)
{
    backend_release(opaque);
}

/* The buffer a picture's memory belongs to, if it is ours. */
static VkBuffer host_buffer(GpuBackend *gpu, const void *p)
{
    VkBuffer found = VK_NULL_HANDLE;
    pthread_mutex_lock(&gpu->host_lock);
    for (size_t i = 0; i < gpu->block_count && !found; i++)
        if (gpu->blocks[i].pointer == p) found = gpu->blocks[i].buffer.buffer;
    pthread_mutex_unlock(&gpu->host_lock);
    return found;
}

/* ---- device life cycle -------------------------------------------------- */

/*
 * One loader and one instance for the whole process, made on first use and
 * kept: the loader opens the drivers when an instance is created and closes
 * them when it is destroyed, and some drivers (NVIDIA's) take static TLS
 * each time they are opened, which a process runs out of after a few
 * contexts.  So is a failure: the first one is remembered and repeated.
 */
static pthread_mutex_t instance_lock = PTHREAD_MUTEX_INITIALIZER;
static bool instance_tried;
static int instance_status;
static char instance_error[512];
static VulkanApi instance_api;
static VkInstance instance;

static int create_instance(char *error, size_t error_size)
{
    int err = vulkan_api_load(&instance_api, error, error_size);
    if (err) return err;
    const VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "quale",
        .pEngineName = "libquale",
        .apiVersion = VK_API_VERSION_1_1,
    };
    const VkInstanceCreateInfo instance_info = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
    };
    const VkResult r = instance_api.vkCreateInstance(&instance_info, NULL, &instance);
    if (r != VK_SUCCESS) {
        snprintf(error, error_size, "creating a Vulkan instance failed: %s", vulkan_result_text(r));
        instance = VK_NULL_HANDLE;
        return r == VK_ERROR_INCOMPATIBLE_DRIVER ? -ENODEV : -EIO;
    }
    return vulkan_api_load_instance(&instance_api, instance, error, error_size);
}

/* The process's instance (made on first use), or the reason there is none. */
static int shared_instance(VulkanApi *api, VkInstance *out, char *error, size_t error_size)
{
    pthread_mutex_lock(&instance_lock);
    if (!instance_tried) {
        instance_tried = true;
        instance_status = create_instance(instance_error, sizeof(instance_error));
    }
    const int status = instance_status;
    snprintf(error, error_size, "%s", instance_error);
    *api = instance_api;
    *out = instance;
    pthread_mutex_unlock(&instance_lock);
    return status;
}

#define MAX_PHYSICAL_DEVICES 16

static int physical_devices(const VulkanApi *api, VkInstance inst,
                            VkPhysicalDevice list[MAX_PHYSICAL_DEVICES], uint32_t *count,
                            char *error, size_t error_size)
{
    *count = 0;
    VkResult r = api->vkEnumeratePhysicalDevices(inst, count, NULL);
    if (r == VK_SUCCESS) {
        if (*count > MAX_PHYSICAL_DEVICES) *count = MAX_PHYSICAL_DEVICES;
        r = api->vkEnumeratePhysicalDevices(inst, count, list);
    }
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        snprintf(error, error_size, "listing Vulkan devices failed: %s", vulkan_result_text(r));
        *count = 0;
        return -EIO;
    }
    return 0;
}

static enum QualeDeviceType device_type(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return QUALE_DEVICE_DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return QUALE_DEVICE_INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return QUALE_DEVICE_VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return QUALE_DEVICE_SOFTWARE;
    default: return QUALE_DEVICE_OTHER;
    }
}

/* Without an index: a discrete GPU, else an integrated one, else a virtual
 * one, else anything else, the software renderers last; the first of
 * each kind. */
static unsigned preferred_device(const VulkanApi *api, const VkPhysicalDevice *list,
                                 uint32_t count)
{
    static const unsigned rank[] = {
        [QUALE_DEVICE_DISCRETE] = 0, [QUALE_DEVICE_INTEGRATED] = 1, [QUALE_DEVICE_VIRTUAL] = 2,
        [QUALE_DEVICE_OTHER] = 3, [QUALE_DEVICE_SOFTWARE] = 4,
    };
    unsigned pick = 0, best = ~0u;
    for (unsigned i = 0; i < count; i++) {
        VkPhysicalDeviceProperties p;
        api->vkGetPhysicalDeviceProperties(list[i], &p);
        const unsigned r = rank[device_type(p.deviceType)];
        if (r < best) {
            best = r;
            pick = i;
        }
    }
    return pick;
}

static void describe_physical(const VulkanApi *api, VkPhysicalDevice physical, unsigned index,
                              QualeDeviceInfo *info)
{
    VkPhysicalDeviceProperties p;
    VkPhysicalDeviceMemoryProperties m;
    api->vkGetPhysicalDeviceProperties(physical, &p);
    api->vkGetPhysicalDeviceMemoryProperties(physical, &m);
    memset(info, 0, sizeof(*info));
    info->backend = QUALE_BACKEND_VULKAN;
    info->index = index;
    info->type = device_type(p.deviceType);
    snprintf(info->name, sizeof(info->name), "%s", p.deviceName);
    for (uint32_t h = 0; h < m.memoryHeapCount && h < VK_MAX_MEMORY_HEAPS; h++)
        if (m.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
            info->memory_bytes += m.memoryHeaps[h].size;
}

static int vulkan_list_devices(QualeDeviceInfo *devices, unsigned max, unsigned *count,
                               char *error, size_t error_size)
{
    VulkanApi api;
    VkInstance inst;
    *count = 0;
    int err = shared_instance(&api, &inst, error, error_size);
    if (err) return err;
    VkPhysicalDevice list[MAX_PHYSICAL_DEVICES];
    uint32_t n;
    err = physical_devices(&api, inst, list, &n, error, error_size);
    if (err) return err;
    const unsigned preferred = preferred_device(&api, list, n);
    for (unsigned i = 0; i < n && i < max; i++) {
        describe_physical(&api, list[i], i, &devices[i]);
        devices[i].preferred = i == preferred;
    }
    *count = n;
    return 0;
}

static int open_device(VulkanDevice *dev, int ordinal, char *error, size_t error_size)
{
    int err = shared_instance(&dev->api, &dev->instance, error, error_size);
    if (err) return err;

    VkPhysicalDevice list[MAX_PHYSICAL_DEVICES];
    uint32_t count;
    err = physical_devices(&dev->api, dev->instance, list, &count, error, error_size);
    if (err) return err;
    if (count == 0) {
        snprintf(error, error_size, "no Vulkan device is present");
        return -ENODEV;
    }
    if (ordinal >= (int)count) {
        snprintf(error, error_size, "Vulkan device %d does not exist (there %s %u)", ordinal,
                 count == 1 ? "is" : "are", count);
        return -ENODEV;
    }
    const unsigned pick = ordinal >= 0 ? (unsigned)ordinal : preferred_device(&dev->api, list, count);
    dev->index = pick;
    dev->physical = list[pick];
    dev->api.vkGetPhysicalDeviceProperties(dev->physical, &dev->properties);
    dev->api.vkGetPhysicalDeviceMemoryProperties(dev->physical, &dev->memory);

    uint32_t families = 0;
    VkQueueFamilyProperties family[16];
    dev->api.vkGetPhysicalDeviceQueueFamilyProperties(dev->physical, &families, NULL);
    if (families > 16) families = 16;
    dev->api.vkGetPhysicalDeviceQueueFamilyProperties(dev->physical, &families, family);
    /* Compute: a compute family without graphics where there is one, the
     * one with the most queues (frames of different lanes run on different
     * queues).  Such a family is the device's asynchronous compute: on the
     * NVIDIA driver the frames of the graphics family's queues run one
     * after another, those of the compute family's side by side (v1 at
     * 1080p on 4 lanes: 796 fps against 2349, docs/benchmarks.md).  Uploads: a
     * transfer-only family where there is one (a copy engine, which runs
     * beside the shaders). */
    dev->queue_family = UINT32_MAX;
    dev->transfer_family = UINT32_MAX;
    for (uint32_t i = 0; i < families; i++) {
        const VkQueueFlags flags = family[i].queueFlags;
        if ((flags & VK_QUEUE_TRANSFER_BIT) && !(flags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) &&
            dev->transfer_family == UINT32_MAX && family[i].queueCount > 0)
            dev->transfer_family = i;
        if (!(flags & VK_QUEUE_COMPUTE_BIT) || family[i].queueCount == 0) continue;
        if (dev->queue_family == UINT32_MAX) {
            dev->queue_family = i;
            continue;
        }
        const bool async = !(flags & VK_QUEUE_GRAPHICS_BIT);
        const bool chosen_async = !(family[dev->queue_family].queueFlags & VK_QUEUE_GRAPHICS_BIT);
        if (async != chosen_async ? async : family[i].queueCount > family[dev->queue_family].queueCount)
            dev->queue_family = i;
    }
    /* QUALE_VULKAN_COMPUTE_FAMILY=N takes family N instead (to compare
     * how a driver maps the families' queues onto its hardware). */
    const char *family_text = getenv("QUALE_VULKAN_COMPUTE_FAMILY");
    if (family_text && *family_text) {
        const long asked = strtol(family_text, NULL, 10);
        if (asked >= 0 && asked < (long)families && (family[asked].queueFlags & VK_QUEUE_COMPUTE_BIT))
            dev->queue_family = (uint32_t)asked;
    }
    if (dev->queue_family == UINT32_MAX) {
        snprintf(error, error_size, "%s has no compute queue", dev->properties.deviceName);
        return -ENODEV;
    }
    dev->compute_queue_count = QUALE_MIN(family[dev->queue_family].queueCount, (uint32_t)VULKAN_MAX_LANES);
    if (dev->compute_queue_count == 0) dev->compute_queue_count = 1;

    /* Timeline semaphores order each frame's work after exactly the work
     * it depends on (see vulkan_submit); without them the frames stay on
     * one queue, each after all the work before it. */
    uint32_t extension_count = 0;
    VkExtensionProperties *extensions = NULL;
    if (dev->api.vkEnumerateDeviceExtensionProperties(dev->physical, NULL, &extension_count, NULL) ==
            VK_SUCCESS &&
        extension_count > 0 && (extensions = calloc(extension_count, sizeof(*extensions))) &&
        dev->api.vkEnumerateDeviceExtensionProperties(dev->physical, NULL, &extension_count,
                                                      extensions) == VK_SUCCESS) {
        for (uint32_t i = 0; i < extension_count; i++)
            if (!strcmp(extensions[i].extensionName, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME))
                dev->timeline = true;
    }
    free(extensions);
    if (!dev->timeline) dev->transfer_family = UINT32_MAX;

    static const float priorities[VULKAN_MAX_LANES] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    VkDeviceQueueCreateInfo queue_info[2] = {
        {
            .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
            .queueFamilyIndex = dev->queue_family,
            .queueCount = dev->compute_queue_count,
            .pQueuePriorities = priorities,
        },
        {
            .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
            .queueFamilyIndex = dev->transfer_family,
            .queueCount = 1,
            .pQueuePriorities = priorities,
        },
    };
    /* Native 64-bit types where the device has them: float twins whose C
     * reference computes in double use shaderFloat64 (their supports()
     * checks dev->features), integer VIF its faster path.
     * QUALE_VULKAN_NO_FLOAT64 leaves both off, so that the paths for
     * devices without them can be tested anywhere. */
    VkPhysicalDeviceFeatures available;
    dev->api.vkGetPhysicalDeviceFeatures(dev->physical, &available);
    const char *no_float64 = getenv("QUALE_VULKAN_NO_FLOAT64");
    const bool wide = !(no_float64 && *no_float64 && strcmp(no_float64, "0"));
    memset(&dev->features, 0, sizeof(dev->features));
    dev->features.shaderFloat64 = wide && available.shaderFloat64;
    dev->features.shaderInt64 = wide && available.shaderInt64;
    VkPhysicalDeviceTimelineSemaphoreFeaturesKHR timeline = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES_KHR,
        .timelineSemaphore = VK_TRUE,
    };
    const char *const timeline_extension = VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME;
    const VkDeviceCreateInfo device_info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = dev->timeline ? &timeline : NULL,
        .queueCreateInfoCount = dev->transfer_family != UINT32_MAX ? 2 : 1,
        .pQueueCreateInfos = queue_info,
        .enabledExtensionCount = dev->timeline ? 1 : 0,
        .ppEnabledExtensionNames = dev->timeline ? &timeline_extension : NULL,
        .pEnabledFeatures = &dev->features,
    };
    VK_TRY(dev, dev->api.vkCreateDevice(dev->physical, &device_info, NULL, &dev->device),
           "creating the Vulkan device");
    if ((err = vulkan_api_load_device(&dev->api, dev->device, error, error_size))) return err;
    for (unsigned i = 0; i < dev->compute_queue_count; i++)
        dev->api.vkGetDeviceQueue(dev->device, dev->queue_family, i, &dev->compute_queues[i]);
    dev->queue = dev->compute_queues[0];
    if (dev->transfer_family != UINT32_MAX)
        dev->api.vkGetDeviceQueue(dev->device, dev->transfer_family, 0, &dev->transfer_queue);
    dev->lanes = 1;
    return 0;
}

/* The device goes; the process-wide instance and loader stay. */
static void close_device(VulkanDevice *dev)
{
    if (dev->device) {
        dev->api.vkDeviceWaitIdle(dev->device);
        dev->api.vkDestroyDevice(dev->device, NULL);
    }
    memset(dev, 0, sizeof(*dev));
}

int vulkan_device_open(VulkanDevice *dev, int ordinal, char *error, size_t error_size)
{
    memset(dev, 0, sizeof(*dev));
    const int err = open_device(dev, ordinal, error, error_size);
    if (err) close_device(dev);
    return err;
}

void vulkan_device_close(VulkanDevice *dev)
{
    close_device(dev);
}

static void log_profile(GpuBackend *gpu)
{
    if (!gpu->profile || !gpu->profiled_frames || !gpu->round_ns) return;
    const double n = gpu->profiled_frames;
    double total = 0;
    for (unsigned i = 0; i < gpu->twin_count * PROFILE_ROUNDS; i++) total += gpu->round_ns[i];
    context_log(gpu->ctx, QUALE_LOG_INFO, "Vulkan profile, %u frames, device ms per frame: %.4f "
                "for the twins, one after another", gpu->profiled_frames, total / n * 1e-6);
    for (unsigned i = 0; i < gpu->twin_count; i++) {
        const double *r = gpu->round_ns + (size_t)i * PROFILE_ROUNDS;
        char rounds[512] = "";
        size_t at = 0;
        double sum = 0;
        for (unsigned k = 0; k < PROFILE_ROUNDS; k++) {
            sum += r[k];
            if (r[k] > 0 && at < sizeof(rounds))
                at += (size_t)snprintf(rounds + at, sizeof(rounds) - at, " %.4f", r[k] / n * 1e-6);
        }
        context_log(gpu->ctx, QUALE_LOG_INFO, "Vulkan profile:   %-14s %.4f (rounds:%s)",
                    gpu->twins[i].twin->metric->name, sum / n * 1e-6, rounds);
    }
}

static void stop(GpuBackend *gpu)
{
    VulkanDevice *dev = &gpu->dev;
    if (!dev->device) return;
    dev->api.vkDeviceWaitIdle(dev->device);
    log_profile(gpu);
    if (gpu->queries) dev->api.vkDestroyQueryPool(dev->device, gpu->queries, NULL);
    gpu->queries = VK_NULL_HANDLE;
    free(gpu->round_ns);
    gpu->round_ns = NULL;
    gpu->profiled_frames = 0;
    for (unsigned i = 0; i < gpu->twin_count; i++)
        if (gpu->twins[i].state) gpu->twins[i].twin->close(gpu->twins[i].state);
    free(gpu->twins);
    gpu->twins = NULL;
    gpu->twin_count = 0;
    for (unsigned i = 0; i < gpu->slot_count; i++) {
        if (gpu->slots[i].fence) dev->api.vkDestroyFence(dev->device, gpu->slots[i].fence, NULL);
        vulkan_buffer_destroy(dev, &gpu->slots[i].staging);
    }
    free(gpu->slots);
    gpu->slots = NULL;
    gpu->slot_count = 0;
    if (gpu->pool) dev->api.vkDestroyCommandPool(dev->device, gpu->pool, NULL);
    if (gpu->upload_pool) dev->api.vkDestroyCommandPool(dev->device, gpu->upload_pool, NULL);
    gpu->pool = gpu->upload_pool = VK_NULL_HANDLE;
    for (unsigned q = 0; q < TIMELINES; q++) {
        if (gpu->timeline[q]) dev->api.vkDestroySemaphore(dev->device, gpu->timeline[q], NULL);
        gpu->timeline[q] = VK_NULL_HANDLE;
        gpu->timeline_value[q] = 0;
    }
    gpu->upload_queue = VK_NULL_HANDLE;
    free(gpu->uploaded);
    free(gpu->done);
    gpu->uploaded = gpu->done = NULL;
    vulkan_buffer_destroy(dev, &gpu->ring);
    vulkan_buffer_destroy(dev, &gpu->frames);
}

static void backend_release(GpuBackend *gpu)
{
    if (atomic_fetch_sub(&gpu->refs, 1) != 1) return;
    /* The last user: the context is closed and every picture is back. */
    close_device(&gpu->dev);
    free(gpu->blocks);
    pthread_mutex_destroy(&gpu->host_lock);
    free(gpu);
}

static void vulkan_describe(const GpuBackend *gpu, QualeDeviceInfo *info)
{
    describe_physical(&gpu->dev.api, gpu->dev.physical, gpu->dev.index, info);
}

static bool vulkan_twin_built(const Metric *metric)
{
    for (unsigned i = 0; vulkan_twins[i]; i++)
        if (vulkan_twins[i]->metric == metric) return true;
    return false;
}

static const VulkanTwin *find_twin(const GpuBackend *gpu, const Metric *metric, const void *state)
{
    for (unsigned i = 0; vulkan_twins[i]; i++)
        if (vulkan_twins[i]->metric == metric &&
            (!vulkan_twins[i]->supports || vulkan_twins[i]->supports(&gpu->dev, state)))
            return vulkan_twins[i];
    return NULL;
}

static int vulkan_open(QualeContext *ctx, int device, GpuBackend **out, char *error,
                       size_t error_size)
{
    *out = NULL;
    GpuBackend *gpu = calloc(1, sizeof(*gpu));
    if (!gpu) return -ENOMEM;
    gpu->ctx = ctx;
    atomic_init(&gpu->refs, 2); /* the context and the picture pool */
    pthread_mutex_init(&gpu->host_lock, NULL);
    int err = open_device(&gpu->dev, device, error, error_size);
    if (err) {
        close_device(&gpu->dev);
        pthread_mutex_destroy(&gpu->host_lock);
        free(gpu);
        return err;
    }
    gpu->host = (PictureAllocator){ host_alloc, host_free, host_release, gpu, false };
    context_log(ctx, QUALE_LOG_DEBUG, "Vulkan device: %s", gpu->dev.properties.deviceName);
    *out = gpu;
    return 0;
}

static void vulkan_close(GpuBackend *gpu)
{
    if (!gpu) return;
    stop(gpu);
    backend_release(gpu);
}

static const PictureAllocator *vulkan_host_allocator(const GpuBackend *gpu)
{
    return &gpu->host;
}

static bool vulkan_has_twin(const GpuBackend *gpu, const Metric *metric, const void *state)
{
    return find_twin(gpu, metric, state) != NULL;
}

/* ---- start -------------------------------------------------------------- */

/* The slots in flight, fewer than asked where the ring or the slots would
 * not fit one storage-buffer binding (128 MiB on some devices). */
static int fit_slots(GpuBackend *gpu, unsigned *slots, char *error, size_t error_size)
{
    const size_t range = gpu->dev.properties.limits.maxStorageBufferRange;
    const size_t luma = gpu->plane_bytes[0];
    /* Each slot: the distorted frame, then the reference chroma. */
    gpu->slot_bytes = gpu->frame_bytes + gpu->plane_bytes[1] + gpu->plane_bytes[2];
    size_t fit = range / gpu->slot_bytes;
    const size_t ring_entries = range / (luma * (gpu->dist_history ? 2 : 1));
    fit = QUALE_MIN(fit, ring_entries > gpu->history + 1 ? ring_entries - gpu->history - 1 : 0);
    if (fit == 0) {
        snprintf(error, error_size, "%ux%u frames need more than the device's largest storage "
                 "buffer (%zu bytes)", gpu->format.width, gpu->format.height, range);
        return -E2BIG;
    }
    if (fit < *slots) *slots = (unsigned)fit;
    return 0;
}

static int create_pool(const VulkanDevice *dev, uint32_t family, VkCommandPool *pool, char *error,
                       size_t error_size)
{
    const VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = family,
    };
    VK_TRY(dev, dev->api.vkCreateCommandPool(dev->device, &pool_info, NULL, pool),
           "creating a command pool");
    return 0;
}

static int allocate_cb(const VulkanDevice *dev, VkCommandPool pool, VkCommandBuffer *cb, char *error,
                       size_t error_size)
{
    const VkCommandBufferAllocateInfo cb_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VK_TRY(dev, dev->api.vkAllocateCommandBuffers(dev->device, &cb_info, cb),
           "allocating a command buffer");
    return 0;
}

static int start_buffers(GpuBackend *gpu, unsigned slots, char *error, size_t error_size)
{
    VulkanDevice *dev = &gpu->dev;
    /* Enough ring entries that a frame rarely waits for an older one. */
    gpu->ring_size = slots + gpu->history + 1;
    const size_t luma = gpu->plane_bytes[0];
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    /* Written by the uploads, read by the shaders: both families. */
    gpu->ring_entry = (VkDeviceSize)luma * (gpu->dist_history ? 2 : 1);
    int err = buffer_create(dev, (VkDeviceSize)gpu->ring_size * gpu->ring_entry, usage, false, true, &gpu->ring,
                            "the reference ring", error, error_size);
    if (!err)
        err = buffer_create(dev, (VkDeviceSize)slots * gpu->slot_bytes, usage, false, true, &gpu->frames,
                            "frames in flight", error, error_size);
    /* Uploads on the transfer queue.  QUALE_VULKAN_UPLOAD_QUEUE=0 puts them
     * on the lanes' queues instead (to compare), =1 gives them a queue of
     * their own on a device without a transfer queue (the first compute
     * queue stands in), so that this way of ordering them can be tested
     * anywhere. */
    const char *own = getenv("QUALE_VULKAN_UPLOAD_QUEUE");
    const bool asked = own && *own, off = asked && !strcmp(own, "0");
    gpu->upload_queue = !dev->timeline || off ? VK_NULL_HANDLE
                        : dev->transfer_queue ? dev->transfer_queue
                        : asked              ? dev->compute_queues[0]
                                             : VK_NULL_HANDLE;
    const bool transfer = gpu->upload_queue && gpu->upload_queue == dev->transfer_queue;
    if (!err) err = create_pool(dev, dev->queue_family, &gpu->pool, error, error_size);
    if (!err && transfer)
        err = create_pool(dev, dev->transfer_family, &gpu->upload_pool, error, error_size);
    if (err) return err;
    gpu->slots = calloc(slots, sizeof(*gpu->slots));
    if (!gpu->slots) return -ENOMEM;
    gpu->slot_count = slots;
    for (unsigned i = 0; i < slots && !err; i++) {
        VulkanSlot *s = &gpu->slots[i];
        err = allocate_cb(dev, gpu->pool, &s->cb, error, error_size);
        if (!err && dev->timeline)
            err = allocate_cb(dev, transfer ? gpu->upload_pool : gpu->pool, &s->upload_cb, error,
                              error_size);
        if (err) return err;
        const VkFenceCreateInfo fence_info = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
        VK_TRY(dev, dev->api.vkCreateFence(dev->device, &fence_info, NULL, &s->fence),
               "creating a fence");
    }
    if (!dev->timeline) return 0;
    gpu->uploaded = calloc(gpu->ring_size, sizeof(*gpu->uploaded));
    gpu->done = calloc(gpu->ring_size, sizeof(*gpu->done));
    if (!gpu->uploaded || !gpu->done) return -ENOMEM;
    for (unsigned q = 0; q < TIMELINES; q++) {
        if (q >= dev->lanes && !(q == UPLOAD_TIMELINE && gpu->upload_queue)) continue;
        const VkSemaphoreTypeCreateInfoKHR type = {
            .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO_KHR,
            .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE_KHR,
        };
        const VkSemaphoreCreateInfo info = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type };
        VK_TRY(dev, dev->api.vkCreateSemaphore(dev->device, &info, NULL, &gpu->timeline[q]),
               "creating a timeline semaphore");
    }
    return 0;
}

/* The timestamps of QUALE_VULKAN_PROFILE: two per round of each twin. */
static int start_profile(GpuBackend *gpu, unsigned twins, char *error, size_t error_size)
{
    VulkanDevice *dev = &gpu->dev;
    uint32_t families = 0;
    dev->api.vkGetPhysicalDeviceQueueFamilyProperties(dev->physical, &families, NULL);
    VkQueueFamilyProperties *props = calloc(families ? families : 1, sizeof(*props));
    if (!props) return -ENOMEM;
    dev->api.vkGetPhysicalDeviceQueueFamilyProperties(dev->physical, &families, props);
    const bool stamps = dev->queue_family < families && props[dev->queue_family].timestampValidBits;
    free(props);
    if (!stamps || dev->properties.limits.timestampPeriod <= 0) {
        context_log(gpu->ctx, QUALE_LOG_WARNING, "Vulkan: QUALE_VULKAN_PROFILE: the device's "
                    "compute queue has no timestamps; not profiled");
        gpu->profile = false;
        return 0;
    }
    gpu->round_ns = calloc((size_t)twins * PROFILE_ROUNDS, sizeof(double));
    if (!gpu->round_ns) return -ENOMEM;
    const VkQueryPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = twins * PROFILE_ROUNDS * 2,
    };
    VK_TRY(dev, dev->api.vkCreateQueryPool(dev->device, &info, NULL, &gpu->queries),
           "creating the profile's timestamps");
    return 0;
}

/* How many compute queues the frames of this run are spread over: one
 * unless the device has timelines and every twin of the run is
 * concurrent; QUALE_VULKAN_LANES sets it (lanes beyond the queues share
 * them, which tests the ordering on a device with one queue). */
static unsigned choose_lanes(const GpuBackend *gpu, const GpuTwinRequest *requests, unsigned count,
                             unsigned slots)
{
    if (!gpu->dev.timeline) return 1;
    for (unsigned i = 0; i < count; i++)
        if (!find_twin(gpu, requests[i].metric, requests[i].state)->concurrent) return 1;
    /* As many as there are queues: on the H200, v1 at 1080p runs at 2349
     * fps on 4 lanes, 2836 on 8 (docs/benchmarks.md). */
    unsigned lanes = gpu->dev.compute_queue_count;
    const char *text = getenv("QUALE_VULKAN_LANES");
    if (text && *text) {
        const unsigned long asked = strtoul(text, NULL, 10);
        if (asked >= 1 && asked <= VULKAN_MAX_LANES) lanes = (unsigned)asked;
    }
    return QUALE_MAX(1u, QUALE_MIN(lanes, slots));
}

static int vulkan_start(GpuBackend *gpu, const QualeVideoFormat *format,
                        const GpuTwinRequest *requests, unsigned count, unsigned *slots_in_out,
                        char *error, size_t error_size)
{
    error[0] = '\0';
    gpu->format = *format;
    gpu->twins = calloc(count, sizeof(*gpu->twins));
    if (!gpu->twins) return -ENOMEM;

    QualePicture layout;
    int err = quale_picture_alloc(&layout, format);
    if (err) return err;
    for (unsigned p = 0; p < layout.plane_count; p++) {
        gpu->plane_offset[p] = (size_t)((uint8_t *)layout.data[p] - (uint8_t *)layout.data[0]);
        gpu->plane_bytes[p] = (size_t)layout.stride[p] * layout.plane_height[p];
        gpu->frame_bytes += gpu->plane_bytes[p];
    }
    quale_picture_unref(&layout);

    for (unsigned i = 0; i < count; i++) {
        const VulkanTwin *twin = find_twin(gpu, requests[i].metric, requests[i].state);
        gpu->planes |= twin->planes ? twin->planes(requests[i].state) : 1u;
        if (twin->history > gpu->history) gpu->history = twin->history;
        gpu->dist_history = gpu->dist_history || twin->dist_history;
    }
    if (format->chroma == QUALE_CHROMA_400) gpu->planes &= 1;
    err = fit_slots(gpu, slots_in_out, error, error_size);
    const char *profile = getenv("QUALE_VULKAN_PROFILE");
    gpu->profile = profile && profile[0] && strcmp(profile, "0");
    if (gpu->profile) *slots_in_out = 1;
    const unsigned slots = *slots_in_out;
    gpu->dev.lanes = choose_lanes(gpu, requests, count, slots);
    if (!err && gpu->profile) err = start_profile(gpu, count, error, error_size);
    if (!err) err = start_buffers(gpu, slots, error, error_size);
    for (unsigned i = 0; i < count && !err; i++) {
        ActiveTwin *a = &gpu->twins[gpu->twin_count++];
        a->twin = find_twin(gpu, requests[i].metric, requests[i].state);
        a->sink = requests[i].sink;
        err = a->twin->init(&gpu->dev, gpu->ring.buffer, gpu->frames.buffer, requests[i].state, format,
                            slots, &a->state, error, error_size);
    }
    if (err && !error[0]) snprintf(error, error_size, "%s", strerror(-err));
    if (!err)
        context_log(gpu->ctx, QUALE_LOG_INFO, "Vulkan: %u frames in flight on %u lane%s (%u compute "
                    "queue%s of family %u), uploads on %s", slots, gpu->dev.lanes,
                    gpu->dev.lanes == 1 ? "" : "s", gpu->dev.compute_queue_count,
                    gpu->dev.compute_queue_count == 1 ? "" : "s", gpu->dev.queue_family,
                    !gpu->upload_queue                             ? "the lanes' queues"
                    : gpu->upload_queue == gpu->dev.transfer_queue ? "the transfer queue"
                                                                   : "a compute queue of their own");
    return err;
}

/* ---- frames ----------------------------------------------------------- */

/* Records the copy of one picture's planes to where the shaders read them. */
static int record_upload(GpuBackend *gpu, VulkanSlot *s, VkCommandBuffer cb, unsigned slot,
                         const QualePicture *pic, bool is_ref, VkDeviceSize ring_offset, char *error,
                         size_t error_size)
{
    VulkanDevice *dev = &gpu->dev;
    const bool chroma = (gpu->planes & 6) != 0;
    const size_t bytes = chroma ? gpu->frame_bytes : gpu->plane_bytes[0];
    VkBuffer src = host_buffer(gpu, pic->data[0]);
    VkDeviceSize src_offset = 0;
    if (!src) {
        /* A picture from elsewhere: one copy into this slot's staging. */
        if (!s->staging.buffer) {
            int err = vulkan_buffer_create(dev, 2 * (VkDeviceSize)gpu->frame_bytes,
                                           VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true, &s->staging,
                                           "staging", error, error_size);
            if (err) return err;
        }
        src_offset = is_ref ? 0 : gpu->frame_bytes;
        memcpy((uint8_t *)s->staging.mapped + src_offset, pic->data[0], bytes);
        src = s->staging.buffer;
    }
    const VkDeviceSize slot_base = (VkDeviceSize)slot * gpu->slot_bytes;
    VkBufferCopy regions[2];
    unsigned n = 0;
    if (is_ref) {
        regions[n++] = (VkBufferCopy){ src_offset, ring_offset, gpu->plane_bytes[0] };
        if (chroma)
            regions[n++] = (VkBufferCopy){ src_offset + gpu->plane_offset[1], slot_base + gpu->frame_bytes,
                                           gpu->plane_bytes[1] + gpu->plane_bytes[2] };
        dev->api.vkCmdCopyBuffer(cb, src, gpu->ring.buffer, 1, &regions[0]);
        if (n == 2) dev->api.vkCmdCopyBuffer(cb, src, gpu->frames.buffer, 1, &regions[1]);
    } else {
        regions[0] = (VkBufferCopy){ src_offset, slot_base, bytes };
        dev->api.vkCmdCopyBuffer(cb, src, gpu->frames.buffer, 1, &regions[0]);
        if (gpu->dist_history) {
            regions[1] = (VkBufferCopy){ src_offset, ring_offset + gpu->plane_bytes[0],
                                         gpu->plane_bytes[0] };
            dev->api.vkCmdCopyBuffer(cb, src, gpu->ring.buffer, 1, &regions[1]);
        }
    }
    return 0;
}

static VkResult begin_commands(const VulkanDevice *dev, VkCommandBuffer cb)
{
    VkResult r = dev->api.vkResetCommandBuffer(cb, 0);
    const VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    if (r == VK_SUCCESS) r = dev->api.vkBeginCommandBuffer(cb, &begin);
    return r;
}

/* QUALE_VULKAN_PROFILE: each twin's work alone, each of its rounds
 * between two timestamps (queries 2 (twin PROFILE_ROUNDS + round) and the
 * next), barriers around it. */
static int record_twins_profiled(GpuBackend *gpu, unsigned slot, const VulkanFrame *f,
                                 VkCommandBuffer cb, char *error, size_t error_size)
{
    const VulkanDevice *dev = &gpu->dev;
    dev->api.vkCmdResetQueryPool(cb, gpu->queries, 0, gpu->twin_count * PROFILE_ROUNDS * 2);
    for (unsigned i = 0; i < gpu->twin_count; i++) {
        ActiveTwin *a = &gpu->twins[i];
        for (unsigned round = 0;; round++) {
            const uint32_t q = 2 * (i * PROFILE_ROUNDS + QUALE_MIN(round, PROFILE_ROUNDS - 1u));
            vulkan_compute_barrier(dev, cb);
            dev->api.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, gpu->queries, q);
            int left = 0;
            if (a->twin->record_round)
                left = a->twin->record_round(a->state, round, slot, f, cb, error, error_size);
            else
                left = a->twin->record(a->state, slot, f, cb, error, error_size);
            if (left < 0) return left;
            vulkan_compute_barrier(dev, cb);
            dev->api.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, gpu->queries,
                                         q + 1);
            if (left == 0 || round + 1 >= PROFILE_ROUNDS) break;
        }
    }
    return 0;
}

/* Every twin's work of one frame: those that record it whole, then the
 * rounds of the others, round by round with one barrier between rounds. */
static int record_twins(GpuBackend *gpu, unsigned slot, const VulkanFrame *f, VkCommandBuffer cb,
                        char *error, size_t error_size)
{
    const VulkanDevice *dev = &gpu->dev;
    if (gpu->profile) return record_twins_profiled(gpu, slot, f, cb, error, error_size);
    bool any = false;
    int err = 0;
    for (unsigned i = 0; i < gpu->twin_count && !err; i++) {
        ActiveTwin *a = &gpu->twins[i];
        a->pending = a->twin->record_round != NULL;
        any = any || a->pending;
        if (!a->pending) err = a->twin->record(a->state, slot, f, cb, error, error_size);
    }
    if (err || !any) return err;
    /* The rounds may overwrite what the lane's frame before still reads. */
    vulkan_compute_barrier(dev, cb);
    for (unsigned round = 0; any; round++) {
        if (round > 0) vulkan_compute_barrier(dev, cb);
        any = false;
        for (unsigned i = 0; i < gpu->twin_count; i++) {
            ActiveTwin *a = &gpu->twins[i];
            if (!a->pending) continue;
            const int left = a->twin->record_round(a->state, round, slot, f, cb, error, error_size);
            if (left < 0) return left;
            a->pending = left > 0;
            any = any || a->pending;
        }
    }
    return 0;
}

/* The waits of one batch: at most one per queue, the latest point asked. */
typedef struct Waits {
    VkSemaphore semaphore[TIMELINES];
    uint64_t value[TIMELINES];
    VkPipelineStageFlags stage[TIMELINES];
    unsigned count;
} Waits;

static void wait_for(const GpuBackend *gpu, Waits *w, SyncPoint point, VkPipelineStageFlags stage)
{
    if (point.value == 0) return; /* nothing signalled there yet */
    const VkSemaphore semaphore = gpu->timeline[point.timeline];
    for (unsigned i = 0; i < w->count; i++) {
        if (w->semaphore[i] == semaphore) {
            if (point.value > w->value[i]) w->value[i] = point.value;
            return;
        }
    }
    w->semaphore[w->count] = semaphore;
    w->value[w->count] = point.value;
    w->stage[w->count++] = stage;
}

/*
 * Frame n on lane n % lanes.  With timelines, its upload and its work are
 * two batches, each ordered after exactly what it depends on:
 *   - the upload (on the transfer queue, or the lane's queue) overwrites
 *     ring entry n % R, so it waits for the work of the frames that read
 *     the old occupant (n - R .. n - R + history); the slot it writes is
 *     free (the frame that held it has completed on the host);
 *   - the work (on the lane's queue) waits for the uploads of the frames
 *     it reads (n - history .. n).
 * Frames of one lane share a queue, and the barrier before the twins'
 * rounds (record_twins) orders a frame's work after that of the lane's
 * frame before, whose per-lane data it overwrites.  Without
 * timelines everything is one batch on one queue: a barrier from all
 * earlier shader work to the upload, as each frame may overwrite what an
 * earlier one still reads.
 */
static int vulkan_submit(GpuBackend *gpu, unsigned slot, const MetricFrame *frame)
{
    char error[512] = "";
    const size_t error_size = sizeof(error);
    VulkanDevice *dev = &gpu->dev;
    VulkanSlot *s = &gpu->slots[slot];
    const unsigned n = frame->index, R = gpu->ring_size, e = n % R;
    const unsigned lane = n % dev->lanes;
    const unsigned upload_timeline = gpu->upload_queue ? UPLOAD_TIMELINE : lane;
    const VkDeviceSize luma = gpu->plane_bytes[0];
    const VkDeviceSize ring_offset = (VkDeviceSize)e * gpu->ring_entry;
    int err = 0;

    VkResult r = dev->api.vkResetFences(dev->device, 1, &s->fence);
    if (r == VK_SUCCESS) r = begin_commands(dev, s->cb);
    if (r == VK_SUCCESS && dev->timeline) r = begin_commands(dev, s->upload_cb);
    if (r != VK_SUCCESS) {
        context_log(gpu->ctx, QUALE_LOG_ERROR, "Vulkan, frame %u: preparing commands failed: %s", n,
                    vulkan_result_text(r));
        return -EIO;
    }
    VkCommandBuffer upload_cb = s->upload_cb;
    if (!dev->timeline) {
        /* Earlier frames may still read the ring entry and slot we overwrite. */
        barrier(dev, s->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT, 0);
        upload_cb = s->cb;
    }
    err = record_upload(gpu, s, upload_cb, slot, frame->ref, true, ring_offset, error, error_size);
    if (!err)
        err = record_upload(gpu, s, upload_cb, slot, frame->dist, false, ring_offset, error, error_size);
    if (!dev->timeline) {
        /* Our planes, and earlier frames' ring entries, ready for the shaders. */
        barrier(dev, s->cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    }

    VulkanFrame f = { .index = n, .lane = lane };
    const QualePicture *ref = frame->ref;
    const VkDeviceSize slot_base = (VkDeviceSize)slot * gpu->slot_bytes;
    for (unsigned p = 0; p < ref->plane_count; p++) {
        f.stride[p] = (uint32_t)ref->stride[p];
        f.width[p] = ref->plane_width[p];
        f.height[p] = ref->plane_height[p];
        f.dist_offset[p] = slot_base + gpu->plane_offset[p];
    }
    f.ref_offset[0] = ring_offset;
    if (ref->plane_count == 3) {
        f.ref_offset[1] = slot_base + gpu->frame_bytes;
        f.ref_offset[2] = f.ref_offset[1] + gpu->plane_bytes[1];
    }
    for (unsigned k = 0; k < gpu->history && k + 1 <= n; k++) {
        f.prev_ref_offset[k] = (VkDeviceSize)((n - 1 - k) % R) * gpu->ring_entry;
        if (gpu->dist_history) f.prev_dist_offset[k] = f.prev_ref_offset[k] + luma;
        f.has_prev[k] = true;
    }
    err = record_twins(gpu, slot, &f, s->cb, error, error_size);
    barrier(dev, s->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    r = dev->api.vkEndCommandBuffer(s->cb);
    if (r == VK_SUCCESS && dev->timeline) r = dev->api.vkEndCommandBuffer(s->upload_cb);
    if (!err && r != VK_SUCCESS) {
        snprintf(error, error_size, "recording commands failed: %s", vulkan_result_text(r));
        err = -EIO;
    }
    if (!err && !dev->timeline) {
        const VkSubmitInfo submit = {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = 1,
            .pCommandBuffers = &s->cb,
        };
        r = dev->api.vkQueueSubmit(dev->queue, 1, &submit, s->fence);
    } else if (!err) {
        Waits upload_waits = { .count = 0 }, work_waits = { .count = 0 };
        for (unsigned j = 0; j <= gpu->history && n + j >= R; j++)
            wait_for(gpu, &upload_waits, gpu->done[(n + j) % R], VK_PIPELINE_STAGE_TRANSFER_BIT);
        const SyncPoint uploaded = { upload_timeline, ++gpu->timeline_value[upload_timeline] };
        gpu->uploaded[e] = uploaded;
        for (unsigned k = 0; k <= gpu->history && k <= n; k++)
            wait_for(gpu, &work_waits, gpu->uploaded[(n - k) % R], VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
        const SyncPoint done = { lane, ++gpu->timeline_value[lane] };
        gpu->done[e] = done;

        const VkTimelineSemaphoreSubmitInfoKHR values[2] = {
            {
                .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO_KHR,
                .waitSemaphoreValueCount = upload_waits.count,
                .pWaitSemaphoreValues = upload_waits.value,
                .signalSemaphoreValueCount = 1,
                .pSignalSemaphoreValues = &uploaded.value,
            },
            {
                .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO_KHR,
                .waitSemaphoreValueCount = work_waits.count,
                .pWaitSemaphoreValues = work_waits.value,
                .signalSemaphoreValueCount = 1,
                .pSignalSemaphoreValues = &done.value,
            },
        };
        const VkSubmitInfo submits[2] = {
            {
                .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                .pNext = &values[0],
                .waitSemaphoreCount = upload_waits.count,
                .pWaitSemaphores = upload_waits.semaphore,
                .pWaitDstStageMask = upload_waits.stage,
                .commandBufferCount = 1,
                .pCommandBuffers = &s->upload_cb,
                .signalSemaphoreCount = 1,
                .pSignalSemaphores = &gpu->timeline[upload_timeline],
            },
            {
                .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                .pNext = &values[1],
                .waitSemaphoreCount = work_waits.count,
                .pWaitSemaphores = work_waits.semaphore,
                .pWaitDstStageMask = work_waits.stage,
                .commandBufferCount = 1,
                .pCommandBuffers = &s->cb,
                .signalSemaphoreCount = 1,
                .pSignalSemaphores = &gpu->timeline[lane],
            },
        };
        /* Lanes beyond the device's queues share them. */
        VkQueue compute_queue = dev->compute_queues[lane % dev->compute_queue_count];
        if (!gpu->upload_queue) {
            r = dev->api.vkQueueSubmit(compute_queue, 2, submits, s->fence);
        } else {
            r = dev->api.vkQueueSubmit(gpu->upload_queue, 1, &submits[0], VK_NULL_HANDLE);
            if (r == VK_SUCCESS) r = dev->api.vkQueueSubmit(compute_queue, 1, &submits[1], s->fence);
        }
    }
    if (!err && r != VK_SUCCESS) {
        snprintf(error, error_size, "submitting work failed: %s", vulkan_result_text(r));
        err = -EIO;
    }
    if (err) context_log(gpu->ctx, QUALE_LOG_ERROR, "Vulkan, frame %u: %s", n, error);
    return err;
}

static int vulkan_complete(GpuBackend *gpu, unsigned slot, const MetricFrame *frame)
{
    VulkanDevice *dev = &gpu->dev;
    const VkResult r = dev->api.vkWaitForFences(dev->device, 1, &gpu->slots[slot].fence, VK_TRUE, UINT64_MAX);
    if (r != VK_SUCCESS) {
        context_log(gpu->ctx, QUALE_LOG_ERROR, "Vulkan, frame %u: the device failed: %s",
                    frame->index, vulkan_result_text(r));
        return -EIO;
    }
    if (gpu->profile) {
        /* The stamps of this frame (one frame in flight): rounds a twin
         * did not have stay unwritten, and unavailable. */
        for (unsigned q = 0; q < gpu->twin_count * PROFILE_ROUNDS * 2; q += 2) {
            uint64_t pair[2];
            const VkResult got = dev->api.vkGetQueryPoolResults(
                dev->device, gpu->queries, q, 2, sizeof(pair), pair, sizeof(uint64_t),
                VK_QUERY_RESULT_64_BIT);
            if (got == VK_SUCCESS && pair[1] > pair[0])
                gpu->round_ns[q / 2] +=
                    (double)(pair[1] - pair[0]) * dev->properties.limits.timestampPeriod;
        }
        gpu->profiled_frames++;
    }
    for (unsigned i = 0; i < gpu->twin_count; i++) {
        ActiveTwin *a = &gpu->twins[i];
        int err = a->twin->collect(a->state, slot, frame, a->sink);
        if (err) return err;
    }
    return 0;
}

const GpuOps gpu_vulkan_ops = {
    .kind = QUALE_BACKEND_VULKAN,
    .twin_built = vulkan_twin_built,
    .list_devices = vulkan_list_devices,
    .describe = vulkan_describe,
    .open = vulkan_open,
    .close = vulkan_close,
    .host_allocator = vulkan_host_allocator,
    .has_twin = vulkan_has_twin,
    .start = vulkan_start,
    .submit = vulkan_submit,
    .complete = vulkan_complete,
};
