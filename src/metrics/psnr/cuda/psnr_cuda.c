/* PSNR on CUDA: the device sums squared errors, the host finishes exactly
 * as the C reference does (psnr_write_plane).
 *
 * Per frame: one launch, a block per ROWS_PER_BLOCK rows of each plane
 * scored; each block's sum read back (8 bytes). */
#include "gpu/cuda/cuda_twin.h"
#include "psnr_args.h"
#include "metrics/psnr/psnr.h"

extern const unsigned char cuda_module_psnr[];

enum { ROWS_PER_BLOCK = 8 };

static unsigned psnr_blocks(const CudaPlan *plan)
{
    return cuda_blocks_for(plan->format.height, ROWS_PER_BLOCK);
}

static int psnr_cuda_twin_plan(const void *state, const QualeVideoFormat *format, CudaPlan *plan,
                               char *error, size_t error_size)
{
    const PsnrState *s = state;
    const size_t partials = (size_t)s->planes * psnr_blocks(plan);
    return cuda_plan_one_step(plan, partials * sizeof(unsigned long long));
}

static void psnr_cuda_twin_step(const CudaPlan *plan, unsigned index, const CudaPlanMemory *memory,
                                CudaStep *step)
{
    const PsnrState *s = plan->state;
    const CudaFrame *f = memory->frame;
    PsnrArgs a = { .rows_per_block = ROWS_PER_BLOCK, .partials = memory->slot };
    cuda_frame_planes_sized(f, s->planes, a.ref, a.dist, a.stride, a.width, a.height);
    CUDA_STEP_SET(step, plan->format.bitdepth > 8 ? "psnr_sse_16bit" : "psnr_sse_8bit",
                  psnr_blocks(plan), s->planes, 1, PSNR_THREADS, 0, a);
}

static int psnr_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                  const MetricFrame *frame, FeatureSink *sink)
{
    const PsnrState *s = plan->state;
    const unsigned long long *partials = readback;
    const unsigned blocks = psnr_blocks(plan);
    for (unsigned p = 0; p < s->planes; p++) {
        /* Blocks past a chroma plane's height wrote zero. */
        uint64_t sse = 0;
        for (unsigned b = 0; b < blocks; b++) sse += partials[p * blocks + b];
        const int err = psnr_write_plane(s, sink, frame, p, sse);
        if (err) return err;
    }
    return 0;
}

const CudaTwin cuda_twin_psnr = { CUDA_TWIN_OF(psnr) };
