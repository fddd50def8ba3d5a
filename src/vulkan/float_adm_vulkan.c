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

#include "metrics/float_adm.h"
#include "vulkan_twin.h"

extern const unsigned char vulkan_shader_float_adm_dwt[];
extern const size_t vulkan_shader_float_adm_dwt_size;
extern const unsigned char vulkan_shader_float_adm_decouple[];
extern const size_t vulkan_shader_float_adm_decouple_size;
extern const unsigned char vulkan_shader_float_adm_rows[];
extern const size_t vulkan_shader_float_adm_rows_size;

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

typedef struct AdmLevel {
    int w, h;             /* the level's input */
    int w2, h2;           /* its bands */
    FloatAdmRect scored;
    uint32_t plane_words;
    uint32_t rows_first;  /* a slot's row sums of this level, floats */
    VulkanBuffer bands, masks;
    VulkanPipeline dwt, decouple, rows;
    DecouplePush decouple_push;
    RowsPush rows_push;
} AdmLevel;

typedef struct FloatAdmTwin {
    const VulkanDevice *dev;
    const FloatAdmState *metric;
    unsigned bitdepth;
    AdmLevel level[FLOAT_ADM_SCALES];
    uint32_t per_slot;  /* floats of row sums per slot */
    VulkanBuffer table; /* device: the reciprocal's (one word where unused) */
    VulkanBuffer rows;  /* host-visible: slots x per_slot floats */
} FloatAdmTwin;

static bool float_adm_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    const FloatAdmState *s = state;
    unsigned shift;
    size_t count;
    bool usable;
    float_adm_reciprocal_table(&shift, &count, &usable);
    return dev->features.shaderFloat64 && usable && s->p_norm == 3.0;
}

static void float_adm_vulkan_close(void *twin)
{
    FloatAdmTwin *t = twin;
    if (!t) return;
    for (int l = 0; l < FLOAT_ADM_SCALES; l++) {
        AdmLevel *v = &t->level[l];
        vulkan_pipeline_destroy(t->dev, &v->dwt);
        vulkan_pipeline_destroy(t->dev, &v->decouple);
        vulkan_pipeline_destroy(t->dev, &v->rows);
        vulkan_buffer_destroy(t->dev, &v->bands);
        vulkan_buffer_destroy(t->dev, &v->masks);
    }
    vulkan_buffer_destroy(t->dev, &t->table);
    vulkan_buffer_destroy(t->dev, &t->rows);
    free(t);
}

static bool scored_level(const FloatAdmTwin *t, int l)
{
    return l > 0 || !t->metric->skip_scale0;
}

/* The level's buffers, and the push constants of its decoupling and sums
 * (the same every frame but for the slot). */
static int level_init(FloatAdmTwin *t, int l, char *error, size_t error_size)
{
    const FloatAdmState *s = t->metric;
    AdmLevel *v = &t->level[l];
    v->plane_words = (uint32_t)v->w2 * (uint32_t)v->h2;
    const VkDeviceSize masks = (VkDeviceSize)MASK_PLANES * v->plane_words * sizeof(float);
    if (masks > t->dev->properties.limits.maxStorageBufferRange) {
        snprintf(error, error_size, "float_adm: the %dx%d bands of level %d need %llu bytes, more "
                 "than the device's largest storage buffer (%u)", v->w2, v->h2, l,
                 (unsigned long long)masks, t->dev->properties.limits.maxStorageBufferRange);
        return -E2BIG;
    }
    int err = vulkan_buffer_create(t->dev, (VkDeviceSize)BAND_PLANES * v->plane_words * sizeof(float),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, false, &v->bands,
                                   "the float ADM bands", error, error_size);
    if (!err)
        err = vulkan_buffer_create(t->dev, masks, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, false,
                                   &v->masks, "the float ADM masks", error, error_size);
    if (err) return err;

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
    RowsPush *r = &v->rows_push;
    r->one_by_15 = FLOAT_ADM_ONE_BY_15;
    r->left = rc.left;
    r->top = rc.top;
    r->right = rc.right;
    r->bottom = rc.bottom;
    r->width = v->w2;
    r->height = v->h2;
    r->plane_words = v->plane_words;
    r->bypass_cm = (uint32_t)s->bypass_cm;
    for (int b = 0; b < 3; b++) d->csf[b] = r->csf[b] = s->csf[l][b];
    return 0;
}

/* The reciprocal's table on the device (one word, unread, where the
 * reference divides exactly). */
static int table_init(FloatAdmTwin *t, char *error, size_t error_size)
{
    unsigned shift = 0;
    size_t count = 0;
    bool usable = false;
    const uint32_t *table = float_adm_reciprocal_table(&shift, &count, &usable);
    if (!usable) {
        snprintf(error, error_size, "float_adm: the host's reciprocal cannot be reproduced");
        return -ENOTSUP;
    }
    static const uint32_t unused = 0;
    const int err = vulkan_buffer_create_constant(t->dev, table ? (const void *)table : &unused,
                                                  table ? count * sizeof(uint32_t) : sizeof(unused),
                                                  &t->table, "the float ADM reciprocal table",
                                                  error, error_size);
    for (int l = 0; l < FLOAT_ADM_SCALES; l++) {
        t->level[l].decouple_push.use_table = table != NULL;
        t->level[l].decouple_push.rcp_shift = shift;
    }
    return err;
}

static int pipelines_init(FloatAdmTwin *t, int l, VkBuffer ring, VkBuffer frames, char *error,
                          size_t error_size)
{
    AdmLevel *v = &t->level[l];
    /* Level 0 reads the frame; Source is then bound but unread. */
    const VkBuffer dwt_buffers[4] = { ring, frames, t->level[l > 0 ? l - 1 : 1].bands.buffer,
                                      v->bands.buffer };
    int err = vulkan_pipeline_create(t->dev, (const uint32_t *)vulkan_shader_float_adm_dwt,
                                     vulkan_shader_float_adm_dwt_size, dwt_buffers, 4,
                                     VULKAN_PUSH(DwtPush, dwt_lo, dwt_hi, ref_offset, dis_offset, stride, width, height, bytes_per_sample, inv_scaler, details, plane_words, out_width, out_height), &v->dwt, "the float ADM DWT shader", error,
                                     error_size);
    const VkBuffer decouple_buffers[3] = { v->bands.buffer, v->masks.buffer, t->table.buffer };
    if (!err)
        err = vulkan_pipeline_create(t->dev, (const uint32_t *)vulkan_shader_float_adm_decouple,
                                     vulkan_shader_float_adm_decouple_size, decouple_buffers, 3,
                                     VULKAN_PUSH(DecouplePush, gain_limit, one_by_30, csf, cos_1deg_sq, eps, use_table, rcp_shift, col_lo, row_lo, col_hi, row_hi, width, plane_words), &v->decouple,
                                     "the float ADM decoupling shader", error, error_size);
    const VkBuffer rows_buffers[3] = { v->bands.buffer, v->masks.buffer, t->rows.buffer };
    if (!err)
        err = vulkan_pipeline_create(t->dev, (const uint32_t *)vulkan_shader_float_adm_rows,
                                     vulkan_shader_float_adm_rows_size, rows_buffers, 3,
                                     VULKAN_PUSH(RowsPush, csf, one_by_15, left, top, right, bottom, width, height, plane_words, bypass_cm, out_offset), &v->rows, "the float ADM row-sum shader",
                                     error, error_size);
    return err;
}

static int float_adm_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                 const void *metric_state, const QualeVideoFormat *format,
                                 unsigned slots, void **out, char *error, size_t error_size)
{
    FloatAdmTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->bitdepth = format->bitdepth;

    int w = t->metric->w, h = t->metric->h;
    for (int l = 0; l < FLOAT_ADM_SCALES; l++) {
        AdmLevel *v = &t->level[l];
        v->w = w;
        v->h = h;
        v->w2 = w = (w + 1) / 2;
        v->h2 = h = (h + 1) / 2;
        v->scored = float_adm_rect(v->w2, v->h2);
        v->rows_first = t->per_slot;
        t->per_slot += (uint32_t)v->h2 * FLOAT_ADM_SUMS;
    }
    int err = 0;
    for (int l = 0; l < FLOAT_ADM_SCALES && !err; l++) err = level_init(t, l, error, error_size);
    if (!err) err = table_init(t, error, error_size);
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)slots * t->per_slot * sizeof(float),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->rows,
                                   "float ADM row sums", error, error_size);
    for (int l = 0; l < FLOAT_ADM_SCALES && !err; l++)
        err = pipelines_init(t, l, ring, frames, error, error_size);
    if (err) {
        float_adm_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static void record_dwt(const FloatAdmTwin *t, const VulkanFrame *frame, int l, VkCommandBuffer cb)
{
    static const float lo[4] = { FLOAT_ADM_DWT_LO }, hi[4] = { FLOAT_ADM_DWT_HI };
    const AdmLevel *v = &t->level[l];
    DwtPush push = {
        .width = v->w,
        .height = v->h,
        .inv_scaler = t->bitdepth > 8 ? 1.0f / (float)(1u << (t->bitdepth - 8)) : 1.0f,
        .details = scored_level(t, l),
        .plane_words = v->plane_words,
        .out_width = v->w2,
        .out_height = v->h2,
    };
    memcpy(push.dwt_lo, lo, sizeof(lo));
    memcpy(push.dwt_hi, hi, sizeof(hi));
    if (l == 0) {
        push.ref_offset = (uint32_t)frame->ref_offset[0];
        push.dis_offset = (uint32_t)frame->dist_offset[0];
        push.stride = frame->stride[0];
        push.bytes_per_sample = t->bitdepth > 8 ? 2 : 1;
    } else {
        /* the previous level's bands a */
        const AdmLevel *src = &t->level[l - 1];
        push.ref_offset = 0;
        push.dis_offset = src->plane_words;
        push.stride = (uint32_t)src->w2;
    }
    /* Rows 0 .. h2 - 1 of the reference, then of the distorted picture. */
    vulkan_dispatch(t->dev, cb, &v->dwt, &push, ((uint32_t)v->w2 + DWT_SEGMENT - 1) / DWT_SEGMENT,
                    2 * (uint32_t)v->h2);
}

static void record_decouple(const FloatAdmTwin *t, int l, VkCommandBuffer cb)
{
    const DecouplePush *push = &t->level[l].decouple_push;
    vulkan_dispatch(t->dev, cb, &t->level[l].decouple, push,
                    ((uint32_t)(push->col_hi - push->col_lo) + DECOUPLE_GROUP - 1) / DECOUPLE_GROUP,
                    (uint32_t)(push->row_hi - push->row_lo));
}

static void record_rows(const FloatAdmTwin *t, unsigned slot, int l, VkCommandBuffer cb)
{
    const AdmLevel *v = &t->level[l];
    RowsPush push = v->rows_push;
    push.out_offset = slot * t->per_slot + v->rows_first;
    const uint32_t rows = (uint32_t)(v->scored.bottom - v->scored.top);
    vulkan_dispatch(t->dev, cb, &v->rows, &push, (rows + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP, 1);
}

static int float_adm_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame,
                                   VkCommandBuffer cb, char *error, size_t error_size)
{
    (void)error;
    (void)error_size;
    FloatAdmTwin *t = twin;
    /* The levels are the previous frame's until its shaders are done. */
    vulkan_compute_barrier(t->dev, cb);
    for (int round = 0; round < FLOAT_ADM_SCALES + 2; round++) {
        if (round > 0) vulkan_compute_barrier(t->dev, cb);
        const int rows = round - 2, decouple = round - 1, dwt = round;
        if (rows >= 0 && scored_level(t, rows)) record_rows(t, slot, rows, cb);
        if (decouple >= 0 && decouple < FLOAT_ADM_SCALES && scored_level(t, decouple))
            record_decouple(t, decouple, cb);
        if (dwt < FLOAT_ADM_SCALES) record_dwt(t, frame, dwt, cb);
    }
    return 0;
}

static int float_adm_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                    FeatureSink *sink)
{
    FloatAdmTwin *t = twin;
    const float *base = (const float *)t->rows.mapped + (size_t)slot * t->per_slot;
    const float *rows[FLOAT_ADM_SCALES];
    for (int l = 0; l < FLOAT_ADM_SCALES; l++) rows[l] = base + t->level[l].rows_first;
    return float_adm_write_rows(t->metric, sink, frame->index, rows);
}

const VulkanTwin vulkan_twin_float_adm = {
    .metric = &metric_float_adm,
    .supports = float_adm_vulkan_supports,
    .init = float_adm_vulkan_init,
    .record = float_adm_vulkan_record,
    .collect_own = float_adm_vulkan_collect,
    .close = float_adm_vulkan_close,
};
