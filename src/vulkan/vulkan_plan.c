/*
 * The executor of Vulkan plans (vulkan_plan.h): one life cycle for every
 * twin that describes its work as a plan, and the backend's calls, which go
 * to it or to a twin's own life cycle.
 *
 * For a run it makes the plan's pipelines (each binding its buffers by
 * role), the constants (copied once, finished before the first frame), and
 * per slot the results (host-visible) and the work (device-local).  For a
 * frame it records round r's steps when the backend asks for round r;
 * collect() hands the slot's results to the twin after the slot's fence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "vulkan_twin.h"

typedef struct PlanRun {
    const VulkanTwin *twin;
    const VulkanDevice *dev;
    VulkanPlan plan;
    VulkanPipeline pipelines[VULKAN_PLAN_MAX_PIPELINES];
    VulkanBuffer constants, results, work;
    VkDeviceSize result_stride, work_stride;
} PlanRun;

static void plan_close(PlanRun *r)
{
    if (!r) return;
    for (unsigned i = 0; i < r->plan.pipeline_count; i++)
        vulkan_pipeline_destroy(r->dev, &r->pipelines[i]);
    vulkan_buffer_destroy(r->dev, &r->constants);
    vulkan_buffer_destroy(r->dev, &r->results);
    vulkan_buffer_destroy(r->dev, &r->work);
    if (r->plan.own) (r->plan.free_own ? r->plan.free_own : free)(r->plan.own);
    free(r);
}

static int make_buffers(PlanRun *r, unsigned slots, char *error, size_t error_size)
{
    const VulkanPlan *p = &r->plan;
    const char *name = r->twin->metric->name;
    char what[96];
    int err = 0;
    r->result_stride = p->result_bytes ? vulkan_plan_align(p->result_bytes) : 0;
    r->work_stride = p->work_bytes ? vulkan_plan_align(p->work_bytes) : 0;
    if (r->result_stride) {
        snprintf(what, sizeof(what), "the %s results", name);
        err = vulkan_buffer_create(r->dev, r->result_stride * slots,
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &r->results, what,
                                   error, error_size);
    }
    if (!err && r->work_stride) {
        snprintf(what, sizeof(what), "the %s work memory", name);
        err = vulkan_buffer_create(r->dev, r->work_stride * slots,
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, false, &r->work, what,
                                   error, error_size);
    }
    if (!err && p->constant_bytes) {
        snprintf(what, sizeof(what), "the %s constants", name);
        err = vulkan_buffer_create_constant(r->dev, p->constants, p->constant_bytes,
                                            &r->constants, what, error, error_size);
    }
    return err;
}

static int make_pipelines(PlanRun *r, VkBuffer ring, VkBuffer frames, char *error,
                          size_t error_size)
{
    const VulkanPlan *p = &r->plan;
    int err = 0;
    for (unsigned i = 0; i < p->pipeline_count && !err; i++) {
        const VulkanPlanPipeline *pp = &p->pipelines[i];
        VkBuffer buffers[VULKAN_PLAN_MAX_BINDINGS];
        for (unsigned b = 0; b < pp->binding_count && !err; b++) {
            switch (pp->bindings[b]) {
            case VULKAN_ROLE_RING: buffers[b] = ring; break;
            case VULKAN_ROLE_FRAMES: buffers[b] = frames; break;
            case VULKAN_ROLE_RESULTS: buffers[b] = r->results.buffer; break;
            case VULKAN_ROLE_WORK: buffers[b] = r->work.buffer; break;
            case VULKAN_ROLE_CONSTANTS: buffers[b] = r->constants.buffer; break;
            default: buffers[b] = VK_NULL_HANDLE; break;
            }
            if (!buffers[b]) {
                snprintf(error, error_size, "%s: binding %u names a buffer the plan has not",
                         pp->what, b);
                err = -EINVAL;
            }
        }
        const VulkanPipelineInfo info = {
            .spirv = (const uint32_t *)pp->spirv,
            .spirv_size = pp->spirv_size,
            .constants = pp->constants,
            .constant_count = pp->constant_count,
            .buffers = buffers,
            .bindings = pp->binding_count,
            .sets = 1,
            .push = pp->push.size ? &pp->push : NULL,
            .what = pp->what,
        };
        if (!err) err = vulkan_pipeline_create_ex(r->dev, &info, &r->pipelines[i], error,
                                                  error_size);
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
    r->plan.dev = dev;
    r->plan.state = state;
    r->plan.format = *format;
    int err = twin->plan(dev, state, format, &r->plan, error, error_size);
    if (!err && (r->plan.pipeline_count > VULKAN_PLAN_MAX_PIPELINES || !r->plan.rounds)) {
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
    const VulkanPlanMemory memory = {
        .slot = slot,
        .results = r->result_stride * slot,
        .work = r->work_stride * slot,
        .frame = frame,
    };
    VulkanStep steps[VULKAN_PLAN_MAX_STEPS];
    const int n = r->twin->round(p, round, &memory, steps, error, error_size);
    if (n < 0) return n;
    if (n > VULKAN_PLAN_MAX_STEPS) {
        snprintf(error, error_size, "%s: round %u has %d steps", r->twin->metric->name, round, n);
        return -EINVAL;
    }
    for (int i = 0; i < n; i++) {
        const VulkanStep *s = &steps[i];
        if (s->pipeline >= p->pipeline_count) {
            snprintf(error, error_size, "%s: a step of round %u names pipeline %u of %u",
                     r->twin->metric->name, round, s->pipeline, p->pipeline_count);
            return -EINVAL;
        }
        if (!s->groups[0] || !s->groups[1]) continue; /* nothing for this frame */
        vulkan_dispatch(r->dev, cb, &r->pipelines[s->pipeline], s->push, s->groups[0],
                        s->groups[1]);
    }
    return (int)(p->rounds - 1 - QUALE_MIN(round, p->rounds - 1));
}

/* ---- the backend's calls -------------------------------------------------- */

bool vulkan_twin_concurrent(const VulkanTwin *twin)
{
    return twin->plan || twin->concurrent;
}

bool vulkan_twin_in_rounds(const VulkanTwin *twin)
{
    return twin->plan || twin->record_round;
}

int vulkan_twin_init(const VulkanTwin *twin, const VulkanDevice *dev, VkBuffer ring,
                     VkBuffer frames, const void *metric_state, const QualeVideoFormat *format,
                     unsigned slots, void **run, char *error, size_t error_size)
{
    if (!twin->plan)
        return twin->init(dev, ring, frames, metric_state, format, slots, run, error, error_size);
    return plan_init(twin, dev, ring, frames, metric_state, format, slots, (PlanRun **)run,
                     error, error_size);
}

int vulkan_twin_record(const VulkanTwin *twin, void *run, unsigned slot,
                       const VulkanFrame *frame, VkCommandBuffer cb, char *error,
                       size_t error_size)
{
    return twin->record(run, slot, frame, cb, error, error_size);
}

int vulkan_twin_record_round(const VulkanTwin *twin, void *run, unsigned round, unsigned slot,
                             const VulkanFrame *frame, VkCommandBuffer cb, char *error,
                             size_t error_size)
{
    if (!twin->plan) return twin->record_round(run, round, slot, frame, cb, error, error_size);
    return plan_record_round(run, round, slot, frame, cb, error, error_size);
}

int vulkan_twin_collect(const VulkanTwin *twin, void *run, unsigned slot,
                        const MetricFrame *frame, FeatureSink *sink)
{
    if (!twin->plan) return twin->collect_own(run, slot, frame, sink);
    PlanRun *r = run;
    const unsigned char *results = r->results.mapped;
    return twin->collect(&r->plan, results ? results + r->result_stride * slot : NULL, frame,
                         sink);
}

void vulkan_twin_close(const VulkanTwin *twin, void *run)
{
    if (!twin->plan) twin->close(run);
    else plan_close(run);
}
