/*
 * PSNR-HVS on CUDA: the device computes each plane's float sum of terms,
 * bit for bit the C reference's (psnr_hvs.cu says how); the host reads
 * back the three floats (12 bytes) and finishes through the C reference's
 * own psnr_hvs_write(), as its extract() does.
 *
 * Device memory: csf and mask tables (1.5 KiB, from the metric's state,
 * uploaded once) and, per slot, for every block position of the three
 * planes: its 64 terms (float), its estimate (double), its candidate pairs
 * (28 bytes); and the three sums.
 *
 * The plan (sizes, offsets) and the launches of a frame (kernel, grid,
 * arguments) are functions without side effects, so that
 * tests/test_psnr_hvs_ciede_cuda_host.cpp drives the kernels' element code
 * on the CPU through exactly what enqueue() launches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twin.h"
#include "psnr_hvs_args.h"
#include "metrics/psnr_hvs.h"

extern const unsigned char cuda_module_psnr_hvs[];

/* THREADS and WALK_THREADS: the kernels' launch bounds. */
enum { THREADS = HVS_THREADS, WALK_THREADS = HVS_WALK_THREADS, CAND_BYTES = sizeof(HvsCand),
       ALIGN = 256, STEPS = 4 };
enum { TABLE_FLOATS = 2 * 3 * 64 };

/* ---- the plan ------------------------------------------------------------- */

typedef struct HvsPlan {
    bool hbd;
    PsnrHvsLayout layout;
    /* offsets in a slot, bytes */
    size_t terms, prefix, cand, sums;
    size_t slot_bytes;
} HvsPlan;

/* Not static: the host test calls them (it declares them itself). */
HvsPlan *hvs_cuda_plan_new(const QualeVideoFormat *format);
void hvs_cuda_plan_free(HvsPlan *p);
size_t hvs_cuda_slot_bytes(const HvsPlan *p);
size_t hvs_cuda_sums_offset(const HvsPlan *p);
unsigned hvs_cuda_step_count(const HvsPlan *p);
void hvs_cuda_counts(const HvsPlan *p, uint64_t count[3]);
void hvs_cuda_tables(const PsnrHvsState *s, float tables[TABLE_FLOATS]);
const char *hvs_cuda_step(const HvsPlan *p, unsigned i, uint64_t slot, uint64_t tables,
                          const uint64_t ref[3], const uint64_t dist[3], const uint64_t stride[3],
                          unsigned launch[3], void *args);

HvsPlan *hvs_cuda_plan_new(const QualeVideoFormat *f)
{
    HvsPlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->hbd = f->bitdepth > 8;
    psnr_hvs_layout(f, &p->layout);
    size_t at = 0;
#define HVS_PLACE(field, bytes)             \
    do {                                    \
        p->field = at;                      \
        at = cuda_align_up(at + (bytes), ALIGN); \
    } while (0)
    HVS_PLACE(terms, (size_t)p->layout.total * 64 * sizeof(float));
    HVS_PLACE(prefix, (size_t)p->layout.total * sizeof(double));
    HVS_PLACE(cand, (size_t)p->layout.total * CAND_BYTES);
    HVS_PLACE(sums, 4 * sizeof(float));
#undef HVS_PLACE
    p->slot_bytes = at;
    return p;
}

void hvs_cuda_plan_free(HvsPlan *p)
{
    free(p);
}

size_t hvs_cuda_slot_bytes(const HvsPlan *p)
{
    return p->slot_bytes;
}

size_t hvs_cuda_sums_offset(const HvsPlan *p)
{
    return p->sums;
}

unsigned hvs_cuda_step_count(const HvsPlan *p)
{
    (void)p;
    return STEPS;
}

/* The number of terms of each plane's sum. */
void hvs_cuda_counts(const HvsPlan *p, uint64_t count[3])
{
    for (unsigned k = 0; k < 3; k++) count[k] = 64 * (uint64_t)p->layout.blocks[k];
}

/* The device's tables: csf[3][64], then mask[3][64], from the state. */
void hvs_cuda_tables(const PsnrHvsState *s, float tables[TABLE_FLOATS])
{
    memcpy(tables, s->csf, sizeof(s->csf));
    memcpy(tables + 3 * 64, s->mask, sizeof(s->mask));
}

/*
 * Step i of a frame in slot memory `slot` (device addresses; the host test
 * passes host addresses): the kernel's name, its launch (grid x, grid y,
 * threads per block) and its arguments (args: a struct HvsArgs).  The
 * steps, in stream order: terms, prefix, cand, walk.
 */
const char *hvs_cuda_step(const HvsPlan *p, unsigned i, uint64_t slot, uint64_t tables,
                          const uint64_t ref[3], const uint64_t dist[3], const uint64_t stride[3],
                          unsigned launch[3], void *args)
{
    if (i >= STEPS) return NULL;
    HvsArgs a;
    memset(&a, 0, sizeof(a));
    for (unsigned k = 0; k < 3; k++) {
        a.ref[k] = ref[k];
        a.dist[k] = dist[k];
        a.stride[k] = stride[k];
        a.cols[k] = p->layout.cols[k];
        a.blocks[k] = p->layout.blocks[k];
        a.base[k] = p->layout.base[k];
    }
    a.total = p->layout.total;
    a.tables = tables;
    a.terms = slot + p->terms;
    a.prefix = slot + p->prefix;
    a.cand = slot + p->cand;
    a.sums = slot + p->sums;
    memcpy(args, &a, sizeof(a));

    launch[1] = 1;
    switch (i) {
    case 0:
        launch[0] = cuda_blocks_for(p->layout.total, THREADS);
        launch[2] = THREADS;
        return p->hbd ? "hvs_terms_16" : "hvs_terms_8";
    case 1:
        launch[0] = 3;
        launch[2] = WALK_THREADS;
        return "hvs_prefix";
    case 2:
        launch[0] = cuda_blocks_for(p->layout.total, THREADS);
        launch[2] = THREADS;
        return "hvs_cand";
    default:
        launch[0] = 3;
        launch[2] = WALK_THREADS;
        return "hvs_walk";
    }
}

/* ---- the twin ------------------------------------------------------------- */

typedef struct HvsTwin {
    const CudaDevice *dev;
    const PsnrHvsState *metric;
    HvsPlan *plan;
    CUfunction kernels[STEPS];
    CUdeviceptr tables;
    CUdeviceptr memory; /* slots x slot_bytes */
    size_t bytes;
    float *host;        /* pinned, slots x 4 */
} HvsTwin;

static unsigned hvs_cuda_planes(const void *state)
{
    (void)state;
    return 7;
}

static void hvs_cuda_close(void *twin)
{
    HvsTwin *t = twin;
    if (!t) return;
    cuda_free(t->dev, t->memory, t->bytes);
    cuda_free(t->dev, t->tables, TABLE_FLOATS * sizeof(float));
    if (t->host) t->dev->api.MemFreeHost(t->host);
    hvs_cuda_plan_free(t->plan);
    free(t);
}

static int hvs_cuda_init(const CudaDevice *dev, CUmodule module, const void *metric_state,
                         const QualeVideoFormat *format, unsigned slots, void **out, char *error,
                         size_t error_size)
{
    const PsnrHvsState *s = metric_state;
    int err = psnr_hvs_check_format(format, error, error_size);
    if (err) return err;
    HvsTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = s;
    t->plan = hvs_cuda_plan_new(format);
    if (!t->plan) err = -ENOMEM;
    const uint64_t none[3] = { 0, 0, 0 };
    for (unsigned i = 0; !err && i < STEPS; i++) {
        unsigned launch[3];
        HvsArgs args;
        const char *name = hvs_cuda_step(t->plan, i, 0, 0, none, none, none, launch, &args);
        err = cuda_function(dev, module, name, &t->kernels[i], error, error_size);
    }
    if (!err)
        err = cuda_alloc(dev, &t->tables, TABLE_FLOATS * sizeof(float), "the PSNR-HVS tables",
                         error, error_size);
    if (!err) {
        /* Once, before any frame: the slots' streams do not wait for the
         * default stream, so the copy is finished here. */
        float tables[TABLE_FLOATS];
        hvs_cuda_tables(s, tables);
        CUresult r = dev->api.MemcpyHtoDAsync(t->tables, tables, sizeof(tables), NULL);
        if (r == CUDA_SUCCESS) r = dev->api.StreamSynchronize(NULL);
        if (r != CUDA_SUCCESS) {
            snprintf(error, error_size, "uploading the PSNR-HVS tables failed: %s",
                     cuda_error_text(&dev->api, r));
            err = -EIO;
        }
    }
    if (!err) {
        t->bytes = (size_t)slots * t->plan->slot_bytes;
        err = cuda_alloc(dev, &t->memory, t->bytes, "PSNR-HVS terms and sums", error, error_size);
    }
    if (!err)
        err = cuda_alloc_host(dev, (void **)&t->host, (size_t)slots * 4 * sizeof(float),
                              "PSNR-HVS readback", error, error_size);
    if (err) {
        hvs_cuda_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int hvs_cuda_enqueue(void *twin, unsigned slot, const CudaFrame *frame, CUstream stream,
                            char *error, size_t error_size)
{
    HvsTwin *t = twin;
    const HvsPlan *plan = t->plan;
    uint64_t ref[3], dist[3], stride[3];
    for (unsigned k = 0; k < 3; k++) {
        if (frame->width[k] != plan->layout.width[k] || frame->height[k] != plan->layout.height[k]) {
            snprintf(error, error_size, "psnr_hvs: plane %u is %ux%u, the twin was set up for %ux%u",
                     k, frame->width[k], frame->height[k], plan->layout.width[k], plan->layout.height[k]);
            return -EINVAL;
        }
        ref[k] = frame->ref[k];
        dist[k] = frame->dist[k];
        stride[k] = frame->stride[k];
    }
    const CUdeviceptr base = t->memory + (size_t)slot * plan->slot_bytes;
    for (unsigned i = 0; i < STEPS; i++) {
        unsigned launch[3];
        HvsArgs args;
        const char *name = hvs_cuda_step(plan, i, base, t->tables, ref, dist, stride, launch, &args);
        void *params[] = { &args };
        int err = cuda_launch(t->dev, t->kernels[i], name, launch[0], launch[1], launch[2], 0,
                              stream, params, error, error_size);
        if (err) return err;
    }
    return cuda_read_back(t->dev, t->host + (size_t)slot * 4, base + plan->sums, 3 * sizeof(float),
                          stream, "the PSNR-HVS sums", error, error_size);
}

static int hvs_cuda_collect(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink)
{
    HvsTwin *t = twin;
    uint64_t count[3];
    hvs_cuda_counts(t->plan, count);
    return psnr_hvs_write(t->metric, sink, frame->index, t->host + (size_t)slot * 4, count);
}

const CudaTwin cuda_twin_psnr_hvs = {
    .metric = &metric_psnr_hvs,
    .module_image = cuda_module_psnr_hvs,
    .planes = hvs_cuda_planes,
    .init = hvs_cuda_init,
    .enqueue = hvs_cuda_enqueue,
    .collect = hvs_cuda_collect,
    .close = hvs_cuda_close,
};
