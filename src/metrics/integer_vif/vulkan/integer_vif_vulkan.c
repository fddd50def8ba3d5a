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
#include "metrics/integer_vif/integer_vif.h"
#include "gpu/vulkan/vulkan_twin.h"

VULKAN_SHADER(integer_vif);
VULKAN_SHADER(integer_vif_f64);
VULKAN_SHADER(integer_vif_decimate);

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

/* The plan's buffers: the log2 table and eps adders (constants), the
 * decimated pictures of scales 1..3 (per lane: the frames of a lane take
 * turns), and per slot the partial sums read back. */
enum { TABLE, SCALED, PARTIALS, BUFFERS };
/* Its pipelines: scale s's statistics (s), the decimation to scale s
 * (VIF_SCALES - 1 + s, s = 1..3). */
enum { STATS = 0, DECIMATE = VIF_SCALES - 1 };

/* The plan of a run. */
typedef struct VifRun {
    unsigned w[VIF_SCALES], h[VIF_SCALES];
    uint32_t stride[VIF_SCALES];                         /* words, scales 1..3 */
    uint32_t ref_base[VIF_SCALES], dis_base[VIF_SCALES]; /* words in a lane's SCALED */
    unsigned groups_x[VIF_SCALES], groups_y[VIF_SCALES];
    unsigned first[VIF_SCALES]; /* a slot's first partial of each scale */
    unsigned per_slot;          /* partials per slot */
    uint32_t gain_lo, gain_hi;
    uint32_t table[VIF_VULKAN_TABLE_WORDS];
} VifRun;

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
static unsigned filter_constants(unsigned s, unsigned bytes_per_sample,
                                 uint32_t constants[VULKAN_PLAN_MAX_CONSTANTS])
{
    const unsigned fw = VIF_FILTER_WIDTH(s);
    constants[0] = fw;
    constants[1] = bytes_per_sample;
    for (unsigned k = 0; k <= fw / 2; k++) constants[2 + k] = vif_filters[vif_filter_first[s] + k];
    return 3 + fw / 2;
}

static int integer_vif_vulkan_plan(const VulkanDevice *dev, const void *state,
                                   const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                                   size_t error_size)
{
    const VifState *m = state;
    const int err = vif_check_size(format->width, format->height, error, error_size);
    if (err) return err;
    VifRun *r = calloc(1, sizeof(*r));
    if (!r) return -ENOMEM;
    plan->own = r;

    /* Scales: each the previous halved (rounded down); 1..3 in SCALED,
     * reference then distorted, rows of 16-word multiples. */
    uint32_t words = 0;
    for (unsigned s = 0; s < VIF_SCALES; s++) {
        r->w[s] = s == 0 ? format->width : r->w[s - 1] / 2;
        r->h[s] = s == 0 ? format->height : r->h[s - 1] / 2;
        if (s > 0) {
            r->stride[s] = (r->w[s] + 15) & ~15u;
            r->ref_base[s] = words;
            words += r->stride[s] * r->h[s];
            r->dis_base[s] = words;
            words += r->stride[s] * r->h[s];
        }
        const unsigned columns = STATS_THREADS - 2 * (VIF_FILTER_WIDTH(s) / 2);
        r->groups_x[s] = (r->w[s] + columns - 1) / columns;
        r->groups_y[s] = (r->h[s] + rows_per_group[s] - 1) / rows_per_group[s];
        r->first[s] = r->per_slot;
        r->per_slot += r->groups_x[s] * r->groups_y[s];
    }
    uint64_t gain;
    memcpy(&gain, &m->enhn_gain_limit, sizeof(gain));
    r->gain_lo = (uint32_t)gain;
    r->gain_hi = (uint32_t)(gain >> 32);
    vif_vulkan_table(m->log2_table, r->table);

    plan->buffers[TABLE] = (VulkanPlanBuffer){ .what = "the VIF log2 table",
                                               .bytes = sizeof(r->table),
                                               .scope = VULKAN_PER_RUN, .data = r->table };
    plan->buffers[SCALED] = (VulkanPlanBuffer){ .what = "the VIF scales",
                                                .bytes = (VkDeviceSize)words * sizeof(uint32_t),
                                                .scope = VULKAN_PER_LANE };
    vulkan_plan_results(plan, PARTIALS, "VIF partial sums",
                        (VkDeviceSize)r->per_slot * 4 * sizeof(uint64_t));
    plan->buffer_count = BUFFERS;

    /* Scale 0 reads the frame's samples, scales 1..3 the words of SCALED. */
    const bool native = dev->features.shaderFloat64 && dev->features.shaderInt64;
    const unsigned frame_bytes = m->bitdepth > 8 ? 2 : 1;
    for (unsigned s = 0; s < VIF_SCALES; s++) {
        VulkanPlanPipeline *p = &plan->pipelines[STATS + s];
        *p = (VulkanPlanPipeline){
            .spirv = native ? vulkan_shader_integer_vif_f64 : vulkan_shader_integer_vif,
            .spirv_size = native ? vulkan_shader_integer_vif_f64_size
                                 : vulkan_shader_integer_vif_size,
            .what = "the VIF shader",
            .push = *VULKAN_PUSH(VifPush, ref_offset, dis_offset, stride, width, height, mu_round,
                                 mu_shift, sq_round, sq_shift, rows_per_group, out_offset,
                                 gain_lo, gain_hi),
            VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, SCALED, TABLE, PARTIALS),
        };
        p->constant_count = filter_constants(s, s == 0 ? frame_bytes : 0, p->constants);
        if (s == 0) continue;
        /* The decimation to scale s reads scale s - 1 with scale s's filter. */
        p = &plan->pipelines[DECIMATE + s];
        *p = (VulkanPlanPipeline){
            VULKAN_SPIRV(integer_vif_decimate), .what = "the VIF decimation shader",
            .push = *VULKAN_PUSH(DecimatePush, ref_offset, dis_offset, stride, width, height,
                                 shift, out_ref, out_dis, out_stride, out_width, out_height),
            VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, SCALED),
        };
        p->constant_count = filter_constants(s, s == 1 ? frame_bytes : 0, p->constants);
    }
    plan->pipeline_count = DECIMATE + VIF_SCALES;
    /* round r: the statistics of scale r and the decimation to scale r + 1
     * (which both read scale r) */
    plan->rounds = VIF_SCALES;
    return 0;
}

/* Where scale s's pictures are for the shaders, in words: the frame's, or
 * the lane's scales. */
static void scale_source(const VifRun *r, const VulkanPlanMemory *memory, unsigned s,
                         uint32_t *ref, uint32_t *dis, uint32_t *stride)
{
    const VulkanFrame *frame = memory->frame;
    if (s == 0) {
        /* Planes and rows start on 64-byte boundaries. */
        *ref = (uint32_t)(frame->ref_offset[0] / 4);
        *dis = (uint32_t)(frame->dist_offset[0] / 4);
        *stride = frame->stride[0] / 4;
    } else {
        const uint32_t lane = (uint32_t)(memory->offset[SCALED] / 4);
        *ref = lane + r->ref_base[s];
        *dis = lane + r->dis_base[s];
        *stride = r->stride[s];
    }
}

static int integer_vif_vulkan_round(const VulkanPlan *plan, unsigned s,
                                    const VulkanPlanMemory *memory, VulkanStep *steps, char *error,
                                    size_t error_size)
{
    const VifState *m = plan->state;
    const VifRun *r = plan->own;
    unsigned n = 0;
    if (s > 0 || !m->skip_scale0) {
        /* The vertical statistics' rounding: the C reference's (the
         * squares' round is at most 2^15 at 16 bits: a word holds it). */
        const VifShift sh = vif_shift(m->bitdepth, s);
        VifPush push = {
            .width = (int32_t)r->w[s],
            .height = (int32_t)r->h[s],
            .mu_round = sh.mu_round,
            .mu_shift = sh.mu_shift,
            .sq_round = (uint32_t)sh.sq_round,
            .sq_shift = sh.sq_shift,
            .rows_per_group = rows_per_group[s],
            .out_offset = (uint32_t)(memory->offset[PARTIALS] / (4 * sizeof(uint64_t))) +
                          r->first[s],
            .gain_lo = r->gain_lo,
            .gain_hi = r->gain_hi,
        };
        scale_source(r, memory, s, &push.ref_offset, &push.dis_offset, &push.stride);
        VULKAN_STEP_SET(&steps[n], STATS + s, r->groups_x[s], r->groups_y[s], push);
        n++;
    }
    if (s + 1 < VIF_SCALES) {
        const unsigned to = s + 1;
        const uint32_t lane = (uint32_t)(memory->offset[SCALED] / 4);
        DecimatePush push = {
            .width = (int32_t)r->w[s],
            .height = (int32_t)r->h[s],
            /* From the picture, the samples' precision; after, 16 bits. */
            .shift = to == 1 ? m->bitdepth : 16,
            .out_ref = lane + r->ref_base[to],
            .out_dis = lane + r->dis_base[to],
            .out_stride = r->stride[to],
            .out_width = (int32_t)r->w[to],
            .out_height = (int32_t)r->h[to],
        };
        scale_source(r, memory, s, &push.ref_offset, &push.dis_offset, &push.stride);
        const unsigned columns = DECIMATE_THREADS - VIF_FILTER_WIDTH(to) / 2;
        VULKAN_STEP_SET(&steps[n], DECIMATE + to, (r->w[to] + columns - 1) / columns, r->h[to],
                        push);
        n++;
    }
    return (int)n;
}

static int integer_vif_vulkan_collect(const VulkanPlan *plan, const void *results,
                                      const MetricFrame *frame, FeatureSink *sink)
{
    const VifState *m = plan->state;
    const VifRun *r = plan->own;
    const uint64_t *p = results;
    VifSums sums[VIF_SCALES];
    memset(sums, 0, sizeof(sums));
    for (unsigned s = 0; s < VIF_SCALES; s++) {
        if (s == 0 && m->skip_scale0) continue;
        uint64_t total[4] = { 0, 0, 0, 0 };
        const unsigned groups = r->groups_x[s] * r->groups_y[s];
        for (unsigned g = 0; g < groups; g++)
            for (unsigned q = 0; q < 4; q++) total[q] += p[(size_t)(r->first[s] + g) * 4 + q];
        sums[s].num_log = (int64_t)total[0];
        sums[s].den_log = (int64_t)total[1];
        sums[s].num_non_log = (int64_t)total[2];
        sums[s].den_non_log = (int64_t)total[3];
    }
    return vif_write(m, sink, frame->index, sums);
}

const VulkanTwin vulkan_twin_integer_vif = {
    VULKAN_TWIN_OF(integer_vif),
    .first_round_cost = 50, /* 1080p, H200: 0.103 ms */
    .concurrent = true, /* per lane or per slot, all it keeps */
};
