/* XPSNR on CUDA: the device makes a frame's integer block sums (xpsnr.cu),
 * the host its values with the C reference's own finish (xpsnr_finish),
 * so the twin's values are the reference's to the bit.
 *
 * Per frame: one launch, a block per luma block and per chroma block of
 * each chroma plane; the sums read back (8 bytes each). */
#include "gpu/cuda/cuda_twin.h"
#include "xpsnr_args.h"
#include "metrics/xpsnr/xpsnr.h"

extern const unsigned char cuda_module_xpsnr[];

static bool xpsnr_cuda_supports(const void *state)
{
    return xpsnr_twin_supports(state);
}

static int xpsnr_cuda_twin_plan(const void *state, const QualeVideoFormat *format, CudaPlan *plan,
                                char *error, size_t error_size)
{
    return cuda_plan_one_step(plan, xpsnr_sum_count(state) * sizeof(unsigned long long));
}

static void xpsnr_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                 const CudaPlanMemory *memory, CudaStep *step)
{
    const XpsnrState *s = plan->state;
    const CudaFrame *f = memory->frame;
    XpsnrArgs a = {
        .block = s->block,
        .blocks_x = s->blocks_x,
        .luma_blocks = s->blocks_x * s->blocks_y,
        .step = s->step,
        .second_order = s->second_order,
        .sums = memory->slot,
    };
    cuda_frame_planes_sized(f, s->planes, a.ref, a.dist, a.stride, a.width, a.height);
    /* before the first frames the previous pictures are 0, as in the C */
    a.prev[0] = f->prev_ref[0];
    a.prev[1] = f->prev_ref[1];
    /* as many chroma blocks as luma blocks at most (xpsnr_twin_supports) */
    CUDA_STEP_SET(step, plan->format.bitdepth > 8 ? "xpsnr_sums_16bit" : "xpsnr_sums_8bit",
                  a.luma_blocks, s->planes, 1, XPSNR_THREADS, 0, a);
}

static int xpsnr_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                   const MetricFrame *frame, FeatureSink *sink)
{
    return xpsnr_finish_array(plan->state, readback, frame->index, sink);
}

const CudaTwin cuda_twin_xpsnr = { CUDA_TWIN_OF(xpsnr), .supports = xpsnr_cuda_supports };
