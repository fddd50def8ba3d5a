/*
 * float_ssim on CUDA: the device shrinks the luma when the scale asks
 * (fssim_decimate) and sums the SSIM terms over tiles of positions
 * (iqa_ssim_tiles, float_ssim.cu); the host adds the tiles' sums in tile
 * order and finishes through the C reference's own iqa_ssim_means() and
 * float_ssim_write() (src/metrics/float_ssim.h), as its extract() does.
 *
 * Device memory per slot: the tiles' sums (4 doubles per tile) and, with a
 * downscale, the shrunk pictures (floats, scaled_w x scaled_h each, dense).
 * At scale 1 SSIM reads the frame's luma where the backend uploaded it.
 *
 * The plan (sizes, offsets) and the launches of a frame (kernel, grid,
 * arguments) are functions without side effects, so that
 * tests/test_float_ssim_cuda_host.cpp drives the kernels' element code on
 * the CPU through exactly what the plan's steps launch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_twin.h"
#include "float_ssim_args.h"
#include "metrics/float_ssim/float_ssim.h"
#include "metrics/common/iqa.h"

extern const unsigned char cuda_module_float_ssim[];

/* ---- the plan ------------------------------------------------------------- */

typedef struct FssimPlan {
    const FloatSsimState *s;
    unsigned tiles_x, tiles;      /* SSIM tiles: one block each */
    size_t partials;              /* offsets in a slot, bytes */
    size_t ref_plane, dist_plane; /* the shrunk pictures (scale > 1) */
    CudaSlotLayout slot; /* the tiles' sums read back */
} FssimPlan;

/* Not static: the host test calls them (it declares them itself). */
FssimPlan *fssim_cuda_plan_new(const FloatSsimState *s);
const CudaSlotLayout *fssim_cuda_slot(const FssimPlan *p);
unsigned fssim_cuda_tiles(const FssimPlan *p);
const char *fssim_cuda_step(const FssimPlan *p, unsigned i, uint64_t slot, uint64_t ref,
                            uint64_t dist, uint64_t stride, unsigned launch[3], void *args);
void fssim_cuda_means(const FssimPlan *p, const double *partials, IqaSsimMeans *m);

FssimPlan *fssim_cuda_plan_new(const FloatSsimState *s)
{
    FssimPlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->s = s;
    const unsigned out_w = (unsigned)s->scaled_w - (IQA_GAUSSIAN_TAPS - 1);
    const unsigned out_h = (unsigned)s->scaled_h - (IQA_GAUSSIAN_TAPS - 1);
    p->tiles_x = cuda_blocks_for(out_w, SSIM_TILE_W);
    p->tiles = p->tiles_x * cuda_blocks_for(out_h, SSIM_TILE_H);
    size_t *at = &p->slot.bytes;
    p->slot.readback_bytes = (size_t)p->tiles * SSIM_SUMS * sizeof(double);
    p->partials = p->slot.readback_offset = cuda_plan_place(at, p->slot.readback_bytes);
    if (s->scale > 1) {
        const size_t plane = (size_t)s->scaled_w * (size_t)s->scaled_h * sizeof(float);
        p->ref_plane = cuda_plan_place(at, plane);
        p->dist_plane = cuda_plan_place(at, plane);
    }
    p->slot.steps = s->scale > 1 ? 2 : 1;
    return p;
}

const CudaSlotLayout *fssim_cuda_slot(const FssimPlan *p)
{
    return &p->slot;
}

unsigned fssim_cuda_tiles(const FssimPlan *p)
{
    return p->tiles;
}

/*
 * Step i of a frame in slot memory `slot` (device addresses; the host test
 * passes host addresses): the kernel's name, its launch (grid x, grid y,
 * threads per block) and its arguments (args: a FssimDecimateArgs for
 * fssim_decimate_*, a SsimArgs for iqa_ssim_tiles; room for a SsimArgs).
 * With a downscale: fssim_decimate_8 or _16, then iqa_ssim_tiles on the
 * shrunk planes; without: iqa_ssim_tiles on the frame's luma.
 */
const char *fssim_cuda_step(const FssimPlan *p, unsigned i, uint64_t slot, uint64_t ref,
                            uint64_t dist, uint64_t stride, unsigned launch[3], void *args)
{
    if (i >= p->slot.steps) return NULL;
    const FloatSsimState *s = p->s;
    const bool wide = s->bitdepth > 8;
    const float inv_scaler = 1.0f / (float)(1u << (s->bitdepth - 8));
    if (i + 1 < p->slot.steps) {
        FssimDecimateArgs a;
        memset(&a, 0, sizeof(a));
        a.ref = ref;
        a.dist = dist;
        a.stride = stride;
        a.dst_ref = slot + p->ref_plane;
        a.dst_dist = slot + p->dist_plane;
        a.w = (unsigned)s->w;
        a.h = (unsigned)s->h;
        a.dst_w = (unsigned)s->scaled_w;
        a.dst_h = (unsigned)s->scaled_h;
        a.factor = (unsigned)s->scale;
        a.weight = s->box[0]; /* every tap of the box is 1 / scale^2 */
        a.inv_scaler = inv_scaler;
        launch[0] = cuda_blocks_for(a.dst_w, FSSIM_DECIMATE_THREADS);
        launch[1] = cuda_grid_rows(a.dst_h);
        launch[2] = FSSIM_DECIMATE_THREADS;
        memcpy(args, &a, sizeof(a));
        return wide ? "fssim_decimate_16" : "fssim_decimate_8";
    }
    SsimArgs a;
    memset(&a, 0, sizeof(a));
    SsimScale *sc = &a.scale[0];
    if (s->scale > 1) {
        sc->ref = slot + p->ref_plane;
        sc->dist = slot + p->dist_plane;
        sc->stride = (unsigned long long)s->scaled_w * sizeof(float);
        sc->kind = SSIM_SOURCE_FLOAT;
    } else {
        sc->ref = ref;
        sc->dist = dist;
        sc->stride = stride;
        sc->kind = wide ? SSIM_SOURCE_16 : SSIM_SOURCE_8;
    }
    sc->w = (unsigned)s->scaled_w;
    sc->h = (unsigned)s->scaled_h;
    sc->inv_scaler = inv_scaler;
    sc->tiles_x = p->tiles_x;
    sc->first_tile = 0;
    a.partials = slot + p->partials;
    a.scales = 1;
    launch[0] = p->tiles;
    launch[1] = 1;
    launch[2] = SSIM_THREADS;
    memcpy(args, &a, sizeof(a));
    return "iqa_ssim_tiles";
}

/* The means from the tiles' sums, added in tile order. */
void fssim_cuda_means(const FssimPlan *p, const double *partials, IqaSsimMeans *m)
{
    IqaSsimSums sums = { 0.0, 0.0, 0.0, 0.0 };
    for (unsigned t = 0; t < p->tiles; t++) {
        const double *v = partials + (size_t)t * SSIM_SUMS;
        sums.ssim += v[0];
        sums.l += v[1];
        sums.c += v[2];
        sums.s += v[3];
    }
    *m = iqa_ssim_means(&sums, p->s->scaled_w, p->s->scaled_h);
}

/* ---- the twin ------------------------------------------------------------- */

/* Per slot: the plan's layout, the tiles' sums read back. */
static int float_ssim_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                     CudaPlan *plan, char *error, size_t error_size)
{
    /* The C reference's size check, on a copy of the state init set up. */
    FloatSsimState check = *(const FloatSsimState *)state;
    const int err = float_ssim_setup(&check, format, error, error_size);
    if (err) return err;
    FssimPlan *p = fssim_cuda_plan_new(state);
    return p ? cuda_plan_take_slot(plan, p, &p->slot) : -ENOMEM;
}

static void float_ssim_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                      const CudaPlanMemory *memory, CudaStep *step)
{
    const CudaFrame *f = memory->frame;
    unsigned launch[3] = { 0, 0, 0 };
    /* SsimArgs: the larger of the two argument blocks */
    const char *name = fssim_cuda_step(plan->own, index, memory->slot, f->ref[0], f->dist[0],
                                       f->stride[0], launch, step->args);
    cuda_step_launch(step, name, launch, sizeof(SsimArgs));
}

static int float_ssim_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                        const MetricFrame *frame, FeatureSink *sink)
{
    IqaSsimMeans m;
    fssim_cuda_means(plan->own, readback, &m);
    return float_ssim_write(plan->state, sink, frame->index, &m);
}

const CudaTwin cuda_twin_float_ssim = { CUDA_TWIN_OF(float_ssim) };
