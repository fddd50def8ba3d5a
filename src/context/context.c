/*
 * The context's life and public face: settings, opening and closing, what
 * a caller may ask of it before and after the run (the backend, the
 * models, the planes and frames a run needs).  The rooms beside it:
 * requests.c (metrics and models asked for), intake.c (pictures taken in,
 * the GPU bridge), scheduler.c (frame jobs on the workers, the flush),
 * queries.c (the results).  Their shared layout is context_private.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "collector.h"
#include "common.h"
#include "context_private.h"
#include "cpu.h"
#include "model.h"
#include "thread_pool.h"

/* ---- logging ------------------------------------------------------------ */

void context_vlog(const QualeContext *ctx, enum QualeLogLevel level,
                  const char *fmt, va_list args)
{
    log_sink_vprint(ctx ? &ctx->log : NULL, level, fmt, args);
}

void context_log(const QualeContext *ctx, enum QualeLogLevel level,
                 const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    context_vlog(ctx, level, fmt, args);
    va_end(args);
}

/* ---- settings and life cycle -------------------------------------------- */

void quale_settings_default(QualeSettings *s)
{
    if (!s) return;
    memset(s, 0, sizeof(*s));
    s->backend = QUALE_BACKEND_CPU;
    s->gpu_device = -1;
    s->log_level = QUALE_LOG_INFO;
}

/* The most worker threads a context runs: QUALE_THREADS_PER_CORE a core,
 * and never fewer than QUALE_MIN_THREAD_CAP (so that a small machine can
 * still check that the thread count changes no digit). */
#define QUALE_THREADS_PER_CORE 2

#define QUALE_MIN_THREAD_CAP 8

static unsigned online_cores(void)
{
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* How many recycled pictures a pool keeps: every frame in flight, its
 * history, and the pair being read. */
unsigned context_pool_keep(const QualeContext *ctx)
{
    return 4 * ctx->max_in_flight + 8;
}

int quale_open(QualeContext **out, const QualeSettings *settings)
{
    if (!out) return -EINVAL;
    *out = NULL;
    QualeContext *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) return -ENOMEM;
    /* First, so that quale_close() of a context that failed part way
     * destroys only what was made. */
    pthread_mutex_init(&ctx->send_lock, NULL);
    pthread_mutex_init(&ctx->flow_lock, NULL);
    pthread_cond_init(&ctx->slot_free, NULL);
    if (settings) ctx->settings = *settings;
    else quale_settings_default(&ctx->settings);
    ctx->log = (LogSink){ ctx->settings.log, ctx->settings.log_cookie, ctx->settings.log_level };

    int err = 0;
    const unsigned cores = online_cores();
    const unsigned max_threads = QUALE_MAX(QUALE_MIN_THREAD_CAP, QUALE_THREADS_PER_CORE * cores);
    if (ctx->settings.threads > max_threads) {
        /* More workers than the cores can run add no speed, only memory
         * (each keeps its own buffers, and frames in flight follow the
         * workers). */
        context_log(ctx, QUALE_LOG_WARNING, "%u threads asked for, %u used: at most %u per core "
                    "(%u cores), or %u", ctx->settings.threads, max_threads,
                    QUALE_THREADS_PER_CORE, cores, QUALE_MIN_THREAD_CAP);
        ctx->settings.threads = max_threads;
    }
    err = backend_open(&ctx->log, ctx->settings.backend, ctx->settings.gpu_device,
                       &ctx->backend, &ctx->gpu_ops, &ctx->gpu);
    if (err) goto fail;

    ctx->cpu_flags = cpu_flags_detect() & ~ctx->settings.cpumask;
    ctx->worker_count = ctx->settings.threads ? ctx->settings.threads : cores;
    /* Enough frames in flight to keep every core busy while the caller
     * reads the next ones, few enough to bound memory: workers beyond the
     * cores cannot run at once, so they add no frames. */
    ctx->max_in_flight = 2 * QUALE_MIN(ctx->worker_count, cores) + 2;

    err = collector_open(&ctx->collector);
    if (err) goto fail;
    /* Enough recycled pictures for every frame in flight, its history, and
     * the pair being read. */
    err = picture_pool_open(&ctx->pictures,
                            ctx->gpu ? ctx->gpu_ops->device.host_allocator(ctx->gpu) : NULL,
                            context_pool_keep(ctx));
    if (err) goto fail;
    ctx->free_slots = malloc(sizeof(*ctx->free_slots) * ctx->max_in_flight);
    if (!ctx->free_slots) {
        err = -ENOMEM;
        goto fail;
    }
    for (unsigned i = 0; i < ctx->max_in_flight; i++) ctx->free_slots[i] = ctx->max_in_flight - 1 - i;
    ctx->free_slot_count = ctx->max_in_flight;
    ctx->raw_sink = (FeatureSink){ .collector = ctx->collector, .log = &ctx->log };
    atomic_init(&ctx->error, 0);

    err = thread_pool_open(&ctx->pool, ctx->worker_count);
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "could not start %u worker threads",
                    ctx->worker_count);
        goto fail;
    }
    *out = ctx;
    return 0;

fail:
    quale_close(&ctx);
    return err;
}

void context_drop_scratch(QualeContext *ctx)
{
    if (!ctx->scratch) return;
    for (unsigned w = 0; w < ctx->worker_count; w++) {
        for (unsigned i = 0; i < ctx->instance_count; i++) {
            void **s = &ctx->scratch[w * ctx->instance_count + i];
            if (*s && ctx->instances[i]->metric->scratch_free)
                ctx->instances[i]->metric->scratch_free(*s);
            *s = NULL;
        }
    }
}

/* The metrics' per-worker buffers (made by the scheduler as workers need
 * them). */
static void free_scratch(QualeContext *ctx)
{
    context_drop_scratch(ctx);
    free(ctx->scratch);
    ctx->scratch = NULL;
}

void quale_close(QualeContext **pctx)
{
    QualeContext *ctx = pctx ? *pctx : NULL;
    if (!ctx) return;
    if (ctx->pool) thread_pool_close(&ctx->pool);
    free_scratch(ctx);
    for (unsigned i = 0; i < ctx->model_count; i++) model_close(&ctx->models[i]);
    free(ctx->models);
    for (unsigned i = 0; i < ctx->instance_count; i++) {
        MetricInstance *inst = ctx->instances[i];
        if (inst->initialised && inst->metric->close) inst->metric->close(inst->state);
        options_free(inst->metric->options, inst->state);
        free(inst->state);
        free(inst);
    }
    free(ctx->instances);
    for (int h = 0; h < 2; h++) {
        quale_picture_unref(&ctx->prev_ref[h]);
        quale_picture_unref(&ctx->prev_dist[h]);
    }
    picture_pool_close(&ctx->pictures);
    picture_pool_close(&ctx->device_pictures);
    if (ctx->gpu) ctx->gpu_ops->device.close(ctx->gpu);
    free(ctx->free_slots);
    collector_close(&ctx->collector);
    pthread_mutex_destroy(&ctx->send_lock);
    pthread_mutex_destroy(&ctx->flow_lock);
    pthread_cond_destroy(&ctx->slot_free);
    free(ctx);
    *pctx = NULL;
}

enum QualeBackend quale_backend(const QualeContext *ctx)
{
    return ctx ? ctx->backend : QUALE_BACKEND_CPU;
}

FeatureSink *context_sink(QualeContext *ctx)
{
    return &ctx->raw_sink;
}

const Collector *context_collector(const QualeContext *ctx)
{
    return ctx->collector;
}

unsigned context_subsample(const QualeContext *ctx)
{
    return ctx->settings.subsample;
}

const QualeVideoFormat *context_format(const QualeContext *ctx)
{
    return ctx->format_known ? &ctx->format : NULL;
}

unsigned quale_planes_needed(const QualeContext *ctx)
{
    unsigned mask = 0;
    for (unsigned i = 0; ctx && i < ctx->instance_count; i++) {
        mask |= metric_planes(ctx->instances[i]->metric, ctx->instances[i]->state);
    }
    return mask ? mask : 7u;
}

const char *quale_builtin_model(unsigned index)
{
    const char *const *versions = model_builtin_versions();
    for (unsigned i = 0; versions && versions[i]; i++)
        if (i == index) return versions[i];
    return NULL;
}

int quale_builtin_model_info(unsigned index, QualeBuiltinModelInfo *info)
{
    const char *version = quale_builtin_model(index);
    if (!version || !info) return -EINVAL;
    return model_builtin_describe(version, info);
}

unsigned quale_model_count(const QualeContext *ctx)
{
    return ctx ? ctx->model_count : 0;
}

int quale_model_info(const QualeContext *ctx, unsigned index, QualeModelInfo *info)
{
    if (!ctx || !info || index >= ctx->model_count) return -EINVAL;
    const Model *m = ctx->models[index];
    info->name = model_name(m);
    info->label = model_label(m);
    info->bootstrap = model_is_bootstrap(m);
    return 0;
}

int quale_segment_margins(const QualeContext *ctx, unsigned *before, unsigned *after)
{
    if (!ctx || !before || !after) return -EINVAL;
    unsigned history = 0;
    for (unsigned i = 0; i < ctx->instance_count; i++)
        history = QUALE_MAX(history, ctx->instances[i]->metric->history);
    /* A metric reads `history` frames back; its flush then reads its own
     * values of up to `history` frames back too (integer motion's moving
     * average of motion2, which the five-frame window takes from frame
     * i - 1, whose score read frame i - 3): twice the history makes every
     * frame of the part what it is in the whole run.  The metrics with a
     * history look one frame ahead (motion2 of i is min(i, i + 1)). */
    *before = 2 * history;
    *after = history ? 1 : 0;
    return 0;
}

const MetricInstance *context_instance(const QualeContext *ctx, unsigned i)
{
    return i < ctx->instance_count ? ctx->instances[i] : NULL;
}

int metric_instance_key_name(const MetricInstance *inst, const char *base_key,
                             char *out, size_t out_size)
{
    return option_key_name(inst->metric->options, inst->state, base_key, out, out_size);
}

int metric_instance_key(const MetricInstance *inst, const char *base_key, unsigned *id)
{
    char name[256];
    int err = metric_instance_key_name(inst, base_key, name, sizeof(name));
    if (err) return err;
    return collector_find(inst->sink.collector, name, id);
}
