/*
 * The CUDA backend over a runtime: CUDA's driver (gpu_cuda_ops, in
 * cuda_backend.c) or HIP's runtime through the same table of functions
 * (gpu_hip_ops, src/gpu/hip/hip_backend.c), with the same kernel sources
 * built for each.  What the HIP backend takes from the CUDA one.
 */
#ifndef QUALE_SRC_GPU_CUDA_CUDA_BACKEND_H
#define QUALE_SRC_GPU_CUDA_CUDA_BACKEND_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "cuda_api.h"
#include "cuda_primitives.h"
#include "cuda_twin.h"
#include "log.h"
#include "picture_pool.h"
#include "gpu/gpu.h"

/* A runtime's library is loaded once per process and kept (as the CUDA
 * runtime does): loading and unloading it with every context costs time
 * and, with some drivers, static TLS that a process runs out of.  A
 * failure is remembered and repeated. */
typedef struct CudaRuntime {
    const char *name; /* in messages: "CUDA", "HIP" */
    enum QualeBackend kind;
    int (*load)(CudaApi *api, char *error, size_t error_size);
    /* The runtime's image of a kernel module from the CUDA fatbin's (NULL:
     * the fatbin itself); NULL where this build has none. */
    const unsigned char *(*module_image)(const unsigned char *cuda_image);
    pthread_mutex_t lock;
    bool tried;
    int status;
    char error[512];
    CudaApi api;
    /* The devices whose primary context this process keeps retained
     * (gpu_keep_devices()), by ordinal: a bit each. */
    unsigned long long kept_contexts;
} CudaRuntime;

/* A kernel module's image for the runtime (NULL where this build has
 * none). */
static inline const unsigned char *module_image(const CudaRuntime *rt,
                                                const unsigned char *cuda_image)
{
    return rt->module_image ? rt->module_image(cuda_image) : cuda_image;
}

int cuda_backend_list_devices(CudaRuntime *rt, QualeDeviceInfo *devices, unsigned max,
                              unsigned *count, char *error, size_t error_size);
/* Whether the build has a twin of the metric with kernels for the runtime. */
bool cuda_backend_twin_built(const CudaRuntime *rt, const Metric *metric);
/* Opens the device (external: a context of the caller's, a CUcontext;
 * else ordinal's primary context). */
int cuda_backend_open(const LogSink *log, CudaRuntime *rt, int ordinal, void *external,
                      GpuBackend **out, char *error, size_t error_size);

/* The backend: its device, memory, slots of frames in flight and twins
 * (cuda_backend.c; its pictures in device memory: cuda_pictures.c). */
/* The most streams one frame's twins are spread over. */
#define CUDA_MAX_BRANCHES 16

typedef struct CudaSlot {
    CUstream stream;
    CUevent done;
    /* The frame's twins fork from the stream after the upload onto
     * branch[0] (the stream itself) ... branch[branches - 1] and join it
     * again before done: independent twins of one frame run side by side
     * instead of one after another. */
    CUstream branch[CUDA_MAX_BRANCHES];
    CUevent forked, joined[CUDA_MAX_BRANCHES];
    CUdeviceptr ref_chroma, dist;  /* device planes of the frame */
    void *staging;                 /* pinned copy of unpinned pictures */
    CUevent caller_done;           /* the caller's copies into device pictures */
} CudaSlot;

typedef struct ActiveTwin {
    const CudaTwin *twin;
    void *state;
    FeatureSink *sink;
    CUmodule module;
} ActiveTwin;

/* A block of pinned host memory: mapped by us and registered with the
 * driver (mapped bytes > 0), or the driver's own allocation. */
typedef struct PinnedBlock {
    void *start;
    size_t mapped;
} PinnedBlock;

struct GpuBackend {
    LogSink log; /* the context's, copied: a backend may outlive it in a picture pool */
    const CudaRuntime *runtime; /* CUDA's driver or HIP's runtime */
    CudaDevice dev;
    atomic_uint refs; /* the context, and the picture pools' allocators */
    PictureAllocator host;
    PictureAllocator device; /* pictures the caller fills on the device */
    pthread_mutex_t pinned_lock;
    PinnedBlock *pinned; /* host blocks we pinned, to tell pinned pictures apart */
    size_t pinned_count, pinned_capacity;

    QualeVideoFormat format;
    unsigned planes, history;
    size_t plane_offset[3], plane_bytes[3], frame_bytes;
    CudaSlot *slots;
    unsigned slot_count;
    unsigned branches; /* streams per frame */
    CUdeviceptr *ring;
    CUdeviceptr *ring_dist; /* the distorted lumas too, for twins that read them */
    bool dist_history;
    CUevent *ring_uploaded, *ring_done;
    unsigned ring_size;
    ActiveTwin *twins;
    unsigned twin_count;

    /* picture_import.cu, loaded at the first decoded frame */
    pthread_mutex_t import_lock;
    CUmodule import_module;
    CUfunction import_luma, import_chroma, scale_rows, scale_columns;
    CUevent copied; /* quale_device_picture_copy()'s copies on a caller's stream */

    /* QUALE_CUDA_PROFILE=1: one frame at a time, timed on the device
     * between events around the upload and each twin; the means are logged
     * when the run stops.  For finding where the GPU time goes. */
    bool profile;
    CUevent *marks;   /* twin_count + 2: start, after upload, after each twin */
    double *stage_ms; /* twin_count + 1 sums: upload, then each twin */
    unsigned profiled_frames;
};

/* The operations that are the same over either runtime. */
void cuda_describe(const GpuBackend *gpu, QualeDeviceInfo *info);
void cuda_close(GpuBackend *gpu);
const PictureAllocator *cuda_host_allocator(const GpuBackend *gpu);
const PictureAllocator *cuda_device_allocator(GpuBackend *gpu);
int cuda_download(GpuBackend *gpu, QualePicture *host, const QualePicture *device, char *error,
                  size_t error_size);
bool cuda_has_twin(const GpuBackend *gpu, const Metric *metric, const void *state);
int cuda_start(GpuBackend *gpu, const QualeVideoFormat *format, const GpuTwinRequest *twins,
               unsigned twin_count, unsigned *slots, char *error, size_t error_size);
int cuda_submit(GpuBackend *gpu, unsigned slot, const MetricFrame *frame);
int cuda_complete(GpuBackend *gpu, unsigned slot, const MetricFrame *frame);

/* The GpuOps of the backend over a runtime (gpu_cuda_ops, gpu_hip_ops):
 * the device operations that are the same over either, and the twins'
 * operations, `built` saying which twins the runtime's build has. */
#define CUDA_BACKEND_DEVICE_OPS                                                    \
    .describe = cuda_describe, .close = cuda_close, .host_allocator = cuda_host_allocator, \
    .device_allocator = cuda_device_allocator, .download = cuda_download
#define CUDA_BACKEND_TWIN_OPS(built_)                                              \
    {                                                                              \
        .built = (built_), .has_twin = cuda_has_twin, .start = cuda_start,         \
        .submit = cuda_submit, .complete = cuda_complete,                          \
    }

/* cuda_pictures.c: device memory for the caller's pictures, the context a
 * decoder works in, and decoded frames imported into device pictures. */
void *device_picture_alloc(void *opaque, size_t size);
void device_picture_free(void *opaque, void *memory);
int cuda_copy_in(GpuBackend *gpu, QualePicture *dst, const QualeDevicePlanes *src, void *stream,
                 bool stream_ordered, char *error, size_t error_size);
void *cuda_native_context(const GpuBackend *gpu);
void cuda_import_release(GpuBackend *gpu, void *state);
int cuda_import_frame(GpuBackend *gpu, const GpuFrameImport *src, QualePicture *dst,
                      char *error, size_t error_size);

#endif /* QUALE_SRC_GPU_CUDA_CUDA_BACKEND_H */
