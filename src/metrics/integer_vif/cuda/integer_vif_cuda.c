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
 * the CPU through exactly what the plan's steps launch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_twin.h"
#include "integer_vif_args.h"
#include "metrics/integer_vif/integer_vif.h"

extern const unsigned char cuda_module_integer_vif[];

/* THREADS: the kernels' launch bounds */
enum { THREADS = VIF_THREADS, HSTATS_ROWS = 8 };

enum { SUMS_PER_SCALE = 4, SUM_COUNT = VIF_SCALES * SUMS_PER_SCALE };

/* ---- the plan ------------------------------------------------------------- */

typedef struct VifPlan {
    const VifState *s;
    unsigned w[VIF_SCALES], h[VIF_SCALES];
    /* offsets in a slot, bytes */
    size_t sums, mu1, mu2, xx, yy, xy, low_ref, low_dis;
    size_t scaled_ref[VIF_SCALES], scaled_dis[VIF_SCALES]; /* scales 1..3 */
    CudaSlotLayout slot; /* the sums cleared and read back */
} VifPlan;

/* Not static: the host test calls them (it declares them itself). */
VifPlan *vif_cuda_plan_new(const VifState *s);
const CudaSlotLayout *vif_cuda_slot(const VifPlan *p);
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
    size_t *at = &p->slot.bytes;
#define VIF_PLACE(field, bytes) p->field = cuda_plan_place(at, bytes)
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
    p->slot.clear_offset = p->slot.readback_offset = p->sums;
    p->slot.clear_bytes = p->slot.readback_bytes = SUM_COUNT * sizeof(uint64_t);
    p->slot.steps = (s->skip_scale0 ? 0 : 2) + 4 * (VIF_SCALES - 1);
    return p;
}

const CudaSlotLayout *vif_cuda_slot(const VifPlan *p)
{
    return &p->slot;
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

    if (i >= p->slot.steps) return NULL;
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
    /* The vertical statistics' rounding: the C reference's. */
    const VifShift sh = vif_shift(s->bitdepth, scale);
    a.mu_round = sh.mu_round;
    a.mu_shift = sh.mu_shift;
    a.sq_round = sh.sq_round;
    a.sq_shift = sh.sq_shift;
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

/* Constants: the log2 table.  Per slot: the plan's layout; the sums cleared
 * before the steps and read back after them. */
static int integer_vif_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                      CudaPlan *plan, char *error, size_t error_size)
{
    const VifState *s = state;
    int err = vif_check_size(format->width, format->height, error, error_size);
    if (err) return err;
    VifPlan *p = vif_cuda_plan_new(s);
    if (!p) return -ENOMEM;
    plan->own = p;
    cuda_plan_upload_constants(plan, s->log2_table, VIF_LOG2_TABLE_SIZE * sizeof(uint16_t));
    cuda_plan_use_slot(plan, &p->slot);
    return 0;
}

static void integer_vif_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                       const CudaPlanMemory *memory, CudaStep *step)
{
    const CudaFrame *f = memory->frame;
    unsigned launch[3] = { 0, 0, 0 };
    const char *name = vif_cuda_step(plan->own, index, memory->slot, memory->constants, f->ref[0],
                                     f->dist[0], f->stride[0], launch, step->args);
    cuda_step_launch(step, name, launch, sizeof(VifArgs));
}

static int integer_vif_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                         const MetricFrame *frame, FeatureSink *sink)
{
    const uint64_t *host = readback;
    VifSums sums[VIF_SCALES];
    for (unsigned scale = 0; scale < VIF_SCALES; scale++) {
        /* Added modulo 2^64 on the device: the signed sums' bits. */
        const uint64_t *v = host + scale * SUMS_PER_SCALE;
        sums[scale].num_log = (int64_t)v[0];
        sums[scale].den_log = (int64_t)v[1];
        sums[scale].num_non_log = (int64_t)v[2];
        sums[scale].den_non_log = (int64_t)v[3];
    }
    return vif_write(plan->state, sink, frame->index, sums);
}

const CudaTwin cuda_twin_integer_vif = { CUDA_TWIN_OF(integer_vif) };
