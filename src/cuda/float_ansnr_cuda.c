/*
 * float_ansnr on CUDA: the device filters both pictures and sums each row's
 * squares in float, bit for bit as the C reference (float_ansnr.cu); the
 * host reads back the rows' sums, adds them in float in row order, as the
 * C reference does, and finishes through its own float_ansnr_write()
 * (src/metrics/float_ansnr.h).
 *
 * Per 1080p frame: one launch (1080 blocks of 128 threads, 4 KB of shared
 * memory each), both luma planes read (4 MB at 8 bits; each sample reached
 * by 3 or 5 rows' blocks, through the caches), 2 x 1080 floats (8.4 KB)
 * read back.
 *
 * The launch (kernel, grid, arguments) and the step from the rows' sums to
 * the keys are functions without side effects, so that
 * tests/test_float_simple_cuda_host.cpp drives the kernel's element code
 * on the CPU through exactly what enqueue() launches and collect() writes.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twin.h"
#include "float_ansnr_args.h"
#include "metrics/float_ansnr.h"

extern const unsigned char cuda_module_float_ansnr[];


/* the kernels' launch bounds */
enum { THREADS = FANSNR_THREADS };

/* Not static: the host test calls them (it declares them itself). */
const char *float_ansnr_cuda_launch(const QualeVideoFormat *format, uint64_t ref, uint64_t dist,
                                    uint64_t stride, uint64_t row_sums, unsigned launch[3],
                                    void *args);
int float_ansnr_cuda_finish(const FloatAnsnrState *s, const float *row_sums,
                            const MetricFrame *frame, FeatureSink *sink);

/* The frame's launch: kernel name, grid (x, y, threads) and arguments
 * (args: a struct FloatAnsnrArgs); row_sums holds 2 x height floats. */
const char *float_ansnr_cuda_launch(const QualeVideoFormat *format, uint64_t ref, uint64_t dist,
                                    uint64_t stride, uint64_t row_sums, unsigned launch[3],
                                    void *args)
{
    FloatAnsnrArgs a;
    memset(&a, 0, sizeof(a));
    a.ref = ref;
    a.dist = dist;
    a.stride = stride;
    a.row_sums = row_sums;
    a.w = (int)format->width;
    a.h = (int)format->height;
    /* exact: a power of two */
    a.inv_scaler = 1.0f / (float)(1u << (format->bitdepth - 8));
    memcpy(args, &a, sizeof(a));
    launch[0] = format->height;
    launch[1] = 1;
    launch[2] = THREADS;
    return format->bitdepth > 8 ? "float_ansnr_16bit" : "float_ansnr_8bit";
}

/* collect(): the rows' sums added as float_ansnr.c's extract() adds them,
 * then its float_ansnr_write() (float_ansnr_write_rows). */
int float_ansnr_cuda_finish(const FloatAnsnrState *s, const float *row_sums,
                            const MetricFrame *frame, FeatureSink *sink)
{
    int err = float_ansnr_check(&frame->ref->format, sink);
    if (err) return err;
    return float_ansnr_write_rows(s, sink, frame->index, row_sums);
}

/* ---- the twin ------------------------------------------------------------- */

typedef struct FloatAnsnrTwin {
    const CudaDevice *dev;
    const FloatAnsnrState *metric;
    QualeVideoFormat format;
    CUfunction kernel;
    size_t slot_floats;   /* 2 x height */
    CUdeviceptr row_sums; /* slots x slot_floats */
    float *host;          /* pinned, same layout */
    size_t bytes;
} FloatAnsnrTwin;

static void float_ansnr_cuda_close(void *twin)
{
    FloatAnsnrTwin *t = twin;
    if (!t) return;
    cuda_free(t->dev, t->row_sums, t->bytes);
    if (t->host) t->dev->api.MemFreeHost(t->host);
    free(t);
}

static int float_ansnr_cuda_init(const CudaDevice *dev, CUmodule module, const void *metric_state,
                                 const QualeVideoFormat *format, unsigned slots, void **out,
                                 char *error, size_t error_size)
{
    int err = float_ansnr_check_size(format->width, format->height, error, error_size);
    if (err) return err;
    FloatAnsnrTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->format = *format;
    t->slot_floats = 2 * (size_t)format->height;
    t->bytes = (size_t)slots * t->slot_floats * sizeof(float);
    unsigned launch[3];
    FloatAnsnrArgs args;
    const char *name = float_ansnr_cuda_launch(format, 0, 0, 0, 0, launch, &args);
    err = cuda_function(dev, module, name, &t->kernel, error, error_size);
    if (!err) err = cuda_alloc(dev, &t->row_sums, t->bytes, "float_ansnr row sums", error,
                               error_size);
    if (!err) err = cuda_alloc_host(dev, (void **)&t->host, t->bytes, "float_ansnr readback",
                                    error, error_size);
    if (err) {
        float_ansnr_cuda_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int float_ansnr_cuda_enqueue(void *twin, unsigned slot, const CudaFrame *frame,
                                    CUstream stream, char *error, size_t error_size)
{
    FloatAnsnrTwin *t = twin;
    const size_t offset = (size_t)slot * t->slot_floats;
    const CUdeviceptr row_sums = t->row_sums + offset * sizeof(float);
    unsigned launch[3];
    FloatAnsnrArgs args;
    const char *name = float_ansnr_cuda_launch(&t->format, frame->ref[0], frame->dist[0],
                                               frame->stride[0], row_sums, launch, &args);
    void *params[] = { &args };
    int err = cuda_launch(t->dev, t->kernel, name, launch[0], launch[1], launch[2], 0, stream,
                          params, error, error_size);
    if (err) return err;
    return cuda_read_back(t->dev, t->host + offset, row_sums, t->slot_floats * sizeof(float),
                          stream, "float_ansnr sums", error, error_size);
}

static int float_ansnr_cuda_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                    FeatureSink *sink)
{
    FloatAnsnrTwin *t = twin;
    return float_ansnr_cuda_finish(t->metric, t->host + (size_t)slot * t->slot_floats, frame,
                                   sink);
}

const CudaTwin cuda_twin_float_ansnr = {
    .metric = &metric_float_ansnr,
    .module_image = cuda_module_float_ansnr,
    .init = float_ansnr_cuda_init,
    .enqueue = float_ansnr_cuda_enqueue,
    .collect = float_ansnr_cuda_collect,
    .close = float_ansnr_cuda_close,
};
