/*
 * The Vulkan twin of a metric: compute shaders (src/vulkan/<metric>*.comp,
 * compiled to SPIR-V by the build and embedded) that compute what the
 * metric's C reference computes, and the host code that turns the partial
 * sums they write into the same feature values.
 *
 * Frame memory belongs to the backend: the reference luma of every frame
 * lives in a ring (so temporal twins read earlier frames in place; the
 * distorted luma too where a twin asks, dist_history), the other planes in
 * per-slot space.  Both are single storage buffers, so a
 * twin's descriptor sets never change; where a frame's planes are is given
 * by byte offsets (push constants).  Shaders read samples as 32-bit words
 * (no 8- or 16-bit storage features needed); every plane and row starts on
 * a 64-byte boundary.  64-bit sums are pairs of 32-bit words (uaddCarry,
 * umulExtended), so no device needs shaderInt64 (integer VIF has a second
 * build of its statistics for devices with shaderFloat64 and shaderInt64,
 * which gives the same bits faster).
 */
#ifndef QUALE_SRC_VULKAN_VULKAN_TWIN_H
#define QUALE_SRC_VULKAN_VULKAN_TWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"
#include "vulkan_plan.h"
#include "vulkan_primitives.h"

/* A shader the build embeds (SPIR-V from <name>.comp): declares its bytes,
 * vulkan_shader_<name>, and their count, vulkan_shader_<name>_size. */
#define VULKAN_SHADER(name)                             \
    extern const unsigned char vulkan_shader_##name[];  \
    extern const size_t vulkan_shader_##name##_size

/* A pipeline's shader in its initializer (VulkanPlanPipeline): the SPIR-V
 * of <name>.comp that VULKAN_SHADER(name) declared. */
#define VULKAN_SPIRV(name) .spirv = vulkan_shader_##name, .spirv_size = vulkan_shader_##name##_size

typedef struct VulkanTwin {
    const Metric *metric;
    /* It reads earlier distorted lumas too, as many as the metric's history
     * (the backend keeps that many reference lumas in the ring for every
     * temporal twin; the planes come from metric_planes()). */
    bool dist_history;
    /* Frames of different lanes may run its shaders at the same time:
     * whatever it keeps between its dispatches is per slot or per lane.
     * A twin without it keeps the run on one lane (frames one after the
     * other on one queue, as its rounds may assume). */
    bool concurrent;
    /* Whether it computes the metric under these options on this device
     * (a twin that needs shaderFloat64 checks dev->features; NULL: every
     * option, on every device). */
    bool (*supports)(const VulkanDevice *dev, const void *metric_state);
    /* Device time of its first round, in microseconds per million luma
     * samples, as QUALE_VULKAN_PROFILE measured it on an H200 (0: not
     * measured).  The backend records the costliest first: its long
     * dispatches then start before the short ones of the others fill the
     * device around them, instead of after them (integer VIF's first round
     * is 5x ADM's; recorded after ADM, vmaf_v0.6.1 ran 25-35% slower). */
    unsigned first_round_cost;
    /* Its work as a plan (vulkan_plan.h), run by vulkan_plan.c: plan()
     * describes it for a run (errors name what the format or device
     * lacks), round() writes the steps of round r of a frame and returns
     * how many (or a negative errno, with a message, for a frame it cannot
     * score), collect() makes the frame's values from the slot's results
     * (the plan's `results` buffer). */
    int (*plan)(const VulkanDevice *dev, const void *metric_state, const QualeVideoFormat *format,
                VulkanPlan *plan, char *error, size_t error_size);
    int (*round)(const VulkanPlan *plan, unsigned round, const VulkanPlanMemory *memory,
                 VulkanStep steps[VULKAN_PLAN_MAX_STEPS], char *error, size_t error_size);
    int (*collect)(const VulkanPlan *plan, const void *results, const MetricFrame *frame,
                   FeatureSink *sink);

} VulkanTwin;

/* The fields a twin names after its metric's stem (one metric, one stem):
 * the metric metric_<stem> and the twin's functions <stem>_vulkan_plan,
 * <stem>_vulkan_round and <stem>_vulkan_collect.  A twin's initializer
 * adds what it has besides (concurrent, supports, first_round_cost, ...):
 *     const VulkanTwin vulkan_twin_psnr = { VULKAN_TWIN_OF(psnr), .concurrent = true }; */
#define VULKAN_TWIN_OF(stem)                                                       \
    .metric = &metric_##stem, .plan = stem##_vulkan_plan, .round = stem##_vulkan_round, \
    .collect = stem##_vulkan_collect

extern const VulkanTwin *const vulkan_twins[];

/* A twin's plan run by the executor (vulkan_plan.c): the backend's calls.
 * The frame's work is recorded in rounds: round r (0, 1, ..) reads only
 * what earlier rounds (and earlier frames) wrote.  The backend records
 * round r of every twin, then one barrier, then round r + 1, so the twins'
 * rounds run side by side and share their barriers; before round 0 comes
 * a barrier after the work of the lane's frame before.  record_round
 * returns how many rounds remain after this one (0: done), or a negative
 * errno. */
int vulkan_twin_init(const VulkanTwin *twin, const VulkanDevice *dev, VkBuffer ring,
                     VkBuffer frames, const void *metric_state, const QualeVideoFormat *format,
                     unsigned slots, void **run, char *error, size_t error_size);
int vulkan_twin_record_round(const VulkanTwin *twin, void *run, unsigned round, unsigned slot,
                             const VulkanFrame *frame, VkCommandBuffer cb, char *error,
                             size_t error_size);
int vulkan_twin_collect(const VulkanTwin *twin, void *run, unsigned slot,
                        const MetricFrame *frame, FeatureSink *sink);
void vulkan_twin_close(const VulkanTwin *twin, void *run);

#endif /* QUALE_SRC_VULKAN_VULKAN_TWIN_H */
