/*
 * A Vulkan twin's work as a plan: what it needs on the device, described as
 * data by the twin, and run by one executor (vulkan_plan.c) for every twin,
 * as CUDA's twins are (src/cuda/cuda_plan.h).
 *
 * A plan has
 *   - buffers: each of some bytes per slot (what a frame's steps hand each
 *     other, or read back: host-visible, what collect() reads after the
 *     slot's fence; one buffer of the slots' regions), per lane (scratch
 *     that frames of one lane reuse one after the other; a buffer per lane,
 *     bound through a descriptor set per lane), or per run (device-local; constants copied once
 *     before the first frame, or scratch every frame reuses, which keeps
 *     the run on one lane: VulkanTwin.concurrent false);
 *   - pipelines: a shader, its push-constant layout (VULKAN_PUSH), its
 *     specialisation constants and what it binds: the backend's ring and
 *     frames, and the plan's buffers;
 *   - the frame's work in rounds: round r's steps read only what earlier
 *     rounds (and earlier frames) wrote, so the backend records round r of
 *     every twin, one barrier, then round r + 1;
 *   - collect(): the slot's results made into the frame's feature values,
 *     through the C reference's own writer.
 *
 * A step is one dispatch: a pipeline, its workgroups (none: nothing for this
 * frame) and its push constants.  Shaders address the buffers by offsets in
 * the push constants (a descriptor set never changes), so a step is given
 * where the frame's region of each buffer starts, in bytes: the slot's
 * region of a per-slot buffer, 0 in a lane's own buffer or a per-run one.
 */
#ifndef QUALE_SRC_VULKAN_VULKAN_PLAN_H
#define QUALE_SRC_VULKAN_VULKAN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vulkan_primitives.h"

/* Where one frame's planes are, in bytes, within the backend's buffers:
 * the reference luma (and earlier frames' reference luma) in `ring`, the
 * rest in `frames`; stride in bytes. */
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

enum {
    VULKAN_PLAN_MAX_BUFFERS = 12,
    VULKAN_PLAN_MAX_PIPELINES = 16,
    VULKAN_PLAN_MAX_BINDINGS = 8,
    VULKAN_PLAN_MAX_CONSTANTS = 16,
    /* The dispatches of one round of one twin. */
    VULKAN_PLAN_MAX_STEPS = 8,
    /* Push constants: what every Vulkan device offers. */
    VULKAN_STEP_PUSH_BYTES = 128,
    /* Per-slot and per-lane regions start on this boundary (storage buffer
     * offsets). */
    VULKAN_PLAN_ALIGN = 256,
};

typedef enum VulkanPlanScope {
    VULKAN_PER_SLOT,
    VULKAN_PER_LANE,
    VULKAN_PER_RUN,
} VulkanPlanScope;

typedef struct VulkanPlanBuffer {
    const char *what;     /* "PSNR partial sums": for messages */
    VkDeviceSize bytes;   /* per slot, lane or run */
    VulkanPlanScope scope;
    bool host_visible;    /* per slot: what collect() reads */
    const void *data;     /* per run: copied once (it must live as long as the plan) */
} VulkanPlanBuffer;

/* What a pipeline binds besides the plan's buffers (0, 1, ...). */
enum { VULKAN_BIND_RING = -1, VULKAN_BIND_FRAMES = -2 };

/* A binding that differs between a pipeline's descriptor sets: set s binds
 * the plan's buffer k + s (a level's planes in set `level`, where one
 * buffer of every level would be larger than a device binds). */
#define VULKAN_BIND_PER_SET(k) (-16 - (int)(k))

typedef struct VulkanPlanPipeline {
    const unsigned char *spirv;
    size_t spirv_size;
    const char *what;              /* "the PSNR shader": for messages */
    VulkanPushLayout push;         /* *VULKAN_PUSH(...); size 0: none */
    unsigned binding_count;        /* binding i is bindings[i]: a buffer or VULKAN_BIND_* */
    int bindings[VULKAN_PLAN_MAX_BINDINGS];
    unsigned sets;                 /* descriptor sets (0: one), for VULKAN_BIND_PER_SET */
    unsigned constant_count;       /* constant_id i takes constants[i] */
    uint32_t constants[VULKAN_PLAN_MAX_CONSTANTS];
} VulkanPlanPipeline;

/* A pipeline's bindings in its initializer, counted:
 *     VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, RESULTS) */
#define VULKAN_BINDINGS(...)                                                       \
    .binding_count = (unsigned)(sizeof((int[]){ __VA_ARGS__ }) / sizeof(int)),       \
    .bindings = { __VA_ARGS__ }

typedef struct VulkanPlan {
    const VulkanDevice *dev;
    const void *state;        /* the metric's, as given to the twin's plan() */
    QualeVideoFormat format;

    VulkanPlanBuffer buffers[VULKAN_PLAN_MAX_BUFFERS];
    unsigned buffer_count;
    int results;              /* the per-slot host-visible buffer collect() reads, or -1 */
    VulkanPlanPipeline pipelines[VULKAN_PLAN_MAX_PIPELINES];
    unsigned pipeline_count;
    unsigned rounds;          /* of a frame's work */

    /* The twin's own description for its rounds and collect(), freed with
     * free_own (NULL: free()) when the run ends. */
    void *own;
    void (*free_own)(void *own);
} VulkanPlan;

/* The memory of one frame. */
typedef struct VulkanPlanMemory {
    unsigned slot;
    VkDeviceSize offset[VULKAN_PLAN_MAX_BUFFERS]; /* of each buffer's region for the frame */
    const VulkanFrame *frame;
} VulkanPlanMemory;

typedef struct VulkanStep {
    unsigned pipeline;
    unsigned set;       /* the pipeline's descriptor set */
    uint32_t groups[2]; /* groups[0] == 0: nothing dispatched */
    _Alignas(8) unsigned char push[VULKAN_STEP_PUSH_BYTES];
} VulkanStep;

/* A step's dispatch and push constants (a struct the pipeline's
 * VULKAN_PUSH layout describes). */
#define VULKAN_STEP_SET(step_, pipeline_, gx_, gy_, push_)                           \
    VULKAN_STEP_SET_IN(step_, pipeline_, 0, gx_, gy_, push_)

/* The same with descriptor set `set_` of the pipeline. */
#define VULKAN_STEP_SET_IN(step_, pipeline_, set_, gx_, gy_, push_)                  \
    do {                                                                          \
        _Static_assert(sizeof(push_) <= VULKAN_STEP_PUSH_BYTES, "push constants too large"); \
        (step_)->pipeline = (pipeline_);                                          \
        (step_)->set = (set_);                                                    \
        (step_)->groups[0] = (gx_);                                               \
        (step_)->groups[1] = (gy_);                                               \
        memcpy((step_)->push, &(push_), sizeof(push_));                           \
    } while (0)

/* Buffer `index` of the plan: `bytes` per slot, host-visible, what
 * collect() reads. */
static inline void vulkan_plan_results(VulkanPlan *plan, unsigned index, const char *what,
                                       VkDeviceSize bytes)
{
    plan->buffers[index] = (VulkanPlanBuffer){
        .what = what, .bytes = bytes, .scope = VULKAN_PER_SLOT, .host_visible = true,
    };
    plan->results = (int)index;
}

/* The plan of a twin with one shader, dispatched once a frame: `pipeline`
 * as pipeline 0, buffer `results` the per-slot results (`bytes` each, what
 * collect() reads), `buffer_count` buffers in all (the twin describes the
 * others), one round.  Returns 0, for the twin's plan() to return. */
static inline int vulkan_plan_one_shader(VulkanPlan *plan, const VulkanPlanPipeline *pipeline,
                                          unsigned results, const char *what, VkDeviceSize bytes,
                                          unsigned buffer_count)
{
    plan->pipelines[0] = *pipeline;
    plan->pipeline_count = 1;
    vulkan_plan_results(plan, results, what, bytes);
    plan->buffer_count = buffer_count;
    plan->rounds = 1;
    return 0;
}

/* Where a frame's region of buffer k starts, in 32-bit words (shaders
 * index their buffers by words). */
static inline uint32_t vulkan_plan_words(const VulkanPlanMemory *memory, unsigned k)
{
    return (uint32_t)(memory->offset[k] / 4);
}

/* The first `planes` planes of both pictures of a frame into a shader's
 * push constants: where each starts (bytes) and its row stride, and its
 * size where the shader takes one (width, height NULL: not). */
static inline void vulkan_push_planes(const VulkanFrame *frame, unsigned planes,
                                      uint32_t ref_offset[3], uint32_t dist_offset[3],
                                      uint32_t stride[3], uint32_t *width, uint32_t *height)
{
    for (unsigned p = 0; p < planes; p++) {
        ref_offset[p] = (uint32_t)frame->ref_offset[p];
        dist_offset[p] = (uint32_t)frame->dist_offset[p];
        stride[p] = frame->stride[p];
        if (width) width[p] = frame->width[p];
        if (height) height[p] = frame->height[p];
    }
}

/* n bytes rounded up to VULKAN_PLAN_ALIGN. */
static inline VkDeviceSize vulkan_plan_align(VkDeviceSize n)
{
    return (n + VULKAN_PLAN_ALIGN - 1) / VULKAN_PLAN_ALIGN * VULKAN_PLAN_ALIGN;
}

#endif /* QUALE_SRC_VULKAN_VULKAN_PLAN_H */
