/* PSNR on CUDA: the device sums squared errors, the host finishes exactly
 * as the C reference does (psnr_write_plane). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twin.h"
#include "psnr_args.h"
#include "metrics/psnr.h"

extern const unsigned char cuda_module_psnr[];

enum { ROWS_PER_BLOCK = 8, THREADS = 256 };

typedef struct PsnrTwin {
    const CudaDevice *dev;
    const PsnrState *metric;
    CUfunction kernel;
    unsigned blocks; /* per plane */
    CUdeviceptr partials;       /* slots * 3 * blocks */
    size_t bytes;
    unsigned long long *host;   /* pinned, same layout */
    unsigned slots;
} PsnrTwin;

static unsigned psnr_cuda_planes(const void *state)
{
    const PsnrState *s = state;
    return s->planes == 3 ? 7u : 1u;
}

static void psnr_cuda_close(void *twin)
{
    PsnrTwin *t = twin;
    if (!t) return;
    cuda_free(t->dev, t->partials, t->bytes);
    if (t->host) t->dev->api.MemFreeHost(t->host);
    free(t);
}

static int psnr_cuda_init(const CudaDevice *dev, CUmodule module, const void *metric_state,
                          const QualeVideoFormat *format, unsigned slots, void **out,
                          char *error, size_t error_size)
{
    PsnrTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->slots = slots;
    t->blocks = (format->height + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    const size_t bytes = t->bytes = (size_t)slots * 3 * t->blocks * sizeof(unsigned long long);
    int err = cuda_function(dev, module, format->bitdepth > 8 ? "psnr_sse_16bit" : "psnr_sse_8bit",
                            &t->kernel, error, error_size);
    if (!err) err = cuda_alloc(dev, &t->partials, bytes, "PSNR partial sums", error, error_size);
    if (!err) err = cuda_alloc_host(dev, (void **)&t->host, bytes, "PSNR readback", error, error_size);
    if (err) {
        psnr_cuda_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int psnr_cuda_enqueue(void *twin, unsigned slot, const CudaFrame *frame, CUstream stream,
                             char *error, size_t error_size)
{
    PsnrTwin *t = twin;
    PsnrPlanes planes;
    memset(&planes, 0, sizeof(planes));
    for (unsigned p = 0; p < t->metric->planes; p++) {
        planes.ref[p] = frame->ref[p];
        planes.dist[p] = frame->dist[p];
        planes.stride[p] = frame->stride[p];
        planes.width[p] = frame->width[p];
        planes.height[p] = frame->height[p];
    }
    const size_t offset = (size_t)slot * 3 * t->blocks;
    CUdeviceptr partials = t->partials + offset * sizeof(unsigned long long);
    unsigned rows = ROWS_PER_BLOCK;
    void *params[] = { &planes, &rows, &partials };
    int err = cuda_launch(t->dev, t->kernel, "psnr_sse", t->blocks, t->metric->planes, THREADS, 0,
                          stream, params, error, error_size);
    if (err) return err;
    return cuda_read_back(t->dev, t->host + offset, partials,
                          (size_t)t->metric->planes * t->blocks * sizeof(unsigned long long),
                          stream, "PSNR sums", error, error_size);
}

static int psnr_cuda_collect(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink)
{
    PsnrTwin *t = twin;
    const unsigned long long *partials = t->host + (size_t)slot * 3 * t->blocks;
    for (unsigned p = 0; p < t->metric->planes; p++) {
        /* Blocks past a chroma plane's height wrote zero. */
        uint64_t sse = 0;
        for (unsigned b = 0; b < t->blocks; b++) sse += partials[p * t->blocks + b];
        int err = psnr_write_plane(t->metric, sink, frame, p, sse);
        if (err) return err;
    }
    return 0;
}

const CudaTwin cuda_twin_psnr = {
    .metric = &metric_psnr,
    .module_image = cuda_module_psnr,
    .planes = psnr_cuda_planes,
    .init = psnr_cuda_init,
    .enqueue = psnr_cuda_enqueue,
    .collect = psnr_cuda_collect,
    .close = psnr_cuda_close,
};
