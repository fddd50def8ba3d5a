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
 * on the CPU through exactly what the plan's steps launch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_twin.h"
#include "psnr_hvs_args.h"
#include "metrics/psnr_hvs/psnr_hvs.h"

extern const unsigned char cuda_module_psnr_hvs[];

/* THREADS and WALK_THREADS: the kernels' launch bounds. */
enum { THREADS = HVS_THREADS, WALK_THREADS = HVS_WALK_THREADS, CAND_BYTES = sizeof(HvsCand),
       STEPS = 4 };
enum { TABLE_FLOATS = 2 * 3 * 64 };

/* ---- the plan ------------------------------------------------------------- */

typedef struct HvsPlan {
    bool hbd;
    PsnrHvsLayout layout;
    /* offsets in a slot, bytes */
    size_t terms, prefix, cand, sums;
    CudaSlotLayout slot; /* the sums read back */
} HvsPlan;

/* Not static: the host test calls them (it declares them itself). */
HvsPlan *hvs_cuda_plan_new(const QualeVideoFormat *format);
const CudaSlotLayout *hvs_cuda_slot(const HvsPlan *p);
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
    size_t *at = &p->slot.bytes;
    p->terms = cuda_plan_place(at, (size_t)p->layout.total * 64 * sizeof(float));
    p->prefix = cuda_plan_place(at, (size_t)p->layout.total * sizeof(double));
    p->cand = cuda_plan_place(at, (size_t)p->layout.total * CAND_BYTES);
    p->sums = cuda_plan_place(at, 4 * sizeof(float));
    p->slot.readback_offset = p->sums;
    p->slot.readback_bytes = 3 * sizeof(float);
    p->slot.steps = STEPS;
    return p;
}

const CudaSlotLayout *hvs_cuda_slot(const HvsPlan *p)
{
    return &p->slot;
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

/* The plan of a run: the layout, and the tables uploaded as constants. */
typedef struct HvsRun {
    HvsPlan *plan;
    float tables[TABLE_FLOATS];
} HvsRun;

static void hvs_run_free(void *own)
{
    HvsRun *r = own;
    free(r->plan);
    free(r);
}

/* Constants: the tables.  Per slot: the plan's layout, the three planes'
 * sums read back. */
static int psnr_hvs_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                   CudaPlan *plan, char *error, size_t error_size)
{
    const int err = psnr_hvs_check_format(format, error, error_size);
    if (err) return err;
    HvsRun *r = cuda_plan_new_own(plan, sizeof(*r), hvs_run_free);
    if (!r) return -ENOMEM;
    r->plan = hvs_cuda_plan_new(format);
    if (!r->plan) return -ENOMEM;
    hvs_cuda_tables(state, r->tables);
    cuda_plan_upload_constants(plan, r->tables, sizeof(r->tables));
    cuda_plan_use_slot(plan, &r->plan->slot);
    return 0;
}

static void psnr_hvs_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                    const CudaPlanMemory *memory, CudaStep *step)
{
    const HvsRun *r = plan->own;
    const CudaFrame *f = memory->frame;
    uint64_t ref[3], dist[3], stride[3];
    cuda_frame_planes(f, ref, dist, stride);
    unsigned launch[3] = { 0, 0, 0 };
    const char *name = hvs_cuda_step(r->plan, index, memory->slot, memory->constants, ref, dist,
                                     stride, launch, step->args);
    cuda_step_launch(step, name, launch, sizeof(HvsArgs));
}

static int psnr_hvs_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                      const MetricFrame *frame, FeatureSink *sink)
{
    const HvsRun *r = plan->own;
    uint64_t count[3];
    hvs_cuda_counts(r->plan, count);
    return psnr_hvs_write(plan->state, sink, frame->index, readback, count);
}

const CudaTwin cuda_twin_psnr_hvs = { CUDA_TWIN_OF(psnr_hvs) };
