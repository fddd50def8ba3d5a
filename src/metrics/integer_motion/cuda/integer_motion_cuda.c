/* Integer motion on CUDA: the device computes each row's SAD, the host adds
 * the rows and writes the score through the C reference's own step
 * (motion_write_sad); motion2 and motion3 come from the metric's flush.
 *
 * Per frame: the rows' sums cleared, one launch (a block per MOTION_SEGMENT
 * columns of a row), the sums read back (4 bytes a row).  Where the C
 * reference computes no SAD (the first frames, or a picture below 3x3) the
 * launch has no blocks and collect() reads nothing. */
#include "gpu/cuda/cuda_twin.h"
#include "integer_motion_args.h"
#include "metrics/integer_motion/integer_motion.h"

extern const unsigned char cuda_module_integer_motion[];

static int integer_motion_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                         CudaPlan *plan, char *error, size_t error_size)
{
    plan->slot_bytes = plan->clear_bytes = plan->readback_bytes =
        (size_t)format->height * sizeof(uint32_t);
    plan->steps = 1;
    return 0;
}

static void integer_motion_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                          const CudaPlanMemory *memory, CudaStep *step)
{
    const MotionState *s = plan->state;
    const CudaFrame *f = memory->frame;
    /* The earlier frame is on the device whenever the reference needs it
     * (the metric's history); were it not, the launch would fault, not
     * score zero. */
    const MotionArgs a = {
        .prev = f->prev_ref[s->five_frame_window ? 1 : 0],
        .cur = f->ref[0],
        .stride = f->stride[0],
        .w = (int)s->width,
        .h = (int)s->height,
        .bitdepth = (int)s->bitdepth,
        .row_sad = memory->slot,
    };
    const bool work = motion_needs_sad(s, f->index) && s->width >= 3 && s->height >= 3;
    CUDA_STEP_SET(step, s->bitdepth > 8 ? "motion_sad_16bit" : "motion_sad_8bit",
                  work ? cuda_blocks_for(s->width, MOTION_SEGMENT) : 0, s->height, 1,
                  MOTION_THREADS, 0, a);
}

static int integer_motion_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                            const MetricFrame *frame, FeatureSink *sink)
{
    /* a partial per row */
    return motion_write_sad_partials(plan->state, sink, frame->index, readback, 1);
}

const CudaTwin cuda_twin_integer_motion = { CUDA_TWIN_OF(integer_motion) };
