/*
 * What the context sees of a GPU backend: CUDA (src/gpu/cuda/), HIP
 * (src/gpu/hip/: the CUDA backend's kernels and code over HIP's runtime)
 * and Vulkan (src/gpu/vulkan/).  The same table of operations for all of
 * them, the device's apart from the twins'; a backend that is not built
 * provides a table that says why (`unavailable`).
 *
 * Frames flow through slots: each of the `slots` frames in flight owns one
 * (its device buffers, its stream or command buffer, its readback memory).
 *   submit()   on the caller's thread, in frame order: upload the frame once
 *              and queue every twin's kernels on the slot.
 *   complete() on a worker thread: wait for the slot, turn the partial sums
 *              read back into feature values, and write them.
 * Metrics without a twin run on the CPU in the same frame job.
 */
#ifndef QUALE_SRC_GPU_H
#define QUALE_SRC_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metric.h"
#include "picture_pool.h"
#include "quale/quale.h"

typedef struct GpuBackend GpuBackend;

/* One metric instance handed to the GPU: its descriptor, its state after
 * init (options and key ids), and where its values go. */
typedef struct GpuTwinRequest {
    const Metric *metric;
    const void *state;
    FeatureSink *sink;
} GpuTwinRequest;

struct ScalePlan;

/* A decoded semi-planar frame in device memory: the luma plane, then the
 * chroma samples in (Cb, Cr) pairs, each of `bytes` bytes with the sample
 * in its top bits (shift: how far to move it down).
 *
 * With a scale plan (src/input/scale.h) the frame is resampled on its way
 * into the picture, and its samples moved up by `deepen` bits after; the
 * backend keeps its copy of the plan's tables in *state (NULL at the first
 * frame), given back with import_release(). */
typedef struct GpuFrameImport {
    const void *planes[2];
    int pitch[2]; /* bytes */
    unsigned bytes, shift;
    const struct ScalePlan *scale;
    unsigned deepen;
    void **state;
} GpuFrameImport;

/* What a decoder that leaves its frames in device memory is handed (the
 * context's backend, behind its operations; never the context):
 * native_context() is the context the decoder works in, import_frame()
 * writes a decoded frame into a device picture, import_release() gives
 * back what a scaled import kept. */
typedef struct GpuImporter {
    const struct GpuOps *ops;
    GpuBackend *gpu;
} GpuImporter;

/* The device: found, opened, its memory, the frames decoders leave in it. */
typedef struct GpuDeviceOps {
    /* Lists the devices (quale_list_devices()), and describes the one a
     * backend opened. */
    int (*list_devices)(QualeDeviceInfo *devices, unsigned max, unsigned *count, char *error,
                        size_t error_size);
    void (*describe)(const GpuBackend *gpu, QualeDeviceInfo *info);

    /* Opens the device (index -1: the first); the backend logs to a copy
     * of log.  On failure error holds the reason, in one line; the caller
     * decides how loudly to say it. */
    int (*open)(const LogSink *log, int device, GpuBackend **gpu, char *error,
                size_t error_size);
    void (*close)(GpuBackend *gpu);

    /* Host memory the device reads directly; NULL for plain memory. */
    const PictureAllocator *(*host_allocator)(const GpuBackend *gpu);

    /* Pictures in device memory (CUDA only; NULL elsewhere).  adopt()
     * opens the backend in a context of the caller's (a CUcontext; NULL
     * is the default device's primary context, as open() with -1).
     * device_allocator() gives memory for pictures the caller fills on the
     * device; each call takes a reference to the backend that the
     * allocator's release() gives back.  download() copies a device
     * picture into a host picture of the same format and layout. */
    int (*adopt)(const LogSink *log, void *native_context, GpuBackend **gpu, char *error,
                 size_t error_size);
    const PictureAllocator *(*device_allocator)(GpuBackend *gpu);
    int (*download)(GpuBackend *gpu, QualePicture *host, const QualePicture *device, char *error,
                    size_t error_size);
    /* Copies the caller's planes in device memory into a device picture,
     * on the caller's stream, ahead of the backend's uploads, and returns
     * once they are copied, or queued where stream_ordered
     * (quale_device_picture_copy()). */
    int (*copy_in)(GpuBackend *gpu, QualePicture *dst, const QualeDevicePlanes *src,
                   void *stream, bool stream_ordered, char *error, size_t error_size);

    /* Frames a decoder leaves in device memory of the backend's context
     * (CUDA only; NULL elsewhere).  native_context() is that context (a
     * CUcontext), which a decoder (FFmpeg's NVDEC) is given to work in.
     * import_frame() writes a semi-planar frame (NV12, P010, P016) into a
     * device picture (of the frame's size, or the plan's), on the
     * context's default stream, and returns once it is written. */
    void *(*native_context)(const GpuBackend *gpu);
    int (*import_frame)(GpuBackend *gpu, const GpuFrameImport *src, QualePicture *dst,
                        char *error, size_t error_size);
    void (*import_release)(GpuBackend *gpu, void *state);
} GpuDeviceOps;

/* The metrics' twins: which there are, and the frames through them. */
typedef struct GpuTwinOps {
    /* Whether this build has a twin of the metric (for --list-features). */
    bool (*built)(const Metric *metric);

    /* Whether a twin exists for this metric with the options in state. */
    bool (*has_twin)(const GpuBackend *gpu, const Metric *metric, const void *state);

    /* Once the format is known: set up every twin and the slots.  *slots
     * is the number of frames the context would keep in flight; a backend
     * whose device cannot hold that many lowers it.  On failure error holds
     * the reason (the caller decides how loudly to say it: with --backend
     * auto it falls back to the CPU). */
    int (*start)(GpuBackend *gpu, const QualeVideoFormat *format,
                 const GpuTwinRequest *twins, unsigned twin_count, unsigned *slots,
                 char *error, size_t error_size);

    int (*submit)(GpuBackend *gpu, unsigned slot, const MetricFrame *frame);
    int (*complete)(GpuBackend *gpu, unsigned slot, const MetricFrame *frame);
} GpuTwinOps;

typedef struct GpuOps {
    enum QualeBackend kind;
    /* Why the backend is missing from this build; NULL when it is built
     * (and every operation is then set, but those said to be CUDA's). */
    const char *unavailable;
    GpuDeviceOps device;
    GpuTwinOps twins;
} GpuOps;

extern const GpuOps gpu_cuda_ops;
extern const GpuOps gpu_hip_ops;
extern const GpuOps gpu_vulkan_ops;

/* The table for a backend kind, NULL for the CPU. */
const GpuOps *gpu_ops(enum QualeBackend kind);

/* Whether a backend keeps a GPU's device (Vulkan) or primary context
 * (CUDA) open after its last context, for the process's next one: the
 * driver's open and close cost about half a second on an H200
 * (docs/benchmarks.md, "Start of one process"), which a program opening
 * contexts one after another (FFmpeg's filter for each stream, a batch,
 * the tool's one run, whose exit then skips the close) would otherwise pay
 * each time.  QUALE_KEEP_DEVICES=0 closes them with their last context. */
static inline bool gpu_keep_devices(void)
{
    const char *keep = getenv("QUALE_KEEP_DEVICES");
    return !keep || strcmp(keep, "0");
}

#endif /* QUALE_SRC_GPU_H */
