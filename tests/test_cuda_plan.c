/*
 * The executor of CUDA plans (src/cuda/cuda_plan.c) on a fake driver
 * (tests/cuda_fake_driver.h), with a twin of the test's own whose kernels
 * leave traces: constants filled once (uploads, then setup steps) before
 * any frame; the slot's clear region zeroed before every frame (fresh
 * device memory is garbage here); the steps in order with their argument
 * blocks; each slot's readback to its own host memory; collect() given
 * those bytes; every failure (an allocation, a kernel the module lacks, a
 * step that changes its kernel or names none, a plan that does not fit its
 * slot) an error with a message and nothing left allocated; a step of no
 * blocks launching nothing for its frame; a step that needs more than the
 * default shared memory allowed it when its kernel is looked up; collect()
 * reading more of its frame's slot, and refused outside it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cuda_fake_driver.h"
#include "test.h"

/* ---- the synthetic twin ---------------------------------------------------- */

typedef struct FillArgs {
    CUdeviceptr dst;
    unsigned bytes, value;
} FillArgs;

typedef struct FrameArgs {
    CUdeviceptr slot, constants;
    unsigned index, step;
} FrameArgs;

/* The slot: two accumulators (cleared), then what is read back: the
 * accumulators, the sum of the constants' filled bytes and the frame. */
enum { SLOT_BYTES = 100, CLEAR_BYTES = 16, READBACK_OFFSET = 16, READBACK_BYTES = 32 };
enum { CONSTANT_BYTES = 64, PATTERN_OFFSET = 8, PATTERN_BYTES = 16, SETUP_OFFSET = 24 };

static void kernel_fill(const FakeLaunch *l)
{
    const FillArgs *a = l->args;
    memset((void *)(uintptr_t)a->dst, (int)a->value, a->bytes);
}

static void kernel_accumulate(const FakeLaunch *l)
{
    const FrameArgs *a = l->args;
    uint64_t *acc = (uint64_t *)(uintptr_t)a->slot;
    acc[0] += a->index + 1;
    acc[1] += a->step + 1;
}

static void kernel_finish(const FakeLaunch *l)
{
    const FrameArgs *a = l->args;
    uint64_t *slot = (uint64_t *)(uintptr_t)a->slot;
    const unsigned char *c = (const unsigned char *)(uintptr_t)a->constants;
    uint64_t sum = 0;
    for (unsigned i = PATTERN_OFFSET; i < SETUP_OFFSET + 16; i++) sum += c[i];
    slot[2] = slot[0];
    slot[3] = slot[1] + a->step; /* 1 + 1 when the steps ran in order */
    slot[4] = sum;
    slot[5] = a->index;
}

enum Mode {
    MODE_GOOD,
    MODE_READBACK_OUTSIDE,
    MODE_UNKNOWN_KERNEL,
    MODE_CHANGING_KERNEL,
    MODE_NO_KERNEL,
    MODE_PLAN_FAILS,
    MODE_SKIP_EVEN, /* the first step launches no blocks on even frames */
    MODE_LARGE_SHARED, /* the second step needs 64 KB of shared memory */
    MODE_READ_SLOT, /* collect() reads the accumulators from the slot */
};
static enum Mode mode;
static unsigned char pattern[PATTERN_BYTES];

static int synthetic_plan(const void *state, const QualeVideoFormat *format, CudaPlan *plan,
                          char *error, size_t error_size)
{
    (void)state;
    (void)format;
    if (mode == MODE_PLAN_FAILS) {
        snprintf(error, error_size, "synthetic: no plan for this format");
        return -EINVAL;
    }
    plan->constant_bytes = CONSTANT_BYTES;
    plan->uploads[0] = (CudaPlanUpload){ PATTERN_OFFSET, pattern, PATTERN_BYTES };
    plan->upload_count = 1;
    plan->setup_steps = 1;
    plan->slot_bytes = SLOT_BYTES;
    plan->clear_offset = 0;
    plan->clear_bytes = CLEAR_BYTES;
    plan->steps = 2;
    plan->readback_offset = mode == MODE_READBACK_OUTSIDE ? SLOT_BYTES - 8 : READBACK_OFFSET;
    plan->readback_bytes = READBACK_BYTES;
    return 0;
}

static void synthetic_setup_step(const CudaPlan *plan, unsigned index,
                                 const CudaPlanMemory *memory, CudaStep *step)
{
    (void)plan;
    (void)index;
    const FillArgs a = { memory->constants + SETUP_OFFSET, 16, 7 };
    CUDA_STEP_SET(step, "fill", 1, 1, 1, 32, 0, a);
}

static void synthetic_step(const CudaPlan *plan, unsigned index, const CudaPlanMemory *memory,
                           CudaStep *step)
{
    (void)plan;
    const FrameArgs a = { memory->slot, memory->constants, memory->frame->index, index };
    const char *kernel = index == 0 ? "accumulate" : "finish";
    if (mode == MODE_UNKNOWN_KERNEL && index == 1) kernel = "missing";
    if (mode == MODE_CHANGING_KERNEL && index == 1 && memory->frame->index == 3)
        kernel = "accumulate";
    if (mode == MODE_NO_KERNEL && index == 1) kernel = NULL;
    const bool skip = mode == MODE_SKIP_EVEN && index == 0 && memory->frame->index % 2 == 0;
    const unsigned shared = mode == MODE_LARGE_SHARED && index == 1 ? 64 * 1024 : index * 1024;
    CUDA_STEP_SET(step, kernel, skip ? 0 : 2, 1, 1, 64, shared, a);
}

static uint64_t collected[8][4];
static unsigned collect_calls;
static int slot_reads[3]; /* MODE_READ_SLOT: inside, past the end, a foreign readback */
static uint64_t slot_read[2];

static int synthetic_collect(const CudaPlan *plan, const void *readback, const MetricFrame *frame,
                             FeatureSink *sink)
{
    (void)sink;
    collect_calls++;
    if (frame->index < 8) memcpy(collected[frame->index], readback, sizeof(collected[0]));
    if (mode == MODE_READ_SLOT) {
        char error[128];
        unsigned char elsewhere[64];
        slot_reads[0] = cuda_plan_read_slot(plan, readback, 0, slot_read, sizeof(slot_read), error,
                                            sizeof(error));
        slot_reads[1] = cuda_plan_read_slot(plan, readback, SLOT_BYTES - 8, elsewhere, 16, error,
                                            sizeof(error));
        slot_reads[2] = cuda_plan_read_slot(plan, elsewhere, 0, elsewhere, 8, error,
                                            sizeof(error));
    }
    return 0;
}

static const Metric synthetic_metric = { .name = "synthetic" };

static const CudaTwin synthetic_twin = {
    .metric = &synthetic_metric,
    .plan = synthetic_plan,
    .setup_step = synthetic_setup_step,
    .step = synthetic_step,
    .collect = synthetic_collect,
};

/* ---- the tests ------------------------------------------------------------- */

static const QualeVideoFormat format = { .width = 64, .height = 32, .bitdepth = 8 };

static int run_init(CudaDevice *dev, unsigned slots, void **run, char *error, size_t size)
{
    fake_reset();
    error[0] = '\0';
    *run = NULL;
    return cuda_twin_init(&synthetic_twin, dev, NULL, NULL, &format, slots, run, error, size);
}

static int enqueue(CudaDevice *dev, void *run, unsigned slot, unsigned index, char *error,
                   size_t size)
{
    (void)dev;
    unsigned char ref[16];
    const CudaFrame f = { .index = index, .ref = { (CUdeviceptr)(uintptr_t)ref } };
    return cuda_twin_enqueue(&synthetic_twin, run, slot, &f, NULL, error, size);
}

static int collect(void *run, unsigned slot, unsigned index)
{
    const MetricFrame frame = { .index = index };
    return cuda_twin_collect(&synthetic_twin, run, slot, &frame, NULL);
}

static void test_good_run(CudaDevice *dev)
{
    char error[256];
    void *run;
    mode = MODE_GOOD;
    for (unsigned i = 0; i < PATTERN_BYTES; i++) pattern[i] = (unsigned char)(i + 1);
    CHECK(run_init(dev, 2, &run, error, sizeof(error)) == 0);
    if (!run) return;
    /* the constants: the upload, then the setup step, finished */
    CHECK(fake.uploads == 1);
    CHECK(fake.launches == 1 && !strcmp(fake.launched[0], "fill"));
    CHECK(fake.syncs >= 1);
    memset(collected, 0, sizeof(collected));
    collect_calls = 0;
    /* two frames in two slots, then a third in slot 0 again */
    CHECK(enqueue(dev, run, 0, 5, error, sizeof(error)) == 0);
    CHECK(enqueue(dev, run, 1, 6, error, sizeof(error)) == 0);
    CHECK(collect(run, 1, 6) == 0);
    CHECK(collect(run, 0, 5) == 0);
    CHECK(enqueue(dev, run, 0, 7, error, sizeof(error)) == 0);
    CHECK(collect(run, 0, 7) == 0);
    CHECK(collect_calls == 3);
    const uint64_t constant_sum = (PATTERN_BYTES * (PATTERN_BYTES + 1)) / 2 + 16 * 7;
    for (unsigned index = 5; index <= 7; index++) {
        /* cleared before the steps: the accumulators start at zero */
        CHECK(collected[index][0] == index + 1);
        /* the two steps in order, each with its own argument block */
        CHECK(collected[index][1] == 2);
        CHECK(collected[index][2] == constant_sum);
        CHECK(collected[index][3] == index);
    }
    CHECK(fake.launches == 1 + 3 * 2);
    CHECK(!strcmp(fake.launched[1], "accumulate") && !strcmp(fake.launched[2], "finish"));
    CHECK(fake.memsets == 3 && fake.readbacks == 3);
    cuda_twin_close(&synthetic_twin, run);
    CHECK(fake.live_device == 0 && fake.live_host == 0 && fake.guard_broken == 0);
}

/* Every allocation of init, made to fail in turn: an error naming the
 * twin, nothing left allocated. */
static void test_allocation_failures(CudaDevice *dev)
{
    char error[256];
    void *run;
    mode = MODE_GOOD;
    CHECK(run_init(dev, 3, &run, error, sizeof(error)) == 0);
    cuda_twin_close(&synthetic_twin, run);
    const unsigned total = fake.allocations;
    CHECK(total == 3); /* constants, slots, readback */
    for (unsigned n = 1; n <= total; n++) {
        fake_reset();
        fake.fail_allocation = n;
        error[0] = '\0';
        run = NULL;
        const int err = cuda_twin_init(&synthetic_twin, dev, NULL, NULL, &format, 3, &run, error,
                                       sizeof(error));
        CHECK(err == -ENOMEM);
        CHECK(run == NULL);
        CHECK(strstr(error, "synthetic") != NULL);
        CHECK(fake.live_device == 0 && fake.live_host == 0);
    }
}

static void test_refusals(CudaDevice *dev)
{
    char error[256];
    void *run;

    mode = MODE_READBACK_OUTSIDE;
    CHECK(run_init(dev, 1, &run, error, sizeof(error)) == -EINVAL);
    CHECK(strstr(error, "inconsistent") != NULL);
    CHECK(fake.live_device == 0 && fake.live_host == 0);

    mode = MODE_PLAN_FAILS;
    CHECK(run_init(dev, 1, &run, error, sizeof(error)) == -EINVAL);
    CHECK(strstr(error, "no plan for this format") != NULL);
    CHECK(fake.live_device == 0 && fake.live_host == 0);

    mode = MODE_UNKNOWN_KERNEL;
    CHECK(run_init(dev, 1, &run, error, sizeof(error)) != 0);
    CHECK(strstr(error, "missing") != NULL);
    CHECK(fake.live_device == 0 && fake.live_host == 0);

    mode = MODE_NO_KERNEL;
    CHECK(run_init(dev, 1, &run, error, sizeof(error)) == -EINVAL);
    CHECK(strstr(error, "names no kernel") != NULL);
    CHECK(fake.live_device == 0 && fake.live_host == 0);

    /* A step whose kernel depends on the frame: refused at that frame. */
    mode = MODE_CHANGING_KERNEL;
    CHECK(run_init(dev, 1, &run, error, sizeof(error)) == 0);
    if (run) {
        CHECK(enqueue(dev, run, 0, 2, error, sizeof(error)) == 0);
        CHECK(enqueue(dev, run, 0, 3, error, sizeof(error)) == -EINVAL);
        CHECK(strstr(error, "changed its kernel") != NULL);
        cuda_twin_close(&synthetic_twin, run);
    }
    CHECK(fake.live_device == 0 && fake.live_host == 0);
}

/* A step with no blocks launches nothing for that frame; the others run. */
static void test_empty_step(CudaDevice *dev)
{
    char error[256];
    void *run;
    mode = MODE_SKIP_EVEN;
    CHECK(run_init(dev, 1, &run, error, sizeof(error)) == 0);
    if (!run) return;
    memset(collected, 0, sizeof(collected));
    const unsigned launches = fake.launches;
    CHECK(enqueue(dev, run, 0, 4, error, sizeof(error)) == 0);
    CHECK(collect(run, 0, 4) == 0);
    CHECK(fake.launches == launches + 1 && !strcmp(fake.launched[launches], "finish"));
    CHECK(collected[4][0] == 0); /* cleared, and nothing added */
    CHECK(enqueue(dev, run, 0, 5, error, sizeof(error)) == 0);
    CHECK(collect(run, 0, 5) == 0);
    CHECK(fake.launches == launches + 3);
    CHECK(collected[5][0] == 6);
    cuda_twin_close(&synthetic_twin, run);
    CHECK(fake.live_device == 0 && fake.live_host == 0);
}

/* A step that needs more than the default shared memory: allowed it once,
 * when its kernel is looked up; a refusal is an error naming the kernel. */
static void test_large_shared(CudaDevice *dev)
{
    char error[256];
    void *run;
    mode = MODE_GOOD; /* 1 KB: nothing to ask for */
    CHECK(run_init(dev, 1, &run, error, sizeof(error)) == 0);
    CHECK(fake.attributes_set == 0);
    cuda_twin_close(&synthetic_twin, run);

    mode = MODE_LARGE_SHARED;
    CHECK(run_init(dev, 1, &run, error, sizeof(error)) == 0);
    CHECK(fake.attributes_set == 2 && fake.largest_shared == 64 * 1024);
    if (run) {
        CHECK(enqueue(dev, run, 0, 1, error, sizeof(error)) == 0);
        CHECK(enqueue(dev, run, 0, 2, error, sizeof(error)) == 0);
        CHECK(fake.attributes_set == 2); /* not again for every frame */
        cuda_twin_close(&synthetic_twin, run);
    }
    fake_reset();
    fake.fail_attribute = true;
    error[0] = '\0';
    run = NULL;
    CHECK(cuda_twin_init(&synthetic_twin, dev, NULL, NULL, &format, 1, &run, error,
                         sizeof(error)) == -EIO);
    CHECK(run == NULL && strstr(error, "finish") && strstr(error, "65536"));
    CHECK(fake.live_device == 0 && fake.live_host == 0);
}

/* collect() reads the rest of its own frame's slot, and nothing else. */
static void test_read_slot(CudaDevice *dev)
{
    char error[256];
    void *run;
    mode = MODE_READ_SLOT;
    CHECK(run_init(dev, 2, &run, error, sizeof(error)) == 0);
    if (!run) return;
    for (unsigned index = 3; index <= 4; index++) {
        const unsigned slot = index % 2;
        CHECK(enqueue(dev, run, slot, index, error, sizeof(error)) == 0);
        memset(slot_read, 0, sizeof(slot_read));
        CHECK(collect(run, slot, index) == 0);
        /* the accumulators (outside the readback) of this frame */
        CHECK(slot_reads[0] == 0 && slot_read[0] == index + 1 && slot_read[1] == 1);
        CHECK(slot_reads[1] == -EINVAL && slot_reads[2] == -EINVAL);
    }
    /* the other slot still holds its own frame */
    CHECK(collect(run, 1, 3) == 0 && slot_read[0] == 4);
    cuda_twin_close(&synthetic_twin, run);
    CHECK(fake.live_device == 0 && fake.live_host == 0);
}

int main(void)
{
    fake_kernel("fill", kernel_fill);
    fake_kernel("accumulate", kernel_accumulate);
    fake_kernel("finish", kernel_finish);
    CudaDevice dev;
    fake_device(&dev);
    test_good_run(&dev);
    test_allocation_failures(&dev);
    test_refusals(&dev);
    test_empty_step(&dev);
    test_large_shared(&dev);
    test_read_slot(&dev);
    return test_summary();
}
