/*
 * Float motion on CUDA: the device blurs the reference lumas of frames
 * i - 2 .. i where the backend keeps them and sums each row's SADs
 * (float_motion.cu); the host reads back the rows' float sums, adds them in
 * float in row order as the C reference does, and writes the frame's keys
 * through its float_motion_put(), which remembers the score for the
 * metric's own flush() (the last frame's motion2 and motion3).  Frames the
 * reference refuses (a picture smaller than the blur) fail in collect()
 * with its float_motion_check_size() message.
 *
 * Device memory, per slot: the row sums (read back: 2 floats per row).
 *
 * motion_add_scale1 (the SAD of the blurred pictures shrunk by libvmaf's
 * bilinear scaler, added to the score) is not on the device: the twin
 * declines it and the metric stays on the CPU.
 *
 * The launch of a frame (kernel, grid, shared memory, arguments) is a
 * function without side effects, so that tests/test_float_vif_adm_motion_cuda_host.cpp
 * drives the kernel's element code on the CPU through exactly what
 * enqueue() launches, and collect()'s work is float_motion_cuda_write(),
 * which the test calls too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twin.h"
#include "float_motion_args.h"
#include "metrics/float_motion.h"

extern const unsigned char cuda_module_float_motion[];

/* A block of FMOT_ROWS (4) rows and a segment of MAX_SEGMENT columns take
 * 4 (3 (S + 4) + 2 S + 2) floats of shared memory: 40 KiB. */
enum { THREADS = FMOT_THREADS, ROWS_PER_BLOCK = FMOT_ROWS, MAX_SEGMENT = 508 };

/* ---- the plan ------------------------------------------------------------- */

typedef struct FloatMotionPlan {
    FloatMotionState *s;   /* float_motion_put() remembers the last score */
    unsigned bitdepth;
    size_t rows_bytes;     /* the slot: the row sums */
} FloatMotionPlan;

/* Not static: the host test calls them (it declares them itself). */
FloatMotionPlan *float_motion_cuda_plan_new(FloatMotionState *s, unsigned bitdepth);
void float_motion_cuda_plan_free(FloatMotionPlan *p);
size_t float_motion_cuda_rows_bytes(const FloatMotionPlan *p);
const char *float_motion_cuda_launch(const FloatMotionPlan *p, unsigned index, uint64_t rows,
                                     uint64_t cur, uint64_t prev, uint64_t prev2,
                                     uint64_t stride, unsigned launch[4], void *args);
int float_motion_cuda_write(const FloatMotionPlan *p, FeatureSink *sink, unsigned index,
                            const float *rows);

FloatMotionPlan *float_motion_cuda_plan_new(FloatMotionState *s, unsigned bitdepth)
{
    FloatMotionPlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->s = s;
    p->bitdepth = bitdepth;
    p->rows_bytes = 2 * sizeof(float) * (size_t)s->h;
    return p;
}

void float_motion_cuda_plan_free(FloatMotionPlan *p)
{
    free(p);
}

size_t float_motion_cuda_rows_bytes(const FloatMotionPlan *p)
{
    return p->rows_bytes;
}

/* The kernel for a bit depth and a blur (5 taps, 3 with motion_filter_size
 * 3). */
static const char *kernel_name(unsigned bitdepth, int taps)
{
    if (bitdepth > 8) return taps == 3 ? "fmot_sad_16_3" : "fmot_sad_16_5";
    return taps == 3 ? "fmot_sad_8_3" : "fmot_sad_8_5";
}

/*
 * The launch of frame `index` (device addresses; the host test passes host
 * addresses): the kernel's name, its launch (grid x, grid y, threads per
 * block, shared bytes) and its arguments (args: a struct FmotArgs); NULL
 * where the frame launches nothing: frame 0, motion_force_zero, or a
 * picture the reference refuses (collect() says why).  prev2 is frame
 * index - 2's luma from index 2 on.
 */
const char *float_motion_cuda_launch(const FloatMotionPlan *p, unsigned index, uint64_t rows,
                                     uint64_t cur, uint64_t prev, uint64_t prev2,
                                     uint64_t stride, unsigned launch[4], void *args)
{
    const FloatMotionState *s = p->s;
    if (!float_motion_scored(s, index) || s->w <= s->taps / 2 || s->h <= s->taps / 2)
        return NULL;
    FmotArgs a;
    memset(&a, 0, sizeof(a));
    a.pic[0] = prev;
    a.pic[1] = cur;
    a.pic[2] = index >= 2 ? prev2 : 0;
    a.stride = stride;
    a.rows = rows;
    for (int k = 0; k < s->taps && k < FLOAT_MOTION_MAX_TAPS; k++) a.filter[k] = s->filter[k];
    a.inv_scaler = p->bitdepth > 8 ? 1.0f / (float)(1u << (p->bitdepth - 8)) : 1.0f;
    a.w = s->w;
    a.h = s->h;
    a.taps = s->taps;
    a.pictures = index >= 2 ? 3 : 2;
    a.rows_per_block = ROWS_PER_BLOCK;
    a.segment = (int)cuda_row_segment((unsigned)s->w, MAX_SEGMENT);
    launch[0] = (unsigned)(s->h + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    launch[1] = 1;
    launch[2] = THREADS;
    /* fmot_shared_floats() of float_motion.cu */
    launch[3] = (unsigned)sizeof(float) *
                (unsigned)(3 * ROWS_PER_BLOCK * (a.segment + 2 * (s->taps / 2)) +
                           2 * ROWS_PER_BLOCK * a.segment + 2 * ROWS_PER_BLOCK);
    memcpy(args, &a, sizeof(a));
    return kernel_name(p->bitdepth, s->taps);
}

/* collect()'s work: the rows' sums added in float in row order
 * (float_motion.c's accum += line), the scores, the keys
 * (float_motion_put_rows). */
int float_motion_cuda_write(const FloatMotionPlan *p, FeatureSink *sink, unsigned index,
                            const float *rows)
{
    return float_motion_put_rows(p->s, sink, index, rows);
}

/* ---- the twin ------------------------------------------------------------- */

typedef struct FloatMotionTwin {
    const CudaDevice *dev;
    FloatMotionPlan *plan;
    CUfunction kernel;
    CUdeviceptr memory;    /* slots x rows_bytes */
    size_t bytes;
    float *host;           /* pinned, same layout */
} FloatMotionTwin;

/* Not static: the host test asks it too. */
bool float_motion_cuda_supports(const void *state);

bool float_motion_cuda_supports(const void *state)
{
    /* every other option: tests/test_float_vif_adm_motion_cuda_host.cpp */
    const FloatMotionState *s = state;
    /* motion_add_uv (the chroma planes' scores) runs on the CPU */
    return !s->add_scale1 && !s->add_uv && (s->taps == 5 || s->taps == 3);
}

static void float_motion_cuda_close(void *twin)
{
    FloatMotionTwin *t = twin;
    if (!t) return;
    cuda_free(t->dev, t->memory, t->bytes);
    if (t->host) t->dev->api.MemFreeHost(t->host);
    float_motion_cuda_plan_free(t->plan);
    free(t);
}

static int float_motion_cuda_init(const CudaDevice *dev, CUmodule module, const void *metric_state,
                                  const QualeVideoFormat *format, unsigned slots, void **out,
                                  char *error, size_t error_size)
{
    int err = 0;
    FloatMotionTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    /* float_motion_put() writes the state's atomic last score, as the
     * reference's extract() does */
    t->plan = float_motion_cuda_plan_new((FloatMotionState *)metric_state, format->bitdepth);
    if (!t->plan) err = -ENOMEM;
    if (!err)
        err = cuda_function(dev, module, kernel_name(format->bitdepth, t->plan->s->taps),
                            &t->kernel, error, error_size);
    if (!err) {
        t->bytes = (size_t)slots * t->plan->rows_bytes;
        err = cuda_alloc(dev, &t->memory, t->bytes, "float motion row sums", error, error_size);
    }
    if (!err)
        err = cuda_alloc_host(dev, (void **)&t->host, t->bytes, "float motion readback", error,
                              error_size);
    if (err) {
        float_motion_cuda_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int float_motion_cuda_enqueue(void *twin, unsigned slot, const CudaFrame *frame,
                                     CUstream stream, char *error, size_t error_size)
{
    FloatMotionTwin *t = twin;
    const size_t bytes = t->plan->rows_bytes;
    const CUdeviceptr rows = t->memory + (size_t)slot * bytes;
    unsigned launch[4];
    FmotArgs args;
    const char *name = float_motion_cuda_launch(t->plan, frame->index, rows, frame->ref[0],
                                                frame->prev_ref[0], frame->prev_ref[1],
                                                frame->stride[0], launch, &args);
    if (!name) return 0; /* nothing to compute, or collect() refuses */
    if (!frame->prev_ref[0] || (frame->index >= 2 && !frame->prev_ref[1])) {
        snprintf(error, error_size, "float motion: frame %u has no earlier frames on the device",
                 frame->index);
        return -EINVAL;
    }
    void *params[] = { &args };
    int err = cuda_launch(t->dev, t->kernel, name, launch[0], launch[1], launch[2], launch[3],
                          stream, params, error, error_size);
    if (err) return err;
    return cuda_read_back(t->dev, (uint8_t *)t->host + (size_t)slot * bytes, rows, bytes, stream,
                          "the float motion row sums", error, error_size);
}

static int float_motion_cuda_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                     FeatureSink *sink)
{
    FloatMotionTwin *t = twin;
    return float_motion_cuda_write(t->plan, sink, frame->index,
                                   (const float *)((const uint8_t *)t->host +
                                                   (size_t)slot * t->plan->rows_bytes));
}

const CudaTwin cuda_twin_float_motion = {
    .metric = &metric_float_motion,
    .module_image = cuda_module_float_motion,
    .history = 2,
    .supports = float_motion_cuda_supports,
    .init = float_motion_cuda_init,
    .enqueue = float_motion_cuda_enqueue,
    .collect = float_motion_cuda_collect,
    .close = float_motion_cuda_close,
};
