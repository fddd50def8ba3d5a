/*
 * The Vulkan primitives (vulkan_primitives.c): a device, buffers,
 * pipelines, dispatches with push constants, barriers.  Twins and the
 * backend use them; nothing here knows of metrics or frames.
 */
#ifndef QUALE_SRC_VULKAN_VULKAN_PRIMITIVES_H
#define QUALE_SRC_VULKAN_VULKAN_PRIMITIVES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quale/quale.h"
#include "vulkan_api.h"

/* In a function with `char *error, size_t error_size`: a failed call
 * writes "<what> failed: <reason>" and returns -ENOMEM or -EIO. */
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

/* The most compute queues frames are spread over (lanes, below). */
#define VULKAN_MAX_LANES 8
/* The most descriptor sets of one pipeline (one per lane and level, say). */
#define VULKAN_MAX_SETS 32

typedef struct VulkanDevice {
    VulkanApi api;
    VkInstance instance;
    VkPhysicalDevice physical;
    unsigned index; /* of physical among the instance's devices */
    VkDevice device;
    VkQueue queue; /* compute_queues[0] */
    uint32_t queue_family;
    VkQueue compute_queues[VULKAN_MAX_LANES];
    unsigned compute_queue_count;
    /* A queue of a transfer-only family (a copy engine), or NULL. */
    VkQueue transfer_queue;
    uint32_t transfer_family;
    bool timeline; /* VK_KHR_timeline_semaphore is enabled */
    /* VK_EXT_external_memory_host is enabled: pictures are imported from
     * host memory of our own (vulkan_host_memory.c), aligned to this (0:
     * not enabled), through this entry point. */
    VkDeviceSize host_import_alignment;
    PFN_vkGetMemoryHostPointerPropertiesEXT get_host_pointer_properties;
    VkPhysicalDeviceProperties properties;
    VkPhysicalDeviceMemoryProperties memory;
    /* enabled: shaderFloat64, shaderInt64 where present (both off with
     * QUALE_VULKAN_NO_FLOAT64 set, so tests can run the paths without) */
    VkPhysicalDeviceFeatures features;
    /* Frames of this run are spread over `lanes` compute queues (set by
     * the backend before the twins' init; 1 unless every twin of the run
     * is `concurrent`).  Frame n runs on lane VulkanFrame.lane; frames of
     * one lane run in submission order on one queue, those of different
     * lanes at the same time. */
    unsigned lanes;
    /* Pipelines of earlier runs (vulkan_pipeline_cache.c): the cache every
     * pipeline is built through, the bytes the driver kept of its file,
     * whether the file was other than that, and its path. */
    VkPipelineCache pipeline_cache;
    size_t cache_loaded_bytes;
    bool cache_stale;
    char *cache_path;
    /* The contexts of a process on one GPU share its VkDevice (each holds
     * a copy of this struct, `lanes` its own): its queues are submitted to
     * under this lock (vulkan_queue_submit()).  NULL: a device of its own. */
    pthread_mutex_t *submit_lock;
    struct SharedDevice *shared;
    bool reused; /* this open found the device kept from an earlier one */
} VulkanDevice;

typedef struct VulkanBuffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void *mapped;      /* host-visible buffers only */
    bool device_local; /* counted against QUALE_VULKAN_MEMORY_LIMIT */
} VulkanBuffer;

/* The device of that ordinal (-1: the preferred one, as the backend picks;
 * tests of shaders open one outside any context), shared with the
 * process's other users of it; vulkan_device_close() lets go of it (the
 * last user's close keeps it for the process's next user, see
 * vulkan_device.c). */
int vulkan_device_open(VulkanDevice *dev, int ordinal, char *error, size_t error_size);
void vulkan_device_close(VulkanDevice *dev);

/* vkQueueSubmit under the device's submit lock; vkDeviceWaitIdle too
 * (it touches every queue). */
VkResult vulkan_queue_submit(const VulkanDevice *dev, VkQueue queue, uint32_t count,
                             const VkSubmitInfo *submits, VkFence fence);
VkResult vulkan_device_wait_idle(const VulkanDevice *dev);

/* The devices the loader finds (GpuOps.list_devices), and one of them
 * described. */
int vulkan_list_devices(QualeDeviceInfo *devices, unsigned max, unsigned *count, char *error,
                        size_t error_size);
void vulkan_describe_device(const VulkanDevice *dev, QualeDeviceInfo *info);

/* Host-visible (mapped, coherent) or device-local memory. */
int vulkan_buffer_create(const VulkanDevice *dev, VkDeviceSize size, VkBufferUsageFlags usage,
                         bool host_visible, VulkanBuffer *buffer, const char *what,
                         char *error, size_t error_size);
void vulkan_buffer_destroy(const VulkanDevice *dev, VulkanBuffer *buffer);

/* A device-local storage buffer holding size bytes of data, copied now
 * (staging, a command buffer of its own, waited for): for the constant
 * tables a twin makes at init; later commands on the queue see them. */
/* A buffer over host memory of ours (host_pages.h), imported where the
 * device has VK_EXT_external_memory_host (host_import_alignment): the
 * device reads it where it lies.  Destroying the buffer leaves the memory
 * to its owner. */
int vulkan_buffer_import_host(const VulkanDevice *dev, void *host, size_t size,
                              VkBufferUsageFlags usage, VulkanBuffer *b, const char *what,
                              char *error, size_t error_size);
int vulkan_buffer_create_constant(const VulkanDevice *dev, const void *data, size_t size,
                                  VulkanBuffer *buffer, const char *what, char *error,
                                  size_t error_size);

/* The layout of the C struct that fills a shader's push constants: its
 * size and, in order, each member's offset and size, which
 * vulkan_pipeline_create() holds against the shader's block member by
 * member (a member added, dropped or retyped on one side only would shift
 * every field after it).  VULKAN_PUSH(Type, member, member, ...) names
 * every member of Type, in order. */
#define VULKAN_PUSH_MAX_MEMBERS 32
typedef struct VulkanPushMember {
    uint16_t offset, size; /* size 0: the end of the list */
} VulkanPushMember;
typedef struct VulkanPushLayout {
    uint32_t size;
    VulkanPushMember member[VULKAN_PUSH_MAX_MEMBERS + 1];
} VulkanPushLayout;

#define VULKAN_PUSH(T, ...) \
    (&(const VulkanPushLayout){ sizeof(T), { VULKAN_PUSH_EACH_(T, __VA_ARGS__) } })
#define VULKAN_PUSH_MEMBER_(T, m) { (uint16_t)offsetof(T, m), (uint16_t)sizeof(((T *)0)->m) }
#define VULKAN_PUSH_EACH_(T, ...) \
    VULKAN_PUSH_PICK_(__VA_ARGS__, \
                      VULKAN_PUSH_32_, VULKAN_PUSH_31_, VULKAN_PUSH_30_, VULKAN_PUSH_29_, \
                      VULKAN_PUSH_28_, VULKAN_PUSH_27_, VULKAN_PUSH_26_, VULKAN_PUSH_25_, \
                      VULKAN_PUSH_24_, VULKAN_PUSH_23_, VULKAN_PUSH_22_, VULKAN_PUSH_21_, \
                      VULKAN_PUSH_20_, VULKAN_PUSH_19_, VULKAN_PUSH_18_, VULKAN_PUSH_17_, \
                      VULKAN_PUSH_16_, VULKAN_PUSH_15_, VULKAN_PUSH_14_, VULKAN_PUSH_13_, \
                      VULKAN_PUSH_12_, VULKAN_PUSH_11_, VULKAN_PUSH_10_, VULKAN_PUSH_9_, \
                      VULKAN_PUSH_8_, VULKAN_PUSH_7_, VULKAN_PUSH_6_, VULKAN_PUSH_5_, \
                      VULKAN_PUSH_4_, VULKAN_PUSH_3_, VULKAN_PUSH_2_, VULKAN_PUSH_1_)(T, __VA_ARGS__)
#define VULKAN_PUSH_PICK_( \
    _1, _2, _3, _4, _5, _6, _7, _8, \
    _9, _10, _11, _12, _13, _14, _15, _16, \
    _17, _18, _19, _20, _21, _22, _23, _24, \
    _25, _26, _27, _28, _29, _30, _31, _32, \
    NAME, ...) NAME
#define VULKAN_PUSH_1_(T, a) VULKAN_PUSH_MEMBER_(T, a)
#define VULKAN_PUSH_2_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_1_(T, __VA_ARGS__)
#define VULKAN_PUSH_3_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_2_(T, __VA_ARGS__)
#define VULKAN_PUSH_4_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_3_(T, __VA_ARGS__)
#define VULKAN_PUSH_5_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_4_(T, __VA_ARGS__)
#define VULKAN_PUSH_6_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_5_(T, __VA_ARGS__)
#define VULKAN_PUSH_7_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_6_(T, __VA_ARGS__)
#define VULKAN_PUSH_8_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_7_(T, __VA_ARGS__)
#define VULKAN_PUSH_9_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_8_(T, __VA_ARGS__)
#define VULKAN_PUSH_10_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_9_(T, __VA_ARGS__)
#define VULKAN_PUSH_11_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_10_(T, __VA_ARGS__)
#define VULKAN_PUSH_12_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_11_(T, __VA_ARGS__)
#define VULKAN_PUSH_13_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_12_(T, __VA_ARGS__)
#define VULKAN_PUSH_14_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_13_(T, __VA_ARGS__)
#define VULKAN_PUSH_15_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_14_(T, __VA_ARGS__)
#define VULKAN_PUSH_16_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_15_(T, __VA_ARGS__)
#define VULKAN_PUSH_17_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_16_(T, __VA_ARGS__)
#define VULKAN_PUSH_18_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_17_(T, __VA_ARGS__)
#define VULKAN_PUSH_19_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_18_(T, __VA_ARGS__)
#define VULKAN_PUSH_20_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_19_(T, __VA_ARGS__)
#define VULKAN_PUSH_21_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_20_(T, __VA_ARGS__)
#define VULKAN_PUSH_22_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_21_(T, __VA_ARGS__)
#define VULKAN_PUSH_23_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_22_(T, __VA_ARGS__)
#define VULKAN_PUSH_24_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_23_(T, __VA_ARGS__)
#define VULKAN_PUSH_25_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_24_(T, __VA_ARGS__)
#define VULKAN_PUSH_26_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_25_(T, __VA_ARGS__)
#define VULKAN_PUSH_27_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_26_(T, __VA_ARGS__)
#define VULKAN_PUSH_28_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_27_(T, __VA_ARGS__)
#define VULKAN_PUSH_29_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_28_(T, __VA_ARGS__)
#define VULKAN_PUSH_30_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_29_(T, __VA_ARGS__)
#define VULKAN_PUSH_31_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_30_(T, __VA_ARGS__)
#define VULKAN_PUSH_32_(T, a, ...) VULKAN_PUSH_MEMBER_(T, a), VULKAN_PUSH_31_(T, __VA_ARGS__)

/* A compute pipeline over `bindings` storage buffers (binding 0 ..) and
 * push constants laid out as `push` says (NULL: none), with one descriptor
 * set bound to the given buffers (or, from vulkan_pipeline_create_ex,
 * several: one per lane, say). */
typedef struct VulkanPipeline {
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkDescriptorPool pool;
    VkDescriptorSet sets[VULKAN_MAX_SETS];
    unsigned set_count;
    uint32_t push_size;
} VulkanPipeline;

int vulkan_pipeline_create(const VulkanDevice *dev, const uint32_t *spirv, size_t spirv_size,
                           const VkBuffer *buffers, unsigned bindings,
                           const VulkanPushLayout *push, VulkanPipeline *pipeline,
                           const char *what, char *error, size_t error_size);

/* The same with specialisation constants (constant_id i takes the 32-bit
 * constants[i]) and `sets` descriptor sets: set k is bound to
 * buffers[k * bindings ..]. */
typedef struct VulkanPipelineInfo {
    const uint32_t *spirv;
    size_t spirv_size;
    const uint32_t *constants;
    unsigned constant_count;
    const VkBuffer *buffers;
    unsigned bindings, sets;
    const VulkanPushLayout *push;
    const char *what;
} VulkanPipelineInfo;

int vulkan_pipeline_create_ex(const VulkanDevice *dev, const VulkanPipelineInfo *info,
                              VulkanPipeline *pipeline, char *error, size_t error_size);
void vulkan_pipeline_destroy(const VulkanDevice *dev, VulkanPipeline *pipeline);

/* Records a dispatch with push constants (descriptor set 0, or `set`). */
void vulkan_dispatch(const VulkanDevice *dev, VkCommandBuffer cb, const VulkanPipeline *pipeline,
                     const void *push, uint32_t groups_x, uint32_t groups_y);
void vulkan_dispatch_set(const VulkanDevice *dev, VkCommandBuffer cb,
                         const VulkanPipeline *pipeline, unsigned set, const void *push,
                         uint32_t groups_x, uint32_t groups_y);

/* Shader writes visible to the next shader. */
void vulkan_compute_barrier(const VulkanDevice *dev, VkCommandBuffer cb);

/* A device-local buffer both the compute and the transfer family use (the
 * backend's ring and frames). */
int vulkan_buffer_create_shared(const VulkanDevice *dev, VkDeviceSize size,
                                VkBufferUsageFlags usage, VulkanBuffer *buffer, const char *what,
                                char *error, size_t error_size);

/* A pipeline barrier over all memory, from src to dst stages and access. */
void vulkan_barrier(const VulkanDevice *dev, VkCommandBuffer cb, VkPipelineStageFlags src,
                    VkAccessFlags src_access, VkPipelineStageFlags dst, VkAccessFlags dst_access);

/* The device's pipeline cache, from the file of earlier runs where there
 * is one (opened with the device), and written back where this run added
 * pipelines to it (before the device closes). */
void vulkan_pipeline_cache_open(VulkanDevice *dev);
/* Writes the cache file when the device's pipelines added to it. */
void vulkan_pipeline_cache_save(VulkanDevice *dev);
void vulkan_pipeline_cache_close(VulkanDevice *dev);

#endif /* QUALE_SRC_VULKAN_VULKAN_PRIMITIVES_H */
