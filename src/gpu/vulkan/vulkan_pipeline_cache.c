/*
 * The Vulkan pipelines of earlier runs, kept on disk: building a compute
 * pipeline is the driver compiling SPIR-V for the device (hundreds of
 * milliseconds for quale's set on NVIDIA's driver, seconds on lavapipe),
 * so every run after the first takes them from the cache instead.
 *
 * One file per driver and build, in $XDG_CACHE_HOME/quale (else
 * ~/.cache/quale): vulkan-VENDOR-DEVICE-DRIVER-UUID-BUILD.bin.  The driver
 * checks the header (its own UUID) and keys every entry by the pipeline's
 * whole description, SPIR-V included, so a file from another build only
 * misses.  A run writes the file back when its pipelines added to it, under
 * a temporary name renamed over the old one: two processes writing at once
 * leave one whole file.  QUALE_VULKAN_PIPELINE_CACHE=0 turns it off.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build_describe.h"
#include "vulkan_primitives.h"

#define CACHE_MAX_BYTES ((size_t)256 << 20)

/* dir, made with its parents where missing. */
static int make_folders(char *dir)
{
    for (char *c = dir + 1; *c; c++) {
        if (*c != '/') continue;
        *c = '\0';
        const int failed = mkdir(dir, 0700) && errno != EEXIST;
        *c = '/';
        if (failed) return -1;
    }
    return mkdir(dir, 0700) && errno != EEXIST ? -1 : 0;
}

/* The cache file's path, or 0 where there is none (turned off, no home). */
static int cache_path(const VulkanDevice *dev, char *path, size_t size, char *dir,
                      size_t dir_size)
{
    const char *off = getenv("QUALE_VULKAN_PIPELINE_CACHE");
    if (off && !strcmp(off, "0")) return 0;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/') snprintf(dir, dir_size, "%s/quale", xdg);
    else if (home && home[0] == '/') snprintf(dir, dir_size, "%s/.cache/quale", home);
    else return 0;
    char uuid[2 * VK_UUID_SIZE + 1], build[64];
    for (unsigned i = 0; i < VK_UUID_SIZE; i++)
        snprintf(uuid + 2 * i, 3, "%02x", dev->properties.pipelineCacheUUID[i]);
    snprintf(build, sizeof(build), "%s-%s", quale_version(), QUALE_BUILD_DESCRIBE);
    for (char *c = build; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_", *c))
            *c = '_';
    const int n = snprintf(path, size, "%s/vulkan-%04x-%04x-%08x-%s-%s.bin", dir,
                           dev->properties.vendorID, dev->properties.deviceID,
                           dev->properties.driverVersion, uuid, build);
    return n > 0 && (size_t)n < size;
}

/* The file's bytes (free()), NULL where there are none to use. */
static void *read_cache(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    void *data = NULL;
    struct stat st;
    if (!fstat(fileno(f), &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (size_t)st.st_size <= CACHE_MAX_BYTES && (data = malloc((size_t)st.st_size))) {
        if (fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
            free(data);
            data = NULL;
        } else {
            *size = (size_t)st.st_size;
        }
    }
    fclose(f);
    return data;
}

void vulkan_pipeline_cache_open(VulkanDevice *dev)
{
    char path[PATH_MAX], dir[PATH_MAX - 128];
    dev->pipeline_cache = VK_NULL_HANDLE;
    dev->cache_loaded_bytes = 0;
    dev->cache_path = NULL;
    const int where = cache_path(dev, path, sizeof(path), dir, sizeof(dir));
    size_t size = 0;
    void *data = where ? read_cache(path, &size) : NULL;
    VkPipelineCacheCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
        .initialDataSize = size,
        .pInitialData = data,
    };
    VkResult r = dev->api.vkCreatePipelineCache(dev->device, &info, NULL, &dev->pipeline_cache);
    if (r != VK_SUCCESS && data) {
        /* a file the driver refuses (damaged, cut short): start empty */
        info.initialDataSize = 0;
        info.pInitialData = NULL;
        size = 0;
        r = dev->api.vkCreatePipelineCache(dev->device, &info, NULL, &dev->pipeline_cache);
    }
    free(data);
    if (r != VK_SUCCESS) {
        dev->pipeline_cache = VK_NULL_HANDLE; /* pipelines are built without one */
        return;
    }
    /* What the driver kept: a file it ignored (another driver's, damaged;
     * drivers must ignore what they cannot use) is written over. */
    size_t kept = 0;
    if (dev->api.vkGetPipelineCacheData(dev->device, dev->pipeline_cache, &kept, NULL) !=
        VK_SUCCESS)
        kept = 0;
    dev->cache_loaded_bytes = kept;
    dev->cache_stale = kept != size;
    if (where) dev->cache_path = strdup(path);
}

/* data into path: a temporary file beside it, renamed over it. */
static void write_cache(const char *path, const void *data, size_t size)
{
    char dir[PATH_MAX], temporary[PATH_MAX + 48];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    *slash = '\0';
    if (make_folders(dir)) return;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(temporary, sizeof(temporary), "%s.tmp-%ld-%ld", path, (long)getpid(),
             (long)now.tv_nsec);
    const int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return;
    size_t done = 0;
    while (done < size) {
        const ssize_t n = write(fd, (const char *)data + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    if (close(fd) || done != size || rename(temporary, path)) unlink(temporary);
}

void vulkan_pipeline_cache_save(VulkanDevice *dev)
{
    if (dev->pipeline_cache == VK_NULL_HANDLE || !dev->cache_path) return;
    size_t size = 0;
    void *data = NULL;
    /* written back only when this run's pipelines added to it, or the file
     * was not the driver's */
    if (dev->api.vkGetPipelineCacheData(dev->device, dev->pipeline_cache, &size, NULL) ==
            VK_SUCCESS &&
        (size > dev->cache_loaded_bytes || dev->cache_stale) && size <= CACHE_MAX_BYTES &&
        (data = malloc(size)) &&
        dev->api.vkGetPipelineCacheData(dev->device, dev->pipeline_cache, &size, data) ==
            VK_SUCCESS) {
        write_cache(dev->cache_path, data, size);
        dev->cache_loaded_bytes = size;
        dev->cache_stale = false;
    }
    free(data);
}

void vulkan_pipeline_cache_close(VulkanDevice *dev)
{
    if (dev->pipeline_cache == VK_NULL_HANDLE) return;
    vulkan_pipeline_cache_save(dev);
    free(dev->cache_path);
    dev->cache_path = NULL;
    dev->api.vkDestroyPipelineCache(dev->device, dev->pipeline_cache, NULL);
    dev->pipeline_cache = VK_NULL_HANDLE;
}
