#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_api.h"
#include "gpu/gpu_library.h"

int vulkan_api_load(VulkanApi *api, char *error, size_t error_size)
{
    memset(api, 0, sizeof(*api));
    const char *name; /* QUALE_VULKAN_LIBRARY: the tests' broken loader */
    api->library = gpu_library_open("QUALE_VULKAN_LIBRARY", "libvulkan.so.1", "the Vulkan loader",
                                    &name, error, error_size);
    if (!api->library) return -ENODEV;
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

/* Entry point fn of `handle` through api->get (vkGetInstanceProcAddr or
 * vkGetDeviceProcAddr); a missing one is an error that names it. */
#define LOAD_OR_FAIL(get, handle, what, fn)                                        \
    api->fn = (PFN_##fn)api->get(handle, #fn);                                     \
    if (!api->fn) {                                                                \
        snprintf(error, error_size, "the Vulkan %s lacks %s", what, #fn);          \
        return -ENOSYS;                                                            \
    }

int vulkan_api_load_instance(VulkanApi *api, VkInstance instance, char *error, size_t error_size)
{
#define LOAD_INSTANCE(fn) LOAD_OR_FAIL(vkGetInstanceProcAddr, instance, "instance", fn)
    VULKAN_INSTANCE_FUNCTIONS(LOAD_INSTANCE)
#undef LOAD_INSTANCE
    return 0;
}

int vulkan_api_load_device(VulkanApi *api, VkDevice device, char *error, size_t error_size)
{
#define LOAD_DEVICE(fn) LOAD_OR_FAIL(vkGetDeviceProcAddr, device, "device", fn)
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
