/*
 * Float ADM on CUDA: the device makes the four DWT levels, decouples,
 * weights, masks and sums each scored row (float_adm.cu); the host reads
 * back the rows' nine float sums, adds them in float in row order as the C
 * reference does, and writes the keys through its float_adm_level() and
 * float_adm_write().
 *
 * The reference divides by libvmaf's approximate reciprocal where SSE2
 * exists (rcpss and one Newton step: every x86-64), and rcpss is the CPU's
 * own approximation (Intel's and AMD's differ in the last bits).  Once per
 * process float_adm_reciprocal_table() (float_adm.c) tabulates the host's
 * float_adm_reciprocal() on [1, 2) and checks
 * float_adm_reciprocal_from_table() against it for every exponent and both
 * signs on a spread of mantissas; the device then divides exactly as the
 * host's reference.  Where the check fails the twin declines the metric,
 * which stays on the CPU.  Where the reference divides exactly (no SSE2),
 * so does the device.
 *
 * Device memory: the reciprocal table (8 KiB on those CPUs) and, per slot,
 *   the row sums of every level (read back: 9 floats per band row, 30 KiB
 *   at 1080p);
 *   the bands a of each level (both pictures; the next level's input);
 *   the bands h, v, d (both pictures) and the six CSF-weighted planes, of
 *   the level-0 size, reused by every level.
 *
 * adm_p_norm other than 3 raises each masked value to a power with powf(),
 * which the device's differs from: the twin declines those.
 *
 * The plan (sizes, offsets) and the launches of a frame (kernel, grid,
 * shared memory, arguments) are functions without side effects, so that
 * tests/test_float_vif_adm_motion_cuda_host.cpp drives the kernels' element code on
 * the CPU through exactly what the plan's steps launch, and collect()'s work is
 * float_adm_cuda_write(), which the test calls too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_twin.h"
#include "float_adm_args.h"
#include "metrics/common/bitcast.h"
#include "metrics/float_adm/float_adm.h"

extern const unsigned char cuda_module_float_adm[];

/* A rows segment of MAX_SEGMENT columns takes 9 (S + 1) floats of shared
 * memory: 45 KiB. */
enum { THREADS = FADM_THREADS, ROWS_PER_BLOCK = 1, MAX_SEGMENT = 1280 };
enum { SUMS = FLOAT_ADM_SUMS };

/* ---- the plan ------------------------------------------------------------- */

typedef struct FloatAdmPlan {
    const FloatAdmState *s;
    unsigned bitdepth;
    int w[FLOAT_ADM_SCALES], h[FLOAT_ADM_SCALES];   /* each level's input */
    int w2[FLOAT_ADM_SCALES], h2[FLOAT_ADM_SCALES]; /* its bands */
    FloatAdmRect rect[FLOAT_ADM_SCALES];
    /* offsets in a slot, bytes */
    size_t rows[FLOAT_ADM_SCALES];   /* the row sums of each level, from 0 on */
    size_t approx[FLOAT_ADM_SCALES][2];
    size_t details[2][3];
    size_t csf[6];
    CudaSlotLayout slot; /* the row sums read back */
} FloatAdmPlan;

FloatAdmPlan *float_adm_cuda_plan_new(const FloatAdmState *s, unsigned bitdepth);
const CudaSlotLayout *float_adm_cuda_slot(const FloatAdmPlan *p);
const char *float_adm_cuda_step(const FloatAdmPlan *p, unsigned i, uint64_t slot,
                                uint64_t rcp_table, unsigned rcp_shift, uint64_t ref,
                                uint64_t dist, uint64_t stride, unsigned launch[4], void *args);
int float_adm_cuda_write(const FloatAdmPlan *p, FeatureSink *sink, unsigned frame,
                         const float *rows);

static bool level_scored(const FloatAdmState *s, unsigned scale)
{
    return scale > 0 || !s->skip_scale0;
}

FloatAdmPlan *float_adm_cuda_plan_new(const FloatAdmState *s, unsigned bitdepth)
{
    FloatAdmPlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->s = s;
    p->bitdepth = bitdepth;
    int w = s->w, h = s->h;
    for (unsigned k = 0; k < FLOAT_ADM_SCALES; k++) {
        p->w[k] = w;
        p->h[k] = h;
        p->w2[k] = (w + 1) / 2;
        p->h2[k] = (h + 1) / 2;
        p->rect[k] = float_adm_rect(p->w2[k], p->h2[k]);
        w = p->w2[k];
        h = p->h2[k];
    }
    size_t rows = 0;
    for (unsigned k = 0; k < FLOAT_ADM_SCALES; k++) {
        p->rows[k] = rows;
        rows += (size_t)SUMS * sizeof(float) * (size_t)p->h2[k];
    }
    p->slot.readback_bytes = rows;
    size_t *at = &p->slot.bytes;
    cuda_plan_place(at, rows);
    const size_t band0 = (size_t)p->w2[0] * (size_t)p->h2[0] * sizeof(float);
    for (unsigned k = 0; k < FLOAT_ADM_SCALES; k++)
        for (unsigned i = 0; i < 2; i++)
            p->approx[k][i] = cuda_plan_place(at, (size_t)p->w2[k] * (size_t)p->h2[k] * sizeof(float));
    for (unsigned i = 0; i < 2; i++)
        for (unsigned b = 0; b < 3; b++) p->details[i][b] = cuda_plan_place(at, band0);
    for (unsigned b = 0; b < 6; b++) p->csf[b] = cuda_plan_place(at, band0);
    p->slot.steps = 3 * FLOAT_ADM_SCALES - (s->skip_scale0 ? 2 : 0);
    return p;
}

const CudaSlotLayout *float_adm_cuda_slot(const FloatAdmPlan *p)
{
    return &p->slot;
}

/*
 * Step i of a frame in slot memory `slot` (device addresses; the host test
 * passes host addresses): the kernel's name, its launch (grid x, grid y,
 * threads per block, shared bytes) and its arguments (args: a struct
 * FadmArgs).  The steps, in stream order, for each level: dwt, then
 * (unless adm_skip_scale0 at level 0) decouple and rows.
 */
const char *float_adm_cuda_step(const FloatAdmPlan *p, unsigned i, uint64_t slot,
                                uint64_t rcp_table, unsigned rcp_shift, uint64_t ref,
                                uint64_t dist, uint64_t stride, unsigned launch[4], void *args)
{
    if (i >= p->slot.steps) return NULL;
    const FloatAdmState *s = p->s;
    /* Which level and which of its steps (0 dwt, 1 decouple, 2 rows). */
    const unsigned k = i + (s->skip_scale0 && i > 0 ? 2 : 0);
    const unsigned scale = k / 3, part = k % 3;

    FadmArgs a;
    memset(&a, 0, sizeof(a));
    if (scale == 0) {
        a.src[0] = ref;
        a.src[1] = dist;
        a.src_stride = stride;
    } else {
        a.src[0] = slot + p->approx[scale - 1][0];
        a.src[1] = slot + p->approx[scale - 1][1];
        a.src_stride = (unsigned long long)p->w[scale] * sizeof(float);
    }
    for (unsigned pic = 0; pic < 2; pic++) {
        a.band[pic][0] = slot + p->approx[scale][pic];
        for (unsigned b = 0; b < 3; b++) a.band[pic][1 + b] = slot + p->details[pic][b];
    }
    for (unsigned b = 0; b < 6; b++) a.csf[b] = slot + p->csf[b];
    a.rows = slot + p->rows[scale];
    a.rcp_table = rcp_table;
    a.rcp_shift = rcp_shift;
    a.gain_limit = s->enhn_gain_limit;
    for (unsigned b = 0; b < 3; b++) a.csf_w[b] = s->csf[scale][b];
    a.cos_1deg_sq = s->cos_1deg_sq;
    a.inv_scaler = p->bitdepth > 8 ? 1.0f / (float)(1u << (p->bitdepth - 8)) : 1.0f;
    a.w = p->w[scale];
    a.h = p->h[scale];
    a.w2 = p->w2[scale];
    a.h2 = p->h2[scale];
    const FloatAdmRect rc = p->rect[scale];
    a.left = rc.left;
    a.top = rc.top;
    a.right = rc.right;
    a.bottom = rc.bottom;
    /* decoupled: the scored region and one sample around it, as far as the
     * band goes (the masking window's reach) */
    a.col_lo = rc.left - 1 > 0 ? rc.left - 1 : 0;
    a.col_hi = rc.right + 1 < a.w2 ? rc.right + 1 : a.w2;
    a.row_lo = rc.top - 1 > 0 ? rc.top - 1 : 0;
    a.row_hi = rc.bottom + 1 < a.h2 ? rc.bottom + 1 : a.h2;
    a.bypass_cm = s->bypass_cm;
    a.details = level_scored(s, scale);
    a.rows_per_block = ROWS_PER_BLOCK;
    a.segment = (int)cuda_row_segment((unsigned)(rc.right - rc.left), MAX_SEGMENT);

    const char *name = NULL;
    launch[2] = THREADS;
    launch[3] = 0;
    switch (part) {
    case 0:
        name = scale > 0 ? "fadm_dwt_f" : p->bitdepth > 8 ? "fadm_dwt_16" : "fadm_dwt_8";
        launch[0] = cuda_blocks_for((unsigned)a.w2, THREADS);
        launch[1] = cuda_grid_rows((unsigned)a.h2);
        break;
    case 1:
        name = "fadm_decouple";
        launch[0] = cuda_blocks_for((unsigned)(a.col_hi - a.col_lo), THREADS);
        launch[1] = cuda_grid_rows((unsigned)(a.row_hi - a.row_lo));
        break;
    default:
        name = "fadm_rows";
        launch[0] = cuda_blocks_for((unsigned)(rc.bottom - rc.top), ROWS_PER_BLOCK);
        launch[1] = 1;
        /* fadm_rows_shared_floats() of float_adm.cu */
        launch[3] = (unsigned)(sizeof(float) * (SUMS * ROWS_PER_BLOCK * a.segment +
                                                SUMS * ROWS_PER_BLOCK));
        break;
    }
    memcpy(args, &a, sizeof(a));
    return name;
}

/* collect()'s work: the rows' sums of each level added in float in row
 * order (float_adm.c's num[0] += num_h ...), the levels' scores, the keys. */
int float_adm_cuda_write(const FloatAdmPlan *p, FeatureSink *sink, unsigned frame,
                         const float *rows)
{
    const float *level_rows[FLOAT_ADM_SCALES];
    for (unsigned k = 0; k < FLOAT_ADM_SCALES; k++) level_rows[k] = rows + p->rows[k] / sizeof(float);
    return float_adm_write_rows(p->s, sink, frame, level_rows);
}

/* ---- the twin ------------------------------------------------------------- */

/* Not static: the host test asks it too. */
bool float_adm_cuda_supports(const void *state);

bool float_adm_cuda_supports(const void *state)
{
    const FloatAdmState *s = state;
    unsigned shift;
    size_t count;
    bool usable;
    float_adm_reciprocal_table(&shift, &count, &usable);
    /* every other option: tests/test_float_vif_adm_motion_cuda_host.cpp */
    return usable && s->p_norm == 3.0;
}

/* The plan of a run: the layout, and the shift of the reciprocal's table. */
typedef struct FloatAdmRun {
    FloatAdmPlan *plan;
    unsigned shift;
} FloatAdmRun;

static void float_adm_run_free(void *own)
{
    FloatAdmRun *r = own;
    free(r->plan);
    free(r);
}

/* Constants: the reciprocal's table where the kernels need one.  Per slot:
 * the plan's layout, its row sums (first) read back; every row sum that
 * collect() reads is written by the steps. */
static int float_adm_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                    CudaPlan *plan, char *error, size_t error_size)
{
    FloatAdmRun *r = cuda_plan_new_own(plan, sizeof(*r), float_adm_run_free);
    if (!r) return -ENOMEM;
    r->plan = float_adm_cuda_plan_new(state, format->bitdepth);
    if (!r->plan) return -ENOMEM;
    size_t count = 0;
    bool usable = false;
    const uint32_t *table = float_adm_reciprocal_table(&r->shift, &count, &usable);
    if (!usable) {
        snprintf(error, error_size, "float ADM: the host's reciprocal cannot be reproduced");
        return -ENOTSUP;
    }
    if (table) cuda_plan_upload_constants(plan, table, count * sizeof(uint32_t));
    cuda_plan_use_slot(plan, &r->plan->slot);
    return 0;
}

static void float_adm_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                     const CudaPlanMemory *memory, CudaStep *step)
{
    const FloatAdmRun *r = plan->own;
    const CudaFrame *f = memory->frame;
    unsigned launch[4] = { 0, 0, 0, 0 };
    const char *name = float_adm_cuda_step(r->plan, index, memory->slot, memory->constants,
                                           r->shift, f->ref[0], f->dist[0], f->stride[0], launch,
                                           step->args);
    cuda_step_launch_shared(step, name, launch, sizeof(FadmArgs));
}

static int float_adm_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                       const MetricFrame *frame, FeatureSink *sink)
{
    const FloatAdmRun *r = plan->own;
    return float_adm_cuda_write(r->plan, sink, frame->index, readback);
}

const CudaTwin cuda_twin_float_adm = {
    CUDA_TWIN_OF(float_adm),
    .supports = float_adm_cuda_supports,
};
