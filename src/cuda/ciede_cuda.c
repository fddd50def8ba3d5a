/*
 * CIEDE2000 on CUDA: the device computes every pixel's deltaE and one
 * double sum per block (ciede.cu); the host reads the partial sums back
 * (8 bytes per block of 128 columns x ROWS rows: about 16 KiB at 1080p),
 * adds them in block order and finishes through the C reference's own
 * ciede_write(), as its extract() does.
 *
 * Device memory: the reference's chroma indexing tables (5 bytes per luma
 * column, from the metric's state, uploaded once), the colour tables of
 * ciede.cu (256 MiB at 8 bits, 16 MiB at 9 and 10) and, per slot, the
 * partial sums.
 *
 * The plan and the launch of a frame are functions without side effects,
 * so that tests/test_psnr_hvs_ciede_cuda_host.cpp drives the kernel's
 * element code on the CPU through exactly what enqueue() launches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twin.h"
#include "ciede_args.h"
#include "metrics/ciede.h"

extern const unsigned char cuda_module_ciede[];

/* THREADS: the kernel's launch bounds */
enum { THREADS = CIEDE_THREADS, ROWS = 8 };

/* Every colour is tabulated up to MAX_COLOUR_BITS (2^24 float4s, 256 MiB,
 * at 8 bits); above, R and B up to MAX_TABLE_BITS (2 x 8 MiB of doubles at
 * 10). */
enum { MAX_COLOUR_BITS = 8, MAX_TABLE_BITS = 10 };

/* ---- the plan ------------------------------------------------------------- */

typedef struct CiedePlan {
    const CiedeState *s;
    unsigned chroma_height;
    unsigned grid[2];
    unsigned partial_count;
} CiedePlan;

/* Not static: the host test calls them (it declares them itself). */
CiedePlan *ciede_cuda_plan_new(const CiedeState *s, const QualeVideoFormat *format);
void ciede_cuda_plan_free(CiedePlan *p);
unsigned ciede_cuda_partial_count(const CiedePlan *p);
double ciede_cuda_sum(const CiedePlan *p, const double *partials);
const char *ciede_cuda_launch(const CiedePlan *p, uint64_t partials, uint64_t chroma_col,
                              uint64_t chroma_row, uint64_t linear, uint64_t colours,
                              const uint64_t ref[3], const uint64_t dist[3],
                              const uint64_t stride[3], unsigned launch[3], void *args);
unsigned ciede_cuda_table_bits(const CiedePlan *p);
unsigned ciede_cuda_colour_bits(const CiedePlan *p);

CiedePlan *ciede_cuda_plan_new(const CiedeState *s, const QualeVideoFormat *f)
{
    CiedePlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->s = s;
    /* the picture's chroma height (picture.c) */
    p->chroma_height = f->chroma == QUALE_CHROMA_420 ? (f->height + 1) / 2 : f->height;
    p->grid[0] = (s->width + THREADS - 1) / THREADS;
    p->grid[1] = (s->height + ROWS - 1) / ROWS;
    p->partial_count = p->grid[0] * p->grid[1];
    return p;
}

void ciede_cuda_plan_free(CiedePlan *p)
{
    free(p);
}

unsigned ciede_cuda_partial_count(const CiedePlan *p)
{
    return p->partial_count;
}

/* The frame's sum: the partials in block order. */
double ciede_cuda_sum(const CiedePlan *p, const double *partials)
{
    double sum = 0.;
    for (unsigned i = 0; i < p->partial_count; i++) sum += partials[i];
    return sum;
}

/* The bits of a sample in the colour table's index (ciede_colour_table of
 * ciede.cu), 0 for none. */
unsigned ciede_cuda_colour_bits(const CiedePlan *p)
{
    return p->s->bitdepth <= MAX_COLOUR_BITS ? p->s->bitdepth : 0;
}

/* The bits of the R and B tables' indices (ciede_table of ciede.cu), 0 for
 * no tables: with a colour table, or above MAX_TABLE_BITS, where a pixel
 * decodes its colours itself. */
unsigned ciede_cuda_table_bits(const CiedePlan *p)
{
    const unsigned bits = p->s->bitdepth;
    return bits > MAX_COLOUR_BITS && bits <= MAX_TABLE_BITS ? bits : 0;
}

/* The frame's one launch: the kernel's name, its grid and block (launch)
 * and its arguments (args: a struct CiedeArgs); linear and colours are the
 * tables, 0 without.  Device addresses; the host test passes host
 * addresses. */
const char *ciede_cuda_launch(const CiedePlan *p, uint64_t partials, uint64_t chroma_col,
                              uint64_t chroma_row, uint64_t linear, uint64_t colours,
                              const uint64_t ref[3], const uint64_t dist[3],
                              const uint64_t stride[3], unsigned launch[3], void *args)
{
    const CiedeState *s = p->s;
    CiedeArgs a;
    memset(&a, 0, sizeof(a));
    for (unsigned k = 0; k < 3; k++) {
        a.ref[k] = ref[k];
        a.dist[k] = dist[k];
        a.stride[k] = stride[k];
    }
    a.chroma_col = chroma_col;
    a.chroma_row = chroma_row;
    a.partials = partials;
    a.convert = s->convert;
    a.width = s->width;
    a.height = s->height;
    a.chroma_height = p->chroma_height;
    a.row_shift = s->row_shift;
    a.rows = ROWS;
    a.linear = linear;
    a.linear_bits = linear ? ciede_cuda_table_bits(p) : 0;
    a.colours = colours;
    a.colour_bits = colours ? ciede_cuda_colour_bits(p) : 0;
    memcpy(args, &a, sizeof(a));
    launch[0] = p->grid[0];
    launch[1] = p->grid[1];
    launch[2] = THREADS;
    return s->bitdepth > 8 ? "ciede_rows_16" : "ciede_rows_8";
}

/* ---- the twin ------------------------------------------------------------- */

typedef struct CiedeTwin {
    const CudaDevice *dev;
    const CiedeState *metric;
    CiedePlan *plan;
    CUfunction kernel;
    CUdeviceptr tables;  /* chroma_col (width x 4 bytes), then chroma_row */
    size_t table_bytes;
    CUdeviceptr linear;  /* R and B tables, or 0 */
    size_t linear_bytes;
    CUdeviceptr colours; /* every colour, or 0 */
    size_t colour_bytes;
    CUdeviceptr partials; /* slots x partial_count */
    size_t bytes;
    double *host;         /* pinned, same layout */
} CiedeTwin;

static unsigned ciede_cuda_planes(const void *state)
{
    (void)state;
    return 7;
}

static void ciede_cuda_close(void *twin)
{
    CiedeTwin *t = twin;
    if (!t) return;
    cuda_free(t->dev, t->partials, t->bytes);
    cuda_free(t->dev, t->tables, t->table_bytes);
    cuda_free(t->dev, t->linear, t->linear_bytes);
    cuda_free(t->dev, t->colours, t->colour_bytes);
    if (t->host) t->dev->api.MemFreeHost(t->host);
    ciede_cuda_plan_free(t->plan);
    free(t);
}

static int ciede_cuda_init(const CudaDevice *dev, CUmodule module, const void *metric_state,
                           const QualeVideoFormat *format, unsigned slots, void **out,
                           char *error, size_t error_size)
{
    const CiedeState *s = metric_state;
    int err = ciede_check_format(format, error, error_size);
    if (err) return err;
    CiedeTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = s;
    t->plan = ciede_cuda_plan_new(s, format);
    if (!t->plan) err = -ENOMEM;
    if (!err) {
        unsigned launch[3];
        CiedeArgs args;
        const uint64_t none[3] = { 0, 0, 0 };
        const char *name =
            ciede_cuda_launch(t->plan, 0, 0, 0, 0, 0, none, none, none, launch, &args);
        err = cuda_function(dev, module, name, &t->kernel, error, error_size);
    }
    const size_t col_bytes = (size_t)s->width * sizeof(uint32_t);
    t->table_bytes = col_bytes + s->width;
    if (!err)
        err = cuda_alloc(dev, &t->tables, t->table_bytes, "the CIEDE2000 chroma indexing", error,
                         error_size);
    if (!err) {
        /* Once, before any frame: the slots' streams do not wait for the
         * default stream, so the copies are finished here. */
        CUresult r = dev->api.MemcpyHtoDAsync(t->tables, s->chroma_col, col_bytes, NULL);
        if (r == CUDA_SUCCESS)
            r = dev->api.MemcpyHtoDAsync(t->tables + col_bytes, s->chroma_row, s->width, NULL);
        if (r == CUDA_SUCCESS) r = dev->api.StreamSynchronize(NULL);
        if (r != CUDA_SUCCESS) {
            snprintf(error, error_size, "uploading the CIEDE2000 chroma indexing failed: %s",
                     cuda_error_text(&dev->api, r));
            err = -EIO;
        }
    }
    const unsigned bits = t->plan ? ciede_cuda_table_bits(t->plan) : 0;
    if (!err && bits) {
        const unsigned entries = 2u << (2 * bits);
        t->linear_bytes = (size_t)entries * sizeof(double);
        CUfunction fill;
        err = cuda_function(dev, module, "ciede_table", &fill, error, error_size);
        if (!err)
            err = cuda_alloc(dev, &t->linear, t->linear_bytes, "the CIEDE2000 colour tables", error,
                             error_size);
        if (!err) {
            CiedeConvert convert = s->convert;
            CUdeviceptr linear = t->linear;
            unsigned table_bits = bits;
            void *params[] = { &convert, &linear, &table_bits };
            err = cuda_launch(dev, fill, "ciede_table", (entries + THREADS - 1) / THREADS, 1,
                              THREADS, 0, NULL, params, error, error_size);
        }
        if (!err && dev->api.StreamSynchronize(NULL) != CUDA_SUCCESS) {
            snprintf(error, error_size, "filling the CIEDE2000 colour tables failed");
            err = -EIO;
        }
    }
    const unsigned colour_bits = t->plan ? ciede_cuda_colour_bits(t->plan) : 0;
    if (!err && colour_bits) {
        const size_t entries = (size_t)1 << 3 * colour_bits;
        t->colour_bytes = entries * 4 * sizeof(float);
        CUfunction fill;
        err = cuda_function(dev, module, "ciede_colour_table", &fill, error, error_size);
        if (!err)
            err = cuda_alloc(dev, &t->colours, t->colour_bytes, "the CIEDE2000 colour table",
                             error, error_size);
        if (!err) {
            CiedeConvert convert = s->convert;
            CUdeviceptr colours = t->colours;
            unsigned table_bits = colour_bits;
            void *params[] = { &convert, &colours, &table_bits };
            err = cuda_launch(dev, fill, "ciede_colour_table", (unsigned)((entries + THREADS - 1) / THREADS), 1,
                              THREADS, 0, NULL, params, error, error_size);
        }
        if (!err && dev->api.StreamSynchronize(NULL) != CUDA_SUCCESS) {
            snprintf(error, error_size, "filling the CIEDE2000 colour table failed");
            err = -EIO;
        }
    }
    if (!err) {
        t->bytes = (size_t)slots * t->plan->partial_count * sizeof(double);
        err = cuda_alloc(dev, &t->partials, t->bytes, "CIEDE2000 partial sums", error, error_size);
    }
    if (!err)
        err = cuda_alloc_host(dev, (void **)&t->host, t->bytes, "CIEDE2000 readback", error,
                              error_size);
    if (err) {
        ciede_cuda_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int ciede_cuda_enqueue(void *twin, unsigned slot, const CudaFrame *frame, CUstream stream,
                              char *error, size_t error_size)
{
    CiedeTwin *t = twin;
    const CiedePlan *plan = t->plan;
    if (frame->width[0] != t->metric->width || frame->height[0] != t->metric->height ||
        frame->height[1] != plan->chroma_height) {
        snprintf(error, error_size, "ciede: the frame is %ux%u, the twin was set up for %ux%u",
                 frame->width[0], frame->height[0], t->metric->width, t->metric->height);
        return -EINVAL;
    }
    uint64_t ref[3], dist[3], stride[3];
    for (unsigned k = 0; k < 3; k++) {
        ref[k] = frame->ref[k];
        dist[k] = frame->dist[k];
        stride[k] = frame->stride[k];
    }
    const size_t offset = (size_t)slot * plan->partial_count;
    const CUdeviceptr partials = t->partials + offset * sizeof(double);
    const size_t col_bytes = (size_t)t->metric->width * sizeof(uint32_t);
    unsigned launch[3];
    CiedeArgs args;
    const char *name = ciede_cuda_launch(plan, partials, t->tables, t->tables + col_bytes,
                                         t->linear, t->colours, ref, dist, stride, launch, &args);
    void *params[] = { &args };
    int err = cuda_launch(t->dev, t->kernel, name, launch[0], launch[1], launch[2], 0, stream,
                          params, error, error_size);
    if (err) return err;
    return cuda_read_back(t->dev, t->host + offset, partials, plan->partial_count * sizeof(double),
                          stream, "the CIEDE2000 sums", error, error_size);
}

static int ciede_cuda_collect(void *twin, unsigned slot, const MetricFrame *frame,
                              FeatureSink *sink)
{
    CiedeTwin *t = twin;
    const double *partials = t->host + (size_t)slot * t->plan->partial_count;
    return ciede_write(t->metric, sink, frame->index, ciede_cuda_sum(t->plan, partials));
}

const CudaTwin cuda_twin_ciede = {
    .metric = &metric_ciede,
    .module_image = cuda_module_ciede,
    .planes = ciede_cuda_planes,
    .init = ciede_cuda_init,
    .enqueue = ciede_cuda_enqueue,
    .collect = ciede_cuda_collect,
    .close = ciede_cuda_close,
};
