/*
 * Float motion on CUDA: the device blurs the reference lumas of frames
 * i - 2 .. i where the backend keeps them and sums each row's SADs
 * (float_motion.cu); the host reads back the rows' float sums, adds them in
 * float in row order as the C reference does, and writes the frame's keys
 * through its float_motion_put(), which remembers the score for the
 * metric's own flush() (the last frame's motion2 and motion3).  Frames the
 * reference refuses (a picture smaller than the blur) fail in collect()
 * with its float_motion_check_size() message.
 *
 * Device memory, per slot: the row sums (read back: 2 floats per row).
 *
 * motion_add_scale1 (the SAD of the blurred pictures shrunk by libvmaf's
 * bilinear scaler, added to the score) is not on the device: the twin
 * declines it and the metric stays on the CPU.
 *
 * The launch of a frame (kernel, grid, shared memory, arguments) is a
 * function without side effects, so that tests/test_float_vif_adm_motion_cuda_host.cpp
 * drives the kernel's element code on the CPU through exactly what the
 * plan's steps launch, and collect()'s work is float_motion_cuda_write(),
 * which the test calls too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_twin.h"
#include "float_motion_args.h"
#include "metrics/float_motion/float_motion.h"

extern const unsigned char cuda_module_float_motion[];

/* A block of FMOT_ROWS (4) rows and a segment of MAX_SEGMENT columns take
 * 4 (3 (S + 4) + 2 S + 2) floats of shared memory: 40 KiB. */
enum { THREADS = FMOT_THREADS, ROWS_PER_BLOCK = FMOT_ROWS, MAX_SEGMENT = 508 };

/* ---- the plan ------------------------------------------------------------- */

typedef struct FloatMotionPlan {
    FloatMotionState *s;   /* float_motion_put() remembers the last score */
    unsigned bitdepth;
    CudaSlotLayout slot;   /* the row sums, read back */
} FloatMotionPlan;

/* Not static: the host test calls them (it declares them itself). */
FloatMotionPlan *float_motion_cuda_plan_new(FloatMotionState *s, unsigned bitdepth);
const CudaSlotLayout *float_motion_cuda_slot(const FloatMotionPlan *p);
const char *float_motion_cuda_launch(const FloatMotionPlan *p, unsigned index, uint64_t rows,
                                     uint64_t cur, uint64_t prev, uint64_t prev2,
                                     uint64_t stride, unsigned launch[4], void *args);
int float_motion_cuda_write(const FloatMotionPlan *p, FeatureSink *sink, unsigned index,
                            const float *rows);

FloatMotionPlan *float_motion_cuda_plan_new(FloatMotionState *s, unsigned bitdepth)
{
    FloatMotionPlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->s = s;
    p->bitdepth = bitdepth;
    p->slot.bytes = p->slot.readback_bytes = 2 * sizeof(float) * (size_t)s->h;
    p->slot.steps = 1;
    return p;
}

const CudaSlotLayout *float_motion_cuda_slot(const FloatMotionPlan *p)
{
    return &p->slot;
}

/* The kernel for a bit depth and a blur (5 taps, 3 with motion_filter_size
 * 3). */
static const char *kernel_name(unsigned bitdepth, int taps)
{
    if (bitdepth > 8) return taps == 3 ? "fmot_sad_16_3" : "fmot_sad_16_5";
    return taps == 3 ? "fmot_sad_8_3" : "fmot_sad_8_5";
}

/*
 * The launch of frame `index` (device addresses; the host test passes host
 * addresses): the kernel's name, its launch (grid x, grid y, threads per
 * block, shared bytes) and its arguments (args: a struct FmotArgs); NULL
 * where the frame launches nothing: frame 0, motion_force_zero, or a
 * picture the reference refuses (collect() says why).  prev2 is frame
 * index - 2's luma from index 2 on.
 */
const char *float_motion_cuda_launch(const FloatMotionPlan *p, unsigned index, uint64_t rows,
                                     uint64_t cur, uint64_t prev, uint64_t prev2,
                                     uint64_t stride, unsigned launch[4], void *args)
{
    const FloatMotionState *s = p->s;
    if (!float_motion_scored(s, index) || s->w <= s->taps / 2 || s->h <= s->taps / 2)
        return NULL;
    FmotArgs a;
    memset(&a, 0, sizeof(a));
    a.pic[0] = prev;
    a.pic[1] = cur;
    a.pic[2] = index >= 2 ? prev2 : 0;
    a.stride = stride;
    a.rows = rows;
    for (int k = 0; k < s->taps && k < FLOAT_MOTION_MAX_TAPS; k++) a.filter[k] = s->filter[k];
    a.inv_scaler = p->bitdepth > 8 ? 1.0f / (float)(1u << (p->bitdepth - 8)) : 1.0f;
    a.w = s->w;
    a.h = s->h;
    a.taps = s->taps;
    a.pictures = index >= 2 ? 3 : 2;
    a.rows_per_block = ROWS_PER_BLOCK;
    a.segment = (int)cuda_row_segment((unsigned)s->w, MAX_SEGMENT);
    launch[0] = (unsigned)(s->h + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    launch[1] = 1;
    launch[2] = THREADS;
    /* fmot_shared_floats() of float_motion.cu */
    launch[3] = (unsigned)sizeof(float) *
                (unsigned)(3 * ROWS_PER_BLOCK * (a.segment + 2 * (s->taps / 2)) +
                           2 * ROWS_PER_BLOCK * a.segment + 2 * ROWS_PER_BLOCK);
    memcpy(args, &a, sizeof(a));
    return kernel_name(p->bitdepth, s->taps);
}

/* collect()'s work: the rows' sums added in float in row order
 * (float_motion.c's accum += line), the scores, the keys
 * (float_motion_put_rows). */
int float_motion_cuda_write(const FloatMotionPlan *p, FeatureSink *sink, unsigned index,
                            const float *rows)
{
    return float_motion_put_rows(p->s, sink, index, rows);
}

/* ---- the twin ------------------------------------------------------------- */

/* Not static: the host test asks it too. */
bool float_motion_cuda_supports(const void *state);

bool float_motion_cuda_supports(const void *state)
{
    /* every other option: tests/test_float_vif_adm_motion_cuda_host.cpp */
    const FloatMotionState *s = state;
    /* motion_add_uv (the chroma planes' scores) runs on the CPU */
    return !s->add_scale1 && !s->add_uv && (s->taps == 5 || s->taps == 3);
}

/* Per slot: the rows' sums, read back.  Where there is nothing to compute
 * (the first frame; a frame collect() refuses) the launch has no blocks. */
static int float_motion_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                       CudaPlan *plan, char *error, size_t error_size)
{
    /* float_motion_put() writes the state's atomic last score, as the
     * reference's extract() does */
    FloatMotionPlan *p = float_motion_cuda_plan_new((FloatMotionState *)state, format->bitdepth);
    return p ? cuda_plan_take_slot(plan, p, &p->slot) : -ENOMEM;
}

static void float_motion_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                        const CudaPlanMemory *memory, CudaStep *step)
{
    const FloatMotionPlan *p = plan->own;
    const CudaFrame *f = memory->frame;
    /* The earlier frames are on the device whenever the reference needs
     * them (the metric's history); were one not, the launch would fault,
     * not score zero. */
    unsigned launch[4] = { 0, 0, 0, 0 };
    const char *name = float_motion_cuda_launch(p, f->index, memory->slot, f->ref[0],
                                                f->prev_ref[0], f->prev_ref[1], f->stride[0],
                                                launch, step->args);
    cuda_step_launch_shared(step, name ? name : kernel_name(p->bitdepth, p->s->taps), launch,
                            sizeof(FmotArgs));
    if (!name) step->grid[0] = 0;
}

static int float_motion_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                          const MetricFrame *frame, FeatureSink *sink)
{
    return float_motion_cuda_write(plan->own, sink, frame->index, readback);
}

const CudaTwin cuda_twin_float_motion = {
    CUDA_TWIN_OF(float_motion),
    .supports = float_motion_cuda_supports,
};
