/*
 * Integer ADM on CUDA: the device computes every level's DWT, decoupling,
 * masking and the level's nine 64-bit sums (integer_adm.cu); the host
 * reads back the 36 sums of a frame (288 bytes, the layout of ADM_SUMS in
 * src/metrics/integer_adm.h) and finishes through the C reference's own
 * adm_scores() and adm_write_frame(), as its extract() does.
 *
 * Device memory, per slot, in int32 band planes of one stride (the level-0
 * band width rounded up to 32 samples):
 *   per picture: a of the even levels (level-0 size), a of the odd levels
 *   (level-1 size), h, v, d (level-0 size, reused by every level; after
 *   decoupling the reference's hold the restored part, the distorted's the
 *   additive impairment);
 *   around and centre of the DLM and of AIM (level-0 size);
 *   the frame's 36 sums.
 *
 * The plan (sizes, offsets, the rounding shifts of every level), the
 * kernel arguments of a level and the launches of a level are functions
 * without side effects, so that tests/test_integer_adm_cuda_host.cpp
 * drives the kernels' element code on the CPU through exactly what the
 * plan's steps use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_twin.h"
#include "integer_adm_args.h"
#include "metrics/integer_adm/integer_adm.h"

extern const unsigned char cuda_module_integer_adm[];

/* ---- the plan ------------------------------------------------------------- */

enum AdmKernel {
    ADM_DWT0_8BIT, ADM_DWT0_16BIT, ADM_DWT123, ADM_DEN0, ADM_DEN123,
    ADM_DECOUPLE0, ADM_DECOUPLE123, ADM_MASKED0, ADM_MASKED123, ADM_KERNELS,
};

static const char *const adm_kernel_names[ADM_KERNELS] = {
    "adm_dwt0_8bit", "adm_dwt0_16bit", "adm_dwt123", "adm_den0", "adm_den123",
    "adm_decouple0", "adm_decouple123", "adm_masked0", "adm_masked123",
};

enum { SAMPLE_THREADS = 256, ROW_THREADS = 128, ALIGN = 256 };

/* Planes of a picture: a of the even levels, a of the odd levels, h, v, d. */
enum { PLANE_A_EVEN, PLANE_A_ODD, PLANE_H, PLANE_V, PLANE_D, PICTURE_PLANES };

typedef struct AdmPlan {
    const AdmState *s;
    int w[ADM_SCALES], h[ADM_SCALES];       /* bands of each level */
    int in_w[ADM_SCALES], in_h[ADM_SCALES]; /* the DWT's input of each level */
    AdmRect scored[ADM_SCALES], taps[ADM_SCALES];
    AdmDenShifts den[ADM_SCALES];
    AdmMaskedShifts masked[ADM_SCALES];
    size_t stride;                          /* samples */
    size_t picture[2][PICTURE_PLANES];      /* offsets in a slot, bytes */
    size_t mask[4];
    size_t sums;
    CudaSlotLayout slot; /* the sums cleared and read back */
} AdmPlan;

/* A launch of a level. */
typedef struct AdmStep {
    unsigned kernel, grid_x, grid_y, block;
} AdmStep;

/* Not static: the host test calls them (it declares them itself). */
AdmPlan *adm_cuda_plan_new(const AdmState *s);
const CudaSlotLayout *adm_cuda_slot(const AdmPlan *p);
const char *adm_cuda_kernel_name(unsigned kernel);
void adm_cuda_level_args(const AdmPlan *p, uint64_t slot, uint64_t ref, uint64_t dist,
                         uint64_t pic_stride, int level, AdmArgs *a);
unsigned adm_cuda_steps(const AdmPlan *p, int level, AdmStep steps[4]);

AdmPlan *adm_cuda_plan_new(const AdmState *s)
{
    AdmPlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->s = s;
    int w = s->width, h = s->height;
    for (int level = 0; level < ADM_SCALES; level++) {
        p->in_w[level] = w;
        p->in_h[level] = h;
        w = adm_half(w);
        h = adm_half(h);
        p->w[level] = w;
        p->h[level] = h;
        p->scored[level] = adm_rect_scored(w, h);
        p->taps[level] = adm_rect_with_taps(w, h);
        adm_den_shifts(level == 0, level, w, h, &p->den[level]);
        adm_masked_shifts(level == 0, w, h, &p->masked[level]);
    }
    p->stride = cuda_align_up((size_t)p->w[0], 32);
    const size_t full = cuda_align_up(p->stride * (size_t)p->h[0] * sizeof(int32_t), ALIGN);
    const size_t odd = cuda_align_up(p->stride * (size_t)p->h[1] * sizeof(int32_t), ALIGN);
    size_t at = 0;
    for (int pic = 0; pic < 2; pic++) {
        for (int plane = 0; plane < PICTURE_PLANES; plane++) {
            p->picture[pic][plane] = at;
            at += plane == PLANE_A_ODD ? odd : full;
        }
    }
    for (int m = 0; m < 4; m++, at += full) p->mask[m] = at;
    p->sums = at;
    at += cuda_align_up(ADM_SUMS * sizeof(uint64_t), ALIGN);
    p->slot.bytes = at;
    p->slot.clear_offset = p->slot.readback_offset = p->sums;
    p->slot.clear_bytes = p->slot.readback_bytes = ADM_SUMS * sizeof(uint64_t);
    for (int level = 0; level < ADM_SCALES; level++) {
        AdmStep steps[4];
        p->slot.steps += adm_cuda_steps(p, level, steps);
    }
    return p;
}

const CudaSlotLayout *adm_cuda_slot(const AdmPlan *p)
{
    return &p->slot;
}

const char *adm_cuda_kernel_name(unsigned kernel)
{
    return kernel < ADM_KERNELS ? adm_kernel_names[kernel] : NULL;
}

static AdmRegion region(AdmRect r)
{
    return (AdmRegion){ r.left, r.top, r.right, r.bottom };
}

/* The arguments of every kernel of a level, in the slot at device address
 * `slot`, for the frame's luma planes ref and dist. */
void adm_cuda_level_args(const AdmPlan *p, uint64_t slot, uint64_t ref, uint64_t dist,
                         uint64_t pic_stride, int level, AdmArgs *a)
{
    const AdmState *s = p->s;
    memset(a, 0, sizeof(*a));
    a->pic[0] = ref;
    a->pic[1] = dist;
    a->pic_stride = pic_stride;
    const int own_a = level % 2 ? PLANE_A_ODD : PLANE_A_EVEN;
    const int prev_a = level % 2 ? PLANE_A_EVEN : PLANE_A_ODD;
    for (int pic = 0; pic < 2; pic++) {
        a->prev[pic] = level ? slot + p->picture[pic][prev_a] : 0;
        a->band[pic][0] = slot + p->picture[pic][own_a];
        a->band[pic][1] = slot + p->picture[pic][PLANE_H];
        a->band[pic][2] = slot + p->picture[pic][PLANE_V];
        a->band[pic][3] = slot + p->picture[pic][PLANE_D];
    }
    for (int m = 0; m < 4; m++) a->mask[m] = slot + p->mask[m];
    a->acc = slot + p->sums + (size_t)level * ADM_LEVEL_SUMS * sizeof(uint64_t);
    a->stride = (long long)p->stride;
    a->gain = s->enhn_gain_limit;

    const AdmDenShifts *d = &p->den[level];
    a->den_sq_add = d->sq_add;
    a->den_cub_add = d->cub_add;
    a->den_row_add = d->row_add;
    a->den_sq = d->sq;
    a->den_cub = d->cub;
    a->den_row_shift = d->row_shift;
    const AdmMaskedShifts *m = &p->masked[level];
    for (int b = 0; b < 3; b++) {
        a->m_sq_add[b] = m->sq_add[b];
        a->m_cub_add[b] = m->cub_add[b];
        a->m_sq[b] = m->sq[b];
        a->m_cub[b] = m->cub[b];
        a->m_sub[b] = m->sub[b];
        a->csf_q0[b] = s->csf_q0[b];
        a->csf_q32[b] = s->csf_q32[level][b];
    }
    a->m_row_add = m->row_add;
    a->m_row_shift = m->row_shift;

    a->pic_w = s->width;
    a->pic_h = s->height;
    a->bitdepth = s->bitdepth;
    a->in_w = p->in_w[level];
    a->in_h = p->in_h[level];
    a->w = p->w[level];
    a->h = p->h[level];
    a->scale = level;
    a->details = level > 0 || !s->skip_scale0;
    a->aim = !s->skip_aim;
    a->scored = region(p->scored[level]);
    a->taps = region(p->taps[level]);
    a->cos_1deg_sq = s->cos_1deg_sq;
}

static size_t area(AdmRect r)
{
    return (size_t)(r.right - r.left) * (size_t)(r.bottom - r.top);
}

/* The launches of a level, in order: DWT of both pictures, then (unless
 * the level is skipped) den, decouple and the masked sums. */
unsigned adm_cuda_steps(const AdmPlan *p, int level, AdmStep steps[4])
{
    const AdmState *s = p->s;
    const bool level0 = level == 0;
    unsigned n = 0;
    steps[n++] = (AdmStep){
        level0 ? (s->bitdepth > 8 ? ADM_DWT0_16BIT : ADM_DWT0_8BIT) : ADM_DWT123,
        cuda_blocks_for((size_t)p->w[level] * (size_t)p->h[level], SAMPLE_THREADS), 2, SAMPLE_THREADS };
    if (level0 && s->skip_scale0) return n;
    const unsigned rows = (unsigned)(p->scored[level].bottom - p->scored[level].top);
    steps[n++] = (AdmStep){ level0 ? ADM_DEN0 : ADM_DEN123, rows, 1, ROW_THREADS };
    steps[n++] = (AdmStep){ level0 ? ADM_DECOUPLE0 : ADM_DECOUPLE123,
                            cuda_blocks_for(area(p->taps[level]), SAMPLE_THREADS), 1, SAMPLE_THREADS };
    steps[n++] = (AdmStep){ level0 ? ADM_MASKED0 : ADM_MASKED123, rows, s->skip_aim ? 1 : 2,
                            ROW_THREADS };
    return n;
}

/* ---- the twin --------------------------------------------------------------- */

/* The plan of a run: the layout, and which level and launch of the level
 * each step is. */
typedef struct AdmRun {
    AdmPlan *plan;
    unsigned steps;
    unsigned char level[4 * ADM_SCALES], launch[4 * ADM_SCALES];
} AdmRun;

static void adm_run_free(void *own)
{
    AdmRun *r = own;
    free(r->plan);
    free(r);
}

/* Per slot: the plan's layout; the sums cleared before the steps and read
 * back after them. */
static int integer_adm_cuda_twin_plan(const void *state, const QualeVideoFormat *format,
                                      CudaPlan *plan, char *error, size_t error_size)
{
    const int err = adm_check_size(format->width, format->height, error, error_size);
    if (err) return err;
    AdmRun *r = cuda_plan_new_own(plan, sizeof(*r), adm_run_free);
    if (!r) return -ENOMEM;
    r->plan = adm_cuda_plan_new(state);
    if (!r->plan) return -ENOMEM;
    for (int level = 0; level < ADM_SCALES; level++) {
        AdmStep steps[4];
        const unsigned n = adm_cuda_steps(r->plan, level, steps);
        for (unsigned i = 0; i < n; i++) {
            r->level[r->steps] = (unsigned char)level;
            r->launch[r->steps++] = (unsigned char)i;
        }
    }
    cuda_plan_use_slot(plan, &r->plan->slot);
    return 0;
}

static void integer_adm_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                       const CudaPlanMemory *memory, CudaStep *step)
{
    const AdmRun *r = plan->own;
    const CudaFrame *f = memory->frame;
    AdmArgs args;
    adm_cuda_level_args(r->plan, memory->slot, f->ref[0], f->dist[0], f->stride[0],
                        r->level[index], &args);
    AdmStep steps[4];
    adm_cuda_steps(r->plan, r->level[index], steps);
    const AdmStep *st = &steps[r->launch[index]];
    CUDA_STEP_SET(step, adm_kernel_names[st->kernel], st->grid_x, st->grid_y, 1, st->block, 0,
                  args);
}

static int integer_adm_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                         const MetricFrame *frame, FeatureSink *sink)
{
    float num[ADM_SCALES], aim[ADM_SCALES], den[ADM_SCALES];
    adm_scores(plan->state, readback, num, aim, den);
    return adm_write_frame(plan->state, sink, frame->index, num, aim, den);
}

const CudaTwin cuda_twin_integer_adm = { CUDA_TWIN_OF(integer_adm) };
