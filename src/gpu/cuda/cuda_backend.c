/*
 * The CUDA backend: the device, its streams and memory, and the flow of
 * frames through the twins.
 *
 * Each frame in flight holds a slot: a stream, device buffers for the
 * planes its twins read, pinned staging for pictures that are not pinned,
 * and an event that marks the end of its work.  The reference luma of every
 * frame goes to a ring of device planes instead, so that temporal twins
 * (motion) read the previous frames where they already are: a frame is
 * uploaded once, whatever reads it.  With a twin that reads the previous
 * distorted lumas too (speed_temporal), they go to a second ring, guarded
 * by the same events.  Ring entries and the events that guard
 * them are indexed by frame number modulo the ring size, so the waits below
 * are exact however the frames finish:
 *   - before frame n overwrites ring entry n % R, its stream waits for the
 *     frames that read the old occupant (n - R .. n - R + history);
 *   - before a twin of frame n reads frame n - 1 - k, the stream waits for
 *     that frame's upload.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "host_pages.h"
#include "log.h"
#include "cuda_backend.h"
#include "cuda_twin.h"
#include "gpu/gpu.h"
#include "input/scale.h"
#include "kernel_images.h"

/* ---- pinned host memory for the context's pictures ---------------------- */

static void backend_release(GpuBackend *gpu);

/* A run's pictures are pinned as its readers first need them, inside the
 * first frames' reading: host_pages.h says why they are mapped by us and
 * then registered. */
static void *map_registered(GpuBackend *gpu, size_t size, size_t *mapped)
{
    void *p = host_pages_map(size, 0, mapped);
    if (p && gpu->dev.api.MemHostRegister(p, *mapped, CU_MEMHOSTREGISTER_PORTABLE) != CUDA_SUCCESS) {
        host_pages_unmap(p, *mapped);
        p = NULL;
    }
    if (!p) *mapped = 0;
    return p;
}

static void unpin(GpuBackend *gpu, PinnedBlock block)
{
    gpu->dev.api.CtxSetCurrent(gpu->dev.context);
    if (block.mapped) {
        gpu->dev.api.MemHostUnregister(block.start);
        host_pages_unmap(block.start, block.mapped);
    } else {
        gpu->dev.api.MemFreeHost(block.start);
    }
}

static void *pinned_alloc(void *opaque, size_t size)
{
    GpuBackend *gpu = opaque;
    PinnedBlock block = { 0 };
    char error[256];
    if (gpu->dev.api.CtxSetCurrent(gpu->dev.context) != CUDA_SUCCESS) return NULL;
    if (host_pages_wanted()) block.start = map_registered(gpu, size, &block.mapped);
    if (!block.start && cuda_alloc_host(&gpu->dev, &block.start, size, "a picture", error,
                                        sizeof(error))) {
        log_sink_print(&gpu->log, QUALE_LOG_WARNING, "%s; using pageable memory", error);
        return quale_aligned_alloc(size);
    }
    pthread_mutex_lock(&gpu->pinned_lock);
    if (gpu->pinned_count == gpu->pinned_capacity) {
        const size_t cap = gpu->pinned_capacity ? 2 * gpu->pinned_capacity : 64;
        PinnedBlock *list = realloc(gpu->pinned, cap * sizeof(*list));
        if (!list) {
            pthread_mutex_unlock(&gpu->pinned_lock);
            unpin(gpu, block);
            return NULL;
        }
        gpu->pinned = list;
        gpu->pinned_capacity = cap;
    }
    gpu->pinned[gpu->pinned_count++] = block;
    pthread_mutex_unlock(&gpu->pinned_lock);
    return block.start;
}

/* Takes p out of the list of pinned blocks: whether it was one, and which */
static bool forget_pinned(GpuBackend *gpu, void *p, PinnedBlock *block)
{
    bool found = false;
    pthread_mutex_lock(&gpu->pinned_lock);
    for (size_t i = 0; i < gpu->pinned_count; i++) {
        if (gpu->pinned[i].start == p) {
            *block = gpu->pinned[i];
            gpu->pinned[i] = gpu->pinned[--gpu->pinned_count];
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&gpu->pinned_lock);
    return found;
}

static void pinned_free(void *opaque, void *p)
{
    GpuBackend *gpu = opaque;
    PinnedBlock block;
    if (forget_pinned(gpu, p, &block)) unpin(gpu, block);
    else quale_aligned_free(p);
}

static void pinned_release(void *opaque)
{
    backend_release(opaque);
}

/* Whether the whole of a picture's planes lies in memory we pinned. */
static bool is_pinned(GpuBackend *gpu, const QualePicture *pic)
{
    bool found = false;
    pthread_mutex_lock(&gpu->pinned_lock);
    for (size_t i = 0; i < gpu->pinned_count && !found; i++)
        found = gpu->pinned[i].start == pic->data[0];
    pthread_mutex_unlock(&gpu->pinned_lock);
    return found;
}

/* ---- device life cycle -------------------------------------------------- */

static CudaRuntime cuda_runtime = { .name = "CUDA", .kind = QUALE_BACKEND_CUDA,
                                    .load = cuda_api_load, .lock = PTHREAD_MUTEX_INITIALIZER };

static int load_driver(CudaRuntime *rt, CudaApi *api, char *error, size_t error_size)
{
    pthread_mutex_lock(&rt->lock);
    if (!rt->tried) {
        rt->tried = true;
        rt->status = rt->load(&rt->api, rt->error, sizeof(rt->error));
        if (!rt->status) {
            const CUresult r = rt->api.Init(0);
            if (r == CUDA_ERROR_NO_DEVICE) {
                snprintf(rt->error, sizeof(rt->error), "no %s device is present (%s)", rt->name,
                         cuda_error_text(&rt->api, r));
                rt->status = -ENODEV;
            } else if (r != CUDA_SUCCESS) {
                snprintf(rt->error, sizeof(rt->error), "initialising the %s runtime failed: %s",
                         rt->name, cuda_error_text(&rt->api, r));
                rt->status = -EIO;
            }
        }
    }
    const int status = rt->status;
    snprintf(error, error_size, "%s", rt->error);
    *api = rt->api;
    pthread_mutex_unlock(&rt->lock);
    return status;
}

/* The name, the multiprocessors, and whether quale runs on it (compute
 * capability 7.0 or newer), of dev->device. */
static int describe_device(CudaDevice *dev, char *error, size_t error_size)
{
    dev->api.DeviceGetName(dev->name, sizeof(dev->name), dev->device);
    int major = 0;
    dev->api.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev->device);
    if (major < 7) {
        snprintf(error, error_size, "%s (compute capability %d.x) is older than quale supports (7.0)",
                 dev->name, major);
        return -ENODEV;
    }
    dev->api.DeviceGetAttribute(&dev->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                dev->device);
    return 0;
}

/* One more retain of the device's primary context, never released: the
 * context then outlives the backend's own release, for the process's next
 * one (gpu_keep_devices()); the driver ends it with the process. */
static void keep_context(CudaRuntime *rt, CudaDevice *dev, int ordinal)
{
    if (!gpu_keep_devices() || ordinal >= 64) return;
    pthread_mutex_lock(&rt->lock);
    CUcontext again;
    if (!(rt->kept_contexts >> ordinal & 1) &&
        dev->api.DevicePrimaryCtxRetain(&again, dev->device) == CUDA_SUCCESS)
        rt->kept_contexts |= 1ull << ordinal;
    pthread_mutex_unlock(&rt->lock);
}

static int open_device(CudaRuntime *rt, CudaDevice *dev, int ordinal, char *error, size_t error_size)
{
    int err = load_driver(rt, &dev->api, error, error_size);
    if (err) return err;
    int count = 0;
    CU_TRY(dev, dev->api.DeviceGetCount(&count), "counting devices");
    if (count == 0) {
        snprintf(error, error_size, "no %s device is present", rt->name);
        return -ENODEV;
    }
    if (ordinal >= count) {
        snprintf(error, error_size, "%s device %d does not exist (there %s %d)", rt->name, ordinal,
                 count == 1 ? "is" : "are", count);
        return -ENODEV;
    }
    CU_TRY(dev, dev->api.DeviceGet(&dev->device, ordinal < 0 ? 0 : ordinal), "opening the device");
    if ((err = describe_device(dev, error, error_size))) return err;
    CU_TRY(dev, dev->api.DevicePrimaryCtxRetain(&dev->context, dev->device), "creating a context");
    CU_TRY(dev, dev->api.CtxSetCurrent(dev->context), "making the context current");
    keep_context(rt, dev, ordinal < 0 ? 0 : ordinal);
    return 0;
}

/* The backend in a context of the caller's: its device is the context's. */
static int adopt_device(CudaDevice *dev, CUcontext context, char *error, size_t error_size)
{
    int err = load_driver(&cuda_runtime, &dev->api, error, error_size);
    if (err) return err;
    CU_TRY(dev, dev->api.CtxSetCurrent(context), "making the caller's CUDA context current");
    CU_TRY(dev, dev->api.CtxGetDevice(&dev->device), "finding the device of the caller's context");
    dev->context = context;
    dev->external = true;
    return describe_device(dev, error, error_size);
}

static void stop(GpuBackend *gpu)
{
    CudaDevice *dev = &gpu->dev;
    if (!dev->context) return;
    dev->api.CtxSetCurrent(dev->context);
    for (unsigned i = 0; i < gpu->slot_count; i++)
        for (unsigned b = 0; b < gpu->branches; b++)
            if (gpu->slots[i].branch[b]) dev->api.StreamSynchronize(gpu->slots[i].branch[b]);
    for (unsigned i = 0; i < gpu->twin_count; i++) {
        if (gpu->twins[i].state) cuda_twin_close(gpu->twins[i].twin, gpu->twins[i].state);
        if (gpu->twins[i].module) dev->api.ModuleUnload(gpu->twins[i].module);
    }
    if (gpu->profile && gpu->profiled_frames) {
        const double n = gpu->profiled_frames;
        double total = 0;
        for (unsigned i = 0; i <= gpu->twin_count; i++) total += gpu->stage_ms[i];
        log_sink_print(&gpu->log, QUALE_LOG_INFO, "CUDA profile, %u frames, device ms per frame: "
                    "%.4f in all, upload %.4f", gpu->profiled_frames, total / n,
                    gpu->stage_ms[0] / n);
        for (unsigned i = 0; i < gpu->twin_count; i++)
            log_sink_print(&gpu->log, QUALE_LOG_INFO, "CUDA profile:   %-14s %.4f",
                        gpu->twins[i].twin->metric->name, gpu->stage_ms[i + 1] / n);
    }
    if (gpu->marks)
        for (unsigned i = 0; i < gpu->twin_count + 2; i++)
            if (gpu->marks[i]) dev->api.EventDestroy(gpu->marks[i]);
    free(gpu->marks);
    free(gpu->stage_ms);
    gpu->marks = NULL;
    gpu->stage_ms = NULL;
    gpu->profiled_frames = 0;
    free(gpu->twins);
    gpu->twins = NULL;
    gpu->twin_count = 0;
    const size_t luma = gpu->plane_bytes[0];
    for (unsigned i = 0; i < gpu->slot_count; i++) {
        CudaSlot *s = &gpu->slots[i];
        cuda_free(dev, s->ref_chroma, gpu->plane_bytes[1] + gpu->plane_bytes[2]);
        cuda_free(dev, s->dist, gpu->frame_bytes);
        if (s->staging) dev->api.MemFreeHost(s->staging);
        if (s->done) dev->api.EventDestroy(s->done);
        if (s->caller_done) dev->api.EventDestroy(s->caller_done);
        if (s->forked) dev->api.EventDestroy(s->forked);
        for (unsigned b = 1; b < CUDA_MAX_BRANCHES; b++) {
            if (s->joined[b]) dev->api.EventDestroy(s->joined[b]);
            if (s->branch[b]) dev->api.StreamDestroy(s->branch[b]);
        }
        if (s->stream) dev->api.StreamDestroy(s->stream);
    }
    free(gpu->slots);
    gpu->slots = NULL;
    gpu->slot_count = 0;
    for (unsigned i = 0; i < gpu->ring_size; i++) {
        cuda_free(dev, gpu->ring[i], luma);
        if (gpu->ring_dist) cuda_free(dev, gpu->ring_dist[i], luma);
        if (gpu->ring_uploaded[i]) dev->api.EventDestroy(gpu->ring_uploaded[i]);
        if (gpu->ring_done[i]) dev->api.EventDestroy(gpu->ring_done[i]);
    }
    free(gpu->ring);
    free(gpu->ring_dist);
    gpu->ring_dist = NULL;
    free(gpu->ring_uploaded);
    free(gpu->ring_done);
    gpu->ring = NULL;
    gpu->ring_size = 0;
}

static void backend_release(GpuBackend *gpu)
{
    if (atomic_fetch_sub(&gpu->refs, 1) != 1) return;
    /* The last user: the context is closed and every pinned picture is back. */
    if ((gpu->import_module || gpu->copied) &&
        gpu->dev.api.CtxSetCurrent(gpu->dev.context) == CUDA_SUCCESS) {
        if (gpu->import_module) gpu->dev.api.ModuleUnload(gpu->import_module);
        if (gpu->copied) gpu->dev.api.EventDestroy(gpu->copied);
    }
    if (gpu->dev.context && !gpu->dev.external) gpu->dev.api.DevicePrimaryCtxRelease(gpu->dev.device);
    free(gpu->pinned);
    pthread_mutex_destroy(&gpu->pinned_lock);
    pthread_mutex_destroy(&gpu->import_lock);
    free(gpu);
}

int cuda_backend_list_devices(CudaRuntime *rt, QualeDeviceInfo *devices, unsigned max, unsigned *count,
                        char *error, size_t error_size)
{
    CudaApi api;
    *count = 0;
    int err = load_driver(rt, &api, error, error_size);
    if (err) return err;
    int n = 0;
    CUresult r = api.DeviceGetCount(&n);
    if (r != CUDA_SUCCESS) {
        snprintf(error, error_size, "counting %s devices failed: %s", rt->name,
                 cuda_error_text(&api, r));
        return -EIO;
    }
    *count = (unsigned)n;
    for (int i = 0; i < n && (unsigned)i < max; i++) {
        QualeDeviceInfo *d = &devices[i];
        memset(d, 0, sizeof(*d));
        d->backend = rt->kind;
        d->index = (unsigned)i;
        d->preferred = i == 0;
        CUdevice device;
        if (api.DeviceGet(&device, i) != CUDA_SUCCESS) {
            snprintf(d->name, sizeof(d->name), "%s device %d (not answering)", rt->name, i);
            d->type = QUALE_DEVICE_OTHER;
            continue;
        }
        api.DeviceGetName(d->name, (int)sizeof(d->name), device);
        int integrated = 0;
        api.DeviceGetAttribute(&integrated, CU_DEVICE_ATTRIBUTE_INTEGRATED, device);
        d->type = integrated ? QUALE_DEVICE_INTEGRATED : QUALE_DEVICE_DISCRETE;
        size_t bytes = 0;
        if (api.DeviceTotalMem(&bytes, device) == CUDA_SUCCESS) d->memory_bytes = bytes;
    }
    return 0;
}

static int cuda_list_devices(QualeDeviceInfo *devices, unsigned max, unsigned *count,
                             char *error, size_t error_size)
{
    return cuda_backend_list_devices(&cuda_runtime, devices, max, count, error, error_size);
}

void cuda_describe(const GpuBackend *gpu, QualeDeviceInfo *info)
{
    memset(info, 0, sizeof(*info));
    info->backend = gpu->runtime->kind;
    info->index = (unsigned)gpu->dev.device;
    info->type = QUALE_DEVICE_DISCRETE;
    snprintf(info->name, sizeof(info->name), "%s", gpu->dev.name);
}

bool cuda_backend_twin_built(const CudaRuntime *rt, const Metric *metric)
{
    for (unsigned i = 0; cuda_twins[i]; i++)
        if (cuda_twins[i]->metric == metric && module_image(rt, cuda_twins[i]->module_image))
            return true;
    return false;
}

static bool cuda_twin_built(const Metric *metric)
{
    return cuda_backend_twin_built(&cuda_runtime, metric);
}

static const CudaTwin *find_twin(const Metric *metric, const void *state)
{
    for (unsigned i = 0; cuda_twins[i]; i++)
        if (cuda_twins[i]->metric == metric &&
            (!cuda_twins[i]->supports || cuda_twins[i]->supports(state)))
            return cuda_twins[i];
    return NULL;
}


int cuda_backend_open(const LogSink *log, CudaRuntime *rt, int ordinal, void *native_context,
                      GpuBackend **out, char *error, size_t error_size)
{
    const CUcontext external = (CUcontext)native_context;
    *out = NULL;
    if (!module_image(rt, cuda_module_picture_import)) {
        snprintf(error, error_size, "this build of quale has no kernels for %s (hipcc was not "
                 "found when it was built)", rt->name);
        return -ENOSYS;
    }
    GpuBackend *gpu = calloc(1, sizeof(*gpu));
    if (!gpu) return -ENOMEM;
    gpu->log = log ? *log : (LogSink){ 0 };
    gpu->runtime = rt;
    atomic_init(&gpu->refs, 2); /* the context and the picture pool */
    pthread_mutex_init(&gpu->pinned_lock, NULL);
    pthread_mutex_init(&gpu->import_lock, NULL);
    const double t0 = quale_monotonic_ms();
    int err = external ? adopt_device(&gpu->dev, external, error, error_size)
                       : open_device(rt, &gpu->dev, ordinal, error, error_size);
    if (err) {
        if (gpu->dev.context && !gpu->dev.external)
            gpu->dev.api.DevicePrimaryCtxRelease(gpu->dev.device);
        pthread_mutex_destroy(&gpu->pinned_lock);
        free(gpu);
        return err;
    }
    gpu->host = (PictureAllocator){ pinned_alloc, pinned_free, pinned_release, gpu, false };
    gpu->device = (PictureAllocator){ device_picture_alloc, device_picture_free, pinned_release,
                                      gpu, true };
    log_sink_print(log, QUALE_LOG_DEBUG, "%s device: %s, %d multiprocessors%s, opened in %.1f ms "
                   "(the driver too, if this process's first)", rt->name, gpu->dev.name,
                   gpu->dev.multiprocessors, external ? ", in the caller's context" : "",
                   quale_monotonic_ms() - t0);
    *out = gpu;
    return 0;
}

static int cuda_open(const LogSink *log, int device, GpuBackend **out, char *error,
                     size_t error_size)
{
    return cuda_backend_open(log, &cuda_runtime, device, NULL, out, error, error_size);
}

static int cuda_adopt(const LogSink *log, void *native_context, GpuBackend **out, char *error,
                      size_t error_size)
{
    return cuda_backend_open(log, &cuda_runtime, -1, native_context, out, error, error_size);
}

void cuda_close(GpuBackend *gpu)
{
    if (!gpu) return;
    const double t0 = quale_monotonic_ms();
    stop(gpu);
    const double t1 = quale_monotonic_ms();
    const LogSink log = gpu->log; /* the release may free the backend */
    backend_release(gpu);
    log_sink_print(&log, QUALE_LOG_DEBUG, "CUDA: the run's memory freed in %.1f ms, the backend "
                   "let go in %.1f ms", t1 - t0, quale_monotonic_ms() - t1);
}

const PictureAllocator *cuda_host_allocator(const GpuBackend *gpu)
{
    return &gpu->host;
}

bool cuda_has_twin(const GpuBackend *gpu, const Metric *metric, const void *state)
{
    const CudaTwin *twin = find_twin(metric, state);
    return twin && module_image(gpu->runtime, twin->module_image);
}

/* ---- start: twins, slots, ring ------------------------------------------ */

static int start_slots(GpuBackend *gpu, unsigned slots, char *error, size_t error_size)
{
    CudaDevice *dev = &gpu->dev;
    gpu->slots = calloc(slots, sizeof(*gpu->slots));
    if (!gpu->slots) return -ENOMEM;
    gpu->slot_count = slots;
    for (unsigned i = 0; i < slots; i++) {
        CudaSlot *s = &gpu->slots[i];
        CU_TRY(dev, dev->api.StreamCreate(&s->stream, CU_STREAM_NON_BLOCKING), "creating a stream");
        CU_TRY(dev, dev->api.EventCreate(&s->done, CU_EVENT_DISABLE_TIMING), "creating an event");
        s->branch[0] = s->stream;
        if (gpu->branches > 1)
            CU_TRY(dev, dev->api.EventCreate(&s->forked, CU_EVENT_DISABLE_TIMING),
                   "creating an event");
        for (unsigned b = 1; b < gpu->branches; b++) {
            CU_TRY(dev, dev->api.StreamCreate(&s->branch[b], CU_STREAM_NON_BLOCKING),
                   "creating a stream");
            CU_TRY(dev, dev->api.EventCreate(&s->joined[b], CU_EVENT_DISABLE_TIMING),
                   "creating an event");
        }
        int err = 0;
        if (gpu->planes & 6)
            err = cuda_alloc(dev, &s->ref_chroma, gpu->plane_bytes[1] + gpu->plane_bytes[2],
                             "reference chroma", error, error_size);
        if (!err) err = cuda_alloc(dev, &s->dist, gpu->frame_bytes, "the distorted frame", error,
                                   error_size);
        if (err) return err;
    }
    /* Enough ring entries that a frame rarely waits for an older one. */
    gpu->ring_size = slots + gpu->history + 1;
    gpu->ring = calloc(gpu->ring_size, sizeof(*gpu->ring));
    gpu->ring_uploaded = calloc(gpu->ring_size, sizeof(*gpu->ring_uploaded));
    gpu->ring_done = calloc(gpu->ring_size, sizeof(*gpu->ring_done));
    if (!gpu->ring || !gpu->ring_uploaded || !gpu->ring_done) return -ENOMEM;
    if (gpu->dist_history && !(gpu->ring_dist = calloc(gpu->ring_size, sizeof(*gpu->ring_dist))))
        return -ENOMEM;
    for (unsigned i = 0; i < gpu->ring_size; i++) {
        int err = cuda_alloc(dev, &gpu->ring[i], gpu->plane_bytes[0], "reference luma", error,
                             error_size);
        if (!err && gpu->ring_dist)
            err = cuda_alloc(dev, &gpu->ring_dist[i], gpu->plane_bytes[0], "distorted luma", error,
                             error_size);
        if (err) return err;
        CU_TRY(dev, dev->api.EventCreate(&gpu->ring_uploaded[i], CU_EVENT_DISABLE_TIMING),
               "creating an event");
        CU_TRY(dev, dev->api.EventCreate(&gpu->ring_done[i], CU_EVENT_DISABLE_TIMING),
               "creating an event");
    }
    return 0;
}

/* How many streams a frame's twins are spread over: one per twin, up to
 * CUDA_MAX_BRANCHES, so that the small kernels of one twin (ADM's coarse
 * scales, say) share the GPU with the others' instead of leaving most of
 * it idle; one when profiling, which times each twin alone.
 * QUALE_CUDA_BRANCHES sets it (1: every twin on the frame's stream). */
static unsigned choose_branches(const GpuBackend *gpu)
{
    if (gpu->profile) return 1;
    const char *text = getenv("QUALE_CUDA_BRANCHES");
    const unsigned long asked = text && *text ? strtoul(text, NULL, 10) : 0;
    const unsigned long branches = asked >= 1 ? asked : gpu->twin_count;
    return (unsigned)QUALE_MAX(1ul, QUALE_MIN(branches, (unsigned long)CUDA_MAX_BRANCHES));
}

int cuda_start(GpuBackend *gpu, const QualeVideoFormat *format,
                      const GpuTwinRequest *requests, unsigned count, unsigned *slots_in_out,
                      char *error, size_t error_size)
{
    const char *profile = getenv("QUALE_CUDA_PROFILE");
    gpu->profile = profile && profile[0] && strcmp(profile, "0");
    if (gpu->profile) *slots_in_out = 1;
    const unsigned slots = *slots_in_out;
    CudaDevice *dev = &gpu->dev;
    int err = 0;
    error[0] = '\0';
    if (dev->api.CtxSetCurrent(dev->context) != CUDA_SUCCESS) {
        snprintf(error, error_size, "the CUDA context cannot be made current");
        return -EIO;
    }
    gpu->format = *format;
    gpu->twins = calloc(count, sizeof(*gpu->twins));
    if (!gpu->twins) return -ENOMEM;

    /* The frame layout on the device mirrors the host pictures'. */
    QualePicture layout;
    if ((err = quale_picture_alloc(&layout, format))) return err;
    for (unsigned p = 0; p < layout.plane_count; p++) {
        gpu->plane_offset[p] = (size_t)((uint8_t *)layout.data[p] - (uint8_t *)layout.data[0]);
        gpu->plane_bytes[p] = (size_t)layout.stride[p] * layout.plane_height[p];
        gpu->frame_bytes += gpu->plane_bytes[p];
    }
    quale_picture_unref(&layout);

    for (unsigned i = 0; i < count && !err; i++) {
        const CudaTwin *twin = find_twin(requests[i].metric, requests[i].state);
        ActiveTwin *a = &gpu->twins[gpu->twin_count++];
        a->twin = twin;
        a->sink = requests[i].sink;
        gpu->planes |= metric_planes(twin->metric, requests[i].state);
        if (twin->metric->history > gpu->history) gpu->history = twin->metric->history;
        if (twin->dist_history) gpu->dist_history = true;
        const CUresult r = dev->api.ModuleLoadData(&a->module,
                                                   module_image(gpu->runtime, twin->module_image));
        if (r != CUDA_SUCCESS) {
            snprintf(error, error_size, "loading the %s kernels failed: %s", twin->metric->name,
                     cuda_error_text(&dev->api, r));
            err = -EIO;
            break;
        }
        err = cuda_twin_init(twin, dev, a->module, requests[i].state, format, slots, &a->state,
                             error, error_size);
    }
    if (format->chroma == QUALE_CHROMA_400) gpu->planes &= 1;
    gpu->branches = choose_branches(gpu);
    if (!err) err = start_slots(gpu, slots, error, error_size);
    if (!err && gpu->profile) {
        gpu->marks = calloc(gpu->twin_count + 2, sizeof(*gpu->marks));
        gpu->stage_ms = calloc(gpu->twin_count + 1, sizeof(*gpu->stage_ms));
        if (!gpu->marks || !gpu->stage_ms) err = -ENOMEM;
        for (unsigned i = 0; i < gpu->twin_count + 2 && !err; i++)
            if (dev->api.EventCreate(&gpu->marks[i], CU_EVENT_DEFAULT) != CUDA_SUCCESS) err = -EIO;
    }
    if (err && !error[0]) snprintf(error, error_size, "%s", strerror(-err));
    return err;
}

/* ---- frames --------------------------------------------------------------- */

static int upload(GpuBackend *gpu, CudaSlot *s, const MetricFrame *frame, CUdeviceptr ref_luma,
                  CUdeviceptr dist_luma, char *error, size_t error_size)
{
    CudaDevice *dev = &gpu->dev;
    const QualePicture *pics[2] = { frame->ref, frame->dist };
    const size_t chroma_bytes = gpu->plane_bytes[1] + gpu->plane_bytes[2];
    const bool chroma = (gpu->planes & 6) != 0;
    if (picture_on_device(pics[0]) || picture_on_device(pics[1])) {
        /* The caller filled them on the device, with copies on the
         * context's default stream that the slot's (non-blocking) stream
         * does not wait for by itself: one wait covers both. */
        if (!s->caller_done)
            CU_TRY(dev, dev->api.EventCreate(&s->caller_done, CU_EVENT_DISABLE_TIMING),
                   "creating an event");
        CU_TRY(dev, dev->api.EventRecord(s->caller_done, NULL), "marking the caller's copies");
        CU_TRY(dev, dev->api.StreamWaitEvent(s->stream, s->caller_done, 0),
               "waiting for the caller's copies");
    }
    for (int i = 0; i < 2; i++) {
        const CUdeviceptr luma = i == 0 ? ref_luma : dist_luma;
        if (picture_on_device(pics[i])) {
            const CUdeviceptr src = (CUdeviceptr)(uintptr_t)pics[i]->data[0];
            CU_TRY(dev, dev->api.MemcpyDtoDAsync(luma, src, gpu->plane_bytes[0], s->stream),
                   "copying luma on the device");
            if (chroma) {
                const CUdeviceptr dst = i == 0 ? s->ref_chroma : s->dist + gpu->plane_offset[1];
                CU_TRY(dev, dev->api.MemcpyDtoDAsync(dst, src + gpu->plane_offset[1], chroma_bytes,
                                                     s->stream),
                       "copying chroma on the device");
            }
            continue;
        }
        const uint8_t *host = pics[i]->data[0];
        if (!is_pinned(gpu, pics[i])) {
            /* A picture from elsewhere: one host copy into pinned staging,
             * so that the transfer itself is a DMA like the others.  The
             * staging is made on first need: pictures from the context's
             * pool are pinned already. */
            if (!s->staging) {
                int err = cuda_alloc_host(dev, &s->staging, 2 * gpu->frame_bytes, "staging", error,
                                          error_size);
                if (err) return err;
            }
            uint8_t *staging = (uint8_t *)s->staging + (size_t)i * gpu->frame_bytes;
            memcpy(staging, host, chroma ? gpu->frame_bytes : gpu->plane_bytes[0]);
            host = staging;
        }
        CU_TRY(dev, dev->api.MemcpyHtoDAsync(luma, host, gpu->plane_bytes[0], s->stream),
               "uploading luma");
        if (chroma) {
            const CUdeviceptr dst = i == 0 ? s->ref_chroma : s->dist + gpu->plane_offset[1];
            CU_TRY(dev, dev->api.MemcpyHtoDAsync(dst, host + gpu->plane_offset[1], chroma_bytes,
                                                 s->stream),
                   "uploading chroma");
        }
    }
    return 0;
}

int cuda_submit(GpuBackend *gpu, unsigned slot, const MetricFrame *frame)
{
    char error[512] = "";
    CudaDevice *dev = &gpu->dev;
    CudaSlot *s = &gpu->slots[slot];
    const unsigned n = frame->index, R = gpu->ring_size, e = n % R;
    int err = 0;
    if (dev->api.CtxSetCurrent(dev->context) != CUDA_SUCCESS) {
        log_sink_print(&gpu->log, QUALE_LOG_ERROR, "CUDA: the context cannot be made current");
        return -EIO;
    }

    /* The old occupant of ring entry e and the frames that read it must be
     * done before it is overwritten. */
    for (unsigned j = 0; j <= gpu->history && n >= R; j++) {
        const unsigned reader = n - R + j;
        const CUresult r = dev->api.StreamWaitEvent(s->stream, gpu->ring_done[reader % R], 0);
        if (r != CUDA_SUCCESS) {
            log_sink_print(&gpu->log, QUALE_LOG_ERROR, "CUDA: waiting for frame %u failed: %s",
                        reader, cuda_error_text(&dev->api, r));
            return -EIO;
        }
    }
    if (gpu->profile && dev->api.EventRecord(gpu->marks[0], s->stream) != CUDA_SUCCESS) err = -EIO;
    const CUdeviceptr dist_luma = gpu->ring_dist ? gpu->ring_dist[e] : s->dist;
    if (!err) err = upload(gpu, s, frame, gpu->ring[e], dist_luma, error, sizeof(error));
    if (!err && gpu->profile && dev->api.EventRecord(gpu->marks[1], s->stream) != CUDA_SUCCESS)
        err = -EIO;

    CudaFrame f = { .index = n };
    const QualePicture *ref = frame->ref;
    for (unsigned p = 0; p < ref->plane_count; p++) {
        f.stride[p] = (size_t)ref->stride[p];
        f.width[p] = ref->plane_width[p];
        f.height[p] = ref->plane_height[p];
        f.dist[p] = s->dist + gpu->plane_offset[p];
    }
    f.ref[0] = gpu->ring[e];
    f.dist[0] = dist_luma;
    if (ref->plane_count == 3) {
        f.ref[1] = s->ref_chroma;
        f.ref[2] = s->ref_chroma + gpu->plane_bytes[1];
    }
    if (!err && dev->api.EventRecord(gpu->ring_uploaded[e], s->stream) != CUDA_SUCCESS) err = -EIO;
    for (unsigned k = 0; k < gpu->history && !err; k++) {
        if (n < k + 1) break;
        const unsigned prev = (n - 1 - k) % R;
        f.prev_ref[k] = gpu->ring[prev];
        if (gpu->ring_dist) f.prev_dist[k] = gpu->ring_dist[prev];
        if (dev->api.StreamWaitEvent(s->stream, gpu->ring_uploaded[prev], 0) != CUDA_SUCCESS)
            err = -EIO;
    }
    /* Fork: every branch starts after the upload and the waits above. */
    const unsigned branches = gpu->branches;
    if (!err && branches > 1 && dev->api.EventRecord(s->forked, s->stream) != CUDA_SUCCESS)
        err = -EIO;
    for (unsigned b = 1; b < branches && !err; b++)
        if (dev->api.StreamWaitEvent(s->branch[b], s->forked, 0) != CUDA_SUCCESS) err = -EIO;
    for (unsigned i = 0; i < gpu->twin_count && !err; i++) {
        ActiveTwin *a = &gpu->twins[i];
        err = cuda_twin_enqueue(a->twin, a->state, slot, &f, s->branch[i % branches], error,
                                sizeof(error));
        if (!err && gpu->profile &&
            dev->api.EventRecord(gpu->marks[i + 2], s->stream) != CUDA_SUCCESS)
            err = -EIO;
    }
    /* Join: the frame is done when every branch is. */
    for (unsigned b = 1; b < branches && !err; b++)
        if (dev->api.EventRecord(s->joined[b], s->branch[b]) != CUDA_SUCCESS ||
            dev->api.StreamWaitEvent(s->stream, s->joined[b], 0) != CUDA_SUCCESS)
            err = -EIO;
    if (!err && (dev->api.EventRecord(gpu->ring_done[e], s->stream) != CUDA_SUCCESS ||
                 dev->api.EventRecord(s->done, s->stream) != CUDA_SUCCESS))
        err = -EIO;
    if (err)
        log_sink_print(&gpu->log, QUALE_LOG_ERROR, "CUDA, frame %u: %s", n,
                    error[0] ? error : "queueing work failed");
    return err;
}

int cuda_complete(GpuBackend *gpu, unsigned slot, const MetricFrame *frame)
{
    CudaDevice *dev = &gpu->dev;
    CudaSlot *s = &gpu->slots[slot];
    CUresult r = dev->api.CtxSetCurrent(dev->context);
    if (r == CUDA_SUCCESS) r = dev->api.EventSynchronize(s->done);
    if (r != CUDA_SUCCESS) {
        log_sink_print(&gpu->log, QUALE_LOG_ERROR, "CUDA, frame %u: the device failed: %s",
                    frame->index, cuda_error_text(&dev->api, r));
        return -EIO;
    }
    if (gpu->profile) {
        for (unsigned i = 0; i <= gpu->twin_count; i++) {
            float ms = 0;
            if (dev->api.EventElapsedTime(&ms, gpu->marks[i], gpu->marks[i + 1]) == CUDA_SUCCESS)
                gpu->stage_ms[i] += ms;
        }
        gpu->profiled_frames++;
    }
    for (unsigned i = 0; i < gpu->twin_count; i++) {
        ActiveTwin *a = &gpu->twins[i];
        int err = cuda_twin_collect(a->twin, a->state, slot, frame, a->sink);
        if (err) return err;
    }
    return 0;
}

const GpuOps gpu_cuda_ops = {
    .kind = QUALE_BACKEND_CUDA,
    .device = {
        CUDA_BACKEND_DEVICE_OPS,
        .list_devices = cuda_list_devices,
        .open = cuda_open,
        /* CUDA's own: the caller's contexts and decoders' frames */
        .adopt = cuda_adopt,
        .copy_in = cuda_copy_in,
        .native_context = cuda_native_context,
        .import_frame = cuda_import_frame,
        .import_release = cuda_import_release,
    },
    .twins = CUDA_BACKEND_TWIN_OPS(cuda_twin_built),
};
