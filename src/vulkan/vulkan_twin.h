/*
 * The Vulkan twin of a metric: compute shaders (src/vulkan/<metric>*.comp,
 * compiled to SPIR-V by the build and embedded) that compute what the
 * metric's C reference computes, and the host code that turns the partial
 * sums they write into the same feature values.
 *
 * Frame memory belongs to the backend: the reference luma of every frame
 * lives in a ring (so temporal twins read earlier frames in place), the
 * other planes in per-slot space.  Both are single storage buffers, so a
 * twin's descriptor sets never change; where a frame's planes are is given
 * by byte offsets (push constants).  Shaders read samples as 32-bit words
 * (no 8- or 16-bit storage features needed); every plane and row starts on
 * a 64-byte boundary.  64-bit sums are pairs of 32-bit words (uaddCarry,
 * umulExtended), so no device needs shaderInt64.
 */
#ifndef QUALE_SRC_VULKAN_VULKAN_TWIN_H
#define QUALE_SRC_VULKAN_VULKAN_TWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"
#include "vulkan_api.h"

typedef struct VulkanDevice {
    VulkanApi api;
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    VkPhysicalDeviceProperties properties;
    VkPhysicalDeviceMemoryProperties memory;
    VkPhysicalDeviceFeatures features; /* enabled: shaderFloat64, shaderInt64 where present */
} VulkanDevice;

typedef struct VulkanBuffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void *mapped;      /* host-visible buffers only */
    bool device_local; /* counted against QUALE_VULKAN_MEMORY_LIMIT */
} VulkanBuffer;

/* Host-visible (mapped, coherent) or device-local memory. */
int vulkan_buffer_create(const VulkanDevice *dev, VkDeviceSize size, VkBufferUsageFlags usage,
                         bool host_visible, VulkanBuffer *buffer, const char *what,
                         char *error, size_t error_size);
void vulkan_buffer_destroy(const VulkanDevice *dev, VulkanBuffer *buffer);

/* A device-local storage buffer holding size bytes of data, copied now
 * (staging, a command buffer of its own, waited for): for the constant
 * tables a twin makes at init; later commands on the queue see them. */
int vulkan_buffer_create_constant(const VulkanDevice *dev, const void *data, size_t size,
                                  VulkanBuffer *buffer, const char *what, char *error,
                                  size_t error_size);

/* A compute pipeline over `bindings` storage buffers (binding 0 ..) and
 * push constants of push_size bytes, with one descriptor set bound to the
 * given buffers. */
typedef struct VulkanPipeline {
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkDescriptorPool pool;
    VkDescriptorSet set;
    uint32_t push_size;
} VulkanPipeline;

int vulkan_pipeline_create(const VulkanDevice *dev, const uint32_t *spirv, size_t spirv_size,
                           const VkBuffer *buffers, unsigned bindings, uint32_t push_size,
                           VulkanPipeline *pipeline, const char *what, char *error,
                           size_t error_size);
void vulkan_pipeline_destroy(const VulkanDevice *dev, VulkanPipeline *pipeline);

/* Records a dispatch with push constants. */
void vulkan_dispatch(const VulkanDevice *dev, VkCommandBuffer cb, const VulkanPipeline *pipeline,
                     const void *push, uint32_t groups_x, uint32_t groups_y);

/* Shader writes visible to the next shader. */
void vulkan_compute_barrier(const VulkanDevice *dev, VkCommandBuffer cb);

/* Where one frame's planes are, in bytes, within the backend's buffers:
 * the reference luma (and earlier frames' reference luma) in `ring`, the
 * rest in `frames`. */
typedef struct VulkanFrame {
    unsigned index;
    VkDeviceSize ref_offset[3];  /* ref_offset[0] is in the ring */
    VkDeviceSize dist_offset[3];
    uint32_t stride[3], width[3], height[3];
    VkDeviceSize prev_ref_offset[2]; /* in the ring */
    bool has_prev[2];
} VulkanFrame;

typedef struct VulkanTwin {
    const Metric *metric;
    unsigned history; /* earlier reference lumas it reads */
    unsigned (*planes)(const void *metric_state);
    /* Whether it computes the metric under these options on this device
     * (a twin that needs shaderFloat64 checks dev->features). */
    bool (*supports)(const VulkanDevice *dev, const void *metric_state);
    /* ring and frames are the buffers shaders bind to read planes. */
    int (*init)(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames, const void *metric_state,
                const QualeVideoFormat *format, unsigned slots, void **twin, char *error,
                size_t error_size);
    int (*record)(void *twin, unsigned slot, const VulkanFrame *frame, VkCommandBuffer cb,
                  char *error, size_t error_size);
    int (*collect)(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink);
    void (*close)(void *twin);
} VulkanTwin;

extern const VulkanTwin *const vulkan_twins[];

#endif /* QUALE_SRC_VULKAN_VULKAN_TWIN_H */
