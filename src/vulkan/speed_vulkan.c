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

#include "metrics/speed.h"
#include "metrics/vif_tools.h"
#include "vulkan_twin.h"

extern const Metric metric_speed_chroma, metric_speed_temporal;

#define SHADER(name)                                   \
    extern const unsigned char vulkan_shader_##name[]; \
    extern const size_t vulkan_shader_##name##_size;
SHADER(speed_blur)
SHADER(speed_local_mean)
SHADER(speed_means)
SHADER(speed_cov)
SHADER(speed_stats)

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

typedef struct SpeedTwin {
    const VulkanDevice *dev;
    const void *metric;
    bool temporal;
    const SpeedSetup *setup;
    unsigned pictures;
    uint32_t work_floats, result_floats;
    VulkanBuffer constants, work, results;
    VulkanPipeline steps[SPEED_STEPS];
} SpeedTwin;

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

static void speed_vulkan_close(void *twin)
{
    SpeedTwin *t = twin;
    if (!t) return;
    for (unsigned i = 0; i < SPEED_STEPS; i++) vulkan_pipeline_destroy(t->dev, &t->steps[i]);
    vulkan_buffer_destroy(t->dev, &t->constants);
    vulkan_buffer_destroy(t->dev, &t->work);
    vulkan_buffer_destroy(t->dev, &t->results);
    free(t);
}

static void put_double(uint32_t *words, double v)
{
    memcpy(words, &v, sizeof(v)); /* little-endian: the low word first, as packDouble2x32 */
}

/* The setup as speed.glsl reads it. */
static int upload_constants(SpeedTwin *t, unsigned bitdepth, char *error, size_t error_size)
{
    const SpeedSetup *s = t->setup;
    const SpeedGeometry *g = &s->g;
    const SpeedLayout l = speed_layout(g);
    const size_t count = C_COUNT + (size_t)s->antialias_taps + (size_t)s->mean_taps;
    uint32_t *c = calloc(count, sizeof(uint32_t));
    if (!c) return -ENOMEM;
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
    c[C_WORK_FLOATS] = t->work_floats;
    c[C_RESULT_FLOATS] = t->result_floats;
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
    const int err = vulkan_buffer_create_constant(t->dev, c, count * sizeof(uint32_t),
                                                  &t->constants, "SpEED's constants", error,
                                                  error_size);
    free(c);
    return err;
}

static int speed_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                             const void *metric_state, bool temporal,
                             const QualeVideoFormat *format, unsigned slots, void **out,
                             char *error, size_t error_size)
{
    SpeedTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->temporal = temporal;
    t->setup = setup_of(metric_state, temporal);
    t->pictures = temporal ? 2 : 4;
    const SpeedGeometry *g = &t->setup->g;
    t->work_floats = speed_layout(g).total;
    t->result_floats = 2 * (uint32_t)g->blocks + 1;
    const VkDeviceSize work_bytes = (VkDeviceSize)slots * t->pictures * t->work_floats * 4;
    int err = 0;
    if (work_bytes > dev->properties.limits.maxStorageBufferRange) {
        snprintf(error, error_size, "%s: the work of %u frames of %ux%u needs %llu bytes, more "
                 "than the device's largest storage buffer (%u)",
                 temporal ? "speed_temporal" : "speed_chroma", slots, format->width,
                 format->height, (unsigned long long)work_bytes,
                 dev->properties.limits.maxStorageBufferRange);
        err = -E2BIG;
    }
    if (!err) err = upload_constants(t, format->bitdepth, error, error_size);
    if (!err)
        err = vulkan_buffer_create(dev, work_bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, false,
                                   &t->work, "SpEED's pictures", error, error_size);
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)slots * t->pictures * t->result_floats * 4,
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->results,
                                   "SpEED's results", error, error_size);
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
    for (unsigned i = 0; i < SPEED_STEPS && !err; i++) {
        const VkBuffer buffers[5] = { ring, frames, t->constants.buffer, t->work.buffer,
                                      t->results.buffer };
        err = vulkan_pipeline_create(dev, (const uint32_t *)shaders[i].spirv, *shaders[i].size,
                                     buffers, i == STEP_STATS ? 5 : 4, VULKAN_PUSH(SpeedPush, src, sub, stride, flags, work_base, result_base),
                                     &t->steps[i], shaders[i].what, error, error_size);
    }
    if (err) {
        speed_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int speed_chroma_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                    const void *state, const QualeVideoFormat *format,
                                    unsigned slots, void **out, char *error, size_t error_size)
{
    return speed_vulkan_init(dev, ring, frames, state, false, format, slots, out, error,
                             error_size);
}

static int speed_temporal_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                                      const void *state, const QualeVideoFormat *format,
                                      unsigned slots, void **out, char *error,
                                      size_t error_size)
{
    return speed_vulkan_init(dev, ring, frames, state, true, format, slots, out, error,
                             error_size);
}

/* speed_temporal scores nothing at frame 0: collect() writes its 0. */
static bool scores_frame(const SpeedTwin *t, unsigned index, bool has_prev)
{
    return !t->temporal || (index > 0 && has_prev);
}

static int speed_vulkan_record_round(void *twin, unsigned round, unsigned slot,
                                     const VulkanFrame *frame, VkCommandBuffer cb, char *error,
                                     size_t error_size)
{
    (void)error;
    (void)error_size;
    SpeedTwin *t = twin;
    if (!scores_frame(t, frame->index, frame->has_prev[0])) return 0;
    const SpeedGeometry *g = &t->setup->g;
    SpeedPush push = {
        .work_base = slot * t->pictures * t->work_floats,
        .result_base = slot * t->pictures * t->result_floats,
    };
    if (t->temporal) {
        /* previous less current: the reference's, and the distorted's (or,
         * with speed_use_ref_diff, the previous distorted less the current
         * reference); all in the ring but the current distorted luma */
        const bool use_ref = ((const SpeedTemporalState *)t->metric)->use_ref_diff;
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
    const uint32_t pictures = t->pictures;
    switch (round) {
    case STEP_BLUR:
    case STEP_LOCAL_MEAN:
        vulkan_dispatch(t->dev, cb, &t->steps[round], &push,
                        ((uint32_t)g->op_w + ROW_GROUP - 1) / ROW_GROUP,
                        (uint32_t)g->op_h * pictures);
        break;
    case STEP_MEANS:
    case STEP_STATS:
        vulkan_dispatch(t->dev, cb, &t->steps[round], &push, 1, pictures);
        break;
    default:
        vulkan_dispatch(t->dev, cb, &t->steps[round], &push,
                        SPEED_ELEMENTS * (SPEED_ELEMENTS + 1) / 2, pictures);
        break;
    }
    return SPEED_STEPS - 1 - (int)round;
}

static int speed_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                FeatureSink *sink)
{
    SpeedTwin *t = twin;
    const SpeedGeometry *g = &t->setup->g;
    const float *results = (const float *)t->results.mapped + (size_t)slot * t->pictures *
                                                                  t->result_floats;
    SpeedStats stats[4];
    for (unsigned z = 0; z < t->pictures; z++) {
        const float *r = results + (size_t)z * t->result_floats;
        stats[z].entropies = (float *)r;
        stats[z].variances = (float *)r + g->blocks;
        stats[z].singular = r[2 * g->blocks] != 0.0f;
    }
    if (t->temporal) {
        const SpeedTemporalState *s = t->metric;
        if (!scores_frame(t, frame->index, frame->prev_ref[0] && frame->prev_dist[0]))
            return feature_sink_put(sink, s->key, frame->index, 0.0);
        const float score = speed_pair_score(t->setup, &stats[0], &stats[1]);
        return feature_sink_put(sink, s->key, frame->index, (double)score);
    }
    float score[2];
    bool singular[2];
    for (unsigned c = 0; c < 2; c++) {
        score[c] = speed_pair_score(t->setup, &stats[2 * c], &stats[2 * c + 1]);
        singular[c] = stats[2 * c].singular || stats[2 * c + 1].singular;
    }
    return speed_chroma_write(t->metric, sink, frame->index, score, singular);
}

const VulkanTwin vulkan_twin_speed_chroma = {
    .metric = &metric_speed_chroma,
    .concurrent = true,
    .supports = speed_chroma_vulkan_supports,
    .init = speed_chroma_vulkan_init,
    .record_round = speed_vulkan_record_round,
    .collect_own = speed_vulkan_collect,
    .close = speed_vulkan_close,
};

const VulkanTwin vulkan_twin_speed_temporal = {
    .metric = &metric_speed_temporal,
    .dist_history = true,
    .concurrent = true,
    .supports = speed_temporal_vulkan_supports,
    .init = speed_temporal_vulkan_init,
    .record_round = speed_vulkan_record_round,
    .collect_own = speed_vulkan_collect,
    .close = speed_vulkan_close,
};
