/*
 * A CUDA twin's work as a plan: what it needs on the device, described as
 * data by the twin, and run by one executor (cuda_plan.c) for every twin.
 *
 * A plan has
 *   - constants: device memory for the whole run, filled once before the
 *     first frame by host uploads and then by setup steps (tables);
 *   - per slot (frame in flight): device memory, a region cleared before
 *     the frame's steps, the steps, and a region read back after them into
 *     pinned host memory;
 *   - collect(): the read-back bytes made into the frame's feature values,
 *     through the C reference's own writer.
 *
 * A step is one kernel launch: the kernel's name in the twin's module, the
 * grid, and one argument block (the kernels take a single struct, declared
 * in <metric>_args.h for both sides).  step() is a function of the plan
 * and the addresses only, without side effects: the executor calls it for
 * every frame, and the host tests (the *_cuda_host tests) call the same
 * function to run the kernels' element code on the CPU through exactly
 * what the device runs.  Step i names the same kernel whatever the
 * addresses (the executor looks the kernels up once, with zero addresses);
 * a step with no blocks (grid[0] == 0) launches nothing for that frame.
 */
#ifndef QUALE_SRC_CUDA_CUDA_PLAN_H
#define QUALE_SRC_CUDA_CUDA_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_primitives.h"
#include "quale/quale.h"

/* A frame on the device: plane p of the reference at ref[p], with the same
 * row stride (bytes) as the host picture; prev_ref[k] is the reference luma
 * of frame index - 1 - k (0 when there is none), prev_dist[k] the
 * distorted one's where a twin asked for them (dist_history). */
typedef struct CudaFrame {
    unsigned index;
    CUdeviceptr ref[3], dist[3];
    size_t stride[3];
    unsigned width[3], height[3];
    CUdeviceptr prev_ref[2], prev_dist[2];
} CudaFrame;

enum {
    CUDA_PLAN_MAX_UPLOADS = 4,
    /* The largest argument block of any kernel (cambi's is the largest). */
    CUDA_STEP_MAX_ARGS = 512,
    /* Slots and regions start on this boundary. */
    CUDA_PLAN_ALIGN = 256,
};

/* Host data copied into the constants before the setup steps. */
typedef struct CudaPlanUpload {
    size_t offset; /* in the constants */
    const void *data;
    size_t bytes;
} CudaPlanUpload;

typedef struct CudaPlan {
    const void *state;        /* the metric's, as given to the twin's plan() */
    QualeVideoFormat format;
    /* The device the plan is for: a plan may size its work to the device's
     * limits (cambi's shared memory). */
    const CudaDevice *device;

    size_t constant_bytes;
    CudaPlanUpload uploads[CUDA_PLAN_MAX_UPLOADS];
    unsigned upload_count;
    unsigned setup_steps;

    size_t slot_bytes;
    size_t clear_offset, clear_bytes;       /* zeroed before a frame's steps */
    unsigned steps;
    size_t readback_offset, readback_bytes; /* copied back after them */

    /* The twin's own description for its step() and collect(), freed with
     * free_own (NULL: free()) when the run ends. */
    void *own;
    void (*free_own)(void *own);

    void *run; /* the executor's, for cuda_plan_read_slot() */
} CudaPlan;

/* The device memory a step may address. */
typedef struct CudaPlanMemory {
    CUdeviceptr constants;
    CUdeviceptr slot;        /* the frame's slot (0 in setup steps) */
    const CudaFrame *frame;  /* the frame (all zero in setup steps) */
} CudaPlanMemory;

/* (the host tests include this from C++) */
#ifdef __cplusplus
#define CUDA_STEP_ALIGNED alignas(16)
#else
#define CUDA_STEP_ALIGNED _Alignas(16)
#endif

/* A step whose dynamic shared memory exceeds this asks the device for it
 * (and for the largest shared-memory carveout) when it is looked up. */
#define CUDA_DEFAULT_SHARED_BYTES (48u * 1024u)

typedef struct CudaStep {
    const char *kernel;
    unsigned grid[3];        /* blocks in x, y, z */
    unsigned block;          /* threads per block (one dimension) */
    unsigned shared_bytes;   /* dynamic shared memory */
    size_t args_size;
    CUDA_STEP_ALIGNED unsigned char args[CUDA_STEP_MAX_ARGS];
} CudaStep;

/* A step's launch and argument block (a struct of <metric>_args.h). */
#define CUDA_STEP_SET(step_, kernel_, gx_, gy_, gz_, block_, shared_, args_)     \
    do {                                                                          \
        _Static_assert(sizeof(args_) <= CUDA_STEP_MAX_ARGS, "argument block too large"); \
        (step_)->kernel = (kernel_);                                              \
        (step_)->grid[0] = (gx_);                                                 \
        (step_)->grid[1] = (gy_);                                                 \
        (step_)->grid[2] = (gz_);                                                 \
        (step_)->block = (block_);                                                \
        (step_)->shared_bytes = (shared_);                                        \
        (step_)->args_size = sizeof(args_);                                       \
        memcpy((step_)->args, &(args_), sizeof(args_));                           \
    } while (0)

/* A step from a twin's launch function, which wrote the kernel's grid (x,
 * y) and threads per block into launch[] and its argument block (of
 * args_size bytes) into step->args: the host tests call the same function. */
static inline void cuda_step_launch(CudaStep *step, const char *kernel, const unsigned launch[3],
                                    size_t args_size)
{
    step->kernel = kernel;
    step->grid[0] = launch[0];
    step->grid[1] = launch[1];
    step->grid[2] = 1;
    step->block = launch[2];
    step->shared_bytes = 0;
    step->args_size = args_size;
}

/* The same where launch[3] is the dynamic shared memory in bytes. */
static inline void cuda_step_launch_shared(CudaStep *step, const char *kernel,
                                           const unsigned launch[4], size_t args_size)
{
    cuda_step_launch(step, kernel, launch, args_size);
    step->shared_bytes = launch[3];
}

/* The three planes of both pictures of a frame, as the launch functions
 * that take them as arrays want them. */
static inline void cuda_frame_planes(const CudaFrame *f, uint64_t ref[3], uint64_t dist[3],
                                     uint64_t stride[3])
{
    for (unsigned k = 0; k < 3; k++) {
        ref[k] = f->ref[k];
        dist[k] = f->dist[k];
        stride[k] = f->stride[k];
    }
}

/* The first `planes` planes of both pictures with their sizes, as the
 * argument blocks that carry them (psnr's, xpsnr's) declare them. */
static inline void cuda_frame_planes_sized(const CudaFrame *f, unsigned planes, CUdeviceptr ref[3],
                                           CUdeviceptr dist[3], unsigned long long stride[3],
                                           unsigned width[3], unsigned height[3])
{
    for (unsigned k = 0; k < planes; k++) {
        ref[k] = f->ref[k];
        dist[k] = f->dist[k];
        stride[k] = f->stride[k];
        width[k] = f->width[k];
        height[k] = f->height[k];
    }
}

/* Places `bytes` at the end of a layout being built (*at, bytes so far),
 * aligned, and returns its offset. */
static inline size_t cuda_plan_place(size_t *at, size_t bytes)
{
    const size_t offset = *at;
    *at = cuda_align_up(offset + bytes, CUDA_PLAN_ALIGN);
    return offset;
}

/* A frame's share of a twin's plan, as the twin lays it out: its slot
 * (the buffers placed one after another by cuda_plan_place(&bytes, ...)),
 * the region cleared before its steps and the one read back after them,
 * and how many steps it has.  cuda_plan_use_slot() hands it to the
 * executor; the host tests read the same through the twin's layout
 * function. */
typedef struct CudaSlotLayout {
    size_t bytes;
    size_t clear_offset, clear_bytes;
    size_t readback_offset, readback_bytes;
    unsigned steps;
} CudaSlotLayout;

static inline void cuda_plan_use_slot(CudaPlan *plan, const CudaSlotLayout *slot)
{
    plan->slot_bytes = slot->bytes;
    plan->clear_offset = slot->clear_offset;
    plan->clear_bytes = slot->clear_bytes;
    plan->readback_offset = slot->readback_offset;
    plan->readback_bytes = slot->readback_bytes;
    plan->steps = slot->steps;
}

/* The twin's own description of a run: `bytes` of zeroes, handed to the
 * plan at once, so that the executor frees it (with free_own, NULL:
 * free()) whatever plan() returns after; NULL: out of memory. */
static inline void *cuda_plan_new_own(CudaPlan *plan, size_t bytes, void (*free_own)(void *own))
{
    void *own = calloc(1, bytes);
    plan->own = own;
    plan->free_own = free_own;
    return own;
}

/* Constants of `bytes`, copied from `data` (which lives as long as the
 * plan) before the setup steps: a twin's one upload (a table). */
static inline void cuda_plan_upload_constants(CudaPlan *plan, const void *data, size_t bytes)
{
    plan->constant_bytes = bytes;
    plan->uploads[0] = (CudaPlanUpload){ 0, data, bytes };
    plan->upload_count = 1;
}

/* The end of a plan() whose own description (`own`, freed with free())
 * holds its slot layout: both handed to the executor; 0, to return. */
static inline int cuda_plan_take_slot(CudaPlan *plan, void *own, const CudaSlotLayout *slot)
{
    plan->own = own;
    cuda_plan_use_slot(plan, slot);
    return 0;
}

/* The plan of a twin whose frame is one step that writes `bytes` of
 * results, all of the slot, all read back; 0, for plan() to return. */
static inline int cuda_plan_one_step(CudaPlan *plan, size_t bytes)
{
    plan->slot_bytes = plan->readback_bytes = bytes;
    plan->steps = 1;
    return 0;
}

/* Called by a twin's collect() with the readback it was given: `bytes` of
 * that frame's slot at `offset`, read now (the frame's stream has
 * finished, and the slot is not reused before collect() returns).  For
 * values needed only on rare frames (cambi's c-values). */
int cuda_plan_read_slot(const CudaPlan *plan, const void *readback, size_t offset, void *dst,
                        size_t bytes, char *error, size_t error_size);

#endif /* QUALE_SRC_CUDA_CUDA_PLAN_H */
