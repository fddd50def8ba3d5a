/*
 * The executor of CUDA plans (cuda_plan.h): one life cycle for every twin,
 * behind the backend's four calls.
 *
 * For a run it allocates the constants, the slots' device memory and the
 * pinned readback; looks up each step's kernel once; fills the constants
 * (uploads, then the setup steps, finished before the first frame: the
 * slots' streams do not wait for the default stream).  For a frame it
 * clears the slot's region, launches the steps in order on the slot's
 * stream and queues the readback; collect() hands the read-back bytes to
 * the twin.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twin.h"

typedef struct PlanRun {
    const CudaTwin *twin;
    const CudaDevice *dev;
    CudaPlan plan;
    CUfunction *functions;     /* setup steps, then frame steps */
    const char **kernels;      /* their names, as step() gave them */
    CUdeviceptr constants;
    CUdeviceptr slots;         /* slot_count x slot_stride */
    size_t slot_stride, readback_stride;
    unsigned slot_count;
    unsigned char *readback;   /* pinned, slot_count x readback_stride */
} PlanRun;

static void plan_close(PlanRun *r)
{
    if (!r) return;
    cuda_free(r->dev, r->slots, r->slot_stride * r->slot_count);
    cuda_free(r->dev, r->constants, r->plan.constant_bytes);
    if (r->readback) r->dev->api.MemFreeHost(r->readback);
    if (r->plan.own) (r->plan.free_own ? r->plan.free_own : free)(r->plan.own);
    free(r->functions);
    free(r->kernels);
    free(r);
}

/* The step's launch, checked against the kernel looked up for it. */
static int launch(PlanRun *r, unsigned k, const CudaStep *step, CUstream stream, char *error,
                  size_t error_size)
{
    if (step->kernel != r->kernels[k] && (!step->kernel || strcmp(step->kernel, r->kernels[k]))) {
        snprintf(error, error_size, "%s: step %u changed its kernel (%s, then %s)",
                 r->twin->metric->name, k, r->kernels[k], step->kernel ? step->kernel : "none");
        return -EINVAL;
    }
    if (!step->grid[0]) return 0; /* nothing to do for this frame */
    void *params[] = { (void *)step->args };
    return cuda_launch_3d(r->dev, r->functions[k], step->kernel, step->grid[0],
                          step->grid[1] ? step->grid[1] : 1, step->grid[2] ? step->grid[2] : 1,
                          step->block, step->shared_bytes, stream, params, error, error_size);
}

/* A kernel that needs more than the default dynamic shared memory asks
 * for it, and for the largest carveout an SM gives, so that as many of its
 * blocks fit on one as the plan counted on. */
static int allow_shared(PlanRun *r, unsigned k, const CudaStep *step, char *error,
                        size_t error_size)
{
    const CudaApi *api = &r->dev->api;
    CUresult cr = api->FuncSetAttribute(r->functions[k],
                                        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        (int)step->shared_bytes);
    if (cr == CUDA_SUCCESS)
        cr = api->FuncSetAttribute(r->functions[k], CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                   CU_SHAREDMEM_CARVEOUT_MAX_SHARED);
    if (cr != CUDA_SUCCESS) {
        snprintf(error, error_size, "allowing %s %u bytes of shared memory failed: %s",
                 step->kernel, step->shared_bytes, cuda_error_text(api, cr));
        return -EIO;
    }
    return 0;
}

static int look_up_kernels(PlanRun *r, CUmodule module, char *error, size_t error_size)
{
    const CudaPlan *p = &r->plan;
    const unsigned total = p->setup_steps + p->steps;
    r->functions = calloc(total ? total : 1, sizeof(*r->functions));
    r->kernels = calloc(total ? total : 1, sizeof(*r->kernels));
    if (!r->functions || !r->kernels) return -ENOMEM;
    const CudaFrame none = { 0 };
    const CudaPlanMemory zero = { .frame = &none };
    CudaStep *step = malloc(sizeof(*step));
    if (!step) return -ENOMEM;
    int err = 0;
    for (unsigned k = 0; k < total && !err; k++) {
        memset(step, 0, sizeof(*step));
        if (k < p->setup_steps) r->twin->setup_step(p, k, &zero, step);
        else r->twin->step(p, k - p->setup_steps, &zero, step);
        if (!step->kernel) {
            snprintf(error, error_size, "%s: step %u names no kernel", r->twin->metric->name, k);
            err = -EINVAL;
            break;
        }
        r->kernels[k] = step->kernel;
        err = cuda_function(r->dev, module, step->kernel, &r->functions[k], error, error_size);
        if (!err && step->shared_bytes > CUDA_DEFAULT_SHARED_BYTES)
            err = allow_shared(r, k, step, error, error_size);
    }
    free(step);
    return err;
}

/* The uploads and the setup steps, finished before the first frame. */
static int fill_constants(PlanRun *r, char *error, size_t error_size)
{
    const CudaPlan *p = &r->plan;
    const CudaApi *api = &r->dev->api;
    for (unsigned u = 0; u < p->upload_count; u++) {
        const CudaPlanUpload *up = &p->uploads[u];
        if (up->offset + up->bytes > p->constant_bytes) {
            snprintf(error, error_size, "%s: upload %u lies outside the constants",
                     r->twin->metric->name, u);
            return -EINVAL;
        }
        const CUresult cr = api->MemcpyHtoDAsync(r->constants + up->offset, up->data, up->bytes,
                                                 NULL);
        if (cr != CUDA_SUCCESS) {
            snprintf(error, error_size, "uploading the %s constants failed: %s",
                     r->twin->metric->name, cuda_error_text(api, cr));
            return -EIO;
        }
    }
    CudaStep *step = malloc(sizeof(*step));
    if (!step) return -ENOMEM;
    const CudaFrame none = { 0 };
    const CudaPlanMemory memory = { .constants = r->constants, .frame = &none };
    int err = 0;
    for (unsigned k = 0; k < p->setup_steps && !err; k++) {
        memset(step, 0, sizeof(*step));
        r->twin->setup_step(p, k, &memory, step);
        err = launch(r, k, step, NULL, error, error_size);
    }
    free(step);
    if (err) return err;
    const CUresult cr = api->StreamSynchronize(NULL);
    if (cr != CUDA_SUCCESS) {
        snprintf(error, error_size, "filling the %s constants failed: %s", r->twin->metric->name,
                 cuda_error_text(api, cr));
        return -EIO;
    }
    return 0;
}

static int plan_init(const CudaTwin *twin, const CudaDevice *dev, CUmodule module,
                     const void *state, const QualeVideoFormat *format, unsigned slots,
                     PlanRun **out, char *error, size_t error_size)
{
    PlanRun *r = calloc(1, sizeof(*r));
    if (!r) return -ENOMEM;
    r->twin = twin;
    r->dev = dev;
    r->slot_count = slots;
    r->plan.state = state;
    r->plan.format = *format;
    r->plan.device = dev;
    r->plan.run = r;
    const char *name = twin->metric->name;
    int err = twin->plan(state, format, &r->plan, error, error_size);
    const CudaPlan *p = &r->plan;
    if (!err && ((p->setup_steps && !twin->setup_step) ||
                 p->clear_offset + p->clear_bytes > p->slot_bytes ||
                 p->readback_offset + p->readback_bytes > p->slot_bytes)) {
        snprintf(error, error_size, "%s: an inconsistent plan", name);
        err = -EINVAL;
    }
    if (!err) err = look_up_kernels(r, module, error, error_size);
    char what[96];
    if (!err && p->constant_bytes) {
        snprintf(what, sizeof(what), "the %s constants", name);
        err = cuda_alloc(dev, &r->constants, p->constant_bytes, what, error, error_size);
        if (!err) err = fill_constants(r, error, error_size);
    }
    r->slot_stride = cuda_align_up(p->slot_bytes, CUDA_PLAN_ALIGN);
    r->readback_stride = cuda_align_up(p->readback_bytes, 16);
    if (!err && r->slot_stride) {
        snprintf(what, sizeof(what), "the %s work memory", name);
        err = cuda_alloc(dev, &r->slots, r->slot_stride * slots, what, error, error_size);
    }
    if (!err && r->readback_stride) {
        snprintf(what, sizeof(what), "the %s readback", name);
        err = cuda_alloc_host(dev, (void **)&r->readback, r->readback_stride * slots, what, error,
                              error_size);
    }
    if (err) {
        plan_close(r);
        return err;
    }
    *out = r;
    return 0;
}

static int plan_enqueue(PlanRun *r, unsigned slot, const CudaFrame *frame, CUstream stream,
                        char *error, size_t error_size)
{
    const CudaPlan *p = &r->plan;
    const CudaPlanMemory memory = {
        .constants = r->constants,
        .slot = r->slots + (size_t)slot * r->slot_stride,
        .frame = frame,
    };
    if (p->clear_bytes) {
        const CUresult cr = r->dev->api.MemsetD8Async(memory.slot + p->clear_offset, 0,
                                                      p->clear_bytes, stream);
        if (cr != CUDA_SUCCESS) {
            snprintf(error, error_size, "clearing the %s sums failed: %s", r->twin->metric->name,
                     cuda_error_text(&r->dev->api, cr));
            return -EIO;
        }
    }
    CudaStep step;
    for (unsigned i = 0; i < p->steps; i++) {
        step.kernel = NULL;
        r->twin->step(p, i, &memory, &step);
        const int err = launch(r, p->setup_steps + i, &step, stream, error, error_size);
        if (err) return err;
    }
    if (!p->readback_bytes) return 0;
    return cuda_read_back(r->dev, r->readback + (size_t)slot * r->readback_stride,
                          memory.slot + p->readback_offset, p->readback_bytes, stream,
                          r->twin->metric->name, error, error_size);
}

int cuda_plan_read_slot(const CudaPlan *plan, const void *readback, size_t offset, void *dst,
                        size_t bytes, char *error, size_t error_size)
{
    const PlanRun *r = plan->run;
    if (!r) {
        snprintf(error, error_size, "a slot read from a plan that is not running");
        return -EINVAL;
    }
    const uintptr_t at = (uintptr_t)readback, first = (uintptr_t)r->readback;
    const size_t slot = r->readback_stride && at >= first
                            ? (size_t)(at - first) / r->readback_stride
                            : SIZE_MAX;
    if (slot >= r->slot_count || offset > r->plan.slot_bytes ||
        bytes > r->plan.slot_bytes - offset) {
        snprintf(error, error_size, "%s: a slot read outside its frame's memory",
                 r->twin->metric->name);
        return -EINVAL;
    }
    const CudaApi *api = &r->dev->api;
    CUresult cr = api->MemcpyDtoHAsync(dst, r->slots + slot * r->slot_stride + offset, bytes, NULL);
    if (cr == CUDA_SUCCESS) cr = api->StreamSynchronize(NULL);
    if (cr != CUDA_SUCCESS) {
        snprintf(error, error_size, "reading back %s values failed: %s", r->twin->metric->name,
                 cuda_error_text(api, cr));
        return -EIO;
    }
    return 0;
}

/* ---- the backend's calls -------------------------------------------------- */

int cuda_twin_init(const CudaTwin *twin, const CudaDevice *dev, CUmodule module,
                   const void *metric_state, const QualeVideoFormat *format, unsigned slots,
                   void **run, char *error, size_t error_size)
{
    return plan_init(twin, dev, module, metric_state, format, slots, (PlanRun **)run, error,
                     error_size);
}

int cuda_twin_enqueue(const CudaTwin *twin, void *run, unsigned slot, const CudaFrame *frame,
                      CUstream stream, char *error, size_t error_size)
{
    (void)twin;
    return plan_enqueue(run, slot, frame, stream, error, error_size);
}

int cuda_twin_collect(const CudaTwin *twin, void *run, unsigned slot, const MetricFrame *frame,
                      FeatureSink *sink)
{
    PlanRun *r = run;
    return twin->collect(&r->plan, r->readback + (size_t)slot * r->readback_stride, frame, sink);
}

void cuda_twin_close(const CudaTwin *twin, void *run)
{
    (void)twin;
    plan_close(run);
}
