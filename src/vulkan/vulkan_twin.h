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
#include "vulkan_primitives.h"

/* Where one frame's planes are, in bytes, within the backend's buffers:
 * the reference luma (and earlier frames' reference luma) in `ring`, the
 * rest in `frames`. */
typedef struct VulkanFrame {
    unsigned index;
    unsigned lane; /* < dev->lanes */
    VkDeviceSize ref_offset[3];  /* ref_offset[0] is in the ring */
    VkDeviceSize dist_offset[3];
    uint32_t stride[3], width[3], height[3];
    VkDeviceSize prev_ref_offset[2]; /* in the ring */
    VkDeviceSize prev_dist_offset[2]; /* in the ring, for twins with dist_history */
    bool has_prev[2];
} VulkanFrame;

typedef struct VulkanTwin {
    const Metric *metric;
    /* It reads earlier distorted lumas too, as many as the metric's history
     * (the backend keeps that many reference lumas in the ring for every
     * temporal twin; the planes come from metric_planes()). */
    bool dist_history;
    /* Frames of different lanes may run its shaders at the same time:
     * whatever it keeps between its dispatches is per slot or per lane.
     * A twin without it keeps the run on one lane (frames one after the
     * other on one queue, as its record() may assume). */
    bool concurrent;
    /* Whether it computes the metric under these options on this device
     * (a twin that needs shaderFloat64 checks dev->features; NULL: every
     * option, on every device). */
    bool (*supports)(const VulkanDevice *dev, const void *metric_state);
    /* ring and frames are the buffers shaders bind to read planes. */
    int (*init)(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames, const void *metric_state,
                const QualeVideoFormat *format, unsigned slots, void **twin, char *error,
                size_t error_size);
    /* Records the frame's dispatches, with barriers between those that
     * read what others wrote. */
    int (*record)(void *twin, unsigned slot, const VulkanFrame *frame, VkCommandBuffer cb,
                  char *error, size_t error_size);
    /* Or, instead of record, the frame's work in rounds: round r (0, 1, ..)
     * reads only what earlier rounds (and earlier frames) wrote.  The
     * backend records round r of every such twin, then one barrier, then
     * round r + 1, so the twins' rounds run side by side and share their
     * barriers; before round 0 comes a barrier after the work of the
     * lane's frame before.  Returns how many rounds remain after this one
     * (0: done), or a negative errno. */
    int (*record_round)(void *twin, unsigned round, unsigned slot, const VulkanFrame *frame,
                        VkCommandBuffer cb, char *error, size_t error_size);
    int (*collect)(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink);
    void (*close)(void *twin);
} VulkanTwin;

extern const VulkanTwin *const vulkan_twins[];

#endif /* QUALE_SRC_VULKAN_VULKAN_TWIN_H */
