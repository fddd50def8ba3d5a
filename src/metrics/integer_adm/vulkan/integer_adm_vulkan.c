/* Integer ADM on Vulkan: the device runs the four DWT levels, the
 * decoupling, the CSF and masking, and each level's scored-row sums (each
 * row's nine 64-bit sums already rounded by its row shift, as the C
 * reference does); the host adds the rows into the frame's sums and turns
 * them into the values through the C reference's own steps (adm_scores,
 * adm_write_frame, integer_adm.h).
 *
 * Per frame, six rounds (each reads what the one before wrote; the backend
 * puts the barriers between them, shared with the other twins' rounds):
 *   dwt 0
 *   decouple 0, dwt 1
 *   rows 0, decouple 1, dwt 2
 *   rows 1, decouple 2, dwt 3
 *   rows 2, decouple 3
 *   rows 3
 * (decouple 0 and rows 0 left out with adm_skip_scale0).
 *
 * The plan: each level's fifteen planes are a buffer of their own, per
 * lane (the lane's frames use it in turn: the backend's barrier before the
 * first round orders a frame's shaders after those of the lane's frame
 * before, on the same queue); one buffer for every level would pass the
 * largest storage buffer some devices bind at 4K (lavapipe: 128 MiB).
 * Each pipeline has one descriptor set per level (set l binds level l's
 * planes, and the DWT level l - 1's as its source); the shaders take where
 * the frame's region starts as a base in words (the plan's memory offsets:
 * 0 in a lane's own buffer).  Only the row sums, read after the slot's
 * fence, are per slot. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/integer_adm/integer_adm.h"
#include "gpu/vulkan/vulkan_twin.h"

VULKAN_SHADER(integer_adm_dwt);
VULKAN_SHADER(integer_adm_decouple);
VULKAN_SHADER(integer_adm_decouple_f64);
VULKAN_SHADER(integer_adm_rows);

enum {
    DWT_SEGMENT = 127,     /* integer_adm_dwt.comp: outputs per workgroup */
    DECOUPLE_GROUP = 64,   /* integer_adm_decouple.comp: samples per workgroup */
    PLANES = 15,           /* per level: ref a h v d, dis a h v d, rst h v d, 2 x masking */
};

/* The plan's buffers: the row sums, then level l's planes at LEVEL0 + l
 * (so that descriptor set l binds LEVEL0 + l, and the DWT's source
 * LEVEL0 + l - 1: the row sums for level 0, which reads the frame). */
enum { ROW_SUMS, LEVEL0, BUFFERS = LEVEL0 + ADM_SCALES };

enum { DWT, DECOUPLE, ROWS, PIPELINES };

/* The push constants of integer_adm_dwt.comp. */
typedef struct DwtPush {
    uint32_t ref_offset, dis_offset, stride;
    int32_t width, height;
    uint32_t bytes_per_sample, bitdepth, scale, plane_words, out_stride;
    int32_t out_width, out_height;
    uint32_t out_base;
} DwtPush;

/* The push constants of integer_adm_decouple.comp. */
typedef struct DecouplePush {
    int32_t left, top, right, bottom;
    uint32_t stride, plane_words, level0, skip_aim, csf[3], cos_lo, cos_hi;
    int32_t cos_e;
    uint32_t gain_lo, gain_hi;
    int32_t gain_e;
    uint32_t base;
} DecouplePush;

/* The push constants of integer_adm_rows.comp. */
typedef struct RowsPush {
    uint32_t flags;
    int32_t top, left, right, width, height;
    uint32_t stride, plane_words, csf[3], out_offset;
    uint32_t m_sq_add[3], m_cub_add[3], m_row_add, m_sq, m_sub, m_cub, m_row_shift;
    uint32_t d_sq_add, d_cub_add, d_row_add, d_shifts;
    uint32_t base;
} RowsPush;

typedef struct AdmLevel {
    int w, h;             /* the level's bands */
    uint32_t stride, plane_words;
    AdmRect taps, scored;
    AdmDenShifts den;
    AdmMaskedShifts masked;
    unsigned rows, first; /* scored rows, the first one's partial in a slot */
    RowsPush rows_push;
    DecouplePush decouple_push;
} AdmLevel;

/* The plan's own: the levels' layout and constant push constants. */
typedef struct AdmVulkanPlan {
    AdmLevel level[ADM_SCALES];
    unsigned per_slot;     /* row partials per slot */
} AdmVulkanPlan;

/* A positive double as the shaders' SDouble: a 53-bit mantissa, returned,
 * times 2^*e. */
static uint64_t sd_parts(double v, int *e)
{
    int e2;
    const uint64_t m = (uint64_t)ldexp(frexp(v, &e2), 53);
    *e = e2 - 53;
    return m;
}

static bool fits_u32(int64_t v)
{
    return v >= 0 && v <= (int64_t)UINT32_MAX;
}

/* The constant push constants of a level's decoupling and row sums; false
 * where a rounding term would not fit the shader's 32-bit words. */
static bool level_constants(const AdmState *s, int l, AdmLevel *v)
{
    const bool level0 = l == 0;
    uint32_t csf[3];
    for (int b = 0; b < 3; b++) csf[b] = level0 ? s->csf_q0[b] : s->csf_q32[l][b];

    int cos_e, gain_e;
    const uint64_t cos_m = sd_parts(s->cos_1deg_sq, &cos_e), gain_m = sd_parts(s->enhn_gain_limit, &gain_e);
    v->decouple_push = (DecouplePush){
        .left = v->taps.left, .top = v->taps.top, .right = v->taps.right, .bottom = v->taps.bottom,
        .stride = v->stride, .plane_words = v->plane_words, .level0 = level0,
        .skip_aim = s->skip_aim, .csf = { csf[0], csf[1], csf[2] },
        .cos_lo = (uint32_t)cos_m, .cos_hi = (uint32_t)(cos_m >> 32), .cos_e = cos_e,
        .gain_lo = (uint32_t)gain_m, .gain_hi = (uint32_t)(gain_m >> 32), .gain_e = gain_e,
    };

    const AdmMaskedShifts *p = &v->masked;
    const AdmDenShifts *d = &v->den;
    RowsPush *r = &v->rows_push;
    *r = (RowsPush){
        .flags = (level0 ? 1u : 0u) | (s->skip_aim ? 2u : 0u),
        .top = v->scored.top, .left = v->scored.left, .right = v->scored.right,
        .width = v->w, .height = v->h, .stride = v->stride, .plane_words = v->plane_words,
        .csf = { csf[0], csf[1], csf[2] },
        .m_row_add = (uint32_t)p->row_add, .m_row_shift = p->row_shift,
        .d_sq_add = (uint32_t)d->sq_add, .d_cub_add = (uint32_t)d->cub_add,
        .d_row_add = (uint32_t)d->row_add,
        .d_shifts = (d->sq & 0xff) | (d->cub & 0xff) << 8 | (d->row_shift & 0xff) << 16,
    };
    bool ok = fits_u32(p->row_add) && d->sq_add <= UINT32_MAX && d->cub_add <= UINT32_MAX &&
              d->row_add <= UINT32_MAX && p->row_shift < 256 && d->sq < 256 && d->cub < 256 &&
              d->row_shift < 256;
    for (int b = 0; b < 3; b++) {
        r->m_sq_add[b] = (uint32_t)p->sq_add[b];
        r->m_cub_add[b] = (uint32_t)p->cub_add[b];
        r->m_sq |= (p->sq[b] & 0xff) << (8 * b);
        r->m_sub |= (p->sub[b] & 0xff) << (8 * b);
        r->m_cub |= (p->cub[b] & 0xff) << (8 * b);
        ok = ok && fits_u32(p->sq_add[b]) && fits_u32(p->cub_add[b]) && p->sq[b] < 256 &&
             p->sub[b] < 32 && p->cub[b] < 256;
    }
    return ok;
}

static int integer_adm_vulkan_plan(const VulkanDevice *dev, const void *metric_state,
                                   const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                                   size_t error_size)
{
    const AdmState *s = metric_state;
    int err = adm_check_size(format->width, format->height, error, error_size);
    if (err) return err;
    AdmVulkanPlan *a = calloc(1, sizeof(*a));
    if (!a) return -ENOMEM;
    plan->own = a;

    int w = (int)format->width, h = (int)format->height;
    for (int l = 0; l < ADM_SCALES; l++) {
        AdmLevel *v = &a->level[l];
        v->w = w = adm_half(w);
        v->h = h = adm_half(h);
        v->stride = ((uint32_t)w + 15) & ~15u;
        v->plane_words = v->stride * (uint32_t)h;
        v->taps = adm_rect_with_taps(w, h);
        v->scored = adm_rect_scored(w, h);
        adm_den_shifts(l == 0, l, w, h, &v->den);
        adm_masked_shifts(l == 0, w, h, &v->masked);
        v->rows = (unsigned)(v->scored.bottom - v->scored.top);
        v->first = a->per_slot;
        a->per_slot += v->rows;
        if (!level_constants(s, l, v)) {
            snprintf(error, error_size, "adm: level %d's rounding terms do not fit the Vulkan "
                     "shader's words", l);
            return -EINVAL;
        }
        plan->buffers[LEVEL0 + l] = (VulkanPlanBuffer){
            .what = "the ADM bands",
            .bytes = (VkDeviceSize)PLANES * v->plane_words * sizeof(int32_t),
            .scope = VULKAN_PER_LANE,
        };
    }
    vulkan_plan_results(plan, ROW_SUMS, "the ADM row sums",
                        (VkDeviceSize)a->per_slot * ADM_LEVEL_SUMS * sizeof(uint64_t));
    plan->buffer_count = BUFFERS;

    /* The same bits either way; the device's doubles are faster. */
    const bool native = dev->features.shaderFloat64 && dev->features.shaderInt64;
    plan->pipelines[DWT] = (VulkanPlanPipeline){
        VULKAN_SPIRV(integer_adm_dwt), .what = "the ADM DWT shader",
        .push = *VULKAN_PUSH(DwtPush, ref_offset, dis_offset, stride, width, height,
                             bytes_per_sample, bitdepth, scale, plane_words, out_stride, out_width,
                             out_height, out_base),
        VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, VULKAN_BIND_PER_SET(LEVEL0 - 1),
                        VULKAN_BIND_PER_SET(LEVEL0)),
        .sets = ADM_SCALES,
    };
    plan->pipelines[DECOUPLE] = (VulkanPlanPipeline){
        .spirv = native ? vulkan_shader_integer_adm_decouple_f64
                        : vulkan_shader_integer_adm_decouple,
        .spirv_size = native ? vulkan_shader_integer_adm_decouple_f64_size
                             : vulkan_shader_integer_adm_decouple_size,
        .what = "the ADM decoupling shader",
        .push = *VULKAN_PUSH(DecouplePush, left, top, right, bottom, stride, plane_words, level0,
                             skip_aim, csf, cos_lo, cos_hi, cos_e, gain_lo, gain_hi, gain_e, base),
        VULKAN_BINDINGS(VULKAN_BIND_PER_SET(LEVEL0)),
        .sets = ADM_SCALES,
    };
    plan->pipelines[ROWS] = (VulkanPlanPipeline){
        VULKAN_SPIRV(integer_adm_rows), .what = "the ADM row-sum shader",
        .push = *VULKAN_PUSH(RowsPush, flags, top, left, right, width, height, stride,
                             plane_words, csf, out_offset, m_sq_add, m_cub_add, m_row_add, m_sq,
                             m_sub, m_cub, m_row_shift, d_sq_add, d_cub_add, d_row_add, d_shifts,
                             base),
        VULKAN_BINDINGS(VULKAN_BIND_PER_SET(LEVEL0), ROW_SUMS),
        .sets = ADM_SCALES,
    };
    plan->pipeline_count = PIPELINES;
    plan->rounds = ADM_SCALES + 2;
    return 0;
}

static bool scored_level(const AdmState *s, int l)
{
    return l > 0 || !s->skip_scale0;
}

static void dwt_step(const VulkanPlan *plan, const VulkanPlanMemory *m, int l, VulkanStep *step)
{
    const AdmState *s = plan->state;
    const AdmVulkanPlan *a = plan->own;
    const AdmLevel *v = &a->level[l];
    const VulkanFrame *frame = m->frame;
    DwtPush push = {
        .bitdepth = (uint32_t)s->bitdepth,
        .scale = (uint32_t)l,
        .plane_words = v->plane_words,
        .out_stride = v->stride,
        .out_width = v->w,
        .out_height = v->h,
        .out_base = vulkan_plan_words(m, LEVEL0 + (unsigned)l),
    };
    if (l == 0) {
        push.ref_offset = (uint32_t)frame->ref_offset[0];
        push.dis_offset = (uint32_t)frame->dist_offset[0];
        push.stride = frame->stride[0];
        push.width = s->width;
        push.height = s->height;
        push.bytes_per_sample = s->bitdepth > 8 ? 2 : 1;
    } else {
        const AdmLevel *src = &a->level[l - 1];
        const uint32_t base = vulkan_plan_words(m, LEVEL0 + (unsigned)l - 1);
        push.ref_offset = base;                          /* the reference's a */
        push.dis_offset = base + 4 * src->plane_words;   /* the distorted's a */
        push.stride = src->stride;
        push.width = src->w;
        push.height = src->h;
    }
    /* Rows 0 .. h - 1 of the reference, then of the distorted picture. */
    VULKAN_STEP_SET_IN(step, DWT, (unsigned)l, ((uint32_t)v->w + DWT_SEGMENT - 1) / DWT_SEGMENT,
                       2 * (uint32_t)v->h, push);
}

static void decouple_step(const VulkanPlan *plan, const VulkanPlanMemory *m, int l,
                          VulkanStep *step)
{
    const AdmLevel *v = &((const AdmVulkanPlan *)plan->own)->level[l];
    DecouplePush push = v->decouple_push;
    push.base = vulkan_plan_words(m, LEVEL0 + (unsigned)l);
    const uint32_t columns = (uint32_t)(v->taps.right - v->taps.left);
    VULKAN_STEP_SET_IN(step, DECOUPLE, (unsigned)l, (columns + DECOUPLE_GROUP - 1) / DECOUPLE_GROUP,
                       (uint32_t)(v->taps.bottom - v->taps.top), push);
}

static void rows_step(const VulkanPlan *plan, const VulkanPlanMemory *m, int l, VulkanStep *step)
{
    const AdmLevel *v = &((const AdmVulkanPlan *)plan->own)->level[l];
    RowsPush push = v->rows_push;
    push.base = vulkan_plan_words(m, LEVEL0 + (unsigned)l);
    /* in 64-bit sums: the slot's region, then the level's first row */
    push.out_offset = (uint32_t)(m->offset[ROW_SUMS] / sizeof(uint64_t)) + v->first * ADM_LEVEL_SUMS;
    VULKAN_STEP_SET_IN(step, ROWS, (unsigned)l, v->rows, 1, push);
}

/* Round r: the row sums of level r - 2, the decoupling of level r - 1 and
 * the DWT of level r (each reads what the round before wrote). */
static int integer_adm_vulkan_round(const VulkanPlan *plan, unsigned round,
                                    const VulkanPlanMemory *m,
                                    VulkanStep steps[VULKAN_PLAN_MAX_STEPS], char *error,
                                    size_t error_size)
{
    (void)error;
    (void)error_size;
    const AdmState *s = plan->state;
    const int rows = (int)round - 2, decouple = (int)round - 1, dwt = (int)round;
    int n = 0;
    if (rows >= 0 && scored_level(s, rows)) rows_step(plan, m, rows, &steps[n++]);
    if (decouple >= 0 && decouple < ADM_SCALES && scored_level(s, decouple))
        decouple_step(plan, m, decouple, &steps[n++]);
    if (dwt < ADM_SCALES) dwt_step(plan, m, dwt, &steps[n++]);
    return n;
}

static int integer_adm_vulkan_collect(const VulkanPlan *plan, const void *results,
                                      const MetricFrame *frame, FeatureSink *sink)
{
    const AdmState *s = plan->state;
    const AdmVulkanPlan *a = plan->own;
    const uint64_t *p = results;
    uint64_t sums[ADM_SUMS] = { 0 };
    for (int l = 0; l < ADM_SCALES; l++) {
        const AdmLevel *v = &a->level[l];
        if (!scored_level(s, l)) continue;
        uint64_t *level = sums + l * ADM_LEVEL_SUMS;
        for (unsigned r = 0; r < v->rows; r++)
            for (unsigned q = 0; q < ADM_LEVEL_SUMS; q++)
                level[q] += p[(size_t)(v->first + r) * ADM_LEVEL_SUMS + q];
    }
    float num[ADM_SCALES], aim[ADM_SCALES], den[ADM_SCALES];
    adm_scores(s, sums, num, aim, den);
    return adm_write_frame(s, sink, frame->index, num, aim, den);
}

const VulkanTwin vulkan_twin_integer_adm = {
    VULKAN_TWIN_OF(integer_adm),
    .first_round_cost = 9, /* 1080p, H200: 0.017-0.020 ms */
    .concurrent = true, /* per lane or per slot, all it keeps */
};
