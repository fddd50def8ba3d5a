/*
 * speed_chroma and speed_temporal on CUDA: the device computes each
 * picture's per-block entropies and variances (speed.cu, the C reference's
 * steps); the host reads them back and scores them through the C
 * reference's speed_pair_score() and key writers (src/metrics/speed.h).
 *
 * A frame's pictures are the launches' z index: speed_chroma's U and V
 * planes of both videos (4), speed_temporal's two difference pictures of
 * the frame's and the previous frame's lumas (2; the backend keeps the
 * previous distorted luma for it, CudaTwin.dist_history).  Per frame:
 * convert and prescale (with a prescale only), blur, local mean, means,
 * covariance, statistics: 5 to 7 launches, and (2 x blocks + 1) floats a
 * picture read back (1080p chroma: 72 blocks, 1.2 KB for the frame).
 *
 * The launches (kernel, grid and arguments) and the step from what the
 * device wrote to the keys are functions without side effects, so that
 * tests/test_speed_cuda_host.cpp drives the kernels' element code on the
 * CPU through exactly what the plan's steps launch and collect() writes.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_twin.h"
#include "speed_args.h"
#include "metrics/speed/speed.h"
#include "metrics/common/vif_tools.h"

extern const unsigned char cuda_module_speed[];
extern const Metric metric_speed_chroma, metric_speed_temporal;

enum { ROW_THREADS = SPEED_ROW_THREADS, COV_THREADS = SPEED_COV_THREADS,
       STATS_THREADS = SPEED_STATS_THREADS };

enum SpeedStep {
    STEP_CONVERT,
    STEP_PRESCALE,
    STEP_BLUR,
    STEP_LOCAL_MEAN,
    STEP_MEANS,
    STEP_COV,
    STEP_STATS,
    SPEED_STEPS,
};

static const char *const step_names[SPEED_STEPS] = {
    "speed_convert", "speed_prescale", "speed_blur", "speed_local_mean", "speed_means",
    "speed_cov", "speed_stats",
};

/* Not static: the host test calls them (it declares them itself). */
size_t speed_cuda_work_floats(const SpeedGeometry *g);
size_t speed_cuda_result_floats(const SpeedGeometry *g);
bool speed_cuda_step_runs(const SpeedGeometry *g, unsigned step);
const char *speed_cuda_step_kernel(const SpeedGeometry *g, unsigned step, unsigned pictures,
                                   unsigned launch[4]);
void speed_cuda_pictures(const SpeedGeometry *g, const float *results, unsigned pictures,
                         SpeedStats *stats);

/* A picture's work area (speed.cu's speed_layout()), in floats. */
size_t speed_cuda_work_floats(const SpeedGeometry *g)
{
    const size_t blocks = (size_t)g->blocks, e = SPEED_ELEMENTS;
    size_t at = 0;
    if (g->prescale) at += (size_t)g->w * g->h + (size_t)g->scaled_w * g->scaled_h;
    at += 2 * (size_t)g->op_w * g->op_h + 32 + e * e + 3 * e * blocks;
    return (at + 31) / 32 * 32;
}

/* A picture's results: entropies, variances, the singular flag. */
size_t speed_cuda_result_floats(const SpeedGeometry *g)
{
    return 2 * (size_t)g->blocks + 1;
}

bool speed_cuda_step_runs(const SpeedGeometry *g, unsigned step)
{
    return g->prescale || (step != STEP_CONVERT && step != STEP_PRESCALE);
}

/* Step `step`'s kernel and grid: blocks in x, y, z and threads a block. */
const char *speed_cuda_step_kernel(const SpeedGeometry *g, unsigned step, unsigned pictures,
                                   unsigned launch[4])
{
    launch[2] = pictures;
    switch (step) {
    case STEP_CONVERT:
        launch[0] = cuda_blocks_for((size_t)g->w, ROW_THREADS);
        launch[1] = (unsigned)g->h;
        launch[3] = ROW_THREADS;
        break;
    case STEP_PRESCALE:
        launch[0] = cuda_blocks_for((size_t)g->scaled_w, ROW_THREADS);
        launch[1] = (unsigned)g->scaled_h;
        launch[3] = ROW_THREADS;
        break;
    case STEP_BLUR:
    case STEP_LOCAL_MEAN:
        launch[0] = cuda_blocks_for((size_t)g->op_w, ROW_THREADS);
        launch[1] = (unsigned)g->op_h;
        launch[3] = ROW_THREADS;
        break;
    case STEP_MEANS:
        launch[0] = launch[1] = 1;
        launch[3] = COV_THREADS;
        break;
    case STEP_COV:
        launch[0] = SPEED_ELEMENTS * (SPEED_ELEMENTS + 1) / 2;
        launch[1] = 1;
        launch[3] = COV_THREADS;
        break;
    default:
        launch[0] = launch[1] = 1;
        launch[3] = STATS_THREADS;
        break;
    }
    return step_names[step];
}

/* The pictures' statistics as the device left them in results. */
void speed_cuda_pictures(const SpeedGeometry *g, const float *results, unsigned pictures,
                         SpeedStats *stats)
{
    const size_t each = speed_cuda_result_floats(g);
    for (unsigned z = 0; z < pictures; z++) {
        float *r = (float *)results + z * each;
        stats[z].entropies = r;
        stats[z].variances = r + g->blocks;
        stats[z].singular = r[2 * g->blocks] != 0.0f;
    }
}

/* ---- the twins ------------------------------------------------------------------- */

/* The plan of a run (both twins): the pictures a frame scores (temporal: the
 * two differences; chroma: U and V of both), the steps the geometry runs,
 * and the slot's layout: each picture's work, then each one's results. */
typedef struct SpeedRun {
    bool temporal;
    const SpeedSetup *setup;
    unsigned pictures;
    size_t work_floats, result_floats;
    size_t results; /* offset in a slot */
    double log2_2pie;
    unsigned char step_ids[SPEED_STEPS];
} SpeedRun;

static bool speed_cuda_supports(const void *state, bool temporal)
{
    /* The prescalers the device has: nearest and bilinear (the v1 models'
     * bilinear); bicubic and lanczos4 prescales run on the CPU. */
    const int method = temporal ? ((const SpeedTemporalState *)state)->o.prescale_method
                                : ((const SpeedChromaState *)state)->o.prescale_method;
    const double ps = temporal ? ((const SpeedTemporalState *)state)->o.prescale
                               : ((const SpeedChromaState *)state)->o.prescale;
    return fabs(ps - 1.0) < 1e-3 || method == VIF_PRESCALE_NEAREST ||
           method == VIF_PRESCALE_BILINEAR;
}

static bool speed_chroma_cuda_supports(const void *state)
{
    return speed_cuda_supports(state, false);
}

static bool speed_temporal_cuda_supports(const void *state)
{
    return speed_cuda_supports(state, true);
}

/* Constants: the setup.  Per slot: the pictures' work and results, the
 * results read back. */
static int speed_cuda_plan(const void *state, bool temporal, CudaPlan *plan)
{
    SpeedRun *r = cuda_plan_new_own(plan, sizeof(*r), NULL);
    if (!r) return -ENOMEM;
    r->temporal = temporal;
    r->setup = temporal ? &((const SpeedTemporalState *)state)->setup
                        : &((const SpeedChromaState *)state)->setup;
    r->pictures = temporal ? 2 : 4;
    const SpeedGeometry *g = &r->setup->g;
    r->work_floats = speed_cuda_work_floats(g);
    r->result_floats = speed_cuda_result_floats(g);
    r->log2_2pie = log2(2 * M_PI * M_E);
    for (unsigned i = 0; i < SPEED_STEPS; i++)
        if (speed_cuda_step_runs(g, i)) r->step_ids[plan->steps++] = (unsigned char)i;
    cuda_plan_upload_constants(plan, r->setup, sizeof(SpeedSetup));
    size_t at = 0;
    cuda_plan_place(&at, r->pictures * r->work_floats * sizeof(float));
    r->results = cuda_plan_place(&at, r->pictures * r->result_floats * sizeof(float));
    plan->slot_bytes = at;
    plan->readback_offset = r->results;
    plan->readback_bytes = r->pictures * r->result_floats * sizeof(float);
    return 0;
}

static int speed_chroma_cuda_plan(const void *state, const QualeVideoFormat *format,
                                  CudaPlan *plan, char *error, size_t error_size)
{
    return speed_cuda_plan(state, false, plan);
}

static int speed_temporal_cuda_plan(const void *state, const QualeVideoFormat *format,
                                    CudaPlan *plan, char *error, size_t error_size)
{
    return speed_cuda_plan(state, true, plan);
}

/* Every step reads one argument block: the pictures, the memory, the
 * setup.  Temporal frame 0 has no difference to score (its 0 is written by
 * collect()): its steps launch nothing. */
static void speed_cuda_step(const CudaPlan *plan, unsigned index, const CudaPlanMemory *memory,
                            CudaStep *step)
{
    const SpeedRun *r = plan->own;
    const CudaFrame *f = memory->frame;
    SpeedArgs a;
    memset(&a, 0, sizeof(a));
    a.setup = memory->constants;
    bool work = true;
    if (r->temporal) {
        work = f->index > 0 && f->prev_ref[0] && f->prev_dist[0];
        const bool use_ref = ((const SpeedTemporalState *)plan->state)->use_ref_diff;
        a.src[0] = f->prev_ref[0];
        a.sub[0] = f->ref[0];
        a.src[1] = f->prev_dist[0];
        a.sub[1] = use_ref ? f->ref[0] : f->dist[0];
        a.stride[0] = a.stride[1] = f->stride[0];
    } else {
        for (unsigned c = 0; c < 2; c++) {
            a.src[2 * c] = f->ref[1 + c];
            a.src[2 * c + 1] = f->dist[1 + c];
            a.stride[2 * c] = a.stride[2 * c + 1] = f->stride[1 + c];
        }
    }
    a.work_floats = r->work_floats;
    a.work = memory->slot;
    a.result_floats = r->result_floats;
    a.results = memory->slot + r->results;
    a.log2_2pie = r->log2_2pie;
    a.hbd = plan->format.bitdepth > 8;
    a.scaler = (float)(1u << (plan->format.bitdepth - 8));
    unsigned launch[4] = { 0, 0, 0, 0 };
    const char *name = speed_cuda_step_kernel(&r->setup->g, r->step_ids[index], r->pictures,
                                              launch);
    CUDA_STEP_SET(step, name, work ? launch[0] : 0, launch[1], launch[2], launch[3], 0, a);
}

static int speed_cuda_collect(const CudaPlan *plan, const void *readback,
                              const MetricFrame *frame, FeatureSink *sink)
{
    const SpeedRun *r = plan->own;
    const SpeedGeometry *g = &r->setup->g;
    SpeedStats stats[4];
    speed_cuda_pictures(g, readback, r->pictures, stats);
    const bool scored = frame->index > 0 && frame->prev_ref[0] && frame->prev_dist[0];
    return speed_write_stats(plan->state, r->temporal, r->setup, stats, scored, frame->index,
                             sink);
}

/* The two speed metrics' twins: one module, one step and collect; each its
 * own plan and support rule. */
const CudaTwin cuda_twin_speed_chroma = {
    .metric = &metric_speed_chroma, .module_image = cuda_module_speed,
    .supports = speed_chroma_cuda_supports, .plan = speed_chroma_cuda_plan,
    .step = speed_cuda_step, .collect = speed_cuda_collect,
};

const CudaTwin cuda_twin_speed_temporal = {
    .metric = &metric_speed_temporal, .module_image = cuda_module_speed, .dist_history = true,
    .supports = speed_temporal_cuda_supports, .plan = speed_temporal_cuda_plan,
    .step = speed_cuda_step, .collect = speed_cuda_collect,
};
