/*
 * The Vulkan backend: memory for frames, queues, and the flow of frames
 * through the twins (the device is vulkan_device.c's, buffers, pipelines
 * and dispatches vulkan_primitives.c's).  It mirrors the CUDA backend:
 *
 *   - Pictures from the context's pool live in host-visible Vulkan memory,
 *     so a frame is copied to the device by the transfer engine straight
 *     from where the reader put it.  Other pictures go through per-slot
 *     staging.
 *   - The reference luma of every frame goes to a ring on the device, the
 *     other planes to the frame's slot; temporal twins read earlier frames
 *     from the ring.  Where a twin reads earlier distorted lumas too
 *     (speed_temporal), each ring entry holds the distorted luma after the
 *     reference one (a second copy: the slot keeps its own).
 *   - Each slot has command buffers and a fence.  submit() records the
 *     uploads and every twin's dispatches and submits them, in frame order,
 *     on the caller's thread (the only thread that touches the queues);
 *     complete() waits for the fence on a worker and collects.
 *   - Frames are spread over lanes, compute queues that run side by side
 *     as CUDA's streams do (frame n on lane n % lanes; the queues of a
 *     compute-only family where there is one), where the device
 *     has timeline semaphores and every twin of the run keeps its data
 *     per slot or per lane (VulkanTwin.concurrent).  Uploads go to a
 *     transfer-only queue (a copy engine) where there is one.
 *
 * QUALE_VULKAN_PROFILE=1 measures each twin's device time: one frame in
 * flight, the twins' work one after another (each round of each twin
 * between timestamps, a barrier after it), logged per frame at close as
 * milliseconds per twin and per round.  The rounds then run in a row, not
 * side by side, so the sum is more than a frame takes in a normal run.
 *
 * Synchronisation (vulkan_submit): with timeline semaphores each frame's
 * upload and work are ordered after exactly what they depend on, nothing
 * more; without, each frame's command buffer starts with a barrier from all
 * earlier compute work to its transfers (the ring entry and slot it
 * overwrites may still be read by earlier frames), then the copies, then a
 * barrier from transfers to compute.  Either way the twins' dispatches end
 * with a barrier to the host for the partial sums it reads after the fence.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "log.h"
#include "gpu/gpu.h"
#include "vulkan_host_memory.h"
#include "vulkan_twin.h"

typedef struct VulkanSlot {
    VkCommandBuffer cb;        /* the twins' work (and, without timelines, the upload) */
    VkCommandBuffer upload_cb; /* the upload, with timelines */
    VkFence fence;
    VulkanBuffer staging; /* made on first need */
} VulkanSlot;

/* A point of a timeline: where a frame's upload or work ends. */
typedef struct SyncPoint {
    unsigned timeline; /* index into GpuBackend.timeline */
    uint64_t value;
} SyncPoint;

/* The timelines of a run: one per lane, then the uploads' when they have
 * a queue of their own. */
#define TIMELINES (VULKAN_MAX_LANES + 1)
#define UPLOAD_TIMELINE VULKAN_MAX_LANES

typedef struct ActiveTwin {
    const VulkanTwin *twin;
    void *state;
    FeatureSink *sink;
    bool pending; /* while recording a frame: it has rounds left */
} ActiveTwin;

struct GpuBackend {
    LogSink log; /* the context's, copied: a backend may outlive it in a picture pool */
    VulkanDevice dev;
    atomic_uint refs; /* the context, and the picture pool's allocator */
    PictureAllocator host;
    VulkanHostMemory host_memory; /* the pool's pictures */

    QualeVideoFormat format;
    unsigned planes, history;
    bool dist_history;      /* ring entries hold the distorted luma too */
    VkDeviceSize ring_entry; /* bytes of one ring entry */
    size_t plane_offset[3], plane_bytes[3], frame_bytes, slot_bytes;
    VkCommandPool pool, upload_pool; /* the compute family's, the transfer family's */
    VulkanSlot *slots;
    unsigned slot_count;
    VulkanBuffer ring, frames;
    unsigned ring_size;
    ActiveTwin *twins;
    unsigned twin_count;
    /* With timelines: a timeline semaphore per lane (and for the uploads,
     * when they go to a queue of their own: `upload_queue`, else NULL) and
     * the last value signalled on each; per ring entry, the points where
     * its frame's upload and its frame's work end. */
    VkSemaphore timeline[TIMELINES];
    uint64_t timeline_value[TIMELINES];
    VkQueue upload_queue;
    SyncPoint *uploaded, *done;
    /* QUALE_VULKAN_PROFILE: timestamps of each twin's rounds, and the
     * nanoseconds they added up to over the frames profiled. */
    bool profile;
    VkQueryPool queries;
    double *round_ns; /* twin_count x PROFILE_ROUNDS */
    unsigned profiled_frames;
};

/* The rounds of a twin the profile tells apart (later ones add to the last). */
#define PROFILE_ROUNDS 16

/* ---- host memory for the context's pictures ----------------------------- */

static void backend_release(GpuBackend *gpu);

static void *host_alloc(void *opaque, size_t size)
{
    GpuBackend *gpu = opaque;
    return vulkan_host_alloc(&gpu->host_memory, size);
}

static void host_free(void *opaque, void *p)
{
    GpuBackend *gpu = opaque;
    vulkan_host_free(&gpu->host_memory, p);
}

static void host_release(void *opaque)
{
    backend_release(opaque);
}

static void log_profile(GpuBackend *gpu)
{
    if (!gpu->profile || !gpu->profiled_frames || !gpu->round_ns) return;
    const double n = gpu->profiled_frames;
    double total = 0;
    for (unsigned i = 0; i < gpu->twin_count * PROFILE_ROUNDS; i++) total += gpu->round_ns[i];
    log_sink_print(&gpu->log, QUALE_LOG_INFO, "Vulkan profile, %u frames, device ms per frame: %.4f "
                "for the twins, one after another", gpu->profiled_frames, total / n * 1e-6);
    for (unsigned i = 0; i < gpu->twin_count; i++) {
        const double *r = gpu->round_ns + (size_t)i * PROFILE_ROUNDS;
        char rounds[512] = "";
        size_t at = 0;
        double sum = 0;
        for (unsigned k = 0; k < PROFILE_ROUNDS; k++) {
            sum += r[k];
            if (r[k] > 0 && at < sizeof(rounds))
                at += (size_t)snprintf(rounds + at, sizeof(rounds) - at, " %.4f", r[k] / n * 1e-6);
        }
        log_sink_print(&gpu->log, QUALE_LOG_INFO, "Vulkan profile:   %-14s %.4f (rounds:%s)",
                    gpu->twins[i].twin->metric->name, sum / n * 1e-6, rounds);
    }
}

static void stop(GpuBackend *gpu)
{
    VulkanDevice *dev = &gpu->dev;
    if (!dev->device) return;
    vulkan_device_wait_idle(dev);
    log_profile(gpu);
    if (gpu->queries) dev->api.vkDestroyQueryPool(dev->device, gpu->queries, NULL);
    gpu->queries = VK_NULL_HANDLE;
    free(gpu->round_ns);
    gpu->round_ns = NULL;
    gpu->profiled_frames = 0;
    for (unsigned i = 0; i < gpu->twin_count; i++)
        if (gpu->twins[i].state) vulkan_twin_close(gpu->twins[i].twin, gpu->twins[i].state);
    free(gpu->twins);
    gpu->twins = NULL;
    gpu->twin_count = 0;
    for (unsigned i = 0; i < gpu->slot_count; i++) {
        if (gpu->slots[i].fence) dev->api.vkDestroyFence(dev->device, gpu->slots[i].fence, NULL);
        vulkan_buffer_destroy(dev, &gpu->slots[i].staging);
    }
    free(gpu->slots);
    gpu->slots = NULL;
    gpu->slot_count = 0;
    if (gpu->pool) dev->api.vkDestroyCommandPool(dev->device, gpu->pool, NULL);
    if (gpu->upload_pool) dev->api.vkDestroyCommandPool(dev->device, gpu->upload_pool, NULL);
    gpu->pool = gpu->upload_pool = VK_NULL_HANDLE;
    for (unsigned q = 0; q < TIMELINES; q++) {
        if (gpu->timeline[q]) dev->api.vkDestroySemaphore(dev->device, gpu->timeline[q], NULL);
        gpu->timeline[q] = VK_NULL_HANDLE;
        gpu->timeline_value[q] = 0;
    }
    gpu->upload_queue = VK_NULL_HANDLE;
    free(gpu->uploaded);
    free(gpu->done);
    gpu->uploaded = gpu->done = NULL;
    vulkan_buffer_destroy(dev, &gpu->ring);
    vulkan_buffer_destroy(dev, &gpu->frames);
}

static void backend_release(GpuBackend *gpu)
{
    if (atomic_fetch_sub(&gpu->refs, 1) != 1) return;
    /* The last user: the context is closed and every picture is back. */
    const double t0 = quale_monotonic_ms();
    vulkan_host_memory_destroy(&gpu->host_memory);
    const double t1 = quale_monotonic_ms();
    vulkan_device_close(&gpu->dev);
    log_sink_print(&gpu->log, QUALE_LOG_DEBUG, "Vulkan: host memory let go in %.1f ms, the device "
                   "(kept for the process's next context, or closed) in %.1f ms", t1 - t0, quale_monotonic_ms() - t1);
    free(gpu);
}

static void vulkan_describe(const GpuBackend *gpu, QualeDeviceInfo *info)
{
    vulkan_describe_device(&gpu->dev, info);
}

static bool vulkan_twin_built(const Metric *metric)
{
    for (unsigned i = 0; vulkan_twins[i]; i++)
        if (vulkan_twins[i]->metric == metric) return true;
    return false;
}

static const VulkanTwin *find_twin(const GpuBackend *gpu, const Metric *metric, const void *state)
{
    for (unsigned i = 0; vulkan_twins[i]; i++)
        if (vulkan_twins[i]->metric == metric &&
            (!vulkan_twins[i]->supports || vulkan_twins[i]->supports(&gpu->dev, state)))
            return vulkan_twins[i];
    return NULL;
}

static int vulkan_open(const LogSink *log, int device, GpuBackend **out, char *error,
                       size_t error_size)
{
    *out = NULL;
    GpuBackend *gpu = calloc(1, sizeof(*gpu));
    if (!gpu) return -ENOMEM;
    gpu->log = log ? *log : (LogSink){ 0 };
    atomic_init(&gpu->refs, 2); /* the context and the picture pool */
    const double t0 = quale_monotonic_ms();
    int err = vulkan_device_open(&gpu->dev, device, error, error_size);
    if (err) {
        free(gpu);
        return err;
    }
    vulkan_host_memory_init(&gpu->host_memory, &gpu->dev);
    gpu->host = (PictureAllocator){ host_alloc, host_free, host_release, gpu, false };
    log_sink_print(log, QUALE_LOG_DEBUG, "Vulkan device: %s, %s in %.1f ms",
                   gpu->dev.properties.deviceName,
                   gpu->dev.reused ? "kept from an earlier context, taken"
                                   : "opened (the instance too, if this process's first)",
                   quale_monotonic_ms() - t0);
    *out = gpu;
    return 0;
}

static void vulkan_close(GpuBackend *gpu)
{
    if (!gpu) return;
    const double t0 = quale_monotonic_ms();
    stop(gpu);
    log_sink_print(&gpu->log, QUALE_LOG_DEBUG, "Vulkan: the run's plans and buffers freed in "
                   "%.1f ms", quale_monotonic_ms() - t0);
    backend_release(gpu);
}

static const PictureAllocator *vulkan_host_allocator(const GpuBackend *gpu)
{
    return &gpu->host;
}

static bool vulkan_has_twin(const GpuBackend *gpu, const Metric *metric, const void *state)
{
    return find_twin(gpu, metric, state) != NULL;
}

/* ---- start -------------------------------------------------------------- */

/* The slots in flight, fewer than asked where the ring or the slots would
 * not fit one storage-buffer binding (128 MiB on some devices). */
static int fit_slots(GpuBackend *gpu, unsigned *slots, char *error, size_t error_size)
{
    const size_t range = gpu->dev.properties.limits.maxStorageBufferRange;
    const size_t luma = gpu->plane_bytes[0];
    /* Each slot: the distorted frame, then the reference chroma. */
    gpu->slot_bytes = gpu->frame_bytes + gpu->plane_bytes[1] + gpu->plane_bytes[2];
    size_t fit = range / gpu->slot_bytes;
    const size_t ring_entries = range / (luma * (gpu->dist_history ? 2 : 1));
    fit = QUALE_MIN(fit, ring_entries > gpu->history + 1 ? ring_entries - gpu->history - 1 : 0);
    if (fit == 0) {
        snprintf(error, error_size, "%ux%u frames need more than the device's largest storage "
                 "buffer (%zu bytes)", gpu->format.width, gpu->format.height, range);
        return -E2BIG;
    }
    if (fit < *slots) *slots = (unsigned)fit;
    return 0;
}

static int create_pool(const VulkanDevice *dev, uint32_t family, VkCommandPool *pool, char *error,
                       size_t error_size)
{
    const VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = family,
    };
    VK_TRY(dev, dev->api.vkCreateCommandPool(dev->device, &pool_info, NULL, pool),
           "creating a command pool");
    return 0;
}

static int allocate_cb(const VulkanDevice *dev, VkCommandPool pool, VkCommandBuffer *cb, char *error,
                       size_t error_size)
{
    const VkCommandBufferAllocateInfo cb_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VK_TRY(dev, dev->api.vkAllocateCommandBuffers(dev->device, &cb_info, cb),
           "allocating a command buffer");
    return 0;
}

static int start_buffers(GpuBackend *gpu, unsigned slots, char *error, size_t error_size)
{
    VulkanDevice *dev = &gpu->dev;
    /* Enough ring entries that a frame rarely waits for an older one. */
    gpu->ring_size = slots + gpu->history + 1;
    const size_t luma = gpu->plane_bytes[0];
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    /* Written by the uploads, read by the shaders: both families. */
    gpu->ring_entry = (VkDeviceSize)luma * (gpu->dist_history ? 2 : 1);
    int err = vulkan_buffer_create_shared(dev, (VkDeviceSize)gpu->ring_size * gpu->ring_entry,
                                          usage, &gpu->ring, "the reference ring", error,
                                          error_size);
    if (!err)
        err = vulkan_buffer_create_shared(dev, (VkDeviceSize)slots * gpu->slot_bytes, usage,
                                          &gpu->frames, "frames in flight", error, error_size);
    /* Uploads on the transfer queue.  QUALE_VULKAN_UPLOAD_QUEUE=0 puts them
     * on the lanes' queues instead (to compare), =1 gives them a queue of
     * their own on a device without a transfer queue (the first compute
     * queue stands in), so that this way of ordering them can be tested
     * anywhere. */
    const char *own = getenv("QUALE_VULKAN_UPLOAD_QUEUE");
    const bool asked = own && *own, off = asked && !strcmp(own, "0");
    gpu->upload_queue = !dev->timeline || off ? VK_NULL_HANDLE
                        : dev->transfer_queue ? dev->transfer_queue
                        : asked              ? dev->compute_queues[0]
                                             : VK_NULL_HANDLE;
    const bool transfer = gpu->upload_queue && gpu->upload_queue == dev->transfer_queue;
    if (!err) err = create_pool(dev, dev->queue_family, &gpu->pool, error, error_size);
    if (!err && transfer)
        err = create_pool(dev, dev->transfer_family, &gpu->upload_pool, error, error_size);
    if (err) return err;
    gpu->slots = calloc(slots, sizeof(*gpu->slots));
    if (!gpu->slots) return -ENOMEM;
    gpu->slot_count = slots;
    for (unsigned i = 0; i < slots && !err; i++) {
        VulkanSlot *s = &gpu->slots[i];
        err = allocate_cb(dev, gpu->pool, &s->cb, error, error_size);
        if (!err && dev->timeline)
            err = allocate_cb(dev, transfer ? gpu->upload_pool : gpu->pool, &s->upload_cb, error,
                              error_size);
        if (err) return err;
        const VkFenceCreateInfo fence_info = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
        VK_TRY(dev, dev->api.vkCreateFence(dev->device, &fence_info, NULL, &s->fence),
               "creating a fence");
    }
    if (!dev->timeline) return 0;
    gpu->uploaded = calloc(gpu->ring_size, sizeof(*gpu->uploaded));
    gpu->done = calloc(gpu->ring_size, sizeof(*gpu->done));
    if (!gpu->uploaded || !gpu->done) return -ENOMEM;
    for (unsigned q = 0; q < TIMELINES; q++) {
        if (q >= dev->lanes && !(q == UPLOAD_TIMELINE && gpu->upload_queue)) continue;
        const VkSemaphoreTypeCreateInfoKHR type = {
            .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO_KHR,
            .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE_KHR,
        };
        const VkSemaphoreCreateInfo info = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type };
        VK_TRY(dev, dev->api.vkCreateSemaphore(dev->device, &info, NULL, &gpu->timeline[q]),
               "creating a timeline semaphore");
    }
    return 0;
}

/* The timestamps of QUALE_VULKAN_PROFILE: two per round of each twin. */
static int start_profile(GpuBackend *gpu, unsigned twins, char *error, size_t error_size)
{
    VulkanDevice *dev = &gpu->dev;
    uint32_t families = 0;
    dev->api.vkGetPhysicalDeviceQueueFamilyProperties(dev->physical, &families, NULL);
    VkQueueFamilyProperties *props = calloc(families ? families : 1, sizeof(*props));
    if (!props) return -ENOMEM;
    dev->api.vkGetPhysicalDeviceQueueFamilyProperties(dev->physical, &families, props);
    const bool stamps = dev->queue_family < families && props[dev->queue_family].timestampValidBits;
    free(props);
    if (!stamps || dev->properties.limits.timestampPeriod <= 0) {
        log_sink_print(&gpu->log, QUALE_LOG_WARNING, "Vulkan: QUALE_VULKAN_PROFILE: the device's "
                    "compute queue has no timestamps; not profiled");
        gpu->profile = false;
        return 0;
    }
    gpu->round_ns = calloc((size_t)twins * PROFILE_ROUNDS, sizeof(double));
    if (!gpu->round_ns) return -ENOMEM;
    const VkQueryPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = twins * PROFILE_ROUNDS * 2,
    };
    VK_TRY(dev, dev->api.vkCreateQueryPool(dev->device, &info, NULL, &gpu->queries),
           "creating the profile's timestamps");
    return 0;
}

/* How many compute queues the frames of this run are spread over: one
 * unless the device has timelines and every twin of the run is
 * concurrent; QUALE_VULKAN_LANES sets it (lanes beyond the queues share
 * them, which tests the ordering on a device with one queue). */
static unsigned choose_lanes(const GpuBackend *gpu, const GpuTwinRequest *requests, unsigned count,
                             unsigned slots)
{
    if (!gpu->dev.timeline) return 1;
    for (unsigned i = 0; i < count; i++)
        if (!find_twin(gpu, requests[i].metric, requests[i].state)->concurrent) return 1;
    /* As many as there are queues: on the H200, v1 at 1080p runs at 2349
     * fps on 4 lanes, 2836 on 8 (docs/benchmarks.md). */
    unsigned lanes = gpu->dev.compute_queue_count;
    const char *text = getenv("QUALE_VULKAN_LANES");
    if (text && *text) {
        const unsigned long asked = strtoul(text, NULL, 10);
        if (asked >= 1 && asked <= VULKAN_MAX_LANES) lanes = (unsigned)asked;
    }
    return QUALE_MAX(1u, QUALE_MIN(lanes, slots));
}

/* The order twins are recorded in (VulkanTwin.first_round_cost): the
 * costliest first round first, the others as they were asked for.  Each
 * twin writes its own keys, so the order changes no value. */
static void order_twins(GpuBackend *gpu)
{
    for (unsigned i = 1; i < gpu->twin_count; i++) {
        const ActiveTwin moved = gpu->twins[i];
        unsigned j = i;
        for (; j > 0 && gpu->twins[j - 1].twin->first_round_cost < moved.twin->first_round_cost; j--)
            gpu->twins[j] = gpu->twins[j - 1];
        gpu->twins[j] = moved;
    }
}

static int vulkan_start(GpuBackend *gpu, const QualeVideoFormat *format,
                        const GpuTwinRequest *requests, unsigned count, unsigned *slots_in_out,
                        char *error, size_t error_size)
{
    error[0] = '\0';
    gpu->format = *format;
    gpu->twins = calloc(count, sizeof(*gpu->twins));
    if (!gpu->twins) return -ENOMEM;

    QualePicture layout;
    int err = quale_picture_alloc(&layout, format);
    if (err) return err;
    for (unsigned p = 0; p < layout.plane_count; p++) {
        gpu->plane_offset[p] = (size_t)((uint8_t *)layout.data[p] - (uint8_t *)layout.data[0]);
        gpu->plane_bytes[p] = (size_t)layout.stride[p] * layout.plane_height[p];
        gpu->frame_bytes += gpu->plane_bytes[p];
    }
    quale_picture_unref(&layout);

    for (unsigned i = 0; i < count; i++) {
        const VulkanTwin *twin = find_twin(gpu, requests[i].metric, requests[i].state);
        gpu->planes |= metric_planes(twin->metric, requests[i].state);
        if (twin->metric->history > gpu->history) gpu->history = twin->metric->history;
        gpu->dist_history = gpu->dist_history || twin->dist_history;
    }
    if (format->chroma == QUALE_CHROMA_400) gpu->planes &= 1;
    err = fit_slots(gpu, slots_in_out, error, error_size);
    const char *profile = getenv("QUALE_VULKAN_PROFILE");
    gpu->profile = profile && profile[0] && strcmp(profile, "0");
    if (gpu->profile) *slots_in_out = 1;
    const unsigned slots = *slots_in_out;
    gpu->dev.lanes = choose_lanes(gpu, requests, count, slots);
    if (!err && gpu->profile) err = start_profile(gpu, count, error, error_size);
    double t0 = quale_monotonic_ms();
    if (!err) err = start_buffers(gpu, slots, error, error_size);
    log_sink_print(&gpu->log, QUALE_LOG_DEBUG, "Vulkan: the run's buffers made in %.1f ms",
                   quale_monotonic_ms() - t0);
    for (unsigned i = 0; i < count && !err; i++) {
        ActiveTwin *a = &gpu->twins[gpu->twin_count++];
        a->twin = find_twin(gpu, requests[i].metric, requests[i].state);
        a->sink = requests[i].sink;
        t0 = quale_monotonic_ms();
        err = vulkan_twin_init(a->twin, &gpu->dev, gpu->ring.buffer, gpu->frames.buffer,
                               requests[i].state, format, slots, &a->state, error, error_size);
        log_sink_print(&gpu->log, QUALE_LOG_DEBUG, "Vulkan: the plan of %s (its pipelines) made "
                       "in %.1f ms", a->twin->metric->name, quale_monotonic_ms() - t0);
    }
    if (!err) order_twins(gpu);
    if (err && !error[0]) snprintf(error, error_size, "%s", strerror(-err));
    if (!err)
        log_sink_print(&gpu->log, QUALE_LOG_INFO, "Vulkan: %u frames in flight on %u lane%s (%u compute "
                    "queue%s of family %u), uploads on %s", slots, gpu->dev.lanes,
                    gpu->dev.lanes == 1 ? "" : "s", gpu->dev.compute_queue_count,
                    gpu->dev.compute_queue_count == 1 ? "" : "s", gpu->dev.queue_family,
                    !gpu->upload_queue                             ? "the lanes' queues"
                    : gpu->upload_queue == gpu->dev.transfer_queue ? "the transfer queue"
                                                                   : "a compute queue of their own");
    return err;
}

/* ---- frames ----------------------------------------------------------- */

/* Records the copy of one picture's planes to where the shaders read them. */
static int record_upload(GpuBackend *gpu, VulkanSlot *s, VkCommandBuffer cb, unsigned slot,
                         const QualePicture *pic, bool is_ref, VkDeviceSize ring_offset, char *error,
                         size_t error_size)
{
    VulkanDevice *dev = &gpu->dev;
    const bool chroma = (gpu->planes & 6) != 0;
    const size_t bytes = chroma ? gpu->frame_bytes : gpu->plane_bytes[0];
    VkBuffer src = vulkan_host_buffer(&gpu->host_memory, pic->data[0]);
    VkDeviceSize src_offset = 0;
    if (!src) {
        /* A picture from elsewhere: one copy into this slot's staging. */
        if (!s->staging.buffer) {
            int err = vulkan_buffer_create(dev, 2 * (VkDeviceSize)gpu->frame_bytes,
                                           VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true, &s->staging,
                                           "staging", error, error_size);
            if (err) return err;
        }
        src_offset = is_ref ? 0 : gpu->frame_bytes;
        memcpy((uint8_t *)s->staging.mapped + src_offset, pic->data[0], bytes);
        src = s->staging.buffer;
    }
    const VkDeviceSize slot_base = (VkDeviceSize)slot * gpu->slot_bytes;
    VkBufferCopy regions[2];
    unsigned n = 0;
    if (is_ref) {
        regions[n++] = (VkBufferCopy){ src_offset, ring_offset, gpu->plane_bytes[0] };
        if (chroma)
            regions[n++] = (VkBufferCopy){ src_offset + gpu->plane_offset[1], slot_base + gpu->frame_bytes,
                                           gpu->plane_bytes[1] + gpu->plane_bytes[2] };
        dev->api.vkCmdCopyBuffer(cb, src, gpu->ring.buffer, 1, &regions[0]);
        if (n == 2) dev->api.vkCmdCopyBuffer(cb, src, gpu->frames.buffer, 1, &regions[1]);
    } else {
        regions[0] = (VkBufferCopy){ src_offset, slot_base, bytes };
        dev->api.vkCmdCopyBuffer(cb, src, gpu->frames.buffer, 1, &regions[0]);
        if (gpu->dist_history) {
            regions[1] = (VkBufferCopy){ src_offset, ring_offset + gpu->plane_bytes[0],
                                         gpu->plane_bytes[0] };
            dev->api.vkCmdCopyBuffer(cb, src, gpu->ring.buffer, 1, &regions[1]);
        }
    }
    return 0;
}

static VkResult begin_commands(const VulkanDevice *dev, VkCommandBuffer cb)
{
    VkResult r = dev->api.vkResetCommandBuffer(cb, 0);
    const VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    if (r == VK_SUCCESS) r = dev->api.vkBeginCommandBuffer(cb, &begin);
    return r;
}

/* QUALE_VULKAN_PROFILE: each twin's work alone, each of its rounds
 * between two timestamps (queries 2 (twin PROFILE_ROUNDS + round) and the
 * next), barriers around it. */
static int record_twins_profiled(GpuBackend *gpu, unsigned slot, const VulkanFrame *f,
                                 VkCommandBuffer cb, char *error, size_t error_size)
{
    const VulkanDevice *dev = &gpu->dev;
    dev->api.vkCmdResetQueryPool(cb, gpu->queries, 0, gpu->twin_count * PROFILE_ROUNDS * 2);
    for (unsigned i = 0; i < gpu->twin_count; i++) {
        ActiveTwin *a = &gpu->twins[i];
        for (unsigned round = 0;; round++) {
            const uint32_t q = 2 * (i * PROFILE_ROUNDS + QUALE_MIN(round, PROFILE_ROUNDS - 1u));
            vulkan_compute_barrier(dev, cb);
            dev->api.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, gpu->queries, q);
            const int left = vulkan_twin_record_round(a->twin, a->state, round, slot, f, cb,
                                                      error, error_size);
            if (left < 0) return left;
            vulkan_compute_barrier(dev, cb);
            dev->api.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, gpu->queries,
                                         q + 1);
            if (left == 0 || round + 1 >= PROFILE_ROUNDS) break;
        }
    }
    return 0;
}

/* Every twin's work of one frame, round by round with one barrier between
 * rounds. */
static int record_twins(GpuBackend *gpu, unsigned slot, const VulkanFrame *f, VkCommandBuffer cb,
                        char *error, size_t error_size)
{
    const VulkanDevice *dev = &gpu->dev;
    if (gpu->profile) return record_twins_profiled(gpu, slot, f, cb, error, error_size);
    for (unsigned i = 0; i < gpu->twin_count; i++) gpu->twins[i].pending = true;
    bool any = gpu->twin_count > 0;
    if (!any) return 0;
    /* The rounds may overwrite what the lane's frame before still reads. */
    vulkan_compute_barrier(dev, cb);
    for (unsigned round = 0; any; round++) {
        if (round > 0) vulkan_compute_barrier(dev, cb);
        any = false;
        for (unsigned i = 0; i < gpu->twin_count; i++) {
            ActiveTwin *a = &gpu->twins[i];
            if (!a->pending) continue;
            const int left = vulkan_twin_record_round(a->twin, a->state, round, slot, f, cb, error,
                                                      error_size);
            if (left < 0) return left;
            a->pending = left > 0;
            any = any || a->pending;
        }
    }
    return 0;
}

/* The waits of one batch: at most one per queue, the latest point asked. */
typedef struct Waits {
    VkSemaphore semaphore[TIMELINES];
    uint64_t value[TIMELINES];
    VkPipelineStageFlags stage[TIMELINES];
    unsigned count;
} Waits;

static void wait_for(const GpuBackend *gpu, Waits *w, SyncPoint point, VkPipelineStageFlags stage)
{
    if (point.value == 0) return; /* nothing signalled there yet */
    const VkSemaphore semaphore = gpu->timeline[point.timeline];
    for (unsigned i = 0; i < w->count; i++) {
        if (w->semaphore[i] == semaphore) {
            if (point.value > w->value[i]) w->value[i] = point.value;
            return;
        }
    }
    w->semaphore[w->count] = semaphore;
    w->value[w->count] = point.value;
    w->stage[w->count++] = stage;
}

/* Where frame n's planes lie for the twins: the distorted ones in the
 * slot, the reference's luma in the ring (with the history's frames
 * before it), its chroma after the slot's frame. */
static VulkanFrame frame_layout(const GpuBackend *gpu, unsigned slot, const MetricFrame *frame)
{
    const unsigned n = frame->index, R = gpu->ring_size, lane = n % gpu->dev.lanes;
    const VkDeviceSize luma = gpu->plane_bytes[0];
    VulkanFrame f = { .index = n, .lane = lane };
    const QualePicture *ref = frame->ref;
    const VkDeviceSize slot_base = (VkDeviceSize)slot * gpu->slot_bytes;
    for (unsigned p = 0; p < ref->plane_count; p++) {
        f.stride[p] = (uint32_t)ref->stride[p];
        f.width[p] = ref->plane_width[p];
        f.height[p] = ref->plane_height[p];
        f.dist_offset[p] = slot_base + gpu->plane_offset[p];
    }
    f.ref_offset[0] = (VkDeviceSize)(n % R) * gpu->ring_entry;
    if (ref->plane_count == 3) {
        f.ref_offset[1] = slot_base + gpu->frame_bytes;
        f.ref_offset[2] = f.ref_offset[1] + gpu->plane_bytes[1];
    }
    for (unsigned k = 0; k < gpu->history && k + 1 <= n; k++) {
        f.prev_ref_offset[k] = (VkDeviceSize)((n - 1 - k) % R) * gpu->ring_entry;
        if (gpu->dist_history) f.prev_dist_offset[k] = f.prev_ref_offset[k] + luma;
        f.has_prev[k] = true;
    }
    return f;
}

/* Frame n's two submissions with timelines: the uploads, after the frames
 * that last read the ring entry and slot they overwrite; the work, after
 * the uploads of the frames it reads. */
static VkResult submit_on_timelines(GpuBackend *gpu, VulkanSlot *s, unsigned n)
{
    VulkanDevice *dev = &gpu->dev;
    const unsigned R = gpu->ring_size, e = n % R, lane = n % dev->lanes;
    const unsigned upload_timeline = gpu->upload_queue ? UPLOAD_TIMELINE : lane;
    VkResult r;
    Waits upload_waits = { .count = 0 }, work_waits = { .count = 0 };
    for (unsigned j = 0; j <= gpu->history && n + j >= R; j++)
        wait_for(gpu, &upload_waits, gpu->done[(n + j) % R], VK_PIPELINE_STAGE_TRANSFER_BIT);
    const SyncPoint uploaded = { upload_timeline, ++gpu->timeline_value[upload_timeline] };
    gpu->uploaded[e] = uploaded;
    for (unsigned k = 0; k <= gpu->history && k <= n; k++)
        wait_for(gpu, &work_waits, gpu->uploaded[(n - k) % R], VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    const SyncPoint done = { lane, ++gpu->timeline_value[lane] };
    gpu->done[e] = done;

    const VkTimelineSemaphoreSubmitInfoKHR values[2] = {
        {
            .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO_KHR,
            .waitSemaphoreValueCount = upload_waits.count,
            .pWaitSemaphoreValues = upload_waits.value,
            .signalSemaphoreValueCount = 1,
            .pSignalSemaphoreValues = &uploaded.value,
        },
        {
            .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO_KHR,
            .waitSemaphoreValueCount = work_waits.count,
            .pWaitSemaphoreValues = work_waits.value,
            .signalSemaphoreValueCount = 1,
            .pSignalSemaphoreValues = &done.value,
        },
    };
    const VkSubmitInfo submits[2] = {
        {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .pNext = &values[0],
            .waitSemaphoreCount = upload_waits.count,
            .pWaitSemaphores = upload_waits.semaphore,
            .pWaitDstStageMask = upload_waits.stage,
            .commandBufferCount = 1,
            .pCommandBuffers = &s->upload_cb,
            .signalSemaphoreCount = 1,
            .pSignalSemaphores = &gpu->timeline[upload_timeline],
        },
        {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .pNext = &values[1],
            .waitSemaphoreCount = work_waits.count,
            .pWaitSemaphores = work_waits.semaphore,
            .pWaitDstStageMask = work_waits.stage,
            .commandBufferCount = 1,
            .pCommandBuffers = &s->cb,
            .signalSemaphoreCount = 1,
            .pSignalSemaphores = &gpu->timeline[lane],
        },
    };
    /* Lanes beyond the device's queues share them. */
    VkQueue compute_queue = dev->compute_queues[lane % dev->compute_queue_count];
    if (!gpu->upload_queue) {
        r = vulkan_queue_submit(dev, compute_queue, 2, submits, s->fence);
    } else {
        r = vulkan_queue_submit(dev, gpu->upload_queue, 1, &submits[0], VK_NULL_HANDLE);
        if (r == VK_SUCCESS) r = vulkan_queue_submit(dev, compute_queue, 1, &submits[1], s->fence);
    }
    return r;
}

/*
 * Frame n on lane n % lanes.  With timelines, its upload and its work are
 * two batches, each ordered after exactly what it depends on:
 *   - the upload (on the transfer queue, or the lane's queue) overwrites
 *     ring entry n % R, so it waits for the work of the frames that read
 *     the old occupant (n - R .. n - R + history); the slot it writes is
 *     free (the frame that held it has completed on the host);
 *   - the work (on the lane's queue) waits for the uploads of the frames
 *     it reads (n - history .. n).
 * Frames of one lane share a queue, and the barrier before the twins'
 * rounds (record_twins) orders a frame's work after that of the lane's
 * frame before, whose per-lane data it overwrites.  Without
 * timelines everything is one batch on one queue: a barrier from all
 * earlier shader work to the upload, as each frame may overwrite what an
 * earlier one still reads.
 */
static int vulkan_submit(GpuBackend *gpu, unsigned slot, const MetricFrame *frame)
{
    char error[512] = "";
    const size_t error_size = sizeof(error);
    VulkanDevice *dev = &gpu->dev;
    VulkanSlot *s = &gpu->slots[slot];
    const unsigned n = frame->index;
    const VkDeviceSize ring_offset = (VkDeviceSize)(n % gpu->ring_size) * gpu->ring_entry;
    int err = 0;

    VkResult r = dev->api.vkResetFences(dev->device, 1, &s->fence);
    if (r == VK_SUCCESS) r = begin_commands(dev, s->cb);
    if (r == VK_SUCCESS && dev->timeline) r = begin_commands(dev, s->upload_cb);
    if (r != VK_SUCCESS) {
        log_sink_print(&gpu->log, QUALE_LOG_ERROR, "Vulkan, frame %u: preparing commands failed: %s", n,
                    vulkan_result_text(r));
        return -EIO;
    }
    VkCommandBuffer upload_cb = s->upload_cb;
    if (!dev->timeline) {
        /* Earlier frames may still read the ring entry and slot we overwrite. */
        vulkan_barrier(dev, s->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, 0);
        upload_cb = s->cb;
    }
    err = record_upload(gpu, s, upload_cb, slot, frame->ref, true, ring_offset, error, error_size);
    if (!err)
        err = record_upload(gpu, s, upload_cb, slot, frame->dist, false, ring_offset, error, error_size);
    if (!dev->timeline) {
        /* Our planes, and earlier frames' ring entries, ready for the shaders. */
        vulkan_barrier(dev, s->cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    }

    VulkanFrame f = frame_layout(gpu, slot, frame);
    if (!err) err = record_twins(gpu, slot, &f, s->cb, error, error_size);
    vulkan_barrier(dev, s->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    r = dev->api.vkEndCommandBuffer(s->cb);
    if (r == VK_SUCCESS && dev->timeline) r = dev->api.vkEndCommandBuffer(s->upload_cb);
    if (!err && r != VK_SUCCESS) {
        snprintf(error, error_size, "recording commands failed: %s", vulkan_result_text(r));
        err = -EIO;
    }
    if (!err && !dev->timeline) {
        const VkSubmitInfo submit = {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = 1,
            .pCommandBuffers = &s->cb,
        };
        r = vulkan_queue_submit(dev, dev->queue, 1, &submit, s->fence);
    } else if (!err) {
        r = submit_on_timelines(gpu, s, n);
    }
    if (!err && r != VK_SUCCESS) {
        snprintf(error, error_size, "submitting work failed: %s", vulkan_result_text(r));
        err = -EIO;
    }
    if (err) log_sink_print(&gpu->log, QUALE_LOG_ERROR, "Vulkan, frame %u: %s", n, error);
    return err;
}

static int vulkan_complete(GpuBackend *gpu, unsigned slot, const MetricFrame *frame)
{
    VulkanDevice *dev = &gpu->dev;
    const VkResult r = dev->api.vkWaitForFences(dev->device, 1, &gpu->slots[slot].fence, VK_TRUE, UINT64_MAX);
    if (r != VK_SUCCESS) {
        log_sink_print(&gpu->log, QUALE_LOG_ERROR, "Vulkan, frame %u: the device failed: %s",
                    frame->index, vulkan_result_text(r));
        return -EIO;
    }
    if (gpu->profile) {
        /* The stamps of this frame (one frame in flight): rounds a twin
         * did not have stay unwritten, and unavailable. */
        for (unsigned q = 0; q < gpu->twin_count * PROFILE_ROUNDS * 2; q += 2) {
            uint64_t pair[2];
            const VkResult got = dev->api.vkGetQueryPoolResults(
                dev->device, gpu->queries, q, 2, sizeof(pair), pair, sizeof(uint64_t),
                VK_QUERY_RESULT_64_BIT);
            if (got == VK_SUCCESS && pair[1] > pair[0])
                gpu->round_ns[q / 2] +=
                    (double)(pair[1] - pair[0]) * dev->properties.limits.timestampPeriod;
        }
        gpu->profiled_frames++;
    }
    for (unsigned i = 0; i < gpu->twin_count; i++) {
        ActiveTwin *a = &gpu->twins[i];
        int err = vulkan_twin_collect(a->twin, a->state, slot, frame, a->sink);
        if (err) return err;
    }
    return 0;
}

const GpuOps gpu_vulkan_ops = {
    .kind = QUALE_BACKEND_VULKAN,
    .device = { .list_devices = vulkan_list_devices, .describe = vulkan_describe,
                .open = vulkan_open, .close = vulkan_close,
                .host_allocator = vulkan_host_allocator },
    .twins = { .built = vulkan_twin_built, .has_twin = vulkan_has_twin, .start = vulkan_start,
               .submit = vulkan_submit, .complete = vulkan_complete },
};
