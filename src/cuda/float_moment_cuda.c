/*
 * float_moment on CUDA: the device sums each picture's samples and squares
 * as exact integers (float_moment.cu), in per-block partials; the host adds
 * them and finishes through the C reference's own steps (float_moment_sums,
 * float_moment_write of src/metrics/float_moment.h).
 *
 * Per 1080p frame: one launch (270 x 2 blocks of 4 rows), both luma planes
 * read once (4 MB at 8 bits), 1080 partials (8.4 KB) read back.
 *
 * The launch (kernel, grid, arguments) and the step from the partials to
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
#include "float_moment_args.h"
#include "metrics/float_moment.h"

extern const unsigned char cuda_module_float_moment[];


/* THREADS: the kernels' launch bounds; PARTIALS per block column: 2
 * pictures x (first, second). */
enum { THREADS = FMOMENT_THREADS, ROWS_PER_BLOCK = 4, PARTIALS = 4 };

/* Not static: the host test calls them (it declares them itself). */
unsigned float_moment_cuda_blocks(unsigned height);
const char *float_moment_cuda_launch(const FloatMomentState *s, const QualeVideoFormat *format,
                                     uint64_t ref, uint64_t dist, uint64_t stride,
                                     uint64_t partials, unsigned launch[3], void *args);
int float_moment_cuda_finish(const FloatMomentState *s, const uint64_t *partials,
                             unsigned blocks, const MetricFrame *frame, FeatureSink *sink);

unsigned float_moment_cuda_blocks(unsigned height)
{
    return (height + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
}

/* The frame's launch: kernel name, grid (x, y, threads) and arguments
 * (args: a struct FloatMomentArgs); partials holds PARTIALS x blocks. */
const char *float_moment_cuda_launch(const FloatMomentState *s, const QualeVideoFormat *format,
                                     uint64_t ref, uint64_t dist, uint64_t stride,
                                     uint64_t partials, unsigned launch[3], void *args)
{
    FloatMomentArgs a;
    memset(&a, 0, sizeof(a));
    a.pic[0] = ref;
    a.pic[1] = dist;
    a.stride = stride;
    a.partials = partials;
    a.w = format->width;
    a.h = format->height;
    a.rows = ROWS_PER_BLOCK;
    a.float_squares = !s->exact_sums;
    a.scaler = s->scaler;
    memcpy(args, &a, sizeof(a));
    launch[0] = float_moment_cuda_blocks(format->height);
    launch[1] = 2;
    launch[2] = THREADS;
    return format->bitdepth > 8 ? "float_moment_16bit" : "float_moment_8bit";
}

/* collect(): the partials' sums ([picture][first, second][block]), then the
 * C reference's steps. */
int float_moment_cuda_finish(const FloatMomentState *s, const uint64_t *partials,
                             unsigned blocks, const MetricFrame *frame, FeatureSink *sink)
{
    int err = float_moment_check(&frame->ref->format, sink);
    if (err) return err;
    uint64_t sum[PARTIALS] = { 0, 0, 0, 0 };
    for (unsigned k = 0; k < PARTIALS; k++)
        for (unsigned b = 0; b < blocks; b++) sum[k] += partials[(size_t)k * blocks + b];
    return float_moment_write(s, sink, frame, float_moment_sums(s, sum[0], sum[1]),
                              float_moment_sums(s, sum[2], sum[3]));
}

/* ---- the twin ------------------------------------------------------------- */

typedef struct FloatMomentTwin {
    const CudaDevice *dev;
    const FloatMomentState *metric;
    QualeVideoFormat format;
    CUfunction kernel;
    unsigned blocks;
    CUdeviceptr partials; /* slots x PARTIALS x blocks */
    uint64_t *host;       /* pinned, same layout */
    size_t bytes;
} FloatMomentTwin;

static void float_moment_cuda_close(void *twin)
{
    FloatMomentTwin *t = twin;
    if (!t) return;
    cuda_free(t->dev, t->partials, t->bytes);
    if (t->host) t->dev->api.MemFreeHost(t->host);
    free(t);
}

static int float_moment_cuda_init(const CudaDevice *dev, CUmodule module,
                                  const void *metric_state, const QualeVideoFormat *format,
                                  unsigned slots, void **out, char *error, size_t error_size)
{
    FloatMomentTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->format = *format;
    t->blocks = float_moment_cuda_blocks(format->height);
    t->bytes = (size_t)slots * PARTIALS * t->blocks * sizeof(uint64_t);
    unsigned launch[3];
    FloatMomentArgs args;
    const char *name = float_moment_cuda_launch(t->metric, format, 0, 0, 0, 0, launch, &args);
    int err = cuda_function(dev, module, name, &t->kernel, error, error_size);
    if (!err) err = cuda_alloc(dev, &t->partials, t->bytes, "float_moment partial sums", error,
                               error_size);
    if (!err) err = cuda_alloc_host(dev, (void **)&t->host, t->bytes, "float_moment readback",
                                    error, error_size);
    if (err) {
        float_moment_cuda_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int float_moment_cuda_enqueue(void *twin, unsigned slot, const CudaFrame *frame,
                                     CUstream stream, char *error, size_t error_size)
{
    FloatMomentTwin *t = twin;
    const size_t offset = (size_t)slot * PARTIALS * t->blocks;
    const CUdeviceptr partials = t->partials + offset * sizeof(uint64_t);
    unsigned launch[3];
    FloatMomentArgs args;
    const char *name = float_moment_cuda_launch(t->metric, &t->format, frame->ref[0],
                                                frame->dist[0], frame->stride[0], partials,
                                                launch, &args);
    void *params[] = { &args };
    int err = cuda_launch(t->dev, t->kernel, name, launch[0], launch[1], launch[2], 0, stream,
                          params, error, error_size);
    if (err) return err;
    return cuda_read_back(t->dev, t->host + offset, partials,
                          (size_t)PARTIALS * t->blocks * sizeof(uint64_t), stream,
                          "float_moment sums", error, error_size);
}

static int float_moment_cuda_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                     FeatureSink *sink)
{
    FloatMomentTwin *t = twin;
    return float_moment_cuda_finish(t->metric, t->host + (size_t)slot * PARTIALS * t->blocks,
                                    t->blocks, frame, sink);
}

const CudaTwin cuda_twin_float_moment = {
    .metric = &metric_float_moment,
    .module_image = cuda_module_float_moment,
    .init = float_moment_cuda_init,
    .enqueue = float_moment_cuda_enqueue,
    .collect = float_moment_cuda_collect,
    .close = float_moment_cuda_close,
};
