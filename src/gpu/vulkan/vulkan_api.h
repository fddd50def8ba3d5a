/*
 * The Vulkan API, loaded at run time: libvulkan.so.1 is opened with dlopen
 * and every entry point comes through vkGetInstanceProcAddr /
 * vkGetDeviceProcAddr, so nothing links against the loader and one binary
 * runs with or without Vulkan.  The types come from the Vulkan headers at
 * build time.
 */
#ifndef QUALE_SRC_VULKAN_VULKAN_API_H
#define QUALE_SRC_VULKAN_VULKAN_API_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

/* X(name): every function quale calls, by the level that resolves it. */
#define VULKAN_GLOBAL_FUNCTIONS(X) \
    X(vkCreateInstance)            \
    X(vkEnumerateInstanceVersion)

#define VULKAN_INSTANCE_FUNCTIONS(X)               \
    X(vkDestroyInstance)                           \
    X(vkEnumeratePhysicalDevices)                  \
    X(vkGetPhysicalDeviceProperties)               \
    X(vkGetPhysicalDeviceFeatures)                 \
    X(vkGetPhysicalDeviceQueueFamilyProperties)    \
    X(vkGetPhysicalDeviceMemoryProperties)         \
    X(vkEnumerateDeviceExtensionProperties)        \
    X(vkCreateDevice)                              \
    X(vkGetDeviceProcAddr)

#define VULKAN_DEVICE_FUNCTIONS(X)      \
    X(vkDestroyDevice)                  \
    X(vkGetDeviceQueue)                 \
    X(vkQueueSubmit)                    \
    X(vkQueueWaitIdle)                  \
    X(vkDeviceWaitIdle)                 \
    X(vkAllocateMemory)                 \
    X(vkFreeMemory)                     \
    X(vkMapMemory)                      \
    X(vkUnmapMemory)                    \
    X(vkInvalidateMappedMemoryRanges)   \
    X(vkCreateBuffer)                   \
    X(vkDestroyBuffer)                  \
    X(vkGetBufferMemoryRequirements)    \
    X(vkBindBufferMemory)               \
    X(vkCreateShaderModule)             \
    X(vkDestroyShaderModule)            \
    X(vkCreateComputePipelines)         \
    X(vkCreatePipelineCache)            \
    X(vkDestroyPipelineCache)           \
    X(vkGetPipelineCacheData)           \
    X(vkDestroyPipeline)                \
    X(vkCreatePipelineLayout)           \
    X(vkDestroyPipelineLayout)          \
    X(vkCreateDescriptorSetLayout)      \
    X(vkDestroyDescriptorSetLayout)     \
    X(vkCreateDescriptorPool)           \
    X(vkDestroyDescriptorPool)          \
    X(vkAllocateDescriptorSets)         \
    X(vkUpdateDescriptorSets)           \
    X(vkCreateCommandPool)              \
    X(vkDestroyCommandPool)             \
    X(vkAllocateCommandBuffers)         \
    X(vkBeginCommandBuffer)             \
    X(vkEndCommandBuffer)               \
    X(vkResetCommandBuffer)             \
    X(vkCmdBindPipeline)                \
    X(vkCmdBindDescriptorSets)          \
    X(vkCmdPushConstants)               \
    X(vkCmdDispatch)                    \
    X(vkCmdCopyBuffer)                  \
    X(vkCmdFillBuffer)                  \
    X(vkCmdPipelineBarrier)             \
    X(vkCreateFence)                    \
    X(vkDestroyFence)                   \
    X(vkWaitForFences)                  \
    X(vkResetFences)                    \
    X(vkCreateSemaphore)                \
    X(vkDestroySemaphore)               \
    X(vkCreateQueryPool)                \
    X(vkDestroyQueryPool)               \
    X(vkCmdResetQueryPool)              \
    X(vkCmdWriteTimestamp)              \
    X(vkGetQueryPoolResults)

#define VULKAN_DECLARE(name) PFN_##name name;

typedef struct VulkanApi {
    void *library;
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
    VULKAN_GLOBAL_FUNCTIONS(VULKAN_DECLARE)
    VULKAN_INSTANCE_FUNCTIONS(VULKAN_DECLARE)
    VULKAN_DEVICE_FUNCTIONS(VULKAN_DECLARE)
} VulkanApi;

/* Opens the loader and resolves the global functions. */
int vulkan_api_load(VulkanApi *api, char *error, size_t error_size);
int vulkan_api_load_instance(VulkanApi *api, VkInstance instance, char *error, size_t error_size);
int vulkan_api_load_device(VulkanApi *api, VkDevice device, char *error, size_t error_size);
void vulkan_api_unload(VulkanApi *api);

/* "VK_ERROR_OUT_OF_DEVICE_MEMORY" and so on. */
const char *vulkan_result_text(VkResult result);

#endif /* QUALE_SRC_VULKAN_VULKAN_API_H */
