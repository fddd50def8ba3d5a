/*
 * Integer VIF on CUDA: the device filters, decimates and sums the four
 * scales (integer_vif.cu); the host reads back the frame's 16 sums (128
 * bytes: per scale num_log, den_log, num_non_log, den_non_log) and finishes
 * through the C reference's own vif_write() (src/metrics/integer_vif.h), as
 * its extract() does.
 *
 * Device memory: the log2 table (64 KiB, uploaded once) and, per slot,
 *   the frame's sums;
 *   the vertical pass of the statistics: mu1, mu2 (16-bit), xx, yy, xy
 *   (32-bit), planes of the scale-0 size reused by every scale;
 *   the vertical low-pass of both pictures (16-bit, w x h / 2 of scale 0,
 *   reused by every decimation);
 *   the pictures of scales 1, 2 and 3 (16-bit).
 * Every plane is dense: its pitch is the width of the scale it holds.
 *
 * The plan (sizes, offsets) and the launches of a frame (kernel, grid,
 * arguments) are functions without side effects, so that
 * tests/test_integer_vif_cuda_host.cpp drives the kernels' element code on
 * the CPU through exactly what enqueue() launches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twin.h"
#include "integer_vif_args.h"
#include "metrics/integer_vif.h"

extern const unsigned char cuda_module_integer_vif[];

/* THREADS: the kernels' launch bounds */
enum { THREADS = VIF_THREADS, HSTATS_ROWS = 8, ALIGN = 256 };

/* Per scale: decimation (vlow, hlow; not at scale 0) and statistics
 * (vstats, hstats). */
enum { VIF_MAX_STEPS = 4 * VIF_SCALES };
enum { SUMS_PER_SCALE = 4, SUM_COUNT = VIF_SCALES * SUMS_PER_SCALE };

/* ---- the plan ------------------------------------------------------------- */

typedef struct VifPlan {
    const VifState *s;
    unsigned w[VIF_SCALES], h[VIF_SCALES];
    /* offsets in a slot, bytes */
    size_t sums, mu1, mu2, xx, yy, xy, low_ref, low_dis;
    size_t scaled_ref[VIF_SCALES], scaled_dis[VIF_SCALES]; /* scales 1..3 */
    size_t slot_bytes;
    unsigned step_count;
} VifPlan;

/* Not static: the host test calls them (it declares them itself). */
VifPlan *vif_cuda_plan_new(const VifState *s);
void vif_cuda_plan_free(VifPlan *p);
size_t vif_cuda_slot_bytes(const VifPlan *p);
size_t vif_cuda_sums_offset(const VifPlan *p);
unsigned vif_cuda_step_count(const VifPlan *p);
const char *vif_cuda_step(const VifPlan *p, unsigned i, uint64_t slot, uint64_t table,
                          uint64_t ref, uint64_t dist, uint64_t stride, unsigned launch[3],
                          void *args);

VifPlan *vif_cuda_plan_new(const VifState *s)
{
    VifPlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->s = s;
    for (unsigned scale = 0; scale < VIF_SCALES; scale++) {
        p->w[scale] = s->width >> scale;
        p->h[scale] = s->height >> scale;
    }
    const size_t area = (size_t)p->w[0] * p->h[0];
    size_t at = 0;
#define VIF_PLACE(field, bytes)       \
    do {                              \
        p->field = at;                \
        at = cuda_align_up(at + (bytes), ALIGN); \
    } while (0)
    VIF_PLACE(sums, SUM_COUNT * sizeof(uint64_t));
    VIF_PLACE(mu1, area * sizeof(uint16_t));
    VIF_PLACE(mu2, area * sizeof(uint16_t));
    VIF_PLACE(xx, area * sizeof(uint32_t));
    VIF_PLACE(yy, area * sizeof(uint32_t));
    VIF_PLACE(xy, area * sizeof(uint32_t));
    VIF_PLACE(low_ref, (size_t)p->w[0] * (p->h[0] / 2) * sizeof(uint16_t));
    VIF_PLACE(low_dis, (size_t)p->w[0] * (p->h[0] / 2) * sizeof(uint16_t));
    for (unsigned scale = 1; scale < VIF_SCALES; scale++) {
        const size_t bytes = (size_t)p->w[scale] * p->h[scale] * sizeof(uint16_t);
        VIF_PLACE(scaled_ref[scale], bytes);
        VIF_PLACE(scaled_dis[scale], bytes);
    }
#undef VIF_PLACE
    p->slot_bytes = at;
    p->step_count = (s->skip_scale0 ? 0 : 2) + 4 * (VIF_SCALES - 1);
    return p;
}

void vif_cuda_plan_free(VifPlan *p)
{
    free(p);
}

size_t vif_cuda_slot_bytes(const VifPlan *p)
{
    return p->slot_bytes;
}

size_t vif_cuda_sums_offset(const VifPlan *p)
{
    return p->sums;
}

unsigned vif_cuda_step_count(const VifPlan *p)
{
    return p->step_count;
}

/*
 * Step i of a frame in slot memory `slot` (device addresses; the host test
 * passes host addresses): the kernel's name, its launch (grid x, grid y,
 * threads per block) and its arguments (args: a struct VifArgs).  The
 * steps, in stream order: scale 0's vstats and hstats (unless
 * vif_skip_scale0), then for each scale 1..3 vlow, hlow, vstats, hstats.
 */
const char *vif_cuda_step(const VifPlan *p, unsigned i, uint64_t slot, uint64_t table,
                          uint64_t ref, uint64_t dist, uint64_t stride, unsigned launch[3],
                          void *args)
{
    static const char *const vstats[VIF_SCALES][2] = {
        { "vif_vstats_8_17", "vif_vstats_16_17" },
        { "vif_vstats_16_9", "vif_vstats_16_9" },
        { "vif_vstats_16_5", "vif_vstats_16_5" },
        { "vif_vstats_16_3", "vif_vstats_16_3" },
    };
    static const char *const hstats[VIF_SCALES] = {
        "vif_hstats_17", "vif_hstats_9", "vif_hstats_5", "vif_hstats_3",
    };
    static const char *const vlow[VIF_SCALES][2] = {
        { NULL, NULL },
        { "vif_vlow_8_9", "vif_vlow_16_9" },
        { "vif_vlow_16_5", "vif_vlow_16_5" },
        { "vif_vlow_16_3", "vif_vlow_16_3" },
    };
    static const char *const hlow[VIF_SCALES] = { NULL, "vif_hlow_9", "vif_hlow_5", "vif_hlow_3" };

    if (i >= p->step_count) return NULL;
    const VifState *s = p->s;
    /* Which scale and which of its steps (0 vlow, 1 hlow, 2 vstats, 3 hstats). */
    const unsigned k = i + (s->skip_scale0 ? 2 : 0) + 2;
    const unsigned scale = k / 4, part = k % 4;
    /* The pictures a step reads: the scale's for the statistics, the
     * previous scale's for the decimation. */
    const unsigned from = part < 2 ? scale - 1 : scale;
    const bool wide = from > 0 || s->bitdepth > 8;

    VifArgs a;
    memset(&a, 0, sizeof(a));
    if (from == 0) {
        a.ref = ref;
        a.dis = dist;
        a.src_stride = stride;
    } else {
        a.ref = slot + p->scaled_ref[from];
        a.dis = slot + p->scaled_dis[from];
        a.src_stride = (unsigned long long)p->w[from] * sizeof(uint16_t);
    }
    a.w = p->w[from];
    a.h = p->h[from];
    a.mu1 = slot + p->mu1;
    a.mu2 = slot + p->mu2;
    a.xx = slot + p->xx;
    a.yy = slot + p->yy;
    a.xy = slot + p->xy;
    a.low_ref = slot + p->low_ref;
    a.low_dis = slot + p->low_dis;
    if (scale > 0) {
        a.dst_ref = slot + p->scaled_ref[scale];
        a.dst_dis = slot + p->scaled_dis[scale];
    }
    a.sums = slot + p->sums + (size_t)scale * SUMS_PER_SCALE * sizeof(uint64_t);
    a.log2_table = table;
    a.gain_limit = s->enhn_gain_limit;
    /* The vertical statistics keep the samples' precision at scale 0
     * (means to 16 bits, squares to 32), 16.16 after: vif_scale_stats(). */
    if (scale == 0) {
        const unsigned bd = s->bitdepth;
        a.mu_round = 1u << (bd - 1);
        a.mu_shift = bd;
        a.sq_shift = 2 * (bd - 8);
        a.sq_round = bd == 8 ? 0 : 1ull << (a.sq_shift - 1);
    } else {
        a.mu_round = 32768;
        a.mu_shift = 16;
        a.sq_round = 32768;
        a.sq_shift = 16;
    }
    /* The low-pass from the picture keeps its precision, 16 bits after:
     * vif_decimate(). */
    a.low_shift = scale == 1 ? s->bitdepth : 16;
    a.rows = HSTATS_ROWS;

    const char *name = NULL;
    launch[2] = THREADS;
    switch (part) {
    case 0:
        name = vlow[scale][wide];
        launch[0] = cuda_blocks_for(a.w, THREADS);
        launch[1] = cuda_grid_rows(a.h / 2);
        break;
    case 1:
        name = hlow[scale];
        launch[0] = cuda_blocks_for(a.w / 2, THREADS);
        launch[1] = cuda_grid_rows(a.h / 2);
        break;
    case 2:
        name = vstats[scale][wide];
        launch[0] = cuda_blocks_for(a.w, THREADS);
        launch[1] = cuda_grid_rows(a.h);
        break;
    default:
        name = hstats[scale];
        launch[0] = cuda_blocks_for(a.w, THREADS);
        launch[1] = cuda_grid_rows(cuda_blocks_for(a.h, HSTATS_ROWS));
        break;
    }
    memcpy(args, &a, sizeof(a));
    return name;
}

/* ---- the twin ------------------------------------------------------------- */

typedef struct VifTwin {
    const CudaDevice *dev;
    const VifState *metric;
    VifPlan *plan;
    CUfunction kernels[VIF_MAX_STEPS]; /* of each step */
    CUdeviceptr table;                 /* the log2 table */
    CUdeviceptr memory;                /* slots x slot_bytes */
    size_t bytes;
    uint64_t *host;                    /* pinned, slots x SUM_COUNT */
} VifTwin;

static void vif_cuda_close(void *twin)
{
    VifTwin *t = twin;
    if (!t) return;
    cuda_free(t->dev, t->memory, t->bytes);
    cuda_free(t->dev, t->table, VIF_LOG2_TABLE_SIZE * sizeof(uint16_t));
    if (t->host) t->dev->api.MemFreeHost(t->host);
    vif_cuda_plan_free(t->plan);
    free(t);
}

static int vif_cuda_init(const CudaDevice *dev, CUmodule module, const void *metric_state,
                         const QualeVideoFormat *format, unsigned slots, void **out, char *error,
                         size_t error_size)
{
    const VifState *s = metric_state;
    int err = vif_check_size(format->width, format->height, error, error_size);
    if (err) return err;
    VifTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = s;
    t->plan = vif_cuda_plan_new(s);
    if (!t->plan) err = -ENOMEM;
    for (unsigned i = 0; !err && i < t->plan->step_count; i++) {
        unsigned launch[3];
        VifArgs args;
        const char *name = vif_cuda_step(t->plan, i, 0, 0, 0, 0, 0, launch, &args);
        err = cuda_function(dev, module, name, &t->kernels[i], error, error_size);
    }
    const size_t table_bytes = VIF_LOG2_TABLE_SIZE * sizeof(uint16_t);
    if (!err) err = cuda_alloc(dev, &t->table, table_bytes, "the VIF log2 table", error, error_size);
    if (!err) {
        /* Once, before any frame: the slots' streams do not wait for the
         * default stream, so the copy is finished here. */
        CUresult r = dev->api.MemcpyHtoDAsync(t->table, s->log2_table, table_bytes, NULL);
        if (r == CUDA_SUCCESS) r = dev->api.StreamSynchronize(NULL);
        if (r != CUDA_SUCCESS) {
            snprintf(error, error_size, "uploading the VIF log2 table failed: %s",
                     cuda_error_text(&dev->api, r));
            err = -EIO;
        }
    }
    if (!err) {
        t->bytes = (size_t)slots * t->plan->slot_bytes;
        err = cuda_alloc(dev, &t->memory, t->bytes, "VIF planes and sums", error, error_size);
    }
    if (!err)
        err = cuda_alloc_host(dev, (void **)&t->host, (size_t)slots * SUM_COUNT * sizeof(uint64_t),
                              "VIF readback", error, error_size);
    if (err) {
        vif_cuda_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int vif_cuda_enqueue(void *twin, unsigned slot, const CudaFrame *frame, CUstream stream,
                            char *error, size_t error_size)
{
    VifTwin *t = twin;
    const CudaApi *api = &t->dev->api;
    const CUdeviceptr base = t->memory + (size_t)slot * t->plan->slot_bytes;
    const CUdeviceptr sums = base + t->plan->sums;
    const size_t sum_bytes = SUM_COUNT * sizeof(uint64_t);
    CUresult r = api->MemsetD8Async(sums, 0, sum_bytes, stream);
    if (r != CUDA_SUCCESS) {
        snprintf(error, error_size, "clearing the VIF sums failed: %s", cuda_error_text(api, r));
        return -EIO;
    }
    for (unsigned i = 0; i < t->plan->step_count; i++) {
        unsigned launch[3];
        VifArgs args;
        const char *name = vif_cuda_step(t->plan, i, base, t->table, frame->ref[0],
                                         frame->dist[0], frame->stride[0], launch, &args);
        void *params[] = { &args };
        int err = cuda_launch(t->dev, t->kernels[i], name, launch[0], launch[1], launch[2], 0,
                              stream, params, error, error_size);
        if (err) return err;
    }
    return cuda_read_back(t->dev, t->host + (size_t)slot * SUM_COUNT, sums, sum_bytes, stream,
                          "the VIF sums", error, error_size);
}

static int vif_cuda_collect(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink)
{
    VifTwin *t = twin;
    const uint64_t *host = t->host + (size_t)slot * SUM_COUNT;
    VifSums sums[VIF_SCALES];
    for (unsigned scale = 0; scale < VIF_SCALES; scale++) {
        /* Added modulo 2^64 on the device: the signed sums' bits. */
        const uint64_t *v = host + scale * SUMS_PER_SCALE;
        sums[scale].num_log = (int64_t)v[0];
        sums[scale].den_log = (int64_t)v[1];
        sums[scale].num_non_log = (int64_t)v[2];
        sums[scale].den_non_log = (int64_t)v[3];
    }
    return vif_write(t->metric, sink, frame->index, sums);
}

const CudaTwin cuda_twin_integer_vif = {
    .metric = &metric_integer_vif,
    .module_image = cuda_module_integer_vif,
    .init = vif_cuda_init,
    .enqueue = vif_cuda_enqueue,
    .collect = vif_cuda_collect,
    .close = vif_cuda_close,
};
