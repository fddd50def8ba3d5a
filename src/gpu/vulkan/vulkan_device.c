/*
 * Vulkan devices: the process's one loader and instance, the devices it
 * lists, and opening one with the queues and features the twins use.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "gpu/gpu.h"
#include "host_pages.h"
#include "vulkan_primitives.h"

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

int vulkan_list_devices(QualeDeviceInfo *devices, unsigned max, unsigned *count,
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

/* The queue families: compute (a compute family without graphics where
 * there is one, the one with the most queues) and transfer (a copy engine,
 * where there is one).  0, or -ENODEV with the reason. */
static int choose_queue_families(VulkanDevice *dev, char *error, size_t error_size)
{
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

    return 0;
}

/* The device extensions quale enables where present.  Timeline semaphores
 * order each frame's work after exactly the work it depends on (see
 * vulkan_submit); without them the frames stay on one queue, each after
 * all the work before it.  External host memory lets pictures live in
 * memory of our own, faster to pin than the driver's (host_pages.h). */
static void find_extensions(VulkanDevice *dev, bool *host_memory)
{
    *host_memory = false;
    uint32_t extension_count = 0;
    VkExtensionProperties *extensions = NULL;
    if (dev->api.vkEnumerateDeviceExtensionProperties(dev->physical, NULL, &extension_count, NULL) ==
            VK_SUCCESS &&
        extension_count > 0 && (extensions = calloc(extension_count, sizeof(*extensions))) &&
        dev->api.vkEnumerateDeviceExtensionProperties(dev->physical, NULL, &extension_count,
                                                      extensions) == VK_SUCCESS) {
        for (uint32_t i = 0; i < extension_count; i++) {
            if (!strcmp(extensions[i].extensionName, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME))
                dev->timeline = true;
            if (!strcmp(extensions[i].extensionName, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME))
                *host_memory = true;
        }
    }
    free(extensions);
    if (!dev->timeline) dev->transfer_family = UINT32_MAX;
}

/* The alignment the device asks of imported host memory, or 0 where it
 * cannot be asked (a Vulkan 1.0 device) or host_pages.h cannot give. */
static VkDeviceSize host_import_alignment(const VulkanDevice *dev)
{
    if (dev->properties.apiVersion < VK_API_VERSION_1_1) return 0;
    PFN_vkGetPhysicalDeviceProperties2 properties2 =
        (PFN_vkGetPhysicalDeviceProperties2)dev->api.vkGetInstanceProcAddr(
            instance, "vkGetPhysicalDeviceProperties2");
    if (!properties2) return 0;
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT host = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT,
    };
    VkPhysicalDeviceProperties2 all = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                        .pNext = &host };
    properties2(dev->physical, &all);
    const VkDeviceSize a = host.minImportedHostPointerAlignment;
    return a && a <= HOST_PAGES_HUGE && HOST_PAGES_HUGE % a == 0 ? a : 0;
}

/* The physical device an ordinal names (-1: the preferred one). */
static int pick_physical(VulkanApi *api, VkInstance *inst, int ordinal, VkPhysicalDevice *physical,
                         unsigned *index, char *error, size_t error_size)
{
    int err = shared_instance(api, inst, error, error_size);
    if (err) return err;
    VkPhysicalDevice list[MAX_PHYSICAL_DEVICES];
    uint32_t count;
    err = physical_devices(api, *inst, list, &count, error, error_size);
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
    *index = ordinal >= 0 ? (unsigned)ordinal : preferred_device(api, list, count);
    *physical = list[*index];
    return 0;
}

/* Whether QUALE_VULKAN_NO_FLOAT64 leaves the 64-bit types on. */
static bool wide_types_asked(void)
{
    const char *no_float64 = getenv("QUALE_VULKAN_NO_FLOAT64");
    return !(no_float64 && *no_float64 && strcmp(no_float64, "0"));
}

static int open_device(VulkanDevice *dev, unsigned index, VkPhysicalDevice physical, char *error,
                       size_t error_size)
{
    int err = 0;
    dev->index = index;
    dev->physical = physical;
    dev->api.vkGetPhysicalDeviceProperties(dev->physical, &dev->properties);
    dev->api.vkGetPhysicalDeviceMemoryProperties(dev->physical, &dev->memory);

    if ((err = choose_queue_families(dev, error, error_size))) return err;
    bool host_memory;
    find_extensions(dev, &host_memory);
    const VkDeviceSize import_alignment = host_memory ? host_import_alignment(dev) : 0;
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
    const bool wide = wide_types_asked();
    memset(&dev->features, 0, sizeof(dev->features));
    dev->features.shaderFloat64 = wide && available.shaderFloat64;
    dev->features.shaderInt64 = wide && available.shaderInt64;
    VkPhysicalDeviceTimelineSemaphoreFeaturesKHR timeline = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES_KHR,
        .timelineSemaphore = VK_TRUE,
    };
    const char *extensions[3];
    uint32_t extension_count = 0;
    if (dev->timeline) extensions[extension_count++] = VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME;
    if (import_alignment) {
        extensions[extension_count++] = VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME;
        extensions[extension_count++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
    }
    const VkDeviceCreateInfo device_info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = dev->timeline ? &timeline : NULL,
        .queueCreateInfoCount = dev->transfer_family != UINT32_MAX ? 2 : 1,
        .pQueueCreateInfos = queue_info,
        .enabledExtensionCount = extension_count,
        .ppEnabledExtensionNames = extension_count ? extensions : NULL,
        .pEnabledFeatures = &dev->features,
    };
    VK_TRY(dev, dev->api.vkCreateDevice(dev->physical, &device_info, NULL, &dev->device),
           "creating the Vulkan device");
    if ((err = vulkan_api_load_device(&dev->api, dev->device, error, error_size))) return err;
    if (import_alignment) {
        dev->get_host_pointer_properties = (PFN_vkGetMemoryHostPointerPropertiesEXT)
            dev->api.vkGetDeviceProcAddr(dev->device, "vkGetMemoryHostPointerPropertiesEXT");
        if (dev->get_host_pointer_properties) dev->host_import_alignment = import_alignment;
    }
    for (unsigned i = 0; i < dev->compute_queue_count; i++)
        dev->api.vkGetDeviceQueue(dev->device, dev->queue_family, i, &dev->compute_queues[i]);
    dev->queue = dev->compute_queues[0];
    if (dev->transfer_family != UINT32_MAX)
        dev->api.vkGetDeviceQueue(dev->device, dev->transfer_family, 0, &dev->transfer_queue);
    dev->lanes = 1;
    vulkan_pipeline_cache_open(dev);
    return 0;
}

/* The device goes; the process-wide instance and loader stay. */
static void close_device(VulkanDevice *dev)
{
    if (dev->device) {
        dev->api.vkDeviceWaitIdle(dev->device);
        vulkan_pipeline_cache_close(dev);
        dev->api.vkDestroyDevice(dev->device, NULL);
    }
    memset(dev, 0, sizeof(*dev));
}

/* ---- one VkDevice for the process's contexts on a GPU ---------------------- */

/* Two VkDevices on one GPU are two contexts of the driver, whose work an
 * NVIDIA GPU runs in turns, not side by side: the workers of a batch on one
 * GPU, each with a context of its own, would wait for each other.  So the
 * process opens each physical device once (with the features asked then)
 * and its users share it; a user asking other features gets a device of
 * its own.
 *
 * When its last user lets go the device is kept, as the instance is, for
 * the process's next context (gpu_keep_devices(): on an H200 the driver
 * opens one in about 330 ms and destroys it in 95).  Its pipelines go to
 * the cache file then, since it may never be closed; one that failed
 * (vkDeviceWaitIdle) is closed instead. */
struct SharedDevice {
    VulkanDevice dev; /* as opened */
    unsigned users;
    bool kept; /* open with no user */
    bool wide;
    pthread_mutex_t submit_lock;
};

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct SharedDevice shared_devices[MAX_PHYSICAL_DEVICES];

static void close_shared(struct SharedDevice *shared)
{
    close_device(&shared->dev);
    pthread_mutex_destroy(&shared->submit_lock);
    shared->kept = false;
}

int vulkan_device_open(VulkanDevice *dev, int ordinal, char *error, size_t error_size)
{
    memset(dev, 0, sizeof(*dev));
    unsigned index = 0;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    int err = pick_physical(&dev->api, &dev->instance, ordinal, &physical, &index, error,
                            error_size);
    if (err) return err;
    const bool wide = wide_types_asked();
    pthread_mutex_lock(&shared_lock);
    struct SharedDevice *shared = &shared_devices[index];
    if (shared->kept && shared->wide != wide) close_shared(shared);
    if ((shared->users || shared->kept) && shared->wide == wide) {
        shared->users++;
        *dev = shared->dev;
        dev->reused = shared->kept && shared->users == 1;
        shared->kept = false;
    } else {
        err = open_device(dev, index, physical, error, error_size);
        if (err) {
            close_device(dev);
        } else if (!shared->users) {
            shared->dev = *dev;
            shared->users = 1;
            shared->wide = wide;
            pthread_mutex_init(&shared->submit_lock, NULL);
            shared->dev.submit_lock = &shared->submit_lock;
            shared->dev.shared = shared;
            *dev = shared->dev;
        }
    }
    pthread_mutex_unlock(&shared_lock);
    return err;
}

void vulkan_device_close(VulkanDevice *dev)
{
    struct SharedDevice *shared = dev->shared;
    if (!shared) {
        close_device(dev);
        return;
    }
    pthread_mutex_lock(&shared_lock);
    if (--shared->users == 0) {
        if (gpu_keep_devices() &&
            shared->dev.api.vkDeviceWaitIdle(shared->dev.device) == VK_SUCCESS) {
            vulkan_pipeline_cache_save(&shared->dev);
            shared->kept = true;
        } else {
            close_shared(shared);
        }
    }
    pthread_mutex_unlock(&shared_lock);
    memset(dev, 0, sizeof(*dev));
}

void vulkan_describe_device(const VulkanDevice *dev, QualeDeviceInfo *info)
{
    describe_physical(&dev->api, dev->physical, dev->index, info);
}
