/*
 * speed_chroma and speed_temporal on CUDA: the device computes each
 * picture's per-block entropies and variances (speed.cu, the C reference's
 * steps); the host reads them back and scores them through the C
 * reference's speed_pair_score() and key writers (src/metrics/speed.h).
 *
 * A frame's pictures are the launches' z index: speed_chroma's U and V
 * planes of both videos (4), speed_temporal's two difference pictures of
 * the frame's and the previous frame's lumas (2; the backend keeps the
 * previous distorted luma for it, CudaTwin.dist_history).  Per frame:
 * convert and prescale (with a prescale only), blur, local mean, means,
 * covariance, statistics: 5 to 7 launches, and (2 x blocks + 1) floats a
 * picture read back (1080p chroma: 72 blocks, 1.2 KB for the frame).
 *
 * The launches (kernel, grid and arguments) and the step from what the
 * device wrote to the keys are functions without side effects, so that
 * tests/test_speed_cuda_host.cpp drives the kernels' element code on the
 * CPU through exactly what enqueue() launches and collect() writes.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twin.h"
#include "speed_args.h"
#include "metrics/speed.h"
#include "metrics/vif_tools.h"

extern const unsigned char cuda_module_speed[];
extern const Metric metric_speed_chroma, metric_speed_temporal;

enum { ROW_THREADS = SPEED_ROW_THREADS, COV_THREADS = SPEED_COV_THREADS,
       STATS_THREADS = SPEED_STATS_THREADS };

enum SpeedStep {
    STEP_CONVERT,
    STEP_PRESCALE,
    STEP_BLUR,
    STEP_LOCAL_MEAN,
    STEP_MEANS,
    STEP_COV,
    STEP_STATS,
    SPEED_STEPS,
};

static const char *const step_names[SPEED_STEPS] = {
    "speed_convert", "speed_prescale", "speed_blur", "speed_local_mean", "speed_means",
    "speed_cov", "speed_stats",
};

/* Not static: the host test calls them (it declares them itself). */
size_t speed_cuda_work_floats(const SpeedGeometry *g);
size_t speed_cuda_result_floats(const SpeedGeometry *g);
bool speed_cuda_step_runs(const SpeedGeometry *g, unsigned step);
const char *speed_cuda_step(const SpeedGeometry *g, unsigned step, unsigned pictures,
                            unsigned launch[4]);
void speed_cuda_pictures(const SpeedGeometry *g, const float *results, unsigned pictures,
                         SpeedStats *stats);

/* A picture's work area (speed.cu's speed_layout()), in floats. */
size_t speed_cuda_work_floats(const SpeedGeometry *g)
{
    const size_t blocks = (size_t)g->blocks, e = SPEED_ELEMENTS;
    size_t at = 0;
    if (g->prescale) at += (size_t)g->w * g->h + (size_t)g->scaled_w * g->scaled_h;
    at += 2 * (size_t)g->op_w * g->op_h + 32 + e * e + 3 * e * blocks;
    return (at + 31) / 32 * 32;
}

/* A picture's results: entropies, variances, the singular flag. */
size_t speed_cuda_result_floats(const SpeedGeometry *g)
{
    return 2 * (size_t)g->blocks + 1;
}

bool speed_cuda_step_runs(const SpeedGeometry *g, unsigned step)
{
    return g->prescale || (step != STEP_CONVERT && step != STEP_PRESCALE);
}

/* Step `step`'s kernel and grid: blocks in x, y, z and threads a block. */
const char *speed_cuda_step(const SpeedGeometry *g, unsigned step, unsigned pictures,
                            unsigned launch[4])
{
    launch[2] = pictures;
    switch (step) {
    case STEP_CONVERT:
        launch[0] = cuda_blocks_for((size_t)g->w, ROW_THREADS);
        launch[1] = (unsigned)g->h;
        launch[3] = ROW_THREADS;
        break;
    case STEP_PRESCALE:
        launch[0] = cuda_blocks_for((size_t)g->scaled_w, ROW_THREADS);
        launch[1] = (unsigned)g->scaled_h;
        launch[3] = ROW_THREADS;
        break;
    case STEP_BLUR:
    case STEP_LOCAL_MEAN:
        launch[0] = cuda_blocks_for((size_t)g->op_w, ROW_THREADS);
        launch[1] = (unsigned)g->op_h;
        launch[3] = ROW_THREADS;
        break;
    case STEP_MEANS:
        launch[0] = launch[1] = 1;
        launch[3] = COV_THREADS;
        break;
    case STEP_COV:
        launch[0] = SPEED_ELEMENTS * (SPEED_ELEMENTS + 1) / 2;
        launch[1] = 1;
        launch[3] = COV_THREADS;
        break;
    default:
        launch[0] = launch[1] = 1;
        launch[3] = STATS_THREADS;
        break;
    }
    return step_names[step];
}

/* The pictures' statistics as the device left them in results. */
void speed_cuda_pictures(const SpeedGeometry *g, const float *results, unsigned pictures,
                         SpeedStats *stats)
{
    const size_t each = speed_cuda_result_floats(g);
    for (unsigned z = 0; z < pictures; z++) {
        float *r = (float *)results + z * each;
        stats[z].entropies = r;
        stats[z].variances = r + g->blocks;
        stats[z].singular = r[2 * g->blocks] != 0.0f;
    }
}

/* ---- the twins ------------------------------------------------------------------- */

typedef struct SpeedTwin {
    const CudaDevice *dev;
    const void *metric;
    bool temporal;
    const SpeedSetup *setup;
    QualeVideoFormat format;
    unsigned pictures;
    CUfunction kernels[SPEED_STEPS];
    CUdeviceptr setup_device;
    size_t work_floats, result_floats;
    CUdeviceptr work, results; /* slots x pictures x ... */
    size_t work_bytes, result_bytes;
    float *host;               /* pinned: slots x pictures x result_floats */
} SpeedTwin;

static bool speed_cuda_supports(const void *state, bool temporal)
{
    /* The prescalers the device has: nearest and bilinear (the v1 models'
     * bilinear); bicubic and lanczos4 prescales run on the CPU. */
    const int method = temporal ? ((const SpeedTemporalState *)state)->o.prescale_method
                                : ((const SpeedChromaState *)state)->o.prescale_method;
    const double ps = temporal ? ((const SpeedTemporalState *)state)->o.prescale
                               : ((const SpeedChromaState *)state)->o.prescale;
    return fabs(ps - 1.0) < 1e-3 || method == VIF_PRESCALE_NEAREST ||
           method == VIF_PRESCALE_BILINEAR;
}

static bool speed_chroma_cuda_supports(const void *state)
{
    return speed_cuda_supports(state, false);
}

static bool speed_temporal_cuda_supports(const void *state)
{
    return speed_cuda_supports(state, true);
}

static unsigned speed_chroma_cuda_planes(const void *state)
{
    (void)state;
    return 6;
}

static void speed_cuda_close(void *twin)
{
    SpeedTwin *t = twin;
    if (!t) return;
    cuda_free(t->dev, t->setup_device, sizeof(SpeedSetup));
    cuda_free(t->dev, t->work, t->work_bytes);
    cuda_free(t->dev, t->results, t->result_bytes);
    if (t->host) t->dev->api.MemFreeHost(t->host);
    free(t);
}

static int speed_cuda_init(const CudaDevice *dev, CUmodule module, const void *metric_state,
                           bool temporal, const QualeVideoFormat *format, unsigned slots,
                           void **out, char *error, size_t error_size)
{
    SpeedTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->temporal = temporal;
    t->setup = temporal ? &((const SpeedTemporalState *)metric_state)->setup
                        : &((const SpeedChromaState *)metric_state)->setup;
    t->format = *format;
    t->pictures = temporal ? 2 : 4;
    const SpeedGeometry *g = &t->setup->g;
    t->work_floats = speed_cuda_work_floats(g);
    t->result_floats = speed_cuda_result_floats(g);
    t->work_bytes = (size_t)slots * t->pictures * t->work_floats * sizeof(float);
    t->result_bytes = (size_t)slots * t->pictures * t->result_floats * sizeof(float);
    int err = 0;
    for (unsigned i = 0; i < SPEED_STEPS && !err; i++)
        if (speed_cuda_step_runs(g, i))
            err = cuda_function(dev, module, step_names[i], &t->kernels[i], error, error_size);
    if (!err) err = cuda_alloc(dev, &t->setup_device, sizeof(SpeedSetup), "SpEED's setup", error,
                               error_size);
    if (!err) err = cuda_alloc(dev, &t->work, t->work_bytes, "SpEED's pictures", error,
                               error_size);
    if (!err) err = cuda_alloc(dev, &t->results, t->result_bytes, "SpEED's results", error,
                               error_size);
    if (!err) err = cuda_alloc_host(dev, (void **)&t->host, t->result_bytes, "SpEED readback",
                                    error, error_size);
    if (!err) {
        /* Once, before any frame: the slots' streams do not wait for the
         * default stream, so the copy is finished here. */
        CUresult r = dev->api.MemcpyHtoDAsync(t->setup_device, t->setup, sizeof(SpeedSetup), NULL);
        if (r == CUDA_SUCCESS) r = dev->api.StreamSynchronize(NULL);
        if (r != CUDA_SUCCESS) {
            snprintf(error, error_size, "uploading SpEED's setup failed: %s",
                     cuda_error_text(&dev->api, r));
            err = -EIO;
        }
    }
    if (err) {
        speed_cuda_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int speed_chroma_cuda_init(const CudaDevice *dev, CUmodule module, const void *state,
                                  const QualeVideoFormat *format, unsigned slots, void **out,
                                  char *error, size_t error_size)
{
    return speed_cuda_init(dev, module, state, false, format, slots, out, error, error_size);
}

static int speed_temporal_cuda_init(const CudaDevice *dev, CUmodule module, const void *state,
                                    const QualeVideoFormat *format, unsigned slots, void **out,
                                    char *error, size_t error_size)
{
    return speed_cuda_init(dev, module, state, true, format, slots, out, error, error_size);
}

static int speed_cuda_enqueue(void *twin, unsigned slot, const CudaFrame *frame, CUstream stream,
                              char *error, size_t error_size)
{
    SpeedTwin *t = twin;
    SpeedArgs a;
    memset(&a, 0, sizeof(a));
    a.setup = t->setup_device;
    if (t->temporal) {
        /* Frame 0 has no difference to score: its 0 is written by collect(). */
        if (frame->index == 0 || !frame->prev_ref[0] || !frame->prev_dist[0]) return 0;
        const bool use_ref = ((const SpeedTemporalState *)t->metric)->use_ref_diff;
        a.src[0] = frame->prev_ref[0];
        a.sub[0] = frame->ref[0];
        a.src[1] = frame->prev_dist[0];
        a.sub[1] = use_ref ? frame->ref[0] : frame->dist[0];
        a.stride[0] = a.stride[1] = frame->stride[0];
    } else {
        for (unsigned c = 0; c < 2; c++) {
            a.src[2 * c] = frame->ref[1 + c];
            a.src[2 * c + 1] = frame->dist[1 + c];
            a.stride[2 * c] = a.stride[2 * c + 1] = frame->stride[1 + c];
        }
    }
    const size_t first = (size_t)slot * t->pictures;
    a.work_floats = t->work_floats;
    a.work = t->work + first * t->work_floats * sizeof(float);
    a.result_floats = t->result_floats;
    a.results = t->results + first * t->result_floats * sizeof(float);
    a.log2_2pie = log2(2 * M_PI * M_E);
    a.hbd = t->format.bitdepth > 8;
    a.scaler = (float)(1u << (t->format.bitdepth - 8));
    void *params[] = { &a };
    for (unsigned i = 0; i < SPEED_STEPS; i++) {
        if (!speed_cuda_step_runs(&t->setup->g, i)) continue;
        unsigned launch[4];
        const char *name = speed_cuda_step(&t->setup->g, i, t->pictures, launch);
        const int err = cuda_launch_3d(t->dev, t->kernels[i], name, launch[0], launch[1],
                                       launch[2], launch[3], 0, stream, params, error,
                                       error_size);
        if (err) return err;
    }
    return cuda_read_back(t->dev, t->host + first * t->result_floats, a.results,
                          t->pictures * t->result_floats * sizeof(float), stream, "SpEED results",
                          error, error_size);
}

static int speed_cuda_collect(void *twin, unsigned slot, const MetricFrame *frame,
                              FeatureSink *sink)
{
    SpeedTwin *t = twin;
    const SpeedGeometry *g = &t->setup->g;
    SpeedStats stats[4];
    speed_cuda_pictures(g, t->host + (size_t)slot * t->pictures * t->result_floats, t->pictures,
                        stats);
    if (t->temporal) {
        const SpeedTemporalState *s = t->metric;
        if (frame->index == 0 || !frame->prev_ref[0] || !frame->prev_dist[0])
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

const CudaTwin cuda_twin_speed_chroma = {
    .metric = &metric_speed_chroma,
    .module_image = cuda_module_speed,
    .planes = speed_chroma_cuda_planes,
    .supports = speed_chroma_cuda_supports,
    .init = speed_chroma_cuda_init,
    .enqueue = speed_cuda_enqueue,
    .collect = speed_cuda_collect,
    .close = speed_cuda_close,
};

const CudaTwin cuda_twin_speed_temporal = {
    .metric = &metric_speed_temporal,
    .module_image = cuda_module_speed,
    .history = 1,
    .dist_history = true,
    .supports = speed_temporal_cuda_supports,
    .init = speed_temporal_cuda_init,
    .enqueue = speed_cuda_enqueue,
    .collect = speed_cuda_collect,
    .close = speed_cuda_close,
};
