/*
 * float_ansnr on CUDA: the device filters both pictures and sums each row's
 * squares in float, bit for bit as the C reference (float_ansnr.cu); the
 * host reads back the rows' sums, adds them in float in row order, as the
 * C reference does, and finishes through its own float_ansnr_write()
 * (src/metrics/float_ansnr.h).
 *
 * Per 1080p frame: one launch (1080 blocks of 128 threads, 4 KB of shared
 * memory each), both luma planes read (4 MB at 8 bits; each sample reached
 * by 3 or 5 rows' blocks, through the caches), 2 x 1080 floats (8.4 KB)
 * read back.
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
#include "float_ansnr_args.h"
#include "metrics/float_ansnr/float_ansnr.h"

extern const unsigned char cuda_module_float_ansnr[];


/* the kernels' launch bounds */
enum { THREADS = FANSNR_THREADS };

/* The frame's launch: kernel name, grid (x, y, threads) and arguments
 * (args: a struct FloatAnsnrArgs); row_sums holds 2 x height floats. */
static const char *float_ansnr_cuda_launch(const QualeVideoFormat *format, uint64_t ref,
                                           uint64_t dist, uint64_t stride, uint64_t row_sums,
                                           unsigned launch[3], void *args)
{
    FloatAnsnrArgs a;
    memset(&a, 0, sizeof(a));
    a.ref = ref;
    a.dist = dist;
    a.stride = stride;
    a.row_sums = row_sums;
    a.w = (int)format->width;
    a.h = (int)format->height;
    /* exact: a power of two */
    a.inv_scaler = 1.0f / (float)(1u << (format->bitdepth - 8));
    memcpy(args, &a, sizeof(a));
    launch[0] = format->height;
    launch[1] = 1;
    launch[2] = THREADS;
    return format->bitdepth > 8 ? "float_ansnr_16bit" : "float_ansnr_8bit";
}

/* collect(): the rows' sums added as float_ansnr.c's extract() adds them,
 * then its float_ansnr_write() (float_ansnr_write_rows). */
static int float_ansnr_cuda_finish(const FloatAnsnrState *s, const float *row_sums,
                                   const MetricFrame *frame, FeatureSink *sink)
{
    int err = float_ansnr_check(&frame->ref->format, sink);
    if (err) return err;
    return float_ansnr_write_rows(s, sink, frame->index, row_sums);
}

/* ---- the plan ------------------------------------------------------------- */

/* Per slot: the rows' sums, 2 x height floats, all read back. */
static int float_ansnr_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                      CudaPlan *plan, char *error, size_t error_size)
{
    const int err = float_ansnr_check_size(format->width, format->height, error, error_size);
    if (err) return err;
    return cuda_plan_one_step(plan, 2 * (size_t)format->height * sizeof(float));
}

static void float_ansnr_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                       const CudaPlanMemory *memory, CudaStep *step)
{
    const CudaFrame *f = memory->frame;
    unsigned launch[3] = { 0, 0, 0 };
    const char *name = float_ansnr_cuda_launch(&plan->format, f->ref[0], f->dist[0], f->stride[0],
                                               memory->slot, launch, step->args);
    cuda_step_launch(step, name, launch, sizeof(FloatAnsnrArgs));
}

static int float_ansnr_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                         const MetricFrame *frame, FeatureSink *sink)
{
    return float_ansnr_cuda_finish(plan->state, readback, frame, sink);
}

const CudaTwin cuda_twin_float_ansnr = { CUDA_TWIN_OF(float_ansnr) };
