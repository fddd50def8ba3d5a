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

#include "metrics/float_vif/float_vif.h"
#include "gpu/vulkan/vulkan_twin.h"

VULKAN_SHADER(float_vif);
VULKAN_SHADER(float_vif_decimate);

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

/* The plan's buffers: the pictures of scales 1..3 (one set, reused by every
 * frame: the twin keeps the run on one lane), the constants, and per slot
 * the row sums read back. */
enum { SCALED, TABLE, ROWS, BUFFERS };

/* The plan of a run: where each scale's pictures, filter and row sums are,
 * and the constants (the C reference's log2 polynomial, eps and filters). */
typedef struct FloatVifRun {
    uint32_t ref_base[FLOAT_VIF_SCALES], dis_base[FLOAT_VIF_SCALES]; /* floats in SCALED */
    uint32_t filter_first[FLOAT_VIF_SCALES];                         /* floats in TABLE */
    uint32_t rows_first[FLOAT_VIF_SCALES]; /* a slot's row sums of each scale, floats */
    uint32_t per_slot;                     /* floats of row sums per slot */
    float table[];
} FloatVifRun;

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

static int float_vif_vulkan_plan(const VulkanDevice *dev, const void *state,
                                 const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                                 size_t error_size)
{
    const FloatVifState *s = state;
    uint32_t count = TABLE_FILTERS;
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++) count += (uint32_t)s->taps[k];
    FloatVifRun *r = calloc(1, sizeof(*r) + count * sizeof(float));
    if (!r) return -ENOMEM;
    plan->own = r;
    static const float poly[9] = { FLOAT_VIF_LOG2_POLY };
    memcpy(r->table + TABLE_POLY, poly, sizeof(poly));
    r->table[TABLE_EPS] = FLOAT_VIF_EPS;
    uint32_t at = TABLE_FILTERS;
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++) {
        r->filter_first[k] = at;
        memcpy(r->table + at, s->filter[k], (size_t)s->taps[k] * sizeof(float));
        at += (uint32_t)s->taps[k];
    }
    /* Scales 1..3, reference then distorted, dense; the row sums of every
     * scale, numerator and denominator of each row. */
    uint64_t floats = 0;
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++) {
        const uint64_t picture = (uint64_t)s->w[k] * (uint64_t)s->h[k];
        if (k > 0) {
            r->ref_base[k] = (uint32_t)floats;
            r->dis_base[k] = (uint32_t)(floats + picture);
            floats += 2 * picture;
        }
        r->rows_first[k] = r->per_slot;
        r->per_slot += 2 * (uint32_t)s->h[k];
    }
    plan->buffers[SCALED] = (VulkanPlanBuffer){ .what = "the float VIF scales",
                                                .bytes = floats * sizeof(float),
                                                .scope = VULKAN_PER_RUN };
    plan->buffers[TABLE] = (VulkanPlanBuffer){ .what = "the float VIF constants",
                                               .bytes = count * sizeof(float),
                                               .scope = VULKAN_PER_RUN, .data = r->table };
    vulkan_plan_results(plan, ROWS, "float VIF row sums", r->per_slot * sizeof(float));
    plan->buffer_count = BUFFERS;
    plan->pipelines[0] = (VulkanPlanPipeline){
        VULKAN_SPIRV(float_vif), .what = "the float VIF shader",
        .push = *VULKAN_PUSH(RowsPush, sigma_nsq, src, width, height, filter_first, taps,
                             gain_limit, sigma_max_inv, out_offset),
        VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, SCALED, TABLE, ROWS),
    };
    plan->pipelines[1] = (VulkanPlanPipeline){
        VULKAN_SPIRV(float_vif_decimate), .what = "the float VIF decimation shader",
        .push = *VULKAN_PUSH(DecimatePush, src, width, height, filter_first, taps, out_ref,
                             out_dis, out_stride, out_width, out_height),
        VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, SCALED, TABLE),
    };
    plan->pipeline_count = 2;
    /* round k: scale k's rows and the decimation to scale k + 1 */
    plan->rounds = FLOAT_VIF_SCALES;
    return 0;
}

/* Where scale k's pictures are. */
static ScaleSource scale_source(const VulkanPlan *plan, const VulkanFrame *frame, unsigned k)
{
    const FloatVifState *s = plan->state;
    const FloatVifRun *r = plan->own;
    const unsigned bitdepth = plan->format.bitdepth;
    ScaleSource src = {
        .ref_offset = r->ref_base[k],
        .dis_offset = r->dis_base[k],
        .stride = (uint32_t)s->w[k],
        .ratio_x = (float)s->src_w / s->w[0],
        .ratio_y = (float)s->src_h / s->h[0],
        .inv_scaler = bitdepth > 8 ? 1.0f / (float)(1u << (bitdepth - 8)) : 1.0f,
    };
    if (k == 0) {
        src.ref_offset = (uint32_t)frame->ref_offset[0];
        src.dis_offset = (uint32_t)frame->dist_offset[0];
        src.stride = frame->stride[0];
        src.bytes_per_sample = bitdepth > 8 ? 2 : 1;
        src.prescaled = s->w[0] != s->src_w || s->h[0] != s->src_h;
    }
    return src;
}

static int float_vif_vulkan_round(const VulkanPlan *plan, unsigned k,
                                  const VulkanPlanMemory *memory, VulkanStep *steps, char *error,
                                  size_t error_size)
{
    const FloatVifState *s = plan->state;
    const FloatVifRun *r = plan->own;
    const VulkanFrame *frame = memory->frame;
    unsigned n = 0;
    if (k > 0 || !s->skip_scale0) {
        const RowsPush push = {
            .sigma_nsq = s->sigma_nsq,
            .src = scale_source(plan, frame, k),
            .width = s->w[k],
            .height = s->h[k],
            .filter_first = r->filter_first[k],
            .taps = (uint32_t)s->taps[k],
            .gain_limit = (float)s->enhn_gain_limit,
            .sigma_max_inv = s->sigma_max_inv,
            .out_offset = (uint32_t)(memory->offset[ROWS] / sizeof(float)) + r->rows_first[k],
        };
        VULKAN_STEP_SET(&steps[n], 0, ((uint32_t)s->h[k] + ROWS_PER_GROUP - 1) / ROWS_PER_GROUP,
                        1, push);
        n++;
    }
    if (k + 1 < FLOAT_VIF_SCALES) {
        /* scale k + 1 from scale k */
        const DecimatePush push = {
            .src = scale_source(plan, frame, k),
            .width = s->w[k],
            .height = s->h[k],
            .filter_first = r->filter_first[k + 1],
            .taps = (uint32_t)s->taps[k + 1],
            .out_ref = r->ref_base[k + 1],
            .out_dis = r->dis_base[k + 1],
            .out_stride = (uint32_t)s->w[k + 1],
            .out_width = s->w[k + 1],
            .out_height = s->h[k + 1],
        };
        VULKAN_STEP_SET(&steps[n], 1,
                        ((uint32_t)s->w[k + 1] + DECIMATE_SEGMENT - 1) / DECIMATE_SEGMENT,
                        (uint32_t)s->h[k + 1], push);
        n++;
    }
    return (int)n;
}

static int float_vif_vulkan_collect(const VulkanPlan *plan, const void *results,
                                    const MetricFrame *frame, FeatureSink *sink)
{
    const FloatVifRun *r = plan->own;
    const float *rows[FLOAT_VIF_SCALES];
    for (unsigned k = 0; k < FLOAT_VIF_SCALES; k++)
        rows[k] = (const float *)results + r->rows_first[k];
    return float_vif_write_rows(plan->state, sink, frame->index, rows);
}

const VulkanTwin vulkan_twin_float_vif = {
    VULKAN_TWIN_OF(float_vif),
    .supports = float_vif_vulkan_supports,
};
