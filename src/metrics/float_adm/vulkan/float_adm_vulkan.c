/* Float ADM on Vulkan: the decomposition of the CUDA twin
 * (src/cuda/float_adm.cu): the device makes the four DWT levels, decouples
 * and weights each level, and masks and sums its scored rows
 * (float_adm_dwt.comp, float_adm_decouple.comp, float_adm_rows.comp); the
 * host adds the rows' float sums in row order and writes the keys through
 * the C reference's float_adm_write_rows() (float_adm.h).
 *
 * Per frame, in rounds with a barrier between them (each reads what the
 * one before wrote; l is the level):
 *   dwt 0
 *   decouple 0, dwt 1
 *   rows 0, decouple 1, dwt 2
 *   rows 1, decouple 2, dwt 3
 *   rows 2, decouple 3
 *   rows 3
 * (decouple 0 and rows 0 left out with adm_skip_scale0).  Each level has
 * its bands and masks (float_adm.glsl) in two device buffers made at init
 * and used by every frame in turn: record() starts with a compute barrier,
 * so a frame's shaders run after the previous frame's (they share the
 * queue).  Only the row sums, read after the slot's fence, are per slot.
 *
 * The reference divides by libvmaf's approximate reciprocal, the host
 * CPU's own (x86's rcpss): the device reads it from the table
 * float_adm_reciprocal_table() makes and checks, uploaded at init; where
 * that table cannot reproduce the host's reciprocal the twin declines the
 * metric, which stays on the CPU.  Where the reference divides exactly, so
 * does the device.  The shaders need doubles (shaderFloat64), as the
 * reference mixes doubles into its float steps.  adm_p_norm other than 3
 * raises each masked value to a power with powf(), which a shader cannot
 * reproduce: the twin declines those, as the CUDA twin does. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/float_adm/float_adm.h"
#include "gpu/vulkan/vulkan_twin.h"

VULKAN_SHADER(float_adm_dwt);
VULKAN_SHADER(float_adm_decouple);
VULKAN_SHADER(float_adm_rows);

enum {
    DWT_SEGMENT = 128,   /* float_adm_dwt.comp: SEGMENT */
    DECOUPLE_GROUP = 64, /* float_adm_decouple.comp: GROUP */
    ROWS_PER_GROUP = 2,  /* float_adm_rows.comp: ROWS */
    BAND_PLANES = 8,     /* float_adm.glsl: a, and h v d, of both pictures */
    MASK_PLANES = 12,    /* csf and |csf| / 30 of both parts, h v d */
};

/* Mirrors the push constants of float_adm_dwt.comp. */
typedef struct DwtPush {
    float dwt_lo[4], dwt_hi[4];
    uint32_t ref_offset, dis_offset, stride;
    int32_t width, height;
    uint32_t bytes_per_sample;
    float inv_scaler;
    uint32_t details, plane_words;
    int32_t out_width, out_height;
} DwtPush;

/* Mirrors the push constants of float_adm_decouple.comp. */
typedef struct DecouplePush {
    double gain_limit, one_by_30;
    float csf[4];
    float cos_1deg_sq, eps;
    uint32_t use_table, rcp_shift;
    int32_t col_lo, row_lo, col_hi, row_hi;
    uint32_t width, plane_words;
} DecouplePush;

/* Mirrors the push constants of float_adm_rows.comp. */
typedef struct RowsPush {
    float csf[4];
    double one_by_15;
    int32_t left, top, right, bottom, width, height;
    uint32_t plane_words, bypass_cm, out_offset;
} RowsPush;

/* std430 places a vec4 on 16 bytes and a double on 8: so does C here. */
_Static_assert(offsetof(DwtPush, ref_offset) == 32 && sizeof(DwtPush) == 76,
               "DwtPush: keep float_adm_dwt.comp in step");
_Static_assert(offsetof(DecouplePush, csf) == 16 && offsetof(DecouplePush, plane_words) == 68,
               "DecouplePush: keep float_adm_decouple.comp in step");
_Static_assert(offsetof(RowsPush, one_by_15) == 16 && offsetof(RowsPush, out_offset) == 56,
               "RowsPush: keep float_adm_rows.comp in step");

/* The plan's buffers: each level's bands and masks (one set, reused by
 * every frame: the twin keeps the run on one lane), the reciprocal's table,
 * and per slot the row sums read back. */
enum {
    BANDS = 0,                    /* + level */
    MASKS = FLOAT_ADM_SCALES,     /* + level */
    TABLE = 2 * FLOAT_ADM_SCALES,
    ROWS,
    BUFFERS,
};
/* Its pipelines: each level's DWT, decoupling and row sums. */
enum { DWT = 0, DECOUPLE = FLOAT_ADM_SCALES, SUM_ROWS = 2 * FLOAT_ADM_SCALES };

typedef struct AdmLevel {
    int w, h;             /* the level's input */
    int w2, h2;           /* its bands */
    FloatAdmRect scored;
    uint32_t plane_words;
    uint32_t rows_first;  /* a slot's row sums of this level, floats */
    DecouplePush decouple_push;
    RowsPush rows_push;
} AdmLevel;

/* The plan of a run. */
typedef struct FloatAdmRun {
    AdmLevel level[FLOAT_ADM_SCALES];
    uint32_t per_slot;  /* floats of row sums per slot */
} FloatAdmRun;

static bool float_adm_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    const FloatAdmState *s = state;
    unsigned shift;
    size_t count;
    bool usable;
    float_adm_reciprocal_table(&shift, &count, &usable);
    return dev->features.shaderFloat64 && usable && s->p_norm == 3.0;
}

static bool scored_level(const FloatAdmState *s, int l)
{
    return l > 0 || !s->skip_scale0;
}

/* The level's buffers and pipelines, and the push constants of its
 * decoupling and sums (the same every frame but for the slot). */
static void level_plan(const FloatAdmState *s, FloatAdmRun *r, int l, VulkanPlan *plan)
{
    AdmLevel *v = &r->level[l];
    v->plane_words = (uint32_t)v->w2 * (uint32_t)v->h2;
    const VkDeviceSize masks = (VkDeviceSize)MASK_PLANES * v->plane_words * sizeof(float);
    plan->buffers[BANDS + l] = (VulkanPlanBuffer){
        .what = "the float ADM bands",
        .bytes = (VkDeviceSize)BAND_PLANES * v->plane_words * sizeof(float),
        .scope = VULKAN_PER_RUN,
    };
    plan->buffers[MASKS + l] = (VulkanPlanBuffer){ .what = "the float ADM masks", .bytes = masks,
                                                   .scope = VULKAN_PER_RUN };

    const FloatAdmRect rc = v->scored;
    /* decoupled: the scored region and one sample around it, as far as the
     * band goes (the masking window's reach) */
    DecouplePush *d = &v->decouple_push;
    d->gain_limit = s->enhn_gain_limit;
    d->one_by_30 = FLOAT_ADM_ONE_BY_30;
    d->cos_1deg_sq = s->cos_1deg_sq;
    d->eps = FLOAT_ADM_DIV_EPS;
    d->col_lo = rc.left - 1 > 0 ? rc.left - 1 : 0;
    d->row_lo = rc.top - 1 > 0 ? rc.top - 1 : 0;
    d->col_hi = rc.right + 1 < v->w2 ? rc.right + 1 : v->w2;
    d->row_hi = rc.bottom + 1 < v->h2 ? rc.bottom + 1 : v->h2;
    d->width = (uint32_t)v->w2;
    d->plane_words = v->plane_words;
    RowsPush *rp = &v->rows_push;
    rp->one_by_15 = FLOAT_ADM_ONE_BY_15;
    rp->left = rc.left;
    rp->top = rc.top;
    rp->right = rc.right;
    rp->bottom = rc.bottom;
    rp->width = v->w2;
    rp->height = v->h2;
    rp->plane_words = v->plane_words;
    rp->bypass_cm = (uint32_t)s->bypass_cm;
    for (int b = 0; b < 3; b++) d->csf[b] = rp->csf[b] = s->csf[l][b];

    /* Level 0 reads the frame; its source is then bound but unread. */
    plan->pipelines[DWT + l] = (VulkanPlanPipeline){
        VULKAN_SPIRV(float_adm_dwt), .what = "the float ADM DWT shader",
        .push = *VULKAN_PUSH(DwtPush, dwt_lo, dwt_hi, ref_offset, dis_offset, stride, width,
                             height, bytes_per_sample, inv_scaler, details, plane_words,
                             out_width, out_height),
        VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, BANDS + (l > 0 ? l - 1 : 1),
                        BANDS + l),
    };
    plan->pipelines[DECOUPLE + l] = (VulkanPlanPipeline){
        VULKAN_SPIRV(float_adm_decouple), .what = "the float ADM decoupling shader",
        .push = *VULKAN_PUSH(DecouplePush, gain_limit, one_by_30, csf, cos_1deg_sq, eps,
                             use_table, rcp_shift, col_lo, row_lo, col_hi, row_hi, width,
                             plane_words),
        VULKAN_BINDINGS(BANDS + l, MASKS + l, TABLE),
    };
    plan->pipelines[SUM_ROWS + l] = (VulkanPlanPipeline){
        VULKAN_SPIRV(float_adm_rows), .what = "the float ADM row-sum shader",
        .push = *VULKAN_PUSH(RowsPush, csf, one_by_15, left, top, right, bottom, width, height,
                             plane_words, bypass_cm, out_offset),
        VULKAN_BINDINGS(BANDS + l, MASKS + l, ROWS),
    };
}

static int float_adm_vulkan_plan(const VulkanDevice *dev, const void *state,
                                 const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                                 size_t error_size)
{
    const FloatAdmState *s = state;
    FloatAdmRun *r = calloc(1, sizeof(*r));
    if (!r) return -ENOMEM;
    plan->own = r;
    int w = s->w, h = s->h;
    for (int l = 0; l < FLOAT_ADM_SCALES; l++) {
        AdmLevel *v = &r->level[l];
        v->w = w;
        v->h = h;
        v->w2 = w = (w + 1) / 2;
        v->h2 = h = (h + 1) / 2;
        v->scored = float_adm_rect(v->w2, v->h2);
        v->rows_first = r->per_slot;
        r->per_slot += (uint32_t)v->h2 * FLOAT_ADM_SUMS;
    }
    for (int l = 0; l < FLOAT_ADM_SCALES; l++) level_plan(s, r, l, plan);
    /* The reciprocal's table (one word, unread, where the reference divides
     * exactly). */
    unsigned shift = 0;
    size_t count = 0;
    bool usable = false;
    const uint32_t *table = float_adm_reciprocal_table(&shift, &count, &usable);
    if (!usable) {
        snprintf(error, error_size, "float_adm: the host's reciprocal cannot be reproduced");
        return -ENOTSUP;
    }
    static const uint32_t unused = 0;
    plan->buffers[TABLE] = (VulkanPlanBuffer){
        .what = "the float ADM reciprocal table",
        .bytes = table ? count * sizeof(uint32_t) : sizeof(unused),
        .scope = VULKAN_PER_RUN,
        .data = table ? (const void *)table : &unused,
    };
    for (int l = 0; l < FLOAT_ADM_SCALES; l++) {
        r->level[l].decouple_push.use_table = table != NULL;
        r->level[l].decouple_push.rcp_shift = shift;
    }
    vulkan_plan_results(plan, ROWS, "float ADM row sums", r->per_slot * sizeof(float));
    plan->buffer_count = BUFFERS;
    plan->pipeline_count = 3 * FLOAT_ADM_SCALES;
    /* round r: level r - 2's row sums, level r - 1's decoupling, level r's
     * DWT */
    plan->rounds = FLOAT_ADM_SCALES + 2;
    return 0;
}

static int float_adm_vulkan_round(const VulkanPlan *plan, unsigned round,
                                  const VulkanPlanMemory *memory, VulkanStep *steps, char *error,
                                  size_t error_size)
{
    static const float lo[4] = { FLOAT_ADM_DWT_LO }, hi[4] = { FLOAT_ADM_DWT_HI };
    const FloatAdmState *s = plan->state;
    const FloatAdmRun *r = plan->own;
    const VulkanFrame *frame = memory->frame;
    const unsigned bitdepth = plan->format.bitdepth;
    const int rows = (int)round - 2, decouple = (int)round - 1, dwt = (int)round;
    unsigned n = 0;
    if (rows >= 0 && scored_level(s, rows)) {
        const AdmLevel *v = &r->level[rows];
        RowsPush push = v->rows_push;
        push.out_offset = (uint32_t)(memory->offset[ROWS] / sizeof(float)) + v->rows_first;
        const uint32_t count = (uint32_t)(v->scored.bottom - v->scored.top);
        VULKAN_STEP_SET(&steps[n], SUM_ROWS + rows, (count + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP,
                        1, push);
        n++;
    }
    if (decouple >= 0 && decouple < FLOAT_ADM_SCALES && scored_level(s, decouple)) {
        const DecouplePush push = r->level[decouple].decouple_push;
        VULKAN_STEP_SET(&steps[n], DECOUPLE + decouple,
                        ((uint32_t)(push.col_hi - push.col_lo) + DECOUPLE_GROUP - 1) /
                            DECOUPLE_GROUP,
                        (uint32_t)(push.row_hi - push.row_lo), push);
        n++;
    }
    if (dwt < FLOAT_ADM_SCALES) {
        const AdmLevel *v = &r->level[dwt];
        DwtPush push = {
            .width = v->w,
            .height = v->h,
            .inv_scaler = bitdepth > 8 ? 1.0f / (float)(1u << (bitdepth - 8)) : 1.0f,
            .details = scored_level(s, dwt),
            .plane_words = v->plane_words,
            .out_width = v->w2,
            .out_height = v->h2,
        };
        memcpy(push.dwt_lo, lo, sizeof(lo));
        memcpy(push.dwt_hi, hi, sizeof(hi));
        if (dwt == 0) {
            push.ref_offset = (uint32_t)frame->ref_offset[0];
            push.dis_offset = (uint32_t)frame->dist_offset[0];
            push.stride = frame->stride[0];
            push.bytes_per_sample = bitdepth > 8 ? 2 : 1;
        } else {
            /* the previous level's bands a */
            const AdmLevel *src = &r->level[dwt - 1];
            push.ref_offset = 0;
            push.dis_offset = src->plane_words;
            push.stride = (uint32_t)src->w2;
        }
        /* Rows 0 .. h2 - 1 of the reference, then of the distorted picture. */
        VULKAN_STEP_SET(&steps[n], DWT + dwt, ((uint32_t)v->w2 + DWT_SEGMENT - 1) / DWT_SEGMENT,
                        2 * (uint32_t)v->h2, push);
        n++;
    }
    return (int)n;
}

static int float_adm_vulkan_collect(const VulkanPlan *plan, const void *results,
                                    const MetricFrame *frame, FeatureSink *sink)
{
    const FloatAdmRun *r = plan->own;
    const float *rows[FLOAT_ADM_SCALES];
    for (int l = 0; l < FLOAT_ADM_SCALES; l++)
        rows[l] = (const float *)results + r->level[l].rows_first;
    return float_adm_write_rows(plan->state, sink, frame->index, rows);
}

const VulkanTwin vulkan_twin_float_adm = {
    VULKAN_TWIN_OF(float_adm),
    .supports = float_adm_vulkan_supports,
};
