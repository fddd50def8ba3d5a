/*
 * speed_chroma and speed_temporal on Vulkan: the decomposition of the CUDA
 * twin (src/cuda/speed.cu).  The device computes each picture's per-block
 * entropies and variances (speed.glsl and its five shaders); the host reads
 * them and scores them through the C reference's speed_pair_score() and key
 * writers (src/metrics/speed.h).
 *
 * A frame's pictures: speed_chroma's U and V planes of both videos (4),
 * speed_temporal's two difference pictures of the frame's and the previous
 * frame's lumas (2; the backend keeps the distorted lumas in its ring for
 * it, VulkanTwin.dist_history).  Per frame, in rounds (each reads what the
 * one before wrote): blur (the prescale within it), local mean, means,
 * covariance, statistics; (2 x blocks + 1) floats a picture come back
 * (1080p chroma: 72 blocks, 1.2 KB for the frame).
 *
 * Everything a frame keeps is per slot, so frames run on several lanes.
 * The shaders need doubles (shaderFloat64): the C reference's covariance
 * and its logarithms are double arithmetic.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/speed/speed.h"
#include "metrics/common/vif_tools.h"
#include "gpu/vulkan/vulkan_twin.h"

extern const Metric metric_speed_chroma, metric_speed_temporal;

VULKAN_SHADER(speed_blur);
VULKAN_SHADER(speed_local_mean);
VULKAN_SHADER(speed_means);
VULKAN_SHADER(speed_cov);
VULKAN_SHADER(speed_stats);

enum SpeedStep { STEP_BLUR, STEP_LOCAL_MEAN, STEP_MEANS, STEP_COV, STEP_STATS, SPEED_STEPS };

/* speed.glsl's constants: word indices. */
enum {
    C_W, C_H, C_SCALED_W, C_SCALED_H, C_OP_W, C_OP_H, C_SUB_W, C_SUB_H, C_BLOCKS_X, C_BLOCKS_Y,
    C_BLOCKS, C_PRESCALE, C_METHOD, C_AA_TAPS, C_MEAN_TAPS, C_BYTES, C_INV_SCALER, C_RATIO_X,
    C_RATIO_Y, C_SIGMA_NN, C_EPS, C_LOG2_2PIE = C_EPS + 2, C_WORK_FLOATS = C_LOG2_2PIE + 2,
    C_RESULT_FLOATS, C_L_OP, C_L_F, C_L_MEANS, C_L_COV, C_L_Y, C_L_X, C_L_RHS, C_AA, C_MEAN,
    C_COUNT,
};
_Static_assert(C_WORK_FLOATS == 24 && C_COUNT == 35, "keep speed.glsl's C_ in step");

enum { ROW_GROUP = 64 }; /* local_size_x of speed_blur and speed_local_mean */

/* speed.glsl's push constants. */
typedef struct SpeedPush {
    uint32_t src[4], sub[4];
    uint32_t stride, flags, work_base, result_base;
} SpeedPush;
_Static_assert(sizeof(SpeedPush) == 48, "SpeedPush: keep speed.glsl in step");

/* A picture's work area (floats): the operating picture, it less its
 * local mean, the offsets' means, K, then Y, X and M Y (25 x blocks). */
typedef struct SpeedLayout {
    uint32_t op, f, means, cov, y, x, rhs, total;
} SpeedLayout;

static SpeedLayout speed_layout(const SpeedGeometry *g)
{
    const uint32_t plane = (uint32_t)g->op_w * (uint32_t)g->op_h;
    const uint32_t blocks = (uint32_t)g->blocks, e = SPEED_ELEMENTS;
    SpeedLayout l;
    l.op = 0;
    l.f = l.op + plane;
    l.means = l.f + plane;
    l.cov = l.means + 32;
    l.y = l.cov + e * e;
    l.x = l.y + e * blocks;
    l.rhs = l.x + e * blocks;
    l.total = (l.rhs + e * blocks + 31) / 32 * 32;
    return l;
}

/* The plan's buffers: the setup as speed.glsl reads it (constants), and
 * per slot each picture's work and results. */
enum { CONSTANTS, WORK, RESULTS, BUFFERS };

/* The plan of a run (both twins). */
typedef struct SpeedRun {
    bool temporal;
    const SpeedSetup *setup;
    unsigned pictures;
    uint32_t work_floats, result_floats;
    uint32_t constants[];
} SpeedRun;

static const SpeedSetup *setup_of(const void *state, bool temporal)
{
    return temporal ? &((const SpeedTemporalState *)state)->setup
                    : &((const SpeedChromaState *)state)->setup;
}

static bool speed_vulkan_supports(const VulkanDevice *dev, const void *state, bool temporal)
{
    if (!dev->features.shaderFloat64) return false;
    /* The prescalers the shaders have: nearest and bilinear (the v1
     * models'); bicubic and lanczos4 prescales run on the CPU. */
    const SpeedSetup *s = setup_of(state, temporal);
    return !s->g.prescale || s->method == VIF_PRESCALE_NEAREST ||
           s->method == VIF_PRESCALE_BILINEAR;
}

static bool speed_chroma_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    return speed_vulkan_supports(dev, state, false);
}

static bool speed_temporal_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    return speed_vulkan_supports(dev, state, true);
}

static void put_double(uint32_t *words, double v)
{
    memcpy(words, &v, sizeof(v)); /* little-endian: the low word first, as packDouble2x32 */
}

/* The setup as speed.glsl reads it: count words. */
static size_t constant_words(const SpeedSetup *s)
{
    return C_COUNT + (size_t)s->antialias_taps + (size_t)s->mean_taps;
}

static void fill_constants(const SpeedRun *r, unsigned bitdepth, uint32_t *c)
{
    const SpeedSetup *s = r->setup;
    const SpeedGeometry *g = &s->g;
    const SpeedLayout l = speed_layout(g);
    const int ints[] = {
        [C_W] = g->w, [C_H] = g->h, [C_SCALED_W] = g->scaled_w, [C_SCALED_H] = g->scaled_h,
        [C_OP_W] = g->op_w, [C_OP_H] = g->op_h, [C_SUB_W] = g->sub_w, [C_SUB_H] = g->sub_h,
        [C_BLOCKS_X] = g->blocks_x, [C_BLOCKS_Y] = g->blocks_y, [C_BLOCKS] = g->blocks,
        [C_PRESCALE] = g->prescale, [C_METHOD] = s->method == VIF_PRESCALE_BILINEAR,
        [C_AA_TAPS] = s->antialias_taps, [C_MEAN_TAPS] = s->mean_taps,
        [C_BYTES] = bitdepth > 8 ? 2 : 1,
    };
    for (unsigned i = 0; i <= C_BYTES; i++) c[i] = (uint32_t)ints[i];
    /* As the C reference computes them (vif_tools.c's resizers). */
    const float inv_scaler = 1.0f / (float)(1u << (bitdepth - 8));
    const float ratio_x = (float)g->w / g->scaled_w, ratio_y = (float)g->h / g->scaled_h;
    memcpy(&c[C_INV_SCALER], &inv_scaler, 4);
    memcpy(&c[C_RATIO_X], &ratio_x, 4);
    memcpy(&c[C_RATIO_Y], &ratio_y, 4);
    memcpy(&c[C_SIGMA_NN], &s->sigma_nn, 4);
    put_double(&c[C_EPS], 1e-6); /* libvmaf's EPSILON, speed.c's EIGENVALUE_EPS */
    put_double(&c[C_LOG2_2PIE], log2(2 * M_PI * M_E));
    c[C_WORK_FLOATS] = r->work_floats;
    c[C_RESULT_FLOATS] = r->result_floats;
    c[C_L_OP] = l.op;
    c[C_L_F] = l.f;
    c[C_L_MEANS] = l.means;
    c[C_L_COV] = l.cov;
    c[C_L_Y] = l.y;
    c[C_L_X] = l.x;
    c[C_L_RHS] = l.rhs;
    c[C_AA] = C_COUNT;
    c[C_MEAN] = C_COUNT + (uint32_t)s->antialias_taps;
    memcpy(&c[C_COUNT], s->antialias, sizeof(float) * (size_t)s->antialias_taps);
    memcpy(&c[c[C_MEAN]], s->mean, sizeof(float) * (size_t)s->mean_taps);
}

static int speed_vulkan_plan(const void *state, bool temporal, const QualeVideoFormat *format,
                             VulkanPlan *plan)
{
    const SpeedSetup *setup = setup_of(state, temporal);
    const size_t words = constant_words(setup);
    SpeedRun *r = calloc(1, sizeof(*r) + words * sizeof(uint32_t));
    if (!r) return -ENOMEM;
    plan->own = r;
    r->temporal = temporal;
    r->setup = setup;
    r->pictures = temporal ? 2 : 4;
    const SpeedGeometry *g = &setup->g;
    r->work_floats = speed_layout(g).total;
    r->result_floats = 2 * (uint32_t)g->blocks + 1;
    fill_constants(r, format->bitdepth, r->constants);
    plan->buffers[CONSTANTS] = (VulkanPlanBuffer){ .what = "SpEED's constants",
                                                   .bytes = words * sizeof(uint32_t),
                                                   .scope = VULKAN_PER_RUN,
                                                   .data = r->constants };
    plan->buffers[WORK] = (VulkanPlanBuffer){
        .what = "SpEED's pictures",
        .bytes = (VkDeviceSize)r->pictures * r->work_floats * sizeof(float),
        .scope = VULKAN_PER_SLOT,
    };
    vulkan_plan_results(plan, RESULTS, "SpEED's results",
                        (VkDeviceSize)r->pictures * r->result_floats * sizeof(float));
    plan->buffer_count = BUFFERS;
    static const struct {
        const unsigned char *spirv;
        const size_t *size;
        const char *what;
    } shaders[SPEED_STEPS] = {
        { vulkan_shader_speed_blur, &vulkan_shader_speed_blur_size, "SpEED's blur" },
        { vulkan_shader_speed_local_mean, &vulkan_shader_speed_local_mean_size,
          "SpEED's local mean" },
        { vulkan_shader_speed_means, &vulkan_shader_speed_means_size, "SpEED's means" },
        { vulkan_shader_speed_cov, &vulkan_shader_speed_cov_size, "SpEED's covariance" },
        { vulkan_shader_speed_stats, &vulkan_shader_speed_stats_size, "SpEED's statistics" },
    };
    for (unsigned i = 0; i < SPEED_STEPS; i++)
        plan->pipelines[i] = (VulkanPlanPipeline){
            .spirv = shaders[i].spirv,
            .spirv_size = *shaders[i].size,
            .what = shaders[i].what,
            .push = *VULKAN_PUSH(SpeedPush, src, sub, stride, flags, work_base, result_base),
            .binding_count = i == STEP_STATS ? 5 : 4,
            .bindings = { VULKAN_BIND_RING, VULKAN_BIND_FRAMES, CONSTANTS, WORK, RESULTS },
        };
    plan->pipeline_count = SPEED_STEPS;
    /* a round a step: each reads what the one before wrote */
    plan->rounds = SPEED_STEPS;
    return 0;
}

static int speed_chroma_vulkan_plan(const VulkanDevice *dev, const void *state,
                                    const QualeVideoFormat *format, VulkanPlan *plan,
                                    char *error, size_t error_size)
{
    return speed_vulkan_plan(state, false, format, plan);
}

static int speed_temporal_vulkan_plan(const VulkanDevice *dev, const void *state,
                                      const QualeVideoFormat *format, VulkanPlan *plan,
                                      char *error, size_t error_size)
{
    return speed_vulkan_plan(state, true, format, plan);
}

/* speed_temporal scores nothing at frame 0: collect() writes its 0. */
static bool scores_frame(const SpeedRun *r, unsigned index, bool has_prev)
{
    return !r->temporal || (index > 0 && has_prev);
}

static int speed_vulkan_round(const VulkanPlan *plan, unsigned round,
                              const VulkanPlanMemory *memory, VulkanStep *steps, char *error,
                              size_t error_size)
{
    const SpeedRun *r = plan->own;
    const VulkanFrame *frame = memory->frame;
    if (!scores_frame(r, frame->index, frame->has_prev[0])) return 0;
    const SpeedGeometry *g = &r->setup->g;
    SpeedPush push = {
        .work_base = (uint32_t)(memory->offset[WORK] / sizeof(float)),
        .result_base = (uint32_t)(memory->offset[RESULTS] / sizeof(float)),
    };
    if (r->temporal) {
        /* previous less current: the reference's, and the distorted's (or,
         * with speed_use_ref_diff, the previous distorted less the current
         * reference); all in the ring but the current distorted luma */
        const bool use_ref = ((const SpeedTemporalState *)plan->state)->use_ref_diff;
        push.src[0] = (uint32_t)frame->prev_ref_offset[0];
        push.sub[0] = (uint32_t)frame->ref_offset[0];
        push.src[1] = (uint32_t)frame->prev_dist_offset[0];
        push.sub[1] = (uint32_t)(use_ref ? frame->ref_offset[0] : frame->dist_offset[0]);
        push.stride = frame->stride[0];
        push.flags = (1u << 8) | (1u << 9) | (use_ref ? 0u : 1u << 5);
    } else {
        /* U and V of the reference and the distorted video, all in the
         * frames buffer */
        for (unsigned c = 0; c < 2; c++) {
            push.src[2 * c] = (uint32_t)frame->ref_offset[1 + c];
            push.src[2 * c + 1] = (uint32_t)frame->dist_offset[1 + c];
        }
        push.stride = frame->stride[1];
        push.flags = 0xf;
    }
    const uint32_t pictures = r->pictures;
    switch (round) {
    case STEP_BLUR:
    case STEP_LOCAL_MEAN:
        VULKAN_STEP_SET(&steps[0], round, ((uint32_t)g->op_w + ROW_GROUP - 1) / ROW_GROUP,
                        (uint32_t)g->op_h * pictures, push);
        break;
    case STEP_MEANS:
    case STEP_STATS:
        VULKAN_STEP_SET(&steps[0], round, 1, pictures, push);
        break;
    default:
        VULKAN_STEP_SET(&steps[0], round, SPEED_ELEMENTS * (SPEED_ELEMENTS + 1) / 2, pictures,
                        push);
        break;
    }
    return 1;
}

static int speed_vulkan_collect(const VulkanPlan *plan, const void *results,
                                const MetricFrame *frame, FeatureSink *sink)
{
    const SpeedRun *r = plan->own;
    const SpeedGeometry *g = &r->setup->g;
    SpeedStats stats[4];
    for (unsigned z = 0; z < r->pictures; z++) {
        const float *p = (const float *)results + (size_t)z * r->result_floats;
        stats[z].entropies = (float *)p;
        stats[z].variances = (float *)p + g->blocks;
        stats[z].singular = p[2 * g->blocks] != 0.0f;
    }
    const bool scored = scores_frame(r, frame->index, frame->prev_ref[0] && frame->prev_dist[0]);
    return speed_write_stats(plan->state, r->temporal, r->setup, stats, scored, frame->index,
                             sink);
}

/* The two speed metrics' twins: one round and collect; each its own plan
 * and support rule.  Both keep per slot, or constant. */
const VulkanTwin vulkan_twin_speed_chroma = {
    .metric = &metric_speed_chroma, .concurrent = true, .supports = speed_chroma_vulkan_supports,
    .plan = speed_chroma_vulkan_plan, .round = speed_vulkan_round, .collect = speed_vulkan_collect,
};

const VulkanTwin vulkan_twin_speed_temporal = {
    .metric = &metric_speed_temporal, .dist_history = true, .concurrent = true,
    .supports = speed_temporal_vulkan_supports, .plan = speed_temporal_vulkan_plan,
    .round = speed_vulkan_round, .collect = speed_vulkan_collect,
};
