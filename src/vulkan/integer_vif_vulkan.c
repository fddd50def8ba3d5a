/* Integer VIF on Vulkan: the device computes every scale's four integer
 * sums (per workgroup partials), the host adds them and writes the values
 * through the C reference's own step (vif_write, integer_vif.h).
 *
 * Per frame, with a barrier between the rounds (each reads what the one
 * before wrote):
 *   stats of scale 0 (unless vif_skip_scale0), decimation to scale 1
 *   stats of scale 1, decimation to scale 2
 *   stats of scale 2, decimation to scale 3
 *   stats of scale 3
 * The decimated pictures live in one device buffer made at init and used
 * by every frame in turn: record() starts with a compute barrier, so a
 * frame's shaders run after the previous frame's (they share the queue;
 * the backend already orders every frame's compute after the one before).
 * Only the partial sums, read after the slot's fence, are per slot. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/integer_vif.h"
#include "vulkan_twin.h"

extern const unsigned char vulkan_shader_integer_vif[];
extern const size_t vulkan_shader_integer_vif_size;
extern const unsigned char vulkan_shader_integer_vif_decimate[];
extern const size_t vulkan_shader_integer_vif_decimate_size;

enum {
    STATS_SEGMENT = 256,   /* integer_vif.comp: columns per workgroup */
    ROWS_PER_GROUP = 4,    /* and rows */
    DECIMATE_SEGMENT = 128, /* integer_vif_decimate.comp: outputs per workgroup */
    /* The table buffer: the log2 table, two entries a word, then the eps
     * adders (integer_vif.comp's VIF_EPS_WORDS), then the four filters
     * (VIF_COEFF_WORDS). */
    TABLE_WORDS = VIF_LOG2_TABLE_SIZE / 2,
    EPS_WORDS = 32,
    COEFF_WORDS = 17 + 9 + 5 + 3,
    ALL_WORDS = TABLE_WORDS + EPS_WORDS + COEFF_WORDS,
};

/* integer_vif.h's filters, in the order of the table. */
static const uint32_t vif_filters[COEFF_WORDS] = { VIF_FILTER17, VIF_FILTER9, VIF_FILTER5, VIF_FILTER3 };
static const unsigned vif_filter_first[VIF_SCALES] = { 0, 17, 26, 31 };

/* Mirrors the push constants of integer_vif.comp. */
typedef struct VifPush {
    uint32_t ref_offset, dis_offset, stride;
    int32_t width, height;
    uint32_t scale, bytes_per_sample, mu_round, mu_shift, sq_round, sq_shift;
    uint32_t rows_per_group, out_offset, gain_lo, gain_hi;
    int32_t gain_e;
} VifPush;

/* Mirrors the push constants of integer_vif_decimate.comp. */
typedef struct DecimatePush {
    uint32_t ref_offset, dis_offset, stride;
    int32_t width, height;
    uint32_t bytes_per_sample, shift, out_ref, out_dis, out_stride;
    int32_t out_width, out_height;
    uint32_t taps, coeff[9];
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
    int32_t gain_e;
    VulkanBuffer scaled;   /* device: the decimated pictures of scales 1..3 */
    VulkanBuffer table;    /* device: log2 table and eps adders */
    VulkanBuffer partials; /* host-visible: slots x per_slot x 4 x int64 */
    VulkanPipeline stats, decimate;
} VifTwin;

static bool vif_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    (void)state; /* every option: debug, vif_enhn_gain_limit, vif_skip_scale0 */
    return true;
}

static unsigned vif_vulkan_planes(const void *state)
{
    (void)state;
    return 1;
}

static void vif_vulkan_close(void *twin)
{
    VifTwin *t = twin;
    if (!t) return;
    vulkan_pipeline_destroy(t->dev, &t->stats);
    vulkan_pipeline_destroy(t->dev, &t->decimate);
    vulkan_buffer_destroy(t->dev, &t->scaled);
    vulkan_buffer_destroy(t->dev, &t->table);
    vulkan_buffer_destroy(t->dev, &t->partials);
    free(t);
}

/* The log2 table, then what sigma1_sq + eps adds to the 53-bit mantissa of
 * a sigma1_sq of b bits (18..31): sigma1_sq's mantissa has 53 - b >= 22
 * trailing zeros, so the rounding of the sum is the same for all of them;
 * then the filters. */
static void fill_table(const VifState *s, uint32_t *words)
{
    for (unsigned i = 0; i < TABLE_WORDS; i++)
        words[i] = (uint32_t)s->log2_table[2 * i] | (uint32_t)s->log2_table[2 * i + 1] << 16;
    const double eps = VIF_EPS;
    for (int b = 0; b < EPS_WORDS; b++) {
        words[TABLE_WORDS + b] = 0;
        if (b < 18) continue;
        const double base = ldexp(1.0, b - 1);
        words[TABLE_WORDS + b] = (uint32_t)ldexp((base + eps) - base, 53 - b);
    }
    memcpy(words + TABLE_WORDS + EPS_WORDS, vif_filters, sizeof(vif_filters));
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
        t->groups_x[s] = (t->w[s] + STATS_SEGMENT - 1) / STATS_SEGMENT;
        t->groups_y[s] = (t->h[s] + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP;
        t->first[s] = t->per_slot;
        t->per_slot += t->groups_x[s] * t->groups_y[s];
    }

    int e2;
    const double m = frexp(t->metric->enhn_gain_limit, &e2);
    const uint64_t gain = (uint64_t)ldexp(m, 53);
    t->gain_lo = (uint32_t)gain;
    t->gain_hi = (uint32_t)(gain >> 32);
    t->gain_e = e2 - 53;

    uint32_t *table = malloc(ALL_WORDS * sizeof(uint32_t));
    if (!table) err = -ENOMEM;
    if (!err) fill_table(t->metric, table);
    if (!err)
        err = vulkan_buffer_create_constant(dev, table, ALL_WORDS * sizeof(uint32_t), &t->table,
                                            "the VIF log2 table", error, error_size);
    free(table);
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)words * sizeof(uint32_t),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, false, &t->scaled,
                                   "the VIF scales", error, error_size);
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)slots * t->per_slot * 4 * sizeof(uint64_t),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->partials,
                                   "VIF partial sums", error, error_size);
    if (!err) {
        const VkBuffer buffers[5] = { ring, frames, t->scaled.buffer, t->table.buffer, t->partials.buffer };
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_integer_vif,
                                     vulkan_shader_integer_vif_size, buffers, 5, sizeof(VifPush),
                                     &t->stats, "the VIF shader", error, error_size);
    }
    if (!err) {
        const VkBuffer buffers[3] = { ring, frames, t->scaled.buffer };
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_integer_vif_decimate,
                                     vulkan_shader_integer_vif_decimate_size, buffers, 3,
                                     sizeof(DecimatePush), &t->decimate, "the VIF decimation shader",
                                     error, error_size);
    }
    if (err) {
        vif_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

/* Where scale s's pictures are for the shaders. */
static void scale_source(const VifTwin *t, const VulkanFrame *frame, unsigned s, uint32_t *ref,
                         uint32_t *dis, uint32_t *stride, uint32_t *bytes_per_sample)
{
    if (s == 0) {
        *ref = (uint32_t)frame->ref_offset[0];
        *dis = (uint32_t)frame->dist_offset[0];
        *stride = frame->stride[0];
        *bytes_per_sample = t->metric->bitdepth > 8 ? 2 : 1;
    } else {
        *ref = t->ref_base[s];
        *dis = t->dis_base[s];
        *stride = t->stride[s];
        *bytes_per_sample = 0;
    }
}

static void record_stats(const VifTwin *t, unsigned slot, const VulkanFrame *frame, unsigned s,
                         VkCommandBuffer cb)
{
    VifPush push = {
        .width = (int32_t)t->w[s],
        .height = (int32_t)t->h[s],
        .scale = s,
        .mu_round = 32768,
        .mu_shift = 16,
        .sq_round = 32768,
        .sq_shift = 16,
        .rows_per_group = ROWS_PER_GROUP,
        .out_offset = slot * t->per_slot + t->first[s],
        .gain_lo = t->gain_lo,
        .gain_hi = t->gain_hi,
        .gain_e = t->gain_e,
    };
    scale_source(t, frame, s, &push.ref_offset, &push.dis_offset, &push.stride, &push.bytes_per_sample);
    if (s == 0) {
        /* The samples' own precision: means to 16 bits, squares to 32. */
        const unsigned bd = t->metric->bitdepth;
        push.mu_round = 1u << (bd - 1);
        push.mu_shift = bd;
        push.sq_shift = 2 * (bd - 8);
        push.sq_round = bd == 8 ? 0 : 1u << (push.sq_shift - 1);
    }
    vulkan_dispatch(t->dev, cb, &t->stats, &push, t->groups_x[s], t->groups_y[s]);
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
        .taps = VIF_FILTER_WIDTH(s),
    };
    memcpy(push.coeff, vif_filters + vif_filter_first[s], VIF_FILTER_WIDTH(s) * sizeof(uint32_t));
    scale_source(t, frame, s - 1, &push.ref_offset, &push.dis_offset, &push.stride,
                 &push.bytes_per_sample);
    vulkan_dispatch(t->dev, cb, &t->decimate, &push, (t->w[s] + DECIMATE_SEGMENT - 1) / DECIMATE_SEGMENT,
                    t->h[s]);
}

static int vif_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame, VkCommandBuffer cb,
                             char *error, size_t error_size)
{
    (void)error;
    (void)error_size;
    VifTwin *t = twin;
    /* The scales buffer is the previous frame's until its shaders are done. */
    vulkan_compute_barrier(t->dev, cb);
    for (unsigned s = 0; s < VIF_SCALES; s++) {
        if (s > 0 || !t->metric->skip_scale0) record_stats(t, slot, frame, s, cb);
        if (s + 1 < VIF_SCALES) record_decimate(t, frame, s + 1, cb);
        if (s + 1 < VIF_SCALES) vulkan_compute_barrier(t->dev, cb);
    }
    return 0;
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
    .planes = vif_vulkan_planes,
    .supports = vif_vulkan_supports,
    .init = vif_vulkan_init,
    .record = vif_vulkan_record,
    .collect = vif_vulkan_collect,
    .close = vif_vulkan_close,
};
