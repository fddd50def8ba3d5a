/*
 * float_moment on CUDA: the device sums each picture's samples and squares
 * as exact integers (float_moment.cu), in per-block partials; the host adds
 * them and finishes through the C reference's own steps (float_moment_sums,
 * float_moment_write of src/metrics/float_moment.h).
 *
 * Per 1080p frame: one launch (270 x 2 blocks of 4 rows), both luma planes
 * read once (4 MB at 8 bits), 1080 partials (8.4 KB) read back.
 *
 * tests/test_float_simple_cuda_host.cpp runs this twin's plan through the
 * plan executor on a fake driver whose kernels are the element code of the
 * .cu file on the CPU.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_twin.h"
#include "float_moment_args.h"
#include "metrics/common/cuda/luma_sums_cuda.h"
#include "metrics/float_moment/float_moment.h"

extern const unsigned char cuda_module_float_moment[];


/* PARTIALS per block column: 2 pictures x (first, second). */
enum { PARTIALS = 4 };

/* The frame's launch: kernel name, grid (x, y, threads) and arguments
 * (args: a struct FloatMomentArgs); partials holds PARTIALS x blocks. */
static const char *float_moment_cuda_launch(const FloatMomentState *s,
                                            const QualeVideoFormat *format, uint64_t ref,
                                            uint64_t dist, uint64_t stride, uint64_t partials,
                                            unsigned launch[3], void *args)
{
    /* a block per picture in y */
    luma_sums_cuda_launch(s->exact_sums, s->scaler, format, ref, dist, stride, partials, 2,
                          launch, args);
    return format->bitdepth > 8 ? "float_moment_16bit" : "float_moment_8bit";
}

/* collect(): the partials' sums ([picture][first, second][block]), then the
 * C reference's steps. */
static int float_moment_cuda_finish(const FloatMomentState *s, const uint64_t *partials,
                                    unsigned blocks, const MetricFrame *frame, FeatureSink *sink)
{
    int err = float_moment_check(&frame->ref->format, sink);
    if (err) return err;
    uint64_t sum[PARTIALS] = { 0, 0, 0, 0 };
    for (unsigned k = 0; k < PARTIALS; k++)
        for (unsigned b = 0; b < blocks; b++) sum[k] += partials[(size_t)k * blocks + b];
    return float_moment_write(s, sink, frame, float_moment_sums(s, sum[0], sum[1]),
                              float_moment_sums(s, sum[2], sum[3]));
}

/* ---- the plan ------------------------------------------------------------- */

/* Per slot: PARTIALS partials per block, all read back. */
static int float_moment_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                       CudaPlan *plan, char *error, size_t error_size)
{
    const size_t partials = (size_t)PARTIALS * luma_sums_cuda_blocks(format->height);
    return cuda_plan_one_step(plan, partials * sizeof(uint64_t));
}

static void float_moment_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                        const CudaPlanMemory *memory, CudaStep *step)
{
    const CudaFrame *f = memory->frame;
    unsigned launch[3] = { 0, 0, 0 };
    const char *name = float_moment_cuda_launch(plan->state, &plan->format, f->ref[0], f->dist[0],
                                                f->stride[0], memory->slot, launch, step->args);
    cuda_step_launch(step, name, launch, sizeof(FloatMomentArgs));
}

static int float_moment_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                          const MetricFrame *frame, FeatureSink *sink)
{
    return float_moment_cuda_finish(plan->state, readback,
                                    luma_sums_cuda_blocks(plan->format.height), frame, sink);
}

const CudaTwin cuda_twin_float_moment = { CUDA_TWIN_OF(float_moment) };
