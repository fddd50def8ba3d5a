/*
 * float_ms_ssim on CUDA: the device decimates the luma four times
 * (fms_decimate, float_ms_ssim.cu) and sums the SSIM terms of all five
 * scales over tiles of positions in one launch (iqa_ssim_tiles,
 * float_ssim.cu); the host adds each scale's tiles in tile order and
 * finishes through the C reference's own iqa_ssim_means() and
 * float_ms_ssim_write() (src/metrics/float_ms_ssim.h), as its extract()
 * does.
 *
 * Device memory per slot: the tiles' sums (4 doubles per tile, the tiles of
 * scale 0 first) and the pictures of scales 1 to 4 (floats, dense).  Scale
 * 0 is the frame's luma where the backend uploaded it.
 *
 * The plan and the launches of a frame are functions without side effects,
 * so that tests/test_float_ssim_cuda_host.cpp drives the kernels' element
 * code on the CPU through exactly what the plan's steps launch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_twin.h"
#include "float_ms_ssim_args.h"
#include "metrics/float_ms_ssim/float_ms_ssim.h"
#include "metrics/common/iqa.h"

extern const unsigned char cuda_module_float_ms_ssim[];

_Static_assert(MS_SSIM_SCALES <= SSIM_MAX_SCALES, "one SSIM launch covers every scale");

/* ---- the plan ------------------------------------------------------------- */

typedef struct FmsPlan {
    const FloatMsSsimState *s;
    unsigned tiles_x[MS_SSIM_SCALES], first_tile[MS_SSIM_SCALES + 1];
    size_t partials;                                  /* offsets in a slot, bytes */
    size_t ref_plane[MS_SSIM_SCALES], dist_plane[MS_SSIM_SCALES]; /* scales 1 .. 4 */
    CudaSlotLayout slot; /* the tiles' sums read back */
} FmsPlan;

/* The decimations, then one SSIM launch. */
enum { FMS_STEPS = MS_SSIM_SCALES };

/* Not static: the host test calls them (it declares them itself). */
FmsPlan *fms_cuda_plan_new(const FloatMsSsimState *s);
const CudaSlotLayout *fms_cuda_slot(const FmsPlan *p);
size_t fms_cuda_plane_offset(const FmsPlan *p, unsigned scale, unsigned which);
unsigned fms_cuda_tiles(const FmsPlan *p);
const char *fms_cuda_step(const FmsPlan *p, unsigned i, uint64_t slot, uint64_t ref,
                          uint64_t dist, uint64_t stride, unsigned launch[3], void *args);
void fms_cuda_means(const FmsPlan *p, const double *partials, IqaSsimMeans m[MS_SSIM_SCALES]);

FmsPlan *fms_cuda_plan_new(const FloatMsSsimState *s)
{
    FmsPlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->s = s;
    unsigned tiles = 0;
    for (unsigned i = 0; i < MS_SSIM_SCALES; i++) {
        const unsigned out_w = (unsigned)s->w[i] - (IQA_GAUSSIAN_TAPS - 1);
        const unsigned out_h = (unsigned)s->h[i] - (IQA_GAUSSIAN_TAPS - 1);
        p->tiles_x[i] = cuda_blocks_for(out_w, SSIM_TILE_W);
        p->first_tile[i] = tiles;
        tiles += p->tiles_x[i] * cuda_blocks_for(out_h, SSIM_TILE_H);
    }
    p->first_tile[MS_SSIM_SCALES] = tiles;
    size_t *at = &p->slot.bytes;
    p->slot.readback_bytes = (size_t)tiles * SSIM_SUMS * sizeof(double);
    p->partials = p->slot.readback_offset = cuda_plan_place(at, p->slot.readback_bytes);
    for (unsigned i = 1; i < MS_SSIM_SCALES; i++) {
        const size_t plane = (size_t)s->w[i] * (size_t)s->h[i] * sizeof(float);
        p->ref_plane[i] = cuda_plan_place(at, plane);
        p->dist_plane[i] = cuda_plan_place(at, plane);
    }
    p->slot.steps = FMS_STEPS;
    return p;
}

const CudaSlotLayout *fms_cuda_slot(const FmsPlan *p)
{
    return &p->slot;
}

/* The offset of scale's (1 .. 4) reference (which 0) or distorted picture. */
size_t fms_cuda_plane_offset(const FmsPlan *p, unsigned scale, unsigned which)
{
    return which ? p->dist_plane[scale] : p->ref_plane[scale];
}

unsigned fms_cuda_tiles(const FmsPlan *p)
{
    return p->first_tile[MS_SSIM_SCALES];
}

/*
 * Step i of a frame in slot memory `slot` (device addresses; the host test
 * passes host addresses): the kernel's name, its launch (grid x, grid y,
 * threads per block) and its arguments (args: a MsDecimateArgs for
 * fms_decimate_*, a SsimArgs for iqa_ssim_tiles; room for a SsimArgs).
 * Steps 0 .. 3 decimate scale i into scale i + 1 (fms_decimate_8 or _16
 * from the frame's luma, then fms_decimate_f); step 4 is the SSIM of the
 * five scales.
 */
const char *fms_cuda_step(const FmsPlan *p, unsigned i, uint64_t slot, uint64_t ref,
                          uint64_t dist, uint64_t stride, unsigned launch[3], void *args)
{
    if (i >= FMS_STEPS) return NULL;
    const FloatMsSsimState *s = p->s;
    const bool wide = s->bitdepth > 8;
    const float inv_scaler = 1.0f / (float)(1u << (s->bitdepth - 8));
    if (i + 1 < MS_SSIM_SCALES) {
        MsDecimateArgs a;
        memset(&a, 0, sizeof(a));
        if (i == 0) {
            a.ref = ref;
            a.dist = dist;
            a.stride = stride;
        } else {
            a.ref = slot + p->ref_plane[i];
            a.dist = slot + p->dist_plane[i];
            a.stride = (unsigned long long)s->w[i] * sizeof(float);
        }
        a.dst_ref = slot + p->ref_plane[i + 1];
        a.dst_dist = slot + p->dist_plane[i + 1];
        a.w = (unsigned)s->w[i];
        a.h = (unsigned)s->h[i];
        a.dst_w = (unsigned)s->w[i + 1];
        a.dst_h = (unsigned)s->h[i + 1];
        a.inv_scaler = inv_scaler;
        launch[0] = cuda_blocks_for(a.dst_w, FSSIM_DECIMATE_THREADS);
        launch[1] = cuda_grid_rows(a.dst_h);
        launch[2] = FSSIM_DECIMATE_THREADS;
        memcpy(args, &a, sizeof(a));
        return i > 0 ? "fms_decimate_f" : wide ? "fms_decimate_16" : "fms_decimate_8";
    }
    SsimArgs a;
    memset(&a, 0, sizeof(a));
    for (unsigned k = 0; k < MS_SSIM_SCALES; k++) {
        SsimScale *sc = &a.scale[k];
        if (k == 0) {
            sc->ref = ref;
            sc->dist = dist;
            sc->stride = stride;
            sc->kind = wide ? SSIM_SOURCE_16 : SSIM_SOURCE_8;
        } else {
            sc->ref = slot + p->ref_plane[k];
            sc->dist = slot + p->dist_plane[k];
            sc->stride = (unsigned long long)s->w[k] * sizeof(float);
            sc->kind = SSIM_SOURCE_FLOAT;
        }
        sc->w = (unsigned)s->w[k];
        sc->h = (unsigned)s->h[k];
        sc->inv_scaler = inv_scaler;
        sc->tiles_x = p->tiles_x[k];
        sc->first_tile = p->first_tile[k];
    }
    a.partials = slot + p->partials;
    a.scales = MS_SSIM_SCALES;
    launch[0] = p->first_tile[MS_SSIM_SCALES];
    launch[1] = 1;
    launch[2] = SSIM_THREADS;
    memcpy(args, &a, sizeof(a));
    return "iqa_ssim_tiles";
}

/* The means of every scale from the tiles' sums, each scale's added in
 * tile order. */
void fms_cuda_means(const FmsPlan *p, const double *partials, IqaSsimMeans m[MS_SSIM_SCALES])
{
    for (unsigned k = 0; k < MS_SSIM_SCALES; k++) {
        IqaSsimSums sums = { 0.0, 0.0, 0.0, 0.0 };
        for (unsigned t = p->first_tile[k]; t < p->first_tile[k + 1]; t++) {
            const double *v = partials + (size_t)t * SSIM_SUMS;
            sums.ssim += v[0];
            sums.l += v[1];
            sums.c += v[2];
            sums.s += v[3];
        }
        m[k] = iqa_ssim_means(&sums, p->s->w[k], p->s->h[k]);
    }
}

/* ---- the twin ------------------------------------------------------------- */

/* Per slot: the plan's layout, every scale's tile sums read back. */
static int float_ms_ssim_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                        CudaPlan *plan, char *error, size_t error_size)
{
    /* The C reference's size check, on a copy of the state init set up. */
    FloatMsSsimState check = *(const FloatMsSsimState *)state;
    const int err = float_ms_ssim_setup(&check, format, error, error_size);
    if (err) return err;
    FmsPlan *p = fms_cuda_plan_new(state);
    return p ? cuda_plan_take_slot(plan, p, &p->slot) : -ENOMEM;
}

static void float_ms_ssim_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                         const CudaPlanMemory *memory, CudaStep *step)
{
    const CudaFrame *f = memory->frame;
    unsigned launch[3] = { 0, 0, 0 };
    /* SsimArgs: the larger of the two argument blocks */
    const char *name = fms_cuda_step(plan->own, index, memory->slot, f->ref[0], f->dist[0],
                                     f->stride[0], launch, step->args);
    cuda_step_launch(step, name, launch, sizeof(SsimArgs));
}

static int float_ms_ssim_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                           const MetricFrame *frame, FeatureSink *sink)
{
    IqaSsimMeans m[MS_SSIM_SCALES];
    fms_cuda_means(plan->own, readback, m);
    return float_ms_ssim_write(plan->state, sink, frame->index, m);
}

const CudaTwin cuda_twin_float_ms_ssim = { CUDA_TWIN_OF(float_ms_ssim) };
