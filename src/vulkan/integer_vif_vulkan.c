/* Integer VIF on Vulkan: the device computes every scale's four integer
 * sums (per workgroup partials), the host adds them and writes the values
 * through the C reference's own step (vif_write, integer_vif.h).
 *
 * Per frame, four rounds (each reads what the one before wrote; the
 * backend puts the barriers between them, shared with the other twins'
 * rounds):
 *   stats of scale 0 (unless vif_skip_scale0), decimation to scale 1
 *   stats of scale 1, decimation to scale 2
 *   stats of scale 2, decimation to scale 3
 *   stats of scale 3
 * Each pipeline is specialised for its scale (filter width and taps, how
 * samples are stored), and the statistics come from integer_vif_f64.comp
 * where the device has shaderFloat64 and shaderInt64, integer_vif.comp
 * elsewhere: the same bits either way.  The decimated pictures live in
 * one device buffer per lane, made at init and used by the lane's frames
 * in turn: the backend's barrier before the first round orders a frame's
 * shaders after those of the lane's frame before (they share its queue).
 * Only the partial sums, read after the slot's fence, are per slot. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integer_vif_vulkan.h"
#include "metrics/integer_vif.h"
#include "vulkan_twin.h"

extern const unsigned char vulkan_shader_integer_vif[];
extern const size_t vulkan_shader_integer_vif_size;
extern const unsigned char vulkan_shader_integer_vif_f64[];
extern const size_t vulkan_shader_integer_vif_f64_size;
extern const unsigned char vulkan_shader_integer_vif_decimate[];
extern const size_t vulkan_shader_integer_vif_decimate_size;

enum {
    STATS_THREADS = 256,   /* integer_vif.glsl: invocations (columns) per workgroup */
    DECIMATE_THREADS = 128, /* integer_vif_decimate.comp */
    TABLE_WORDS = VIF_LOG2_TABLE_SIZE / 2, /* the log2 table in the table buffer */
    EPS_WORDS = VIF_VULKAN_TABLE_WORDS - TABLE_WORDS,
    ALL_WORDS = VIF_VULKAN_TABLE_WORDS,
};

/* Rows per workgroup of the statistics, by scale: fewer where the scale
 * has few rows, so that it still spreads over the device. */
static const unsigned rows_per_group[VIF_SCALES] = { 4, 4, 2, 1 };

/* integer_vif.h's filters, one after the other. */
static const uint32_t vif_filters[17 + 9 + 5 + 3] = { VIF_FILTER17, VIF_FILTER9, VIF_FILTER5,
                                                      VIF_FILTER3 };
static const unsigned vif_filter_first[VIF_SCALES] = { 0, 17, 26, 31 };

/* Mirrors the push constants of integer_vif.glsl. */
typedef struct VifPush {
    uint32_t ref_offset, dis_offset, stride;
    int32_t width, height;
    uint32_t mu_round, mu_shift, sq_round, sq_shift;
    uint32_t rows_per_group, out_offset, gain_lo, gain_hi;
} VifPush;

/* Mirrors the push constants of integer_vif_decimate.comp. */
typedef struct DecimatePush {
    uint32_t ref_offset, dis_offset, stride;
    int32_t width, height;
    uint32_t shift, out_ref, out_dis, out_stride;
    int32_t out_width, out_height;
} DecimatePush;

typedef struct VifTwin {
    const VulkanDevice *dev;
    const VifState *metric;
    unsigned w[VIF_SCALES], h[VIF_SCALES];
    uint32_t stride[VIF_SCALES];                 /* words, scales 1..3 */
    uint32_t ref_base[VIF_SCALES], dis_base[VIF_SCALES]; /* words in `scaled` */
    unsigned groups_x[VIF_SCALES], groups_y[VIF_SCALES];
    unsigned first[VIF_SCALES]; /* a slot's first partial of each scale */
    unsigned per_slot;          /* partials per slot */
    uint32_t gain_lo, gain_hi;
    VulkanBuffer scaled[VULKAN_MAX_LANES]; /* device: the decimated pictures of scales 1..3 */
    VulkanBuffer table;    /* device: log2 table and eps adders */
    VulkanBuffer partials; /* host-visible: slots x per_slot x 4 x int64 */
    VulkanPipeline stats[VIF_SCALES], decimate[VIF_SCALES]; /* decimate[s]: to scale s */
} VifTwin;

static void vif_vulkan_close(void *twin)
{
    VifTwin *t = twin;
    if (!t) return;
    for (unsigned s = 0; s < VIF_SCALES; s++) {
        vulkan_pipeline_destroy(t->dev, &t->stats[s]);
        vulkan_pipeline_destroy(t->dev, &t->decimate[s]);
    }
    for (unsigned l = 0; l < VULKAN_MAX_LANES; l++) vulkan_buffer_destroy(t->dev, &t->scaled[l]);
    vulkan_buffer_destroy(t->dev, &t->table);
    vulkan_buffer_destroy(t->dev, &t->partials);
    free(t);
}

/* The log2 table, then what sigma1_sq + eps adds to the 53-bit mantissa of
 * a sigma1_sq of b bits (18..31): sigma1_sq's mantissa has 53 - b >= 22
 * trailing zeros, so the rounding of the sum is the same for all of them. */
void vif_vulkan_table(const uint16_t *log2_table, uint32_t words[VIF_VULKAN_TABLE_WORDS])
{
    for (unsigned i = 0; i < TABLE_WORDS; i++)
        words[i] = (uint32_t)log2_table[2 * i] | (uint32_t)log2_table[2 * i + 1] << 16;
    const double eps = VIF_EPS;
    for (int b = 0; b < EPS_WORDS; b++) {
        words[TABLE_WORDS + b] = 0;
        if (b < 18) continue;
        const double base = ldexp(1.0, b - 1);
        words[TABLE_WORDS + b] = (uint32_t)ldexp((base + eps) - base, 53 - b);
    }
}

/* The specialisation constants of scale s's shaders: the filter width, the
 * storage of the samples read, and the filter's first half (with the
 * centre). */
static unsigned filter_constants(unsigned s, unsigned bytes_per_sample, uint32_t constants[11])
{
    const unsigned fw = VIF_FILTER_WIDTH(s);
    constants[0] = fw;
    constants[1] = bytes_per_sample;
    for (unsigned k = 0; k <= fw / 2; k++) constants[2 + k] = vif_filters[vif_filter_first[s] + k];
    return 3 + fw / 2;
}

static int vif_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                           const void *metric_state, const QualeVideoFormat *format, unsigned slots,
                           void **out, char *error, size_t error_size)
{
    int err = vif_check_size(format->width, format->height, error, error_size);
    if (err) return err;
    VifTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;

    /* Scales: each the previous halved (rounded down); 1..3 in `scaled`,
     * reference then distorted, rows of 16-word multiples. */
    uint32_t words = 0;
    for (unsigned s = 0; s < VIF_SCALES; s++) {
        t->w[s] = s == 0 ? format->width : t->w[s - 1] / 2;
        t->h[s] = s == 0 ? format->height : t->h[s - 1] / 2;
        if (s > 0) {
            t->stride[s] = (t->w[s] + 15) & ~15u;
            t->ref_base[s] = words;
            words += t->stride[s] * t->h[s];
            t->dis_base[s] = words;
            words += t->stride[s] * t->h[s];
        }
        const unsigned columns = STATS_THREADS - 2 * (VIF_FILTER_WIDTH(s) / 2);
        t->groups_x[s] = (t->w[s] + columns - 1) / columns;
        t->groups_y[s] = (t->h[s] + rows_per_group[s] - 1) / rows_per_group[s];
        t->first[s] = t->per_slot;
        t->per_slot += t->groups_x[s] * t->groups_y[s];
    }

    uint64_t gain;
    memcpy(&gain, &t->metric->enhn_gain_limit, sizeof(gain));
    t->gain_lo = (uint32_t)gain;
    t->gain_hi = (uint32_t)(gain >> 32);

    uint32_t *table = malloc(ALL_WORDS * sizeof(uint32_t));
    if (!table) err = -ENOMEM;
    if (!err) vif_vulkan_table(t->metric->log2_table, table);
    if (!err)
        err = vulkan_buffer_create_constant(dev, table, ALL_WORDS * sizeof(uint32_t), &t->table,
                                            "the VIF log2 table", error, error_size);
    free(table);
    const unsigned lanes = dev->lanes;
    for (unsigned l = 0; l < lanes && !err; l++)
        err = vulkan_buffer_create(dev, (VkDeviceSize)words * sizeof(uint32_t),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, false, &t->scaled[l],
                                   "the VIF scales", error, error_size);
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)slots * t->per_slot * 4 * sizeof(uint64_t),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->partials,
                                   "VIF partial sums", error, error_size);
    /* Scale 0 reads the frame's samples, scales 1..3 the words of `scaled`. */
    const bool native = dev->features.shaderFloat64 && dev->features.shaderInt64;
    const unsigned frame_bytes = t->metric->bitdepth > 8 ? 2 : 1;
    for (unsigned s = 0; s < VIF_SCALES && !err; s++) {
        uint32_t constants[11];
        VkBuffer buffers[VULKAN_MAX_LANES * 5];
        for (unsigned l = 0; l < lanes; l++) {
            const VkBuffer set[5] = { ring, frames, t->scaled[l].buffer, t->table.buffer,
                                      t->partials.buffer };
            memcpy(buffers + 5 * l, set, sizeof(set));
        }
        VulkanPipelineInfo info = {
            .spirv = (const uint32_t *)(native ? vulkan_shader_integer_vif_f64 : vulkan_shader_integer_vif),
            .spirv_size = native ? vulkan_shader_integer_vif_f64_size : vulkan_shader_integer_vif_size,
            .constants = constants,
            .constant_count = filter_constants(s, s == 0 ? frame_bytes : 0, constants),
            .buffers = buffers, .bindings = 5, .sets = lanes,
            .push = VULKAN_PUSH(VifPush, ref_offset, dis_offset, stride, width, height, mu_round, mu_shift, sq_round, sq_shift, rows_per_group, out_offset, gain_lo, gain_hi), .what = "the VIF shader",
        };
        err = vulkan_pipeline_create_ex(dev, &info, &t->stats[s], error, error_size);
        if (err || s == 0) continue;
        /* The decimation to scale s reads scale s - 1 with scale s's filter. */
        for (unsigned l = 0; l < lanes; l++) {
            const VkBuffer set[3] = { ring, frames, t->scaled[l].buffer };
            memcpy(buffers + 3 * l, set, sizeof(set));
        }
        info = (VulkanPipelineInfo){
            .spirv = (const uint32_t *)vulkan_shader_integer_vif_decimate,
            .spirv_size = vulkan_shader_integer_vif_decimate_size,
            .constants = constants,
            .constant_count = filter_constants(s, s == 1 ? frame_bytes : 0, constants),
            .buffers = buffers, .bindings = 3, .sets = lanes,
            .push = VULKAN_PUSH(DecimatePush, ref_offset, dis_offset, stride, width, height, shift, out_ref, out_dis, out_stride, out_width, out_height), .what = "the VIF decimation shader",
        };
        err = vulkan_pipeline_create_ex(dev, &info, &t->decimate[s], error, error_size);
    }
    if (err) {
        vif_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

/* Where scale s's pictures are for the shaders, in words. */
static void scale_source(const VifTwin *t, const VulkanFrame *frame, unsigned s, uint32_t *ref,
                         uint32_t *dis, uint32_t *stride)
{
    if (s == 0) {
        /* Planes and rows start on 64-byte boundaries. */
        *ref = (uint32_t)(frame->ref_offset[0] / 4);
        *dis = (uint32_t)(frame->dist_offset[0] / 4);
        *stride = frame->stride[0] / 4;
    } else {
        *ref = t->ref_base[s];
        *dis = t->dis_base[s];
        *stride = t->stride[s];
    }
}

static void record_stats(const VifTwin *t, unsigned slot, const VulkanFrame *frame, unsigned s,
                         VkCommandBuffer cb)
{
    VifPush push = {
        .width = (int32_t)t->w[s],
        .height = (int32_t)t->h[s],
        .mu_round = 32768,
        .mu_shift = 16,
        .sq_round = 32768,
        .sq_shift = 16,
        .rows_per_group = rows_per_group[s],
        .out_offset = slot * t->per_slot + t->first[s],
        .gain_lo = t->gain_lo,
        .gain_hi = t->gain_hi,
    };
    scale_source(t, frame, s, &push.ref_offset, &push.dis_offset, &push.stride);
    if (s == 0) {
        /* The samples' own precision: means to 16 bits, squares to 32. */
        const unsigned bd = t->metric->bitdepth;
        push.mu_round = 1u << (bd - 1);
        push.mu_shift = bd;
        push.sq_shift = 2 * (bd - 8);
        push.sq_round = bd == 8 ? 0 : 1u << (push.sq_shift - 1);
    }
    vulkan_dispatch_set(t->dev, cb, &t->stats[s], frame->lane, &push, t->groups_x[s], t->groups_y[s]);
}

static void record_decimate(const VifTwin *t, const VulkanFrame *frame, unsigned s, VkCommandBuffer cb)
{
    DecimatePush push = {
        .width = (int32_t)t->w[s - 1],
        .height = (int32_t)t->h[s - 1],
        /* From the picture, the samples' precision; after, 16 bits. */
        .shift = s == 1 ? t->metric->bitdepth : 16,
        .out_ref = t->ref_base[s],
        .out_dis = t->dis_base[s],
        .out_stride = t->stride[s],
        .out_width = (int32_t)t->w[s],
        .out_height = (int32_t)t->h[s],
    };
    scale_source(t, frame, s - 1, &push.ref_offset, &push.dis_offset, &push.stride);
    const unsigned columns = DECIMATE_THREADS - VIF_FILTER_WIDTH(s) / 2;
    vulkan_dispatch_set(t->dev, cb, &t->decimate[s], frame->lane, &push,
                        (t->w[s] + columns - 1) / columns, t->h[s]);
}

/* Round r: the statistics of scale r and the decimation to scale r + 1
 * (which both read scale r). */
static int vif_vulkan_record_round(void *twin, unsigned round, unsigned slot,
                                   const VulkanFrame *frame, VkCommandBuffer cb, char *error,
                                   size_t error_size)
{
    (void)error;
    (void)error_size;
    VifTwin *t = twin;
    const unsigned s = round;
    if (s > 0 || !t->metric->skip_scale0) record_stats(t, slot, frame, s, cb);
    if (s + 1 < VIF_SCALES) record_decimate(t, frame, s + 1, cb);
    return (int)(VIF_SCALES - 1 - s);
}

static int vif_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink)
{
    VifTwin *t = twin;
    const uint64_t *p = (const uint64_t *)t->partials.mapped + (size_t)slot * t->per_slot * 4;
    VifSums sums[VIF_SCALES];
    memset(sums, 0, sizeof(sums));
    for (unsigned s = 0; s < VIF_SCALES; s++) {
        if (s == 0 && t->metric->skip_scale0) continue;
        uint64_t total[4] = { 0, 0, 0, 0 };
        const unsigned groups = t->groups_x[s] * t->groups_y[s];
        for (unsigned g = 0; g < groups; g++)
            for (unsigned q = 0; q < 4; q++) total[q] += p[(size_t)(t->first[s] + g) * 4 + q];
        sums[s].num_log = (int64_t)total[0];
        sums[s].den_log = (int64_t)total[1];
        sums[s].num_non_log = (int64_t)total[2];
        sums[s].den_non_log = (int64_t)total[3];
    }
    return vif_write(t->metric, sink, frame->index, sums);
}

const VulkanTwin vulkan_twin_integer_vif = {
    .metric = &metric_integer_vif,
    .concurrent = true, /* per lane or per slot, all it keeps */
    .init = vif_vulkan_init,
    .record_round = vif_vulkan_record_round,
    .collect_own = vif_vulkan_collect,
    .close = vif_vulkan_close,
};
