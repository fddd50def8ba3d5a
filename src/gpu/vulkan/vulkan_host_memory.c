/*
 * Host memory the device reads from (vulkan_host_memory.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common.h"
#include "host_pages.h"
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

/* Memory of our own, imported: 0, or < 0 where the device cannot. */
static int import_own(const VulkanDevice *dev, size_t size, VulkanHostBlock *block)
{
    char error[256];
    if (!dev->host_import_alignment || !host_pages_wanted()) return -ENOSYS;
    void *p = host_pages_map(size, (size_t)dev->host_import_alignment, &block->mapped);
    if (!p) return -ENOMEM;
    if (vulkan_buffer_import_host(dev, p, block->mapped, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                  &block->buffer, "a picture", error, sizeof(error))) {
        host_pages_unmap(p, block->mapped);
        block->mapped = 0;
        return -EIO;
    }
    block->pointer = p;
    return 0;
}

static void block_free(const VulkanDevice *dev, VulkanHostBlock *block)
{
    vulkan_buffer_destroy(dev, &block->buffer);
    if (block->mapped) host_pages_unmap(block->pointer, block->mapped);
}

void *vulkan_host_alloc(VulkanHostMemory *m, size_t size)
{
    VulkanHostBlock block = { 0 };
    char error[256];
    if (import_own(m->dev, size, &block)) {
        if (vulkan_buffer_create(m->dev, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true,
                                 &block.buffer, "a picture", error, sizeof(error)) ||
            ((uintptr_t)block.buffer.mapped & (QUALE_ALIGNMENT - 1))) {
            /* Plain memory still works, through the staging copy. */
            vulkan_buffer_destroy(m->dev, &block.buffer);
            return quale_aligned_alloc(size);
        }
        block.pointer = block.buffer.mapped;
    }
    pthread_mutex_lock(&m->lock);
    if (m->count == m->capacity) {
        const size_t cap = m->capacity ? 2 * m->capacity : 64;
        VulkanHostBlock *list = realloc(m->blocks, cap * sizeof(*list));
        if (!list) {
            pthread_mutex_unlock(&m->lock);
            block_free(m->dev, &block);
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
    if (block.pointer) block_free(m->dev, &block);
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
