#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_api.h"

int vulkan_api_load(VulkanApi *api, char *error, size_t error_size)
{
    memset(api, 0, sizeof(*api));
    const char *override = getenv("QUALE_VULKAN_LIBRARY"); /* tests: a broken loader */
    const char *name = override && *override ? override : "libvulkan.so.1";
    api->library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!api->library) {
        const char *why = dlerror();
        snprintf(error, error_size, "the Vulkan loader %s could not be loaded (%s)", name,
                 why ? why : "not found");
        return -ENODEV;
    }
    void *entry = dlsym(api->library, "vkGetInstanceProcAddr");
    if (!entry) {
        snprintf(error, error_size, "%s has no vkGetInstanceProcAddr", name);
        vulkan_api_unload(api);
        return -ENOSYS;
    }
    memcpy(&api->vkGetInstanceProcAddr, &entry, sizeof(entry));
#define LOAD_GLOBAL(fn) api->fn = (PFN_##fn)api->vkGetInstanceProcAddr(NULL, #fn);
    VULKAN_GLOBAL_FUNCTIONS(LOAD_GLOBAL)
#undef LOAD_GLOBAL
    if (!api->vkCreateInstance) {
        snprintf(error, error_size, "the Vulkan loader has no vkCreateInstance");
        vulkan_api_unload(api);
        return -ENOSYS;
    }
    return 0;
}

int vulkan_api_load_instance(VulkanApi *api, VkInstance instance, char *error, size_t error_size)
{
#define LOAD_INSTANCE(fn)                                                              \
    api->fn = (PFN_##fn)api->vkGetInstanceProcAddr(instance, #fn);                     \
    if (!api->fn) {                                                                    \
        snprintf(error, error_size, "the Vulkan instance lacks %s", #fn);              \
        return -ENOSYS;                                                                \
    }
    VULKAN_INSTANCE_FUNCTIONS(LOAD_INSTANCE)
#undef LOAD_INSTANCE
    return 0;
}

int vulkan_api_load_device(VulkanApi *api, VkDevice device, char *error, size_t error_size)
{
#define LOAD_DEVICE(fn)                                                                \
    api->fn = (PFN_##fn)api->vkGetDeviceProcAddr(device, #fn);                         \
    if (!api->fn) {                                                                    \
        snprintf(error, error_size, "the Vulkan device lacks %s", #fn);                \
        return -ENOSYS;                                                                \
    }
    VULKAN_DEVICE_FUNCTIONS(LOAD_DEVICE)
#undef LOAD_DEVICE
    return 0;
}

void vulkan_api_unload(VulkanApi *api)
{
    if (api->library) dlclose(api->library);
    memset(api, 0, sizeof(*api));
}

const char *vulkan_result_text(VkResult result)
{
    switch (result) {
#define CASE(r) case r: return #r;
    CASE(VK_SUCCESS)
    CASE(VK_NOT_READY)
    CASE(VK_TIMEOUT)
    CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    CASE(VK_ERROR_INITIALIZATION_FAILED)
    CASE(VK_ERROR_DEVICE_LOST)
    CASE(VK_ERROR_MEMORY_MAP_FAILED)
    CASE(VK_ERROR_LAYER_NOT_PRESENT)
    CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    CASE(VK_ERROR_TOO_MANY_OBJECTS)
    CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
#undef CASE
    default: return "an unknown Vulkan error";
    }
}
