/*
 * The executor of Vulkan plans (vulkan_plan.h): one life cycle for every
 * twin, behind the backend's calls.
 *
 * For a run it makes the plan's buffers (constants copied once, finished
 * before the first frame; the others a region per slot, per lane or one)
 * and its pipelines.  For a frame it records round r's steps when the
 * backend asks for round r; collect() hands the slot's results to the twin
 * after the slot's fence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "vulkan_twin.h"

/* A per-lane buffer is a buffer per lane (each within the storage range a
 * device binds, where one for all lanes might not be), so a pipeline that
 * binds one has a descriptor set per lane for each of its own sets, and
 * the lane's region starts at 0.  A per-slot buffer is one buffer of the
 * slots' regions (what collect() reads, host-visible, stays small). */
typedef struct PlanRun {
    const VulkanTwin *twin;
    const VulkanDevice *dev;
    VulkanPlan plan;
    unsigned lanes;
    VulkanPipeline pipelines[VULKAN_PLAN_MAX_PIPELINES];
    unsigned lane_sets[VULKAN_PLAN_MAX_PIPELINES]; /* 1, or lanes where it binds per lane */
    VulkanBuffer buffers[VULKAN_PLAN_MAX_BUFFERS][VULKAN_MAX_LANES]; /* [k][lane] per lane */
    VkDeviceSize stride[VULKAN_PLAN_MAX_BUFFERS]; /* per slot; 0 per lane or per run */
} PlanRun;

static void plan_close(PlanRun *r)
{
    if (!r) return;
    for (unsigned i = 0; i < r->plan.pipeline_count; i++)
        vulkan_pipeline_destroy(r->dev, &r->pipelines[i]);
    for (unsigned i = 0; i < r->plan.buffer_count; i++)
        for (unsigned l = 0; l < VULKAN_MAX_LANES; l++)
            vulkan_buffer_destroy(r->dev, &r->buffers[i][l]);
    if (r->plan.own) (r->plan.free_own ? r->plan.free_own : free)(r->plan.own);
    free(r);
}

static int make_buffers(PlanRun *r, unsigned slots, char *error, size_t error_size)
{
    const VulkanPlan *p = &r->plan;
    int err = 0;
    for (unsigned i = 0; i < p->buffer_count && !err; i++) {
        const VulkanPlanBuffer *b = &p->buffers[i];
        const char *what = b->what ? b->what : r->twin->metric->name;
        if ((b->host_visible && b->scope != VULKAN_PER_SLOT) ||
            (b->data && b->scope != VULKAN_PER_RUN)) {
            snprintf(error, error_size, "%s: a buffer the plan cannot have", what);
            return -EINVAL;
        }
        if (b->data) {
            err = vulkan_buffer_create_constant(r->dev, b->data, b->bytes, &r->buffers[i][0], what,
                                                error, error_size);
            continue;
        }
        r->stride[i] = b->scope == VULKAN_PER_SLOT ? vulkan_plan_align(b->bytes) : 0;
        const VkDeviceSize bytes = b->scope == VULKAN_PER_SLOT ? r->stride[i] * slots : b->bytes;
        /* A shader binds the whole buffer. */
        const uint32_t range = r->dev->properties.limits.maxStorageBufferRange;
        if (bytes > range) {
            snprintf(error, error_size, "%s: %s of %ux%u video need %llu bytes, more than the "
                     "device's largest storage buffer (%u)", r->twin->metric->name, what,
                     p->format.width, p->format.height, (unsigned long long)bytes, range);
            return -E2BIG;
        }
        const unsigned copies = b->scope == VULKAN_PER_LANE ? r->lanes : 1;
        for (unsigned l = 0; l < copies && !err; l++)
            err = vulkan_buffer_create(r->dev, bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                       b->host_visible, &r->buffers[i][l], what, error,
                                       error_size);
    }
    return err;
}

/* The plan buffer a binding names in the pipeline's own set `set`, or -1
 * for the ring and frames. */
static int bound_index(int k, unsigned set)
{
    if (k == VULKAN_BIND_RING || k == VULKAN_BIND_FRAMES) return -1;
    return k <= VULKAN_BIND_PER_SET(0) ? VULKAN_BIND_PER_SET(0) - k + (int)set : k;
}

static int make_pipelines(PlanRun *r, VkBuffer ring, VkBuffer frames, char *error,
                          size_t error_size)
{
    const VulkanPlan *p = &r->plan;
    int err = 0;
    for (unsigned i = 0; i < p->pipeline_count && !err; i++) {
        const VulkanPlanPipeline *pp = &p->pipelines[i];
        const unsigned sets = pp->sets ? pp->sets : 1;
        if (pp->binding_count > VULKAN_PLAN_MAX_BINDINGS) {
            snprintf(error, error_size, "%s: %u bindings", pp->what, pp->binding_count);
            return -EINVAL;
        }
        /* A set per lane where it binds a per-lane buffer. */
        r->lane_sets[i] = 1;
        for (unsigned set = 0; set < sets; set++) {
            for (unsigned b = 0; b < pp->binding_count; b++) {
                const int k = bound_index(pp->bindings[b], set);
                if (k >= 0 && (unsigned)k < p->buffer_count &&
                    p->buffers[k].scope == VULKAN_PER_LANE)
                    r->lane_sets[i] = r->lanes;
            }
        }
        const unsigned total = sets * r->lane_sets[i];
        VkBuffer *buffers = calloc((size_t)total * (pp->binding_count ? pp->binding_count : 1),
                                   sizeof(*buffers));
        if (!buffers) return -ENOMEM;
        /* Descriptor set s * lane_sets + lane: the pipeline's set s for a lane. */
        for (unsigned d = 0; d < total && !err; d++) {
            const unsigned set = d / r->lane_sets[i], lane = d % r->lane_sets[i];
            for (unsigned b = 0; b < pp->binding_count && !err; b++) {
                const int k = bound_index(pp->bindings[b], set);
                VkBuffer buffer = pp->bindings[b] == VULKAN_BIND_RING     ? ring
                                  : pp->bindings[b] == VULKAN_BIND_FRAMES ? frames
                                                                          : VK_NULL_HANDLE;
                if (k >= 0 && (unsigned)k < p->buffer_count)
                    buffer = r->buffers[k][p->buffers[k].scope == VULKAN_PER_LANE ? lane : 0]
                                 .buffer;
                buffers[d * pp->binding_count + b] = buffer;
                if (!buffer) {
                    snprintf(error, error_size, "%s: binding %u of set %u names a buffer the "
                             "plan has not", pp->what, b, set);
                    err = -EINVAL;
                }
            }
        }
        const VulkanPipelineInfo info = {
            .spirv = (const uint32_t *)pp->spirv,
            .spirv_size = pp->spirv_size,
            .constants = pp->constants,
            .constant_count = pp->constant_count,
            .buffers = buffers,
            .bindings = pp->binding_count,
            .sets = total,
            .push = pp->push.size ? &pp->push : NULL,
            .what = pp->what,
        };
        if (!err) err = vulkan_pipeline_create_ex(r->dev, &info, &r->pipelines[i], error,
                                                  error_size);
        free(buffers);
    }
    return err;
}

static int plan_init(const VulkanTwin *twin, const VulkanDevice *dev, VkBuffer ring,
                     VkBuffer frames, const void *state, const QualeVideoFormat *format,
                     unsigned slots, PlanRun **out, char *error, size_t error_size)
{
    PlanRun *r = calloc(1, sizeof(*r));
    if (!r) return -ENOMEM;
    r->twin = twin;
    r->dev = dev;
    r->lanes = QUALE_MAX(1u, QUALE_MIN(dev->lanes, (unsigned)VULKAN_MAX_LANES));
    r->plan.dev = dev;
    r->plan.state = state;
    r->plan.format = *format;
    r->plan.results = -1;
    int err = twin->plan(dev, state, format, &r->plan, error, error_size);
    const VulkanPlan *p = &r->plan;
    if (!err && (p->pipeline_count > VULKAN_PLAN_MAX_PIPELINES ||
                 p->buffer_count > VULKAN_PLAN_MAX_BUFFERS || !p->rounds ||
                 (p->results >= 0 && ((unsigned)p->results >= p->buffer_count ||
                                      !p->buffers[p->results].host_visible)))) {
        snprintf(error, error_size, "%s: an inconsistent plan", twin->metric->name);
        err = -EINVAL;
    }
    if (!err) err = make_buffers(r, slots, error, error_size);
    if (!err) err = make_pipelines(r, ring, frames, error, error_size);
    if (err) {
        plan_close(r);
        return err;
    }
    *out = r;
    return 0;
}

/* Round `round` of a frame; how many rounds remain after it. */
static int plan_record_round(PlanRun *r, unsigned round, unsigned slot, const VulkanFrame *frame,
                             VkCommandBuffer cb, char *error, size_t error_size)
{
    const VulkanPlan *p = &r->plan;
    VulkanPlanMemory memory = { .slot = slot, .frame = frame };
    for (unsigned i = 0; i < p->buffer_count; i++) memory.offset[i] = r->stride[i] * slot;
    VulkanStep steps[VULKAN_PLAN_MAX_STEPS];
    const int n = r->twin->round(p, round, &memory, steps, error, error_size);
    if (n < 0) return n;
    if (n > VULKAN_PLAN_MAX_STEPS) {
        snprintf(error, error_size, "%s: round %u has %d steps", r->twin->metric->name, round, n);
        return -EINVAL;
    }
    for (int i = 0; i < n; i++) {
        const VulkanStep *s = &steps[i];
        if (s->pipeline >= p->pipeline_count ||
            s->set >= QUALE_MAX(p->pipelines[s->pipeline].sets, 1u)) {
            snprintf(error, error_size, "%s: a step of round %u names pipeline %u (set %u) of %u",
                     r->twin->metric->name, round, s->pipeline, s->set, p->pipeline_count);
            return -EINVAL;
        }
        if (!s->groups[0] || !s->groups[1]) continue; /* nothing for this frame */
        const unsigned lane_sets = r->lane_sets[s->pipeline];
        vulkan_dispatch_set(r->dev, cb, &r->pipelines[s->pipeline],
                            s->set * lane_sets + (lane_sets > 1 ? frame->lane : 0), s->push,
                            s->groups[0], s->groups[1]);
    }
    return (int)(p->rounds - 1 - QUALE_MIN(round, p->rounds - 1));
}

/* ---- the backend's calls -------------------------------------------------- */

int vulkan_twin_init(const VulkanTwin *twin, const VulkanDevice *dev, VkBuffer ring,
                     VkBuffer frames, const void *metric_state, const QualeVideoFormat *format,
                     unsigned slots, void **run, char *error, size_t error_size)
{
    return plan_init(twin, dev, ring, frames, metric_state, format, slots, (PlanRun **)run,
                     error, error_size);
}

int vulkan_twin_record_round(const VulkanTwin *twin, void *run, unsigned round, unsigned slot,
                             const VulkanFrame *frame, VkCommandBuffer cb, char *error,
                             size_t error_size)
{
    (void)twin;
    return plan_record_round(run, round, slot, frame, cb, error, error_size);
}

int vulkan_twin_collect(const VulkanTwin *twin, void *run, unsigned slot,
                        const MetricFrame *frame, FeatureSink *sink)
{
    PlanRun *r = run;
    const int k = r->plan.results;
    const unsigned char *results =
        k >= 0 ? (const unsigned char *)r->buffers[k][0].mapped + r->stride[k] * slot : NULL;
    return twin->collect(&r->plan, results, frame, sink);
}

void vulkan_twin_close(const VulkanTwin *twin, void *run)
{
    (void)twin;
    plan_close(run);
}
