/*
 * float_psnr on CUDA: the device sums the frame's noise as an exact integer
 * (float_psnr.cu), in per-block partials; the host adds them and finishes
 * through the C reference's own steps (float_psnr_noise, float_psnr_write
 * of src/metrics/float_psnr.h).
 *
 * Per 1080p frame: one launch (270 blocks of 4 rows), both luma planes read
 * once (4 MB at 8 bits), 270 partials (2 KB) read back.
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
#include "float_psnr_args.h"
#include "metrics/common/cuda/luma_sums_cuda.h"
#include "metrics/float_psnr/float_psnr.h"

extern const unsigned char cuda_module_float_psnr[];


/* The frame's launch: kernel name, grid (x, y, threads) and arguments
 * (args: a struct FloatPsnrArgs). */
static const char *float_psnr_cuda_launch(const FloatPsnrState *s, const QualeVideoFormat *format,
                                          uint64_t ref, uint64_t dist, uint64_t stride,
                                          uint64_t partials, unsigned launch[3], void *args)
{
    luma_sums_cuda_launch(s->exact_sums, s->scaler, format, ref, dist, stride, partials, 1,
                          launch, args);
    return format->bitdepth > 8 ? "float_psnr_16bit" : "float_psnr_8bit";
}

/* collect(): the partials' sum, then the C reference's steps. */
static int float_psnr_cuda_finish(const FloatPsnrState *s, const uint64_t *partials,
                                  unsigned blocks, const MetricFrame *frame, FeatureSink *sink)
{
    int err = float_psnr_check(&frame->ref->format, sink);
    if (err) return err;
    uint64_t units = 0;
    for (unsigned b = 0; b < blocks; b++) units += partials[b];
    return float_psnr_write(s, sink, frame, float_psnr_noise(s, units));
}

/* ---- the plan ------------------------------------------------------------- */

/* Per slot: a partial per block, all read back. */
static int float_psnr_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                     CudaPlan *plan, char *error, size_t error_size)
{
    return cuda_plan_one_step(plan, luma_sums_cuda_blocks(format->height) * sizeof(uint64_t));
}

static void float_psnr_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                      const CudaPlanMemory *memory, CudaStep *step)
{
    const CudaFrame *f = memory->frame;
    unsigned launch[3] = { 0, 0, 0 };
    const char *name = float_psnr_cuda_launch(plan->state, &plan->format, f->ref[0], f->dist[0],
                                              f->stride[0], memory->slot, launch, step->args);
    cuda_step_launch(step, name, launch, sizeof(FloatPsnrArgs));
}

static int float_psnr_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                        const MetricFrame *frame, FeatureSink *sink)
{
    return float_psnr_cuda_finish(plan->state, readback,
                                  luma_sums_cuda_blocks(plan->format.height), frame, sink);
}

const CudaTwin cuda_twin_float_psnr = { CUDA_TWIN_OF(float_psnr) };
