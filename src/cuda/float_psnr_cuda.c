/*
 * float_psnr on CUDA: the device sums the frame's noise as an exact integer
 * (float_psnr.cu), in per-block partials; the host adds them and finishes
 * through the C reference's own steps (float_psnr_noise, float_psnr_write
 * of src/metrics/float_psnr.h).
 *
 * Per 1080p frame: one launch (270 blocks of 4 rows), both luma planes read
 * once (4 MB at 8 bits), 270 partials (2 KB) read back.
 *
 * The launch (kernel, grid, arguments) and the step from the partials to
 * the key are functions without side effects, so that
 * tests/test_float_simple_cuda_host.cpp drives the kernel's element code
 * on the CPU through exactly what enqueue() launches and collect() writes.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twin.h"
#include "float_psnr_args.h"
#include "metrics/float_psnr.h"

extern const unsigned char cuda_module_float_psnr[];


/* the kernels' launch bounds */
enum { THREADS = FPSNR_THREADS, ROWS_PER_BLOCK = 4 };

/* Not static: the host test calls them (it declares them itself). */
unsigned float_psnr_cuda_blocks(unsigned height);
const char *float_psnr_cuda_launch(const FloatPsnrState *s, const QualeVideoFormat *format,
                                   uint64_t ref, uint64_t dist, uint64_t stride,
                                   uint64_t partials, unsigned launch[3], void *args);
int float_psnr_cuda_finish(const FloatPsnrState *s, const uint64_t *partials, unsigned blocks,
                           const MetricFrame *frame, FeatureSink *sink);

unsigned float_psnr_cuda_blocks(unsigned height)
{
    return (height + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
}

/* The frame's launch: kernel name, grid (x, y, threads) and arguments
 * (args: a struct FloatPsnrArgs). */
const char *float_psnr_cuda_launch(const FloatPsnrState *s, const QualeVideoFormat *format,
                                   uint64_t ref, uint64_t dist, uint64_t stride,
                                   uint64_t partials, unsigned launch[3], void *args)
{
    FloatPsnrArgs a;
    memset(&a, 0, sizeof(a));
    a.ref = ref;
    a.dist = dist;
    a.stride = stride;
    a.partials = partials;
    a.w = format->width;
    a.h = format->height;
    a.rows = ROWS_PER_BLOCK;
    a.float_squares = !s->exact_sums;
    a.scaler = s->scaler;
    memcpy(args, &a, sizeof(a));
    launch[0] = float_psnr_cuda_blocks(format->height);
    launch[1] = 1;
    launch[2] = THREADS;
    return format->bitdepth > 8 ? "float_psnr_16bit" : "float_psnr_8bit";
}

/* collect(): the partials' sum, then the C reference's steps. */
int float_psnr_cuda_finish(const FloatPsnrState *s, const uint64_t *partials, unsigned blocks,
                           const MetricFrame *frame, FeatureSink *sink)
{
    int err = float_psnr_check(&frame->ref->format, sink);
    if (err) return err;
    uint64_t units = 0;
    for (unsigned b = 0; b < blocks; b++) units += partials[b];
    return float_psnr_write(s, sink, frame, float_psnr_noise(s, units));
}

/* ---- the twin ------------------------------------------------------------- */

typedef struct FloatPsnrTwin {
    const CudaDevice *dev;
    const FloatPsnrState *metric;
    QualeVideoFormat format;
    CUfunction kernel;
    unsigned blocks;
    CUdeviceptr partials; /* slots x blocks */
    uint64_t *host;       /* pinned, same layout */
    size_t bytes;
} FloatPsnrTwin;

static void float_psnr_cuda_close(void *twin)
{
    FloatPsnrTwin *t = twin;
    if (!t) return;
    cuda_free(t->dev, t->partials, t->bytes);
    if (t->host) t->dev->api.MemFreeHost(t->host);
    free(t);
}

static int float_psnr_cuda_init(const CudaDevice *dev, CUmodule module, const void *metric_state,
                                const QualeVideoFormat *format, unsigned slots, void **out,
                                char *error, size_t error_size)
{
    FloatPsnrTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->format = *format;
    t->blocks = float_psnr_cuda_blocks(format->height);
    t->bytes = (size_t)slots * t->blocks * sizeof(uint64_t);
    unsigned launch[3];
    FloatPsnrArgs args;
    const char *name = float_psnr_cuda_launch(t->metric, format, 0, 0, 0, 0, launch, &args);
    int err = cuda_function(dev, module, name, &t->kernel, error, error_size);
    if (!err) err = cuda_alloc(dev, &t->partials, t->bytes, "float_psnr partial sums", error,
                               error_size);
    if (!err) err = cuda_alloc_host(dev, (void **)&t->host, t->bytes, "float_psnr readback",
                                    error, error_size);
    if (err) {
        float_psnr_cuda_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int float_psnr_cuda_enqueue(void *twin, unsigned slot, const CudaFrame *frame,
                                   CUstream stream, char *error, size_t error_size)
{
    FloatPsnrTwin *t = twin;
    const size_t offset = (size_t)slot * t->blocks;
    const CUdeviceptr partials = t->partials + offset * sizeof(uint64_t);
    unsigned launch[3];
    FloatPsnrArgs args;
    const char *name = float_psnr_cuda_launch(t->metric, &t->format, frame->ref[0],
                                              frame->dist[0], frame->stride[0], partials, launch,
                                              &args);
    void *params[] = { &args };
    int err = cuda_launch(t->dev, t->kernel, name, launch[0], launch[1], launch[2], 0, stream,
                          params, error, error_size);
    if (err) return err;
    return cuda_read_back(t->dev, t->host + offset, partials, t->blocks * sizeof(uint64_t), stream,
                          "float_psnr sums", error, error_size);
}

static int float_psnr_cuda_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                   FeatureSink *sink)
{
    FloatPsnrTwin *t = twin;
    return float_psnr_cuda_finish(t->metric, t->host + (size_t)slot * t->blocks, t->blocks, frame,
                                  sink);
}

const CudaTwin cuda_twin_float_psnr = {
    .metric = &metric_float_psnr,
    .module_image = cuda_module_float_psnr,
    .init = float_psnr_cuda_init,
    .enqueue = float_psnr_cuda_enqueue,
    .collect = float_psnr_cuda_collect,
    .close = float_psnr_cuda_close,
};
