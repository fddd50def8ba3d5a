/*
 * Float VIF on CUDA: the device filters, decimates and sums each row of the
 * four scales (float_vif.cu); the host reads back the rows' float sums
 * (per scale and row: num, den), adds them in float in row order as the C
 * reference does, and writes the keys through its float_vif_write().
 *
 * Device memory, per slot:
 *   the row sums of every scale (read back: 2 floats per row of each
 *   scale, 16 KiB at 1080p);
 *   the pictures of scales 1, 2 and 3 (float, dense);
 *   the vertical pass of a decimation (both pictures, w x h / 2 of scale
 *   0, reused by every decimation).
 * Scale 0 is read from the frame's luma where the backend uploaded it.
 *
 * The plan (sizes, offsets) and the launches of a frame (kernel, grid,
 * shared memory, arguments) are functions without side effects, so that
 * tests/test_float_vif_adm_motion_cuda_host.cpp drives the kernels' element code on
 * the CPU through exactly what the plan's steps launch, and collect()'s work is
 * float_vif_cuda_write(), which the test calls too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_twin.h"
#include "float_vif_args.h"
#include "metrics/float_vif/float_vif.h"

extern const unsigned char cuda_module_float_vif[];

/* A rows block of FVIF_ROWS (4) rows and a segment of MAX_SEGMENT columns
 * take 4 (5 (S + 2r) + 2 S + 2) floats of shared memory (34 KiB with 17
 * taps); with 17 taps a segment and its margins are one column per thread
 * (240 + 16). */
enum { THREADS = FVIF_THREADS, ROWS_PER_BLOCK = FVIF_ROWS, MAX_SEGMENT = 240 };

/* ---- the plan ------------------------------------------------------------- */

typedef struct FloatVifPlan {
    const FloatVifState *s;
    unsigned bitdepth;
    unsigned w[FLOAT_VIF_SCALES], h[FLOAT_VIF_SCALES];
    /* offsets in a slot, bytes */
    size_t rows[FLOAT_VIF_SCALES];  /* the row sums of each scale, from 0 on */
    size_t scaled_ref[FLOAT_VIF_SCALES], scaled_dis[FLOAT_VIF_SCALES]; /* scales 1..3 */
    size_t low_ref, low_dis;
    CudaSlotLayout slot; /* the row sums read back */
} FloatVifPlan;

/* Not static: the host test calls them (it declares them itself). */
FloatVifPlan *float_vif_cuda_plan_new(const FloatVifState *s, unsigned bitdepth);
const CudaSlotLayout *float_vif_cuda_slot(const FloatVifPlan *p);
const char *float_vif_cuda_step(const FloatVifPlan *p, unsigned i, uint64_t slot, uint64_t ref,
                                uint64_t dist, uint64_t stride, unsigned launch[4], void *args);
int float_vif_cuda_write(const FloatVifPlan *p, FeatureSink *sink, unsigned frame,
                         const float *rows);

FloatVifPlan *float_vif_cuda_plan_new(const FloatVifState *s, unsigned bitdepth)
{
    FloatVifPlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->s = s;
    p->bitdepth = bitdepth;
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++) {
        p->w[k] = (unsigned)s->w[k];
        p->h[k] = (unsigned)s->h[k];
    }
    size_t rows = 0;
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++) {
        p->rows[k] = rows;
        rows += 2 * sizeof(float) * p->h[k];
    }
    p->slot.readback_bytes = rows;
    size_t *at = &p->slot.bytes;
    cuda_plan_place(at, rows);
#define FVIF_PLACE(field, bytes) p->field = cuda_plan_place(at, bytes)
    for (unsigned k = 1; k < FLOAT_VIF_SCALES; k++) {
        const size_t bytes = (size_t)p->w[k] * p->h[k] * sizeof(float);
        FVIF_PLACE(scaled_ref[k], bytes);
        FVIF_PLACE(scaled_dis[k], bytes);
    }
    const size_t low = (size_t)p->w[0] * (p->h[0] / 2) * sizeof(float);
    FVIF_PLACE(low_ref, low);
    FVIF_PLACE(low_dis, low);
#undef FVIF_PLACE
    p->slot.steps = (s->skip_scale0 ? 0 : 1) + 3 * (FLOAT_VIF_SCALES - 1);
    return p;
}

const CudaSlotLayout *float_vif_cuda_slot(const FloatVifPlan *p)
{
    return &p->slot;
}

/* fvif_rows_shared_floats() of float_vif.cu */
static unsigned rows_shared_bytes(int taps, int segment)
{
    const int r = taps / 2;
    return (unsigned)sizeof(float) *
           (unsigned)(5 * ROWS_PER_BLOCK * (segment + 2 * r) + 2 * ROWS_PER_BLOCK * segment +
                      2 * ROWS_PER_BLOCK);
}

/*
 * Step i of a frame in slot memory `slot` (device addresses; the host test
 * passes host addresses): the kernel's name, its launch (grid x, grid y,
 * threads per block, shared bytes) and its arguments (args: a struct
 * FvifArgs).  The steps, in stream order, for each scale s: rows (unless
 * vif_skip_scale0 at s = 0), then below scale 3 vdec and hdec, which make
 * scale s + 1.
 */
const char *float_vif_cuda_step(const FloatVifPlan *p, unsigned i, uint64_t slot, uint64_t ref,
                                uint64_t dist, uint64_t stride, unsigned launch[4], void *args)
{
    if (i >= p->slot.steps) return NULL;
    const FloatVifState *s = p->s;
    /* Which scale and which of its steps (0 rows, 1 vdec, 2 hdec). */
    const unsigned k = i + (s->skip_scale0 ? 1 : 0);
    const unsigned scale = k / 3, part = k % 3;
    const bool wide = p->bitdepth > 8;

    FvifArgs a;
    memset(&a, 0, sizeof(a));
    /* The pictures rows and vdec read: the scale's. */
    if (scale == 0) {
        a.ref = ref;
        a.dis = dist;
        a.stride = stride;
        a.prescaled = p->w[0] != (unsigned)s->src_w || p->h[0] != (unsigned)s->src_h;
    } else {
        a.ref = slot + p->scaled_ref[scale];
        a.dis = slot + p->scaled_dis[scale];
        a.stride = (unsigned long long)p->w[scale] * sizeof(float);
    }
    a.w = (int)p->w[scale];
    a.h = (int)p->h[scale];
    a.sigma_nsq = s->sigma_nsq;
    a.gain_limit = (float)s->enhn_gain_limit;
    a.sigma_max_inv = s->sigma_max_inv;
    a.ratio_x = (float)s->src_w / s->w[0];
    a.ratio_y = (float)s->src_h / s->h[0];
    a.inv_scaler = wide ? 1.0f / (float)(1u << (p->bitdepth - 8)) : 1.0f;
    a.rows_per_block = ROWS_PER_BLOCK;
    a.segment = (int)cuda_row_segment(p->w[scale], MAX_SEGMENT);
    /* rows filters with the scale's filter, the decimation with the next's */
    const unsigned fs = part == 0 ? scale : scale + 1;
    a.taps = s->taps[fs];
    for (int t = 0; t < a.taps && t < FVIF_MAX_TAPS; t++) a.filter[t] = s->filter[fs][t];

    const char *name = NULL;
    launch[2] = THREADS;
    launch[3] = 0;
    switch (part) {
    case 0:
        a.rows = slot + p->rows[scale];
        if (scale == 0)
            name = a.taps == 17 ? (wide ? "fvif_rows_16_17" : "fvif_rows_8_17")
                                : (wide ? "fvif_rows_16_0" : "fvif_rows_8_0");
        else
            name = a.taps == 9 ? "fvif_rows_f_9" : a.taps == 5 ? "fvif_rows_f_5"
                 : a.taps == 3 ? "fvif_rows_f_3" : "fvif_rows_f_0";
        launch[0] = cuda_blocks_for(p->h[scale], ROWS_PER_BLOCK);
        launch[1] = 1;
        launch[3] = rows_shared_bytes(a.taps, a.segment);
        break;
    case 1:
        a.out_ref = slot + p->low_ref;
        a.out_dis = slot + p->low_dis;
        if (scale == 0)
            name = a.taps == 9 ? (wide ? "fvif_vdec_16_9" : "fvif_vdec_8_9")
                               : (wide ? "fvif_vdec_16_0" : "fvif_vdec_8_0");
        else
            name = a.taps == 5 ? "fvif_vdec_f_5" : a.taps == 3 ? "fvif_vdec_f_3" : "fvif_vdec_f_0";
        launch[0] = cuda_blocks_for(p->w[scale], THREADS);
        launch[1] = cuda_grid_rows(p->h[scale] / 2);
        break;
    default:
        /* the vertical pass (dense, w of the scale wide) to the next scale */
        a.ref = slot + p->low_ref;
        a.dis = slot + p->low_dis;
        a.stride = (unsigned long long)p->w[scale] * sizeof(float);
        a.prescaled = 0;
        a.out_ref = slot + p->scaled_ref[scale + 1];
        a.out_dis = slot + p->scaled_dis[scale + 1];
        name = a.taps == 9 ? "fvif_hdec_9" : a.taps == 5 ? "fvif_hdec_5"
             : a.taps == 3 ? "fvif_hdec_3" : "fvif_hdec_0";
        launch[0] = cuda_blocks_for(p->w[scale] / 2, THREADS);
        launch[1] = cuda_grid_rows(p->h[scale] / 2);
        break;
    }
    memcpy(args, &a, sizeof(a));
    return name;
}

/* collect()'s work: the rows' sums of each scale added in float in row
 * order (float_vif.c's acc_num += num), then the keys. */
int float_vif_cuda_write(const FloatVifPlan *p, FeatureSink *sink, unsigned frame,
                         const float *rows)
{
    const float *scale_rows[FLOAT_VIF_SCALES];
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++) scale_rows[k] = rows + p->rows[k] / sizeof(float);
    return float_vif_write_rows(p->s, sink, frame, scale_rows);
}

/* ---- the twin ------------------------------------------------------------- */

/* Not static: the host test asks it too. */
bool float_vif_cuda_supports(const void *state);

bool float_vif_cuda_supports(const void *state)
{
    /* every option: tests/test_float_vif_adm_motion_cuda_host.cpp; the kernels take
     * filters of up to FVIF_MAX_TAPS taps (libvmaf's kernel scales make at
     * most 65) */
    const FloatVifState *s = state;
    /* the kernels prescale by nearest sample only; the other
     * vif_prescale_method scalers run on the CPU */
    if (s->prescale_method != FLOAT_VIF_PRESCALE_NEAREST &&
        (s->w[0] != s->src_w || s->h[0] != s->src_h))
        return false;
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++)
        if (s->taps[k] > FVIF_MAX_TAPS) return false;
    return true;
}

/* Per slot: the plan's layout, its row sums (first) read back; every row
 * sum that collect() reads is written by the steps. */
static int float_vif_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                    CudaPlan *plan, char *error, size_t error_size)
{
    FloatVifPlan *p = float_vif_cuda_plan_new(state, format->bitdepth);
    return p ? cuda_plan_take_slot(plan, p, &p->slot) : -ENOMEM;
}

static void float_vif_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                     const CudaPlanMemory *memory, CudaStep *step)
{
    const CudaFrame *f = memory->frame;
    unsigned launch[4] = { 0, 0, 0, 0 };
    const char *name = float_vif_cuda_step(plan->own, index, memory->slot, f->ref[0], f->dist[0],
                                           f->stride[0], launch, step->args);
    cuda_step_launch_shared(step, name, launch, sizeof(FvifArgs));
}

static int float_vif_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                       const MetricFrame *frame, FeatureSink *sink)
{
    return float_vif_cuda_write(plan->own, sink, frame->index, readback);
}

const CudaTwin cuda_twin_float_vif = {
    CUDA_TWIN_OF(float_vif),
    .supports = float_vif_cuda_supports,
};
