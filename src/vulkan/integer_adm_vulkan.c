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
 * (decouple 0 and rows 0 left out with adm_skip_scale0).  Each level's
 * planes are one device buffer per lane, made at init and used by the
 * lane's frames in turn: the backend's barrier before the first round
 * orders a frame's shaders after those of the lane's frame before (they
 * share its queue).  Only the row sums, read after the slot's fence, are
 * per slot. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/integer_adm.h"
#include "vulkan_twin.h"

extern const unsigned char vulkan_shader_integer_adm_dwt[];
extern const size_t vulkan_shader_integer_adm_dwt_size;
extern const unsigned char vulkan_shader_integer_adm_decouple[];
extern const size_t vulkan_shader_integer_adm_decouple_size;
extern const unsigned char vulkan_shader_integer_adm_decouple_f64[];
extern const size_t vulkan_shader_integer_adm_decouple_f64_size;
extern const unsigned char vulkan_shader_integer_adm_rows[];
extern const size_t vulkan_shader_integer_adm_rows_size;

enum {
    DWT_SEGMENT = 127,     /* integer_adm_dwt.comp: outputs per workgroup */
    DECOUPLE_GROUP = 64,   /* integer_adm_decouple.comp: samples per workgroup */
    PLANES = 15,           /* per level: ref a h v d, dis a h v d, rst h v d, 2 x masking */
};

/* Mirrors the push constants of integer_adm_dwt.comp. */
typedef struct DwtPush {
    uint32_t ref_offset, dis_offset, stride;
    int32_t width, height;
    uint32_t bytes_per_sample, bitdepth, scale, plane_words, out_stride;
    int32_t out_width, out_height;
} DwtPush;

/* Mirrors the push constants of integer_adm_decouple.comp. */
typedef struct DecouplePush {
    int32_t left, top, right, bottom;
    uint32_t stride, plane_words, level0, skip_aim, csf[3], cos_lo, cos_hi;
    int32_t cos_e;
    uint32_t gain_lo, gain_hi;
    int32_t gain_e;
} DecouplePush;

/* Mirrors the push constants of integer_adm_rows.comp. */
typedef struct RowsPush {
    uint32_t flags;
    int32_t top, left, right, width, height;
    uint32_t stride, plane_words, csf[3], out_offset;
    uint32_t m_sq_add[3], m_cub_add[3], m_row_add, m_sq, m_sub, m_cub, m_row_shift;
    uint32_t d_sq_add, d_cub_add, d_row_add, d_shifts;
} RowsPush;

typedef struct AdmLevel {
    int w, h;             /* the level's bands */
    uint32_t stride, plane_words;
    AdmRect taps, scored;
    AdmDenShifts den;
    AdmMaskedShifts masked;
    unsigned rows, first; /* scored rows, the first one's partial in a slot */
    VulkanBuffer planes[VULKAN_MAX_LANES]; /* device: PLANES planes, per lane */
    RowsPush rows_push;
    DecouplePush decouple_push;
} AdmLevel;

typedef struct AdmTwin {
    const VulkanDevice *dev;
    const AdmState *metric;
    AdmLevel level[ADM_SCALES];
    /* One pipeline per shader; descriptor set l * lanes + lane binds level
     * l's planes of the lane. */
    VulkanPipeline dwt, decouple, sums;
    unsigned per_slot;     /* row partials per slot */
    VulkanBuffer partials; /* host-visible: slots x per_slot x ADM_LEVEL_SUMS x uint64 */
} AdmTwin;

static void adm_vulkan_close(void *twin)
{
    AdmTwin *t = twin;
    if (!t) return;
    vulkan_pipeline_destroy(t->dev, &t->dwt);
    vulkan_pipeline_destroy(t->dev, &t->decouple);
    vulkan_pipeline_destroy(t->dev, &t->sums);
    for (int l = 0; l < ADM_SCALES; l++) {
        for (unsigned k = 0; k < VULKAN_MAX_LANES; k++)
            vulkan_buffer_destroy(t->dev, &t->level[l].planes[k]);
    }
    vulkan_buffer_destroy(t->dev, &t->partials);
    free(t);
}

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

static int adm_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                           const void *metric_state, const QualeVideoFormat *format, unsigned slots,
                           void **out, char *error, size_t error_size)
{
    int err = adm_check_size(format->width, format->height, error, error_size);
    if (err) return err;
    AdmTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    const AdmState *s = t->metric;

    int w = (int)format->width, h = (int)format->height;
    for (int l = 0; l < ADM_SCALES && !err; l++) {
        AdmLevel *v = &t->level[l];
        v->w = w = adm_half(w);
        v->h = h = adm_half(h);
        v->stride = ((uint32_t)w + 15) & ~15u;
        v->plane_words = v->stride * (uint32_t)h;
        v->taps = adm_rect_with_taps(w, h);
        v->scored = adm_rect_scored(w, h);
        adm_den_shifts(l == 0, l, w, h, &v->den);
        adm_masked_shifts(l == 0, w, h, &v->masked);
        v->rows = (unsigned)(v->scored.bottom - v->scored.top);
        v->first = t->per_slot;
        t->per_slot += v->rows;
        if (!level_constants(s, l, v)) {
            snprintf(error, error_size, "adm: level %d's rounding terms do not fit the Vulkan "
                     "shader's words", l);
            err = -EINVAL;
            break;
        }
        const VkDeviceSize bytes = (VkDeviceSize)PLANES * v->plane_words * sizeof(int32_t);
        if (bytes > dev->properties.limits.maxStorageBufferRange) {
            snprintf(error, error_size, "adm: the %dx%d bands of level %d need %llu bytes, more "
                     "than the device's largest storage buffer (%u)", w, h, l,
                     (unsigned long long)bytes, dev->properties.limits.maxStorageBufferRange);
            err = -E2BIG;
            break;
        }
        for (unsigned k = 0; k < dev->lanes && !err; k++)
            err = vulkan_buffer_create(dev, bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, false,
                                       &v->planes[k], "the ADM bands", error, error_size);
    }
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)slots * t->per_slot * ADM_LEVEL_SUMS * sizeof(uint64_t),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->partials,
                                   "ADM row sums", error, error_size);
    const unsigned lanes = dev->lanes;
    VkBuffer dwt_buffers[4 * ADM_SCALES * VULKAN_MAX_LANES],
        decouple_buffers[ADM_SCALES * VULKAN_MAX_LANES], sum_buffers[2 * ADM_SCALES * VULKAN_MAX_LANES];
    for (int l = 0; l < ADM_SCALES; l++) {
        const AdmLevel *v = &t->level[l];
        for (unsigned k = 0; k < lanes; k++) {
            const unsigned set = (unsigned)l * lanes + k;
            /* Level 0 reads the frame; Source is then bound but unread. */
            const VkBuffer dwt[4] = { ring, frames, t->level[l > 0 ? l - 1 : 1].planes[k].buffer,
                                      v->planes[k].buffer };
            memcpy(dwt_buffers + 4 * set, dwt, sizeof(dwt));
            decouple_buffers[set] = v->planes[k].buffer;
            sum_buffers[2 * set] = v->planes[k].buffer;
            sum_buffers[2 * set + 1] = t->partials.buffer;
        }
    }
    const unsigned sets = ADM_SCALES * lanes;
    VulkanPipelineInfo info = {
        .spirv = (const uint32_t *)vulkan_shader_integer_adm_dwt,
        .spirv_size = vulkan_shader_integer_adm_dwt_size,
        .buffers = dwt_buffers, .bindings = 4, .sets = sets,
        .push = VULKAN_PUSH(DwtPush, ref_offset, dis_offset, stride, width, height, bytes_per_sample, bitdepth, scale, plane_words, out_stride, out_width, out_height), .what = "the ADM DWT shader",
    };
    if (!err) err = vulkan_pipeline_create_ex(dev, &info, &t->dwt, error, error_size);
    /* The same bits either way; the device's doubles are faster. */
    const bool native = dev->features.shaderFloat64 && dev->features.shaderInt64;
    info = (VulkanPipelineInfo){
        .spirv = (const uint32_t *)(native ? vulkan_shader_integer_adm_decouple_f64
                                           : vulkan_shader_integer_adm_decouple),
        .spirv_size = native ? vulkan_shader_integer_adm_decouple_f64_size
                             : vulkan_shader_integer_adm_decouple_size,
        .buffers = decouple_buffers, .bindings = 1, .sets = sets,
        .push = VULKAN_PUSH(DecouplePush, left, top, right, bottom, stride, plane_words, level0, skip_aim, csf, cos_lo, cos_hi, cos_e, gain_lo, gain_hi, gain_e), .what = "the ADM decoupling shader",
    };
    if (!err) err = vulkan_pipeline_create_ex(dev, &info, &t->decouple, error, error_size);
    info = (VulkanPipelineInfo){
        .spirv = (const uint32_t *)vulkan_shader_integer_adm_rows,
        .spirv_size = vulkan_shader_integer_adm_rows_size,
        .buffers = sum_buffers, .bindings = 2, .sets = sets,
        .push = VULKAN_PUSH(RowsPush, flags, top, left, right, width, height, stride, plane_words, csf, out_offset, m_sq_add, m_cub_add, m_row_add, m_sq, m_sub, m_cub, m_row_shift, d_sq_add, d_cub_add, d_row_add, d_shifts), .what = "the ADM row-sum shader",
    };
    if (!err) err = vulkan_pipeline_create_ex(dev, &info, &t->sums, error, error_size);
    if (err) {
        adm_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static bool scored_level(const AdmTwin *t, int l)
{
    return l > 0 || !t->metric->skip_scale0;
}

static void record_dwt(const AdmTwin *t, const VulkanFrame *frame, int l, VkCommandBuffer cb)
{
    const AdmLevel *v = &t->level[l];
    DwtPush push = {
        .bitdepth = (uint32_t)t->metric->bitdepth,
        .scale = (uint32_t)l,
        .plane_words = v->plane_words,
        .out_stride = v->stride,
        .out_width = v->w,
        .out_height = v->h,
    };
    if (l == 0) {
        push.ref_offset = (uint32_t)frame->ref_offset[0];
        push.dis_offset = (uint32_t)frame->dist_offset[0];
        push.stride = frame->stride[0];
        push.width = t->metric->width;
        push.height = t->metric->height;
        push.bytes_per_sample = t->metric->bitdepth > 8 ? 2 : 1;
    } else {
        const AdmLevel *src = &t->level[l - 1];
        push.ref_offset = 0;                     /* the reference's a */
        push.dis_offset = 4 * src->plane_words;  /* the distorted's a */
        push.stride = src->stride;
        push.width = src->w;
        push.height = src->h;
    }
    /* Rows 0 .. h - 1 of the reference, then of the distorted picture. */
    vulkan_dispatch_set(t->dev, cb, &t->dwt, (unsigned)l * t->dev->lanes + frame->lane, &push,
                        ((uint32_t)v->w + DWT_SEGMENT - 1) / DWT_SEGMENT, 2 * (uint32_t)v->h);
}

static void record_decouple(const AdmTwin *t, unsigned lane, int l, VkCommandBuffer cb)
{
    const AdmLevel *v = &t->level[l];
    const uint32_t columns = (uint32_t)(v->taps.right - v->taps.left);
    vulkan_dispatch_set(t->dev, cb, &t->decouple, (unsigned)l * t->dev->lanes + lane, &v->decouple_push,
                    (columns + DECOUPLE_GROUP - 1) / DECOUPLE_GROUP,
                    (uint32_t)(v->taps.bottom - v->taps.top));
}

static void record_rows(const AdmTwin *t, unsigned slot, unsigned lane, int l, VkCommandBuffer cb)
{
    const AdmLevel *v = &t->level[l];
    RowsPush push = v->rows_push;
    push.out_offset = slot * t->per_slot + v->first;
    vulkan_dispatch_set(t->dev, cb, &t->sums, (unsigned)l * t->dev->lanes + lane, &push, v->rows, 1);
}

/* Round r: the row sums of level r - 2, the decoupling of level r - 1 and
 * the DWT of level r (each reads what the round before wrote). */
static int adm_vulkan_record_round(void *twin, unsigned round, unsigned slot,
                                   const VulkanFrame *frame, VkCommandBuffer cb, char *error,
                                   size_t error_size)
{
    (void)error;
    (void)error_size;
    AdmTwin *t = twin;
    const int rows = (int)round - 2, decouple = (int)round - 1, dwt = (int)round;
    if (rows >= 0 && scored_level(t, rows)) record_rows(t, slot, frame->lane, rows, cb);
    if (decouple >= 0 && decouple < ADM_SCALES && scored_level(t, decouple))
        record_decouple(t, frame->lane, decouple, cb);
    if (dwt < ADM_SCALES) record_dwt(t, frame, dwt, cb);
    return ADM_SCALES + 1 - (int)round;
}

static int adm_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink)
{
    AdmTwin *t = twin;
    const uint64_t *p = (const uint64_t *)t->partials.mapped + (size_t)slot * t->per_slot * ADM_LEVEL_SUMS;
    uint64_t sums[ADM_SUMS] = { 0 };
    for (int l = 0; l < ADM_SCALES; l++) {
        const AdmLevel *v = &t->level[l];
        if (!scored_level(t, l)) continue;
        uint64_t *level = sums + l * ADM_LEVEL_SUMS;
        for (unsigned r = 0; r < v->rows; r++)
            for (unsigned q = 0; q < ADM_LEVEL_SUMS; q++)
                level[q] += p[(size_t)(v->first + r) * ADM_LEVEL_SUMS + q];
    }
    float num[ADM_SCALES], aim[ADM_SCALES], den[ADM_SCALES];
    adm_scores(t->metric, sums, num, aim, den);
    return adm_write_frame(t->metric, sink, frame->index, num, aim, den);
}

const VulkanTwin vulkan_twin_integer_adm = {
    .metric = &metric_integer_adm,
    .concurrent = true, /* per lane or per slot, all it keeps */
    .init = adm_vulkan_init,
    .record_round = adm_vulkan_record_round,
    .collect_own = adm_vulkan_collect,
    .close = adm_vulkan_close,
};
