/*
 * Frames as jobs on the worker threads: the metrics set up at the first
 * frame (the GPU backend's twins among them), each frame's metrics as
 * tasks, the tasks a metric splits its own work into (through the runner
 * every MetricFrame carries), the slots of the frames in flight, and the
 * flush that ends the run.
 *
 * Frames are independent jobs: a job holds references to its pictures and
 * to the previous reference pictures its metrics need (history), so any
 * worker can run any frame.  Results go to the collector by frame index, so
 * the thread count never changes a value or its place.  End-of-stream work
 * (motion2 of the last frame, aggregates, model predictions) runs in
 * quale_flush() on the caller's thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "collector.h"
#include "common.h"
#include "context_private.h"
#include "model.h"
#include "thread_pool.h"

/* Gives the GPU backend every instance it has a twin for; the others stay
 * on the CPU, and the log says so once. */
static int start_gpu(QualeContext *ctx, const QualeVideoFormat *format)
{
    if (!ctx->gpu) return 0;
    GpuTwinRequest *twins = calloc(ctx->instance_count, sizeof(*twins));
    if (!twins) return -ENOMEM;
    unsigned n = 0;
    for (unsigned i = 0; i < ctx->instance_count; i++) {
        MetricInstance *inst = ctx->instances[i];
        if (ctx->gpu_ops->twins.has_twin(ctx->gpu, inst->metric, inst->state)) {
            twins[n++] = (GpuTwinRequest){ inst->metric, inst->state, &inst->sink };
            inst->on_gpu = true;
        } else {
            context_log(ctx, QUALE_LOG_INFO, "metric '%s' has no %s twin here; it runs on the CPU",
                        inst->metric->name, quale_backend_name(ctx->backend));
        }
    }
    int err = 0;
    unsigned slots = ctx->max_in_flight;
    /* When the GPU does all the work, a few frames in flight keep it busy
     * (upload, compute and readback overlap); more would only take device
     * memory. */
    if (n == ctx->instance_count) slots = QUALE_MIN(slots, 8u);
    char error[512] = "";
    if (n) err = ctx->gpu_ops->twins.start(ctx->gpu, format, twins, n, &slots, error, sizeof(error));
    if (err && ctx->settings.backend == QUALE_BACKEND_AUTO) {
        /* The device opened but cannot run this video (out of memory, say):
         * with auto, the CPU scores it instead. */
        context_log(ctx, QUALE_LOG_INFO, "the %s backend cannot score this video (%s); using the CPU",
                    quale_backend_name(ctx->backend), error);
        for (unsigned i = 0; i < ctx->instance_count; i++) ctx->instances[i]->on_gpu = false;
        ctx->backend = QUALE_BACKEND_CPU;
        free(twins);
        return 0;
    }
    if (err) context_log(ctx, QUALE_LOG_ERROR, "%s backend: %s", quale_backend_name(ctx->backend), error);
    if (!err && slots < ctx->max_in_flight) {
        /* No frame is in flight yet: keep only slots 0 .. slots-1. */
        ctx->max_in_flight = slots;
        ctx->free_slot_count = slots;
        for (unsigned i = 0; i < slots; i++) ctx->free_slots[i] = slots - 1 - i;
    }
    ctx->gpu_used = n > 0 && !err;
    free(twins);
    return err;
}

int context_start_metrics(QualeContext *ctx, const QualeVideoFormat *format)
{
    if (ctx->instance_count == 0) {
        context_log(ctx, QUALE_LOG_ERROR, "no metric or model was requested");
        return -EINVAL;
    }
    for (unsigned i = 0; i < ctx->instance_count; i++) {
        MetricInstance *inst = ctx->instances[i];
        if (inst->metric->init) {
            int err = inst->metric->init(inst->state, format, &inst->sink);
            if (err == -EEXIST) return err; /* a key clash: the sink said which */
            if (err) {
                /* -EINVAL: the metric refused the format or its options
                 * (its message says why); anything else failed on the
                 * way (memory, a file it writes). */
                context_log(ctx, QUALE_LOG_ERROR,
                            "metric '%s' cannot score %ux%u %s %u-bit video%s%s%s",
                            inst->metric->name, format->width, format->height,
                            quale_chroma_name(format->chroma), format->bitdepth,
                            err == -EINVAL ? "" : " (", err == -EINVAL ? "" : strerror(-err),
                            err == -EINVAL ? "" : ")");
                return err;
            }
        }
        inst->initialised = true;
    }
    ctx->scratch = calloc((size_t)ctx->worker_count * ctx->instance_count, sizeof(void *));
    if (!ctx->scratch) return -ENOMEM;
    const int err = start_gpu(ctx, format);
    for (unsigned i = 0; i < ctx->instance_count; i++)
        ctx->cpu_instance_count += !ctx->instances[i]->on_gpu;
    return err;
}


void context_record_error(QualeContext *ctx, int err)
{
    int expected = 0;
    atomic_compare_exchange_strong(&ctx->error, &expected, err);
}

void context_release_job(FrameJob *job)
{
    quale_picture_unref(&job->ref);
    quale_picture_unref(&job->dist);
    for (int h = 0; h < 2; h++) {
        quale_picture_unref(&job->prev_ref[h]);
        quale_picture_unref(&job->prev_dist[h]);
    }
    free(job);
}

/* The view of a job that metrics and twins get. */
MetricFrame context_job_frame(const FrameJob *job)
{
    MetricFrame frame = { .index = job->index, .ref = &job->ref, .dist = &job->dist };
    for (int h = 0; h < 2; h++) {
        frame.prev_ref[h] = job->prev_ref[h].buffer ? &job->prev_ref[h] : NULL;
        frame.prev_dist[h] = job->prev_dist[h].buffer ? &job->prev_dist[h] : NULL;
    }
    return frame;
}

/* ---- parallelism inside a frame ------------------------------------------ */

/* The runner a metric instance's frame carries: which instance runs, so
 * that each task gets the scratch of the worker that runs it. */
typedef struct InstanceRunner {
    MetricRunner runner; /* first: the metric sees this */
    QualeContext *ctx;
    unsigned instance;
} InstanceRunner;

/* The scratch of instance i on a worker, made on first use. */
static int worker_scratch(QualeContext *ctx, unsigned i, unsigned worker, void **out)
{
    MetricInstance *inst = ctx->instances[i];
    void **scratch = &ctx->scratch[worker * ctx->instance_count + i];
    if (!*scratch && inst->metric->scratch_alloc) {
        int err = inst->metric->scratch_alloc(inst->state, scratch);
        if (err) {
            context_log(ctx, QUALE_LOG_ERROR, "metric '%s': out of memory for its buffers",
                        inst->metric->name);
            return err;
        }
    }
    *out = *scratch;
    return 0;
}

typedef struct MetricTasks {
    const InstanceRunner *runner;
    unsigned caller;       /* the worker of the extract() that asked */
    void *caller_scratch;
    MetricTaskFn fn;
    void *arg;
    atomic_int error;
} MetricTasks;

static void run_metric_task(void *arg, unsigned task, unsigned worker)
{
    MetricTasks *t = arg;
    void *scratch = t->caller_scratch;
    if (worker != t->caller) {
        const int err = worker_scratch(t->runner->ctx, t->runner->instance, worker, &scratch);
        if (err) {
            int expected = 0;
            atomic_compare_exchange_strong(&t->error, &expected, err);
            return;
        }
    }
    t->fn(t->arg, task, scratch);
}

/* MetricRunner.run_tasks: the tasks on the pool, the caller's thread
 * taking its share. */
static int run_instance_tasks(const MetricRunner *base, unsigned worker, void *scratch,
                              unsigned count, MetricTaskFn fn, void *arg)
{
    const InstanceRunner *runner = (const InstanceRunner *)base;
    MetricTasks t = { runner, worker, scratch, fn, arg, 0 };
    thread_pool_run_tasks(runner->ctx->pool, worker, count, run_metric_task, &t,
                          THREAD_TASKS_WHILE_WAITING);
    return atomic_load(&t.error);
}

/* The metrics of one frame run as tasks (task i: instance i), so a frame
 * alone (the last ones, a short clip, a picture) spreads over the idle
 * workers. */
typedef struct FrameTasks {
    const FrameJob *job;
    MetricFrame frame;
    bool scored;
} FrameTasks;

static void run_frame_metric(void *arg, unsigned i, unsigned worker)
{
    FrameTasks *t = arg;
    QualeContext *ctx = t->job->ctx;
    MetricInstance *inst = ctx->instances[i];
    if (inst->on_gpu || atomic_load(&ctx->error)) return;
    if (!t->scored && !(inst->metric->flags & METRIC_EVERY_FRAME)) return;
    void *scratch = NULL;
    int err = worker_scratch(ctx, i, worker, &scratch);
    if (err) {
        context_record_error(ctx, err);
        return;
    }
    const InstanceRunner runner = { { ctx->worker_count, run_instance_tasks }, ctx, i };
    MetricFrame frame = t->frame;
    frame.runner = &runner.runner;
    frame.worker = worker;
    err = inst->metric->extract(inst->state, scratch, &frame, &inst->sink);
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "metric '%s' failed on frame %u (%s)",
                    inst->metric->name, t->job->index, strerror(-err));
        context_record_error(ctx, err);
    }
}

static void run_frame(void *arg, unsigned worker)
{
    FrameJob *job = arg;
    QualeContext *ctx = job->ctx;
    const unsigned subsample = ctx->settings.subsample;
    FrameTasks tasks = {
        .job = job,
        .frame = context_job_frame(job),
        .scored = subsample <= 1 || job->index % subsample == 0,
    };

    if (ctx->gpu_used) {
        int err = ctx->gpu_ops->twins.complete(ctx->gpu, job->slot, &tasks.frame);
        if (err) context_record_error(ctx, err);
    }

    if (ctx->cpu_instance_count > 1) {
        thread_pool_run_tasks(ctx->pool, worker, ctx->instance_count, run_frame_metric, &tasks, 0);
    } else {
        for (unsigned i = 0; i < ctx->instance_count; i++) run_frame_metric(&tasks, i, worker);
    }

    const unsigned slot = job->slot;
    context_release_job(job);
    pthread_mutex_lock(&ctx->flow_lock);
    ctx->in_flight--;
    ctx->free_slots[ctx->free_slot_count++] = slot;
    pthread_cond_signal(&ctx->slot_free);
    pthread_mutex_unlock(&ctx->flow_lock);
}

/* A value that is not a number (a model with absurd parameters, a metric
 * dividing zero by zero) is written as null in JSON and nan elsewhere; say
 * which keys and frames hold one, so that it is not taken for a score. */
static void warn_non_finite(const QualeContext *ctx)
{
    enum { MAX_KEYS = 8, MAX_FRAMES = 5 };
    const Collector *c = ctx->collector;
    const unsigned keys = collector_key_count(c), span = collector_frame_span(c);
    unsigned keys_hit = 0;
    for (unsigned k = 0; k < keys; k++) {
        char frames[128] = "";
        size_t len = 0;
        unsigned count = 0;
        for (unsigned f = 0; f < span; f++) {
            double v;
            if (collector_get(c, k, f, &v) || isfinite(v)) continue;
            if (count++ < MAX_FRAMES && len < sizeof(frames))
                len += (size_t)snprintf(frames + len, sizeof(frames) - len, "%s%u",
                                        count > 1 ? ", " : "", f);
        }
        if (!count) continue;
        if (keys_hit++ < MAX_KEYS)
            context_log(ctx, QUALE_LOG_WARNING, "%s is not a finite number at %u frame%s "
                        "(%s%s): written as null in JSON, as nan or inf elsewhere", collector_key_name(c, k),
                        count, count == 1 ? "" : "s", frames, count > MAX_FRAMES ? ", ..." : "");
    }
    if (keys_hit > MAX_KEYS)
        context_log(ctx, QUALE_LOG_WARNING, "%u more keys are not finite numbers at some frames",
                    keys_hit - MAX_KEYS);
}

int context_submit_job(QualeContext *ctx, FrameJob *job)
{
    pthread_mutex_lock(&ctx->flow_lock);
    while (ctx->in_flight >= ctx->max_in_flight)
        pthread_cond_wait(&ctx->slot_free, &ctx->flow_lock);
    ctx->in_flight++;
    /* With in_flight, so that quale_frames_done() never counts this frame
     * as done. */
    ctx->frames_sent++;
    job->slot = ctx->free_slots[--ctx->free_slot_count];
    pthread_mutex_unlock(&ctx->flow_lock);

    int err = 0;
    if (ctx->gpu_used) {
        /* Uploads and kernels are queued here, in frame order, so that a
         * frame's twins can rely on the frames before it being queued. */
        const MetricFrame frame = context_job_frame(job);
        err = ctx->gpu_ops->twins.submit(ctx->gpu, job->slot, &frame);
    }
    if (!err) err = thread_pool_submit(ctx->pool, run_frame, job);
    if (err) {
        const unsigned slot = job->slot;
        context_release_job(job);
        pthread_mutex_lock(&ctx->flow_lock);
        ctx->in_flight--;
        ctx->free_slots[ctx->free_slot_count++] = slot;
        pthread_mutex_unlock(&ctx->flow_lock);
        context_record_error(ctx, err);
    }
    return err;
}

/* quale_flush() under the context's send_lock. */
static int flush_locked(QualeContext *ctx)
{
    if (ctx->flushed) return atomic_load(&ctx->error);
    thread_pool_wait(ctx->pool);
    ctx->flushed = true;
    for (int h = 0; h < 2; h++) {
        quale_picture_unref(&ctx->prev_ref[h]);
        quale_picture_unref(&ctx->prev_dist[h]);
    }
    int err = atomic_load(&ctx->error);
    if (err) return err;
    if (ctx->frames_sent == 0) {
        context_log(ctx, QUALE_LOG_ERROR, "no frames were scored");
        return -ENODATA;
    }
    for (unsigned i = 0; i < ctx->instance_count; i++) {
        MetricInstance *inst = ctx->instances[i];
        if (!inst->metric->flush) continue;
        err = inst->metric->flush(inst->state, &inst->sink, ctx->frames_sent);
        if (err) {
            context_log(ctx, QUALE_LOG_ERROR, "metric '%s' failed at the end of the stream",
                        inst->metric->name);
            context_record_error(ctx, err);
            return err;
        }
    }
    /* libvmaf lists every model's main key before the keys of bootstrap
     * collections.  Each model declares its keys as their one writer. */
    for (unsigned group = MODEL_KEYS_MAIN; group <= MODEL_KEYS_COLLECTION; group++) {
        for (unsigned i = 0; i < ctx->model_count && !err; i++) {
            if (!model_predicts(ctx->models[i])) continue;
            FeatureSink sink = ctx->raw_sink;
            sink.owner = ctx->models[i];
            err = model_declare_keys(ctx->models[i], &sink, (enum ModelKeyGroup)group);
        }
    }
    for (unsigned i = 0; i < ctx->model_count && !err; i++) {
        if (!model_predicts(ctx->models[i])) continue;
        err = model_predict(ctx->models[i], &ctx->raw_sink, ctx->frames_sent,
                            ctx->settings.subsample);
    }
    if (err) context_record_error(ctx, err);
    else warn_non_finite(ctx);
    return err;
}

int quale_flush(QualeContext *ctx)
{
    if (!ctx) return -EINVAL;
    /* A flush called while another thread sends waits for that frame to
     * be taken; frames sent after it are refused (ctx->flushed). */
    pthread_mutex_lock(&ctx->send_lock);
    const int err = flush_locked(ctx);
    pthread_mutex_unlock(&ctx->send_lock);
    return err;
}

int quale_reset(QualeContext *ctx)
{
    if (!ctx) return -EINVAL;
    pthread_mutex_lock(&ctx->send_lock);
    int err = 0;
    if (!ctx->flushed && ctx->frames_sent) {
        context_log(ctx, QUALE_LOG_ERROR, "quale_reset() comes after quale_flush(): %u frames "
                    "are still being scored", ctx->frames_sent);
        err = -EINVAL;
    }
    for (unsigned i = 0; i < ctx->instance_count && !err; i++) {
        MetricInstance *inst = ctx->instances[i];
        if (inst->initialised && inst->metric->restart)
            err = inst->metric->restart(inst->state, &inst->sink);
    }
    if (!err) {
        /* Every frame is done (the flush waited for them), so nothing reads
         * what is forgotten; the metrics, models and the backend's device
         * state stay, set up for the format of the first pair. */
        collector_clear(ctx->collector);
        context_drop_scratch(ctx);
        for (unsigned i = 0; i < ctx->model_count; i++) model_restart(ctx->models[i]);
        pthread_mutex_lock(&ctx->flow_lock);
        ctx->frames_sent = 0;
        pthread_mutex_unlock(&ctx->flow_lock);
        ctx->flushed = false;
        atomic_store(&ctx->error, 0);
    }
    pthread_mutex_unlock(&ctx->send_lock);
    return err;
}
