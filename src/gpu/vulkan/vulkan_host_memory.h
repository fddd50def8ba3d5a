/*
 * Host memory the device reads from: the context's picture pool allocates
 * its pictures as mapped host-visible Vulkan buffers, so that an upload
 * copies from where the reader put the frame.  The registry finds the
 * buffer of a picture's memory; memory that is not a buffer (where the
 * device has none to give) is plain aligned memory, uploaded through
 * staging.  Where the device imports host memory, the pictures are memory
 * of our own imported (host_pages.h says why); elsewhere the driver's.
 */
#ifndef QUALE_SRC_VULKAN_VULKAN_HOST_MEMORY_H
#define QUALE_SRC_VULKAN_VULKAN_HOST_MEMORY_H

#include <pthread.h>
#include <stddef.h>

#include "vulkan_primitives.h"

typedef struct VulkanHostBlock {
    void *pointer;
    VulkanBuffer buffer;
    size_t mapped; /* bytes of our own memory imported; 0: the driver's */
} VulkanHostBlock;

typedef struct VulkanHostMemory {
    const VulkanDevice *dev;
    pthread_mutex_t lock; /* pictures come and go on any thread */
    VulkanHostBlock *blocks;
    size_t count, capacity;
} VulkanHostMemory;

void vulkan_host_memory_init(VulkanHostMemory *m, const VulkanDevice *dev);
/* Every block must have been freed. */
void vulkan_host_memory_destroy(VulkanHostMemory *m);

/* size bytes aligned to QUALE_ALIGNMENT, in a buffer where the device
 * gives one; NULL when out of memory. */
void *vulkan_host_alloc(VulkanHostMemory *m, size_t size);
void vulkan_host_free(VulkanHostMemory *m, void *p);

/* The buffer that starts at p, or VK_NULL_HANDLE. */
VkBuffer vulkan_host_buffer(VulkanHostMemory *m, const void *p);

#endif /* QUALE_SRC_VULKAN_VULKAN_HOST_MEMORY_H */
