/* Float VIF on Vulkan: the decomposition of the CUDA twin
 * (src/cuda/float_vif.cu): the device filters, decimates and sums each row
 * of the four scales (float_vif.comp, float_vif_decimate.comp); the host
 * adds the rows' float sums in row order and writes the keys through the
 * C reference's float_vif_write_rows() (float_vif.h).
 *
 * Per frame, in rounds with a barrier between them (each reads the scale
 * the one before made):
 *   rows of scale 0 (unless vif_skip_scale0), decimation to scale 1
 *   rows of scale 1, decimation to scale 2
 *   rows of scale 2, decimation to scale 3
 *   rows of scale 3
 * The pictures of scales 1..3 live in one device buffer made at init and
 * used by every frame in turn: record() starts with a compute barrier, so a
 * frame's shaders run after the previous frame's (they share the queue).
 * Only the row sums, read after the slot's fence, are per slot.
 *
 * The shaders need doubles (shaderFloat64), as the reference's statistic
 * computes in double; scale 0 is read from the frame where the backend put
 * it, resized by vif_prescale's nearest sample as the reference does; the
 * other vif_prescale_method scalers run on the CPU, as with CUDA. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/float_vif.h"
#include "vulkan_twin.h"

extern const unsigned char vulkan_shader_float_vif[];
extern const size_t vulkan_shader_float_vif_size;
extern const unsigned char vulkan_shader_float_vif_decimate[];
extern const size_t vulkan_shader_float_vif_decimate_size;

enum {
    ROWS_PER_GROUP = 2,     /* float_vif.comp: ROWS */
    DECIMATE_SEGMENT = 128, /* float_vif_decimate.comp: SEGMENT */
    MAX_TAPS = 65,          /* both: MAX_TAPS (libvmaf's kernel scales make at most 65) */
    /* The constants buffer (float_vif.glsl): the log2 polynomial, eps, the
     * filters. */
    TABLE_POLY = 0,
    TABLE_EPS = 9,
    TABLE_FILTERS = 10,
};

/* Where a scale's pictures are and how the shaders read them: struct
 * VifSource of float_vif.glsl, in both push constants. */
typedef struct ScaleSource {
    uint32_t ref_offset, dis_offset, stride, bytes_per_sample, prescaled;
    float ratio_x, ratio_y, inv_scaler;
} ScaleSource;

/* Mirrors the push constants of float_vif.comp. */
typedef struct RowsPush {
    double sigma_nsq;
    ScaleSource src;
    int32_t width, height;
    uint32_t filter_first, taps;
    float gain_limit, sigma_max_inv;
    uint32_t out_offset;
} RowsPush;

/* Mirrors the push constants of float_vif_decimate.comp. */
typedef struct DecimatePush {
    ScaleSource src;
    int32_t width, height;
    uint32_t filter_first, taps;
    uint32_t out_ref, out_dis, out_stride;
    int32_t out_width, out_height;
} DecimatePush;

/* std430 places the double on 8 bytes, the rest on 4: so does C here. */
_Static_assert(offsetof(RowsPush, src) == 8 && sizeof(RowsPush) == 72,
               "RowsPush: keep float_vif.comp in step");

typedef struct FloatVifTwin {
    const VulkanDevice *dev;
    const FloatVifState *metric;
    unsigned bitdepth;
    uint32_t ref_base[FLOAT_VIF_SCALES], dis_base[FLOAT_VIF_SCALES]; /* floats in `scaled` */
    uint32_t filter_first[FLOAT_VIF_SCALES];                         /* floats in `table` */
    uint32_t rows_first[FLOAT_VIF_SCALES]; /* a slot's row sums of each scale, floats */
    uint32_t per_slot;                     /* floats of row sums per slot */
    VulkanBuffer scaled;                   /* device: the pictures of scales 1..3 */
    VulkanBuffer table;                    /* device: the constants */
    VulkanBuffer rows;                     /* host-visible: slots x per_slot floats */
    VulkanPipeline stats, decimate;
} FloatVifTwin;

static bool float_vif_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    const FloatVifState *s = state;
    if (!dev->features.shaderFloat64) return false;
    /* the shaders prescale by nearest sample only */
    if (s->prescale_method != FLOAT_VIF_PRESCALE_NEAREST &&
        (s->w[0] != s->src_w || s->h[0] != s->src_h))
        return false;
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++)
        if (s->taps[k] > MAX_TAPS) return false;
    return true;
}

static void float_vif_vulkan_close(void *twin)
{
    FloatVifTwin *t = twin;
    if (!t) return;
    vulkan_pipeline_destroy(t->dev, &t->stats);
    vulkan_pipeline_destroy(t->dev, &t->decimate);
    vulkan_buffer_destroy(t->dev, &t->scaled);
    vulkan_buffer_destroy(t->dev, &t->table);
    vulkan_buffer_destroy(t->dev, &t->rows);
    free(t);
}

/* The constants: the C reference's log2 polynomial, eps and filters. */
static int upload_table(FloatVifTwin *t, char *error, size_t error_size)
{
    const FloatVifState *s = t->metric;
    static const float poly[9] = { FLOAT_VIF_LOG2_POLY };
    uint32_t count = TABLE_FILTERS;
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++) {
        t->filter_first[k] = count;
        count += (uint32_t)s->taps[k];
    }
    float *table = malloc(count * sizeof(float));
    if (!table) return -ENOMEM;
    memcpy(table + TABLE_POLY, poly, sizeof(poly));
    table[TABLE_EPS] = FLOAT_VIF_EPS;
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++)
        memcpy(table + t->filter_first[k], s->filter[k], (size_t)s->taps[k] * sizeof(float));
    const int err = vulkan_buffer_create_constant(t->dev, table, count * sizeof(float), &t->table,
                                                  "the float VIF constants", error, error_size);
    free(table);
    return err;
}

static int float_vif_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                 const void *metric_state, const QualeVideoFormat *format,
                                 unsigned slots, void **out, char *error, size_t error_size)
{
    FloatVifTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->bitdepth = format->bitdepth;
    const FloatVifState *s = t->metric;

    /* Scales 1..3, reference then distorted, dense; the row sums of every
     * scale, numerator and denominator of each row. */
    uint64_t floats = 0;
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++) {
        const uint64_t plane = (uint64_t)s->w[k] * (uint64_t)s->h[k];
        if (k > 0) {
            t->ref_base[k] = (uint32_t)floats;
            t->dis_base[k] = (uint32_t)(floats + plane);
            floats += 2 * plane;
        }
        t->rows_first[k] = t->per_slot;
        t->per_slot += 2 * (uint32_t)s->h[k];
    }
    int err = 0;
    if (floats * sizeof(float) > dev->properties.limits.maxStorageBufferRange) {
        snprintf(error, error_size, "float_vif: the scales of %ux%u video need %llu bytes, more "
                 "than the device's largest storage buffer (%u)", format->width, format->height,
                 (unsigned long long)(floats * sizeof(float)),
                 dev->properties.limits.maxStorageBufferRange);
        err = -E2BIG;
    }
    if (!err) err = upload_table(t, error, error_size);
    if (!err)
        err = vulkan_buffer_create(dev, floats * sizeof(float), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                   false, &t->scaled, "the float VIF scales", error, error_size);
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)slots * t->per_slot * sizeof(float),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->rows,
                                   "float VIF row sums", error, error_size);
    if (!err) {
        const VkBuffer buffers[5] = { ring, frames, t->scaled.buffer, t->table.buffer,
                                      t->rows.buffer };
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_float_vif,
                                     vulkan_shader_float_vif_size, buffers, 5, VULKAN_PUSH(RowsPush, sigma_nsq, src, width, height, filter_first, taps, gain_limit, sigma_max_inv, out_offset),
                                     &t->stats, "the float VIF shader", error, error_size);
    }
    if (!err) {
        const VkBuffer buffers[4] = { ring, frames, t->scaled.buffer, t->table.buffer };
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_float_vif_decimate,
                                     vulkan_shader_float_vif_decimate_size, buffers, 4,
                                     VULKAN_PUSH(DecimatePush, src, width, height, filter_first, taps, out_ref, out_dis, out_stride, out_width, out_height), &t->decimate,
                                     "the float VIF decimation shader", error, error_size);
    }
    if (err) {
        float_vif_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

/* Where scale k's pictures are. */
static ScaleSource scale_source(const FloatVifTwin *t, const VulkanFrame *frame, unsigned k)
{
    const FloatVifState *s = t->metric;
    ScaleSource src = {
        .ref_offset = t->ref_base[k],
        .dis_offset = t->dis_base[k],
        .stride = (uint32_t)s->w[k],
        .ratio_x = (float)s->src_w / s->w[0],
        .ratio_y = (float)s->src_h / s->h[0],
        .inv_scaler = t->bitdepth > 8 ? 1.0f / (float)(1u << (t->bitdepth - 8)) : 1.0f,
    };
    if (k == 0) {
        src.ref_offset = (uint32_t)frame->ref_offset[0];
        src.dis_offset = (uint32_t)frame->dist_offset[0];
        src.stride = frame->stride[0];
        src.bytes_per_sample = t->bitdepth > 8 ? 2 : 1;
        src.prescaled = s->w[0] != s->src_w || s->h[0] != s->src_h;
    }
    return src;
}

static void record_rows(const FloatVifTwin *t, unsigned slot, const VulkanFrame *frame,
                        unsigned k, VkCommandBuffer cb)
{
    const FloatVifState *s = t->metric;
    const RowsPush push = {
        .sigma_nsq = s->sigma_nsq,
        .src = scale_source(t, frame, k),
        .width = s->w[k],
        .height = s->h[k],
        .filter_first = t->filter_first[k],
        .taps = (uint32_t)s->taps[k],
        .gain_limit = (float)s->enhn_gain_limit,
        .sigma_max_inv = s->sigma_max_inv,
        .out_offset = slot * t->per_slot + t->rows_first[k],
    };
    vulkan_dispatch(t->dev, cb, &t->stats, &push,
                    ((uint32_t)s->h[k] + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP, 1);
}

/* Scale k + 1 from scale k. */
static void record_decimate(const FloatVifTwin *t, const VulkanFrame *frame, unsigned k,
                            VkCommandBuffer cb)
{
    const FloatVifState *s = t->metric;
    const DecimatePush push = {
        .src = scale_source(t, frame, k),
        .width = s->w[k],
        .height = s->h[k],
        .filter_first = t->filter_first[k + 1],
        .taps = (uint32_t)s->taps[k + 1],
        .out_ref = t->ref_base[k + 1],
        .out_dis = t->dis_base[k + 1],
        .out_stride = (uint32_t)s->w[k + 1],
        .out_width = s->w[k + 1],
        .out_height = s->h[k + 1],
    };
    vulkan_dispatch(t->dev, cb, &t->decimate, &push,
                    ((uint32_t)s->w[k + 1] + DECIMATE_SEGMENT - 1) / DECIMATE_SEGMENT,
                    (uint32_t)s->h[k + 1]);
}

static int float_vif_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame,
                                   VkCommandBuffer cb, char *error, size_t error_size)
{
    (void)error;
    (void)error_size;
    FloatVifTwin *t = twin;
    /* The scales are the previous frame's until its shaders are done. */
    vulkan_compute_barrier(t->dev, cb);
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++) {
        if (k > 0 || !t->metric->skip_scale0) record_rows(t, slot, frame, k, cb);
        if (k + 1 < FLOAT_VIF_SCALES) {
            record_decimate(t, frame, k, cb);
            vulkan_compute_barrier(t->dev, cb);
        }
    }
    return 0;
}

static int float_vif_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                    FeatureSink *sink)
{
    FloatVifTwin *t = twin;
    const float *base = (const float *)t->rows.mapped + (size_t)slot * t->per_slot;
    const float *rows[FLOAT_VIF_SCALES];
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++) rows[k] = base + t->rows_first[k];
    return float_vif_write_rows(t->metric, sink, frame->index, rows);
}

const VulkanTwin vulkan_twin_float_vif = {
    .metric = &metric_float_vif,
    .supports = float_vif_vulkan_supports,
    .init = float_vif_vulkan_init,
    .record = float_vif_vulkan_record,
    .collect_own = float_vif_vulkan_collect,
    .close = float_vif_vulkan_close,
};
