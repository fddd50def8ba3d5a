/*
 * Host memory the device reads from (vulkan_host_memory.h).
 */
#include <stdint.h>
#include <stdlib.h>

#include "common.h"
#include "vulkan_host_memory.h"

void vulkan_host_memory_init(VulkanHostMemory *m, const VulkanDevice *dev)
{
    *m = (VulkanHostMemory){ .dev = dev };
    pthread_mutex_init(&m->lock, NULL);
}

void vulkan_host_memory_destroy(VulkanHostMemory *m)
{
    free(m->blocks);
    m->blocks = NULL;
    pthread_mutex_destroy(&m->lock);
}

void *vulkan_host_alloc(VulkanHostMemory *m, size_t size)
{
    VulkanHostBlock block = { 0 };
    char error[256];
    if (vulkan_buffer_create(m->dev, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true, &block.buffer,
                             "a picture", error, sizeof(error)) ||
        ((uintptr_t)block.buffer.mapped & (QUALE_ALIGNMENT - 1))) {
        /* Plain memory still works, through the staging copy. */
        vulkan_buffer_destroy(m->dev, &block.buffer);
        return quale_aligned_alloc(size);
    }
    block.pointer = block.buffer.mapped;
    pthread_mutex_lock(&m->lock);
    if (m->count == m->capacity) {
        const size_t cap = m->capacity ? 2 * m->capacity : 64;
        VulkanHostBlock *list = realloc(m->blocks, cap * sizeof(*list));
        if (!list) {
            pthread_mutex_unlock(&m->lock);
            vulkan_buffer_destroy(m->dev, &block.buffer);
            return NULL;
        }
        m->blocks = list;
        m->capacity = cap;
    }
    m->blocks[m->count++] = block;
    pthread_mutex_unlock(&m->lock);
    return block.pointer;
}

void vulkan_host_free(VulkanHostMemory *m, void *p)
{
    VulkanHostBlock block = { 0 };
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->count; i++) {
        if (m->blocks[i].pointer == p) {
            block = m->blocks[i];
            m->blocks[i] = m->blocks[--m->count];
            break;
        }
    }
    pthread_mutex_unlock(&m->lock);
    if (block.pointer) vulkan_buffer_destroy(m->dev, &block.buffer);
    else quale_aligned_free(p);
}

VkBuffer vulkan_host_buffer(VulkanHostMemory *m, const void *p)
{
    VkBuffer found = VK_NULL_HANDLE;
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->count && !found; i++)
        if (m->blocks[i].pointer == p) found = m->blocks[i].buffer.buffer;
    pthread_mutex_unlock(&m->lock);
    return found;
}
