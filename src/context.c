/*
 * The context: takes frame pairs, runs every requested metric on the worker
 * threads, and keeps the results.
 *
 * Frames are independent jobs: a job holds references to its pictures and
 * to the previous reference pictures its metrics need (history), so any
 * worker can run any frame.  Results go to the collector by frame index, so
 * the thread count never changes a value or its place.  End-of-stream work
 * (motion2 of the last frame, aggregates, model predictions) runs in
 * quale_flush() on the caller's thread.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "collector.h"
#include "common.h"
#include "context.h"
#include "cpu.h"
#include "log.h"
#include "model.h"
#include "picture_pool.h"
#include "thread_pool.h"

struct MetricInstance {
    const Metric *metric;
    void *state;
    FeatureSink sink;
    bool initialised;
    bool on_gpu; /* its twin runs on the GPU backend */
};

typedef struct FrameJob {
    QualeContext *ctx;
    unsigned index;
    unsigned slot; /* the GPU slot it holds */
    QualePicture ref, dist;
    QualePicture prev_ref[2], prev_dist[2];
} FrameJob;

struct QualeContext {
    QualeSettings settings;
    LogSink log; /* the settings' callback and level */
    unsigned cpu_flags; /* detected, less settings.cpumask */
    unsigned worker_count;
    enum QualeBackend backend;
    const GpuOps *gpu_ops; /* NULL on the CPU */
    GpuBackend *gpu;
    bool gpu_used;         /* some instance runs on the GPU */

    Collector *collector;
    FeatureSink raw_sink; /* keys stored exactly as named (models) */
    PicturePool *pictures; /* recycled frame memory */
    PicturePool *device_pictures; /* device memory for the caller to fill (CUDA) */

    MetricInstance **instances;
    unsigned instance_count;
    unsigned cpu_instance_count; /* those without a twin on the GPU, once started */
    Model **models;
    unsigned model_count;
    unsigned history; /* the most any instance needs */

    ThreadPool *pool;
    void **scratch; /* [worker * instance_count + instance] */

    /* The frame intake, held by quale_send_pictures() and quale_flush()
     * from start to end, so that callers on several threads take turns:
     * the format, the frame numbers, the history and the order in which
     * a GPU backend's submit() queues frames (on the caller's thread) are
     * one sequence.  Requests before the first frame hold it too.  The
     * workers never take it. */
    pthread_mutex_t send_lock;
    bool format_known;
    QualeVideoFormat format;
    unsigned frames_sent; /* written under send_lock and flow_lock both */
    QualePicture prev_ref[2], prev_dist[2];

    pthread_mutex_t flow_lock;
    pthread_cond_t slot_free;
    unsigned in_flight, max_in_flight;
    unsigned *free_slots; /* a stack of max_in_flight slot numbers */
    unsigned free_slot_count;

    atomic_int error; /* first failure of a worker, 0 if none */
    bool flushed;
};

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
static unsigned pool_keep(const QualeContext *ctx)
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
    err = backend_open(ctx, &ctx->log, ctx->settings.backend, ctx->settings.gpu_device,
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
                            ctx->gpu ? ctx->gpu_ops->host_allocator(ctx->gpu) : NULL,
                            pool_keep(ctx));
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

static void free_scratch(QualeContext *ctx)
{
    if (!ctx->scratch) return;
    for (unsigned w = 0; w < ctx->worker_count; w++) {
        for (unsigned i = 0; i < ctx->instance_count; i++) {
            void *s = ctx->scratch[w * ctx->instance_count + i];
            if (s && ctx->instances[i]->metric->scratch_free)
                ctx->instances[i]->metric->scratch_free(s);
        }
    }
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
    if (ctx->gpu) ctx->gpu_ops->close(ctx->gpu);
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

/* ---- requesting metrics ------------------------------------------------- */

typedef struct OptionTarget {
    QualeContext *ctx;
    const Metric *metric;
    void *state;
} OptionTarget;

static int apply_option(void *cookie, const char *key, const char *value)
{
    OptionTarget *t = cookie;
    const MetricOption *o = option_find(t->metric->options, key);
    const MetricOption *aliased = o ? NULL : option_find_alias(t->metric->options, key);
    if (aliased) {
        /* libvmaf sets options by name only and skips this one silently,
         * computing with the default: refuse rather than do either. */
        context_log(t->ctx, QUALE_LOG_ERROR,
                    "metric '%s' has no option '%s': '%s' names %s in output keys only "
                    "(libvmaf skips it and keeps the default); set %s=%s",
                    t->metric->name, key, key, aliased->name, aliased->name, value);
        return -EINVAL;
    }
    if (!o) {
        char known[512] = "";
        size_t len = 0;
        for (const MetricOption *k = t->metric->options; k && k->name; k++)
            len += (size_t)snprintf(known + len, len < sizeof(known) ? sizeof(known) - len : 0,
                                    "%s%s", len ? ", " : "", k->name);
        context_log(t->ctx, QUALE_LOG_ERROR, "metric '%s' has no option '%s' (%s%s)",
                    t->metric->name, key, len ? "its options: " : "it takes none",
                    known);
        return -EINVAL;
    }
    char error[256];
    int err = option_set(o, t->state, value, error, sizeof(error));
    if (err) context_log(t->ctx, QUALE_LOG_ERROR, "metric '%s': %s", t->metric->name, error);
    return err;
}

static int parse_options(QualeContext *ctx, const Metric *metric, void *state,
                         const char *options)
{
    if (!options || !*options) return 0;
    /* option_spec_split takes "name=k=v:...", and quotes it in messages. */
    const size_t name_len = strlen(metric->name), len = strlen(options);
    char *spec = malloc(name_len + len + 2);
    if (!spec) return -ENOMEM;
    memcpy(spec, metric->name, name_len);
    spec[name_len] = '=';
    memcpy(spec + name_len + 1, options, len + 1);
    OptionTarget target = { ctx, metric, state };
    size_t spec_name_len;
    char error[256];
    int err = option_spec_split(spec, &spec_name_len, apply_option, &target, error, sizeof(error));
    /* error is set only by option_spec_split's own failures; apply_option
     * logs its own. */
    if (err && error[0]) context_log(ctx, QUALE_LOG_ERROR, "metric '%s': %s", metric->name, error);
    free(spec);
    return err;
}

/* ---- one writer per key ------------------------------------------------ */

/* Two requests must never write one key: their values would mix frame by
 * frame, in whatever order the workers finish.  The keys a request writes
 * are known from its metric's key list and options (libvmaf's suffix
 * rule), so a clash is refused when the second request is made, before any
 * frame is read.  (Keys a metric declares without the suffix, and keys of
 * models that share a name with a metric's, are caught the same way; the
 * collector refuses a second writer of a key too, as a last guard.) */

typedef struct KeyWriter {
    const Metric *metric; /* a metric instance's keys ... */
    const void *state;
    const Model *model;   /* ... or a model's */
} KeyWriter;

static unsigned writer_key_count(const KeyWriter *w)
{
    if (w->model) return model_predicts(w->model) ? model_output_count(w->model) : 0;
    unsigned n = 0;
    while (w->metric->keys && w->metric->keys[n]) n++;
    return n;
}

static int writer_key(const KeyWriter *w, unsigned i, char *out, size_t size)
{
    if (w->model) {
        snprintf(out, size, "%s", model_output_name(w->model, i));
        return 0;
    }
    return option_key_name(w->metric->options, w->state, w->metric->keys[i], out, size);
}

static void describe_writer(const KeyWriter *w, char *out, size_t size)
{
    if (w->model) {
        snprintf(out, size, "model %s (name=%s)", model_label(w->model), model_name(w->model));
    } else {
        char request[256];
        options_describe(w->metric->name, w->metric->options, w->state, request, sizeof(request));
        snprintf(out, size, "'%s'", request);
    }
}

/* Refuses `added` when one of its keys is a key of another request of the
 * run; logs both requests and the key. */
static int check_key_clash(QualeContext *ctx, const KeyWriter *added)
{
    const unsigned others = ctx->instance_count + ctx->model_count;
    for (unsigned o = 0; o < others; o++) {
        KeyWriter other = { 0 };
        if (o < ctx->instance_count) {
            other.metric = ctx->instances[o]->metric;
            other.state = ctx->instances[o]->state;
        } else {
            other.model = ctx->models[o - ctx->instance_count];
        }
        if ((added->model && added->model == other.model) ||
            (added->state && added->state == other.state))
            continue;
        for (unsigned i = 0; i < writer_key_count(added); i++) {
            char key[256];
            if (writer_key(added, i, key, sizeof(key))) continue;
            for (unsigned j = 0; j < writer_key_count(&other); j++) {
                char other_key[256];
                if (writer_key(&other, j, other_key, sizeof(other_key)) || strcmp(key, other_key))
                    continue;
                char a[320], b[320];
                describe_writer(&other, a, sizeof(a));
                describe_writer(added, b, sizeof(b));
                context_log(ctx, QUALE_LOG_ERROR,
                            "%s and %s would both write the key '%s'; one run cannot hold "
                            "both (options that name their keys, or name= for a model, keep "
                            "them apart)", a, b, key);
                return -EEXIST;
            }
        }
    }
    return 0;
}

int context_request_metric(QualeContext *ctx, const char *name,
                           const char *options, MetricInstance **out)
{
    if (!ctx || !name) return -EINVAL;
    if (ctx->format_known) {
        context_log(ctx, QUALE_LOG_ERROR,
                    "metric '%s' requested after the first frame was sent", name);
        return -EBUSY;
    }
    const Metric *metric = metric_find(name);
    if (!metric) {
        context_log(ctx, QUALE_LOG_ERROR,
                    "unknown metric '%s' (quale --list-features lists them)", name);
        return -ENOENT;
    }
    void *state = calloc(1, metric->state_size ? metric->state_size : 1);
    if (!state) return -ENOMEM;
    options_set_defaults(metric->options, state);
    int err = parse_options(ctx, metric, state, options);
    if (!err && metric->check_options) {
        FeatureSink sink = { .log = &ctx->log, .name = metric->name, .options = metric->options,
                             .state = state };
        err = metric->check_options(state, &sink);
    }
    if (err) {
        options_free(metric->options, state);
        free(state);
        return err;
    }

    for (unsigned i = 0; i < ctx->instance_count; i++) {
        MetricInstance *inst = ctx->instances[i];
        if (inst->metric == metric && options_equal(metric->options, inst->state, state)) {
            options_free(metric->options, state);
            free(state);
            if (out) *out = inst;
            return 0;
        }
    }

    const KeyWriter added = { .metric = metric, .state = state };
    int clash = check_key_clash(ctx, &added);
    if (clash) {
        options_free(metric->options, state);
        free(state);
        return clash;
    }

    MetricInstance *inst = calloc(1, sizeof(*inst));
    MetricInstance **list = realloc(ctx->instances, sizeof(*list) * (ctx->instance_count + 1));
    if (!inst || !list) {
        free(inst);
        options_free(metric->options, state);
        free(state);
        if (list) ctx->instances = list;
        return -ENOMEM;
    }
    ctx->instances = list;
    inst->metric = metric;
    inst->state = state;
    inst->sink = (FeatureSink){
        .collector = ctx->collector,
        .options = metric->options,
        .state = state,
        .log = &ctx->log,
        .owner = inst,
        .name = metric->name,
        .writes_first = (metric->flags & METRIC_WRITES_FIRST) != 0,
        .cpu_flags = ctx->cpu_flags,
    };
    ctx->instances[ctx->instance_count++] = inst;
    if (metric->history > ctx->history) ctx->history = metric->history;
    if (out) *out = inst;
    return 0;
}

/* context_request_metric() for a model (ModelHost). */
static int model_request_metric(void *ctx, const char *name, const char *options,
                                MetricInstance **instance)
{
    return context_request_metric(ctx, name, options, instance);
}

int quale_use_metric(QualeContext *ctx, const char *spec)
{
    if (!ctx || !spec) return -EINVAL;
    const char *eq = strchr(spec, '=');
    const size_t name_len = eq ? (size_t)(eq - spec) : strlen(spec);
    char name[64];
    if (name_len == 0 || name_len >= sizeof(name)) {
        context_log(ctx, QUALE_LOG_ERROR, "'%s' is not a metric name", spec);
        return -EINVAL;
    }
    memcpy(name, spec, name_len);
    name[name_len] = '\0';
    /* Under send_lock: a request made while another thread sends the first
     * frame is either in that frame's metrics or refused, never half set
     * up. */
    pthread_mutex_lock(&ctx->send_lock);
    const int err = context_request_metric(ctx, name, eq ? eq + 1 : NULL, NULL);
    pthread_mutex_unlock(&ctx->send_lock);
    return err;
}

/* quale_use_model() under the context's send_lock. */
static int use_model_locked(QualeContext *ctx, const char *spec)
{
    if (ctx->format_known) {
        context_log(ctx, QUALE_LOG_ERROR, "model '%s' requested after the first frame", spec);
        return -EBUSY;
    }
    Model **list = realloc(ctx->models, sizeof(*list) * (ctx->model_count + 1));
    if (!list) return -ENOMEM;
    ctx->models = list;
    Model *model = NULL;
    const ModelHost host = { ctx, &ctx->log, model_request_metric, metric_instance_key,
                             metric_instance_key_name };
    int err = model_open(&model, &host, spec);
    if (err) return err;
    for (unsigned i = 0; i < ctx->model_count; i++) {
        if (!strcmp(model_name(ctx->models[i]), model_name(model))) {
            context_log(ctx, QUALE_LOG_ERROR,
                        "two models are named '%s'; give each its own with name=...",
                        model_name(model));
            model_close(&model);
            return -EEXIST;
        }
    }
    const KeyWriter added = { .model = model };
    if ((err = check_key_clash(ctx, &added))) {
        model_close(&model);
        return err;
    }
    ctx->models[ctx->model_count++] = model;
    return 0;
}

int quale_use_model(QualeContext *ctx, const char *spec)
{
    if (!ctx || !spec) return -EINVAL;
    pthread_mutex_lock(&ctx->send_lock); /* as in quale_use_metric() */
    const int err = use_model_locked(ctx, spec);
    pthread_mutex_unlock(&ctx->send_lock);
    return err;
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

/* ---- running frames ----------------------------------------------------- */

static bool same_format(const QualeVideoFormat *a, const QualeVideoFormat *b)
{
    return a->chroma == b->chroma && a->bitdepth == b->bitdepth &&
           a->width == b->width && a->height == b->height;
}

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
        if (ctx->gpu_ops->has_twin(ctx->gpu, inst->metric, inst->state)) {
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
    if (n) err = ctx->gpu_ops->start(ctx->gpu, format, twins, n, &slots, error, sizeof(error));
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

static int start_metrics(QualeContext *ctx, const QualeVideoFormat *format)
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

static void record_error(QualeContext *ctx, int err)
{
    int expected = 0;
    atomic_compare_exchange_strong(&ctx->error, &expected, err);
}

static void release_job(FrameJob *job)
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
static MetricFrame job_frame(const FrameJob *job)
{
    MetricFrame frame = { .index = job->index, .ref = &job->ref, .dist = &job->dist };
    for (int h = 0; h < 2; h++) {
        frame.prev_ref[h] = job->prev_ref[h].buffer ? &job->prev_ref[h] : NULL;
        frame.prev_dist[h] = job->prev_dist[h].buffer ? &job->prev_dist[h] : NULL;
    }
    return frame;
}

/* ---- parallelism inside a frame ------------------------------------------ */

/* Which metric instance runs, on which worker: what metric_run_tasks()
 * needs to hand each task the scratch of the worker that runs it. */
struct MetricRunner {
    QualeContext *ctx;
    unsigned instance;
};

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
    const MetricRunner *runner;
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

int metric_run_tasks(const MetricFrame *frame, void *scratch, unsigned count, MetricTaskFn fn,
                     void *arg)
{
    const MetricRunner *runner = frame->runner;
    if (!runner || count < 2) {
        for (unsigned task = 0; task < count; task++) fn(arg, task, scratch);
        return 0;
    }
    MetricTasks t = { runner, frame->worker, scratch, fn, arg, 0 };
    thread_pool_run_tasks(runner->ctx->pool, frame->worker, count, run_metric_task, &t,
                          THREAD_TASKS_WHILE_WAITING);
    return atomic_load(&t.error);
}

unsigned metric_band_rows(const MetricFrame *frame, unsigned rows, unsigned min_rows)
{
    enum { BANDS_PER_THREAD = 4 };
    const unsigned threads = frame->runner ? frame->runner->ctx->worker_count : 1;
    if (threads < 2 || rows == 0) return rows ? rows : 1;
    const unsigned bands = QUALE_MIN(threads * BANDS_PER_THREAD, (unsigned)METRIC_MAX_BANDS);
    const unsigned band_rows = QUALE_MAX((rows + bands - 1) / bands, min_rows);
    return QUALE_MIN(band_rows, rows);
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
        record_error(ctx, err);
        return;
    }
    const MetricRunner runner = { ctx, i };
    MetricFrame frame = t->frame;
    frame.runner = &runner;
    frame.worker = worker;
    err = inst->metric->extract(inst->state, scratch, &frame, &inst->sink);
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "metric '%s' failed on frame %u (%s)",
                    inst->metric->name, t->job->index, strerror(-err));
        record_error(ctx, err);
    }
}

static void run_frame(void *arg, unsigned worker)
{
    FrameJob *job = arg;
    QualeContext *ctx = job->ctx;
    const unsigned subsample = ctx->settings.subsample;
    FrameTasks tasks = {
        .job = job,
        .frame = job_frame(job),
        .scored = subsample <= 1 || job->index % subsample == 0,
    };

    if (ctx->gpu_used) {
        int err = ctx->gpu_ops->complete(ctx->gpu, job->slot, &tasks.frame);
        if (err) record_error(ctx, err);
    }

    if (ctx->cpu_instance_count > 1) {
        thread_pool_run_tasks(ctx->pool, worker, ctx->instance_count, run_frame_metric, &tasks, 0);
    } else {
        for (unsigned i = 0; i < ctx->instance_count; i++) run_frame_metric(&tasks, i, worker);
    }

    const unsigned slot = job->slot;
    release_job(job);
    pthread_mutex_lock(&ctx->flow_lock);
    ctx->in_flight--;
    ctx->free_slots[ctx->free_slot_count++] = slot;
    pthread_cond_signal(&ctx->slot_free);
    pthread_mutex_unlock(&ctx->flow_lock);
}

static int check_pictures(QualeContext *ctx, const QualePicture *ref,
                          const QualePicture *dist)
{
    char error[256];
    if (picture_check(ref, error, sizeof(error))) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u: reference picture: %s", ctx->frames_sent,
                    error);
        return -EINVAL;
    }
    if (picture_check(dist, error, sizeof(error))) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u: distorted picture: %s", ctx->frames_sent,
                    error);
        return -EINVAL;
    }
    if (!same_format(&ref->format, &dist->format)) {
        context_log(ctx, QUALE_LOG_ERROR,
                    "reference and distorted pictures differ: %ux%u %s %u-bit vs "
                    "%ux%u %s %u-bit",
                    ref->format.width, ref->format.height, quale_chroma_name(ref->format.chroma),
                    ref->format.bitdepth, dist->format.width, dist->format.height,
                    quale_chroma_name(dist->format.chroma), dist->format.bitdepth);
        return -EINVAL;
    }
    if (ctx->format_known && !same_format(&ctx->format, &ref->format)) {
        context_log(ctx, QUALE_LOG_ERROR,
                    "frame %u is %ux%u %s %u-bit, but the first frame was %ux%u %s %u-bit",
                    ctx->frames_sent, ref->format.width, ref->format.height,
                    quale_chroma_name(ref->format.chroma), ref->format.bitdepth,
                    ctx->format.width, ctx->format.height,
                    quale_chroma_name(ctx->format.chroma), ctx->format.bitdepth);
        return -EINVAL;
    }
    return 0;
}

/*
 * A reference to the picture for a job to keep: a new reference to the
 * caller's picture when it is laid out as quale_picture_alloc() lays out
 * its format, else a copy in the context's pool.  Borrowed memory is the
 * caller's again once quale_send_pictures() returns, and the history of
 * temporal metrics keeps pictures for later frames; the GPU uploads and
 * the metrics rely on the one layout.
 */
static int adopt_picture(QualeContext *ctx, QualePicture *out, const QualePicture *in)
{
    if (picture_is_standard(in)) return quale_picture_ref(out, in);
    const int err = picture_pool_get(ctx->pictures, out, &in->format);
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u: out of memory for a copy of a picture",
                    ctx->frames_sent);
        return err;
    }
    picture_copy_samples(out, in);
    return 0;
}

/* A device picture for a run that reads it on the host: replaced by a copy
 * in the context's pool. */
static int host_copy(QualeContext *ctx, QualePicture *pic)
{
    if (!picture_on_device(pic)) return 0;
    QualePicture host;
    int err = picture_pool_get(ctx->pictures, &host, &pic->format);
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u: out of memory for a host copy of a device "
                    "picture", ctx->frames_sent);
        return err;
    }
    char error[256] = "";
    if ((err = ctx->gpu_ops->download(ctx->gpu, &host, pic, error, sizeof(error)))) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u: %s", ctx->frames_sent, error);
        quale_picture_unref(&host);
        return err;
    }
    quale_picture_unref(pic);
    *pic = host;
    return 0;
}

/* Device pictures go to the GPU backend as they are when every metric runs
 * there; otherwise the CPU's metrics need the samples on the host (as
 * libvmaf downloads them for its CPU features). */
static int take_device_pictures(QualeContext *ctx, QualePicture *ref, QualePicture *dist)
{
    const QualePicture *pics[2] = { ref, dist };
    for (int i = 0; i < 2; i++) {
        if (picture_on_device(pics[i]) && !picture_from_pool(pics[i], ctx->device_pictures)) {
            context_log(ctx, QUALE_LOG_ERROR, "frame %u: the %s picture is in the device memory of "
                        "another context (device pictures come from "
                        "quale_context_alloc_device_picture() of the context they are sent to)",
                        ctx->frames_sent, i ? "distorted" : "reference");
            return -EINVAL;
        }
        if (picture_on_device(pics[i]) && !picture_is_standard(pics[i])) {
            context_log(ctx, QUALE_LOG_ERROR, "frame %u: the %s picture is in device memory but "
                        "its planes are no longer where they were allocated", ctx->frames_sent,
                        i ? "distorted" : "reference");
            return -EINVAL;
        }
    }
    if (ctx->gpu_used && ctx->cpu_instance_count == 0) return 0;
    int err = host_copy(ctx, ref);
    if (!err) err = host_copy(ctx, dist);
    return err;
}

/* quale_send_pictures() under the context's send_lock. */
static int send_locked(QualeContext *ctx, QualePicture *ref, QualePicture *dist)
{
    int err = 0;
    if (ctx->flushed) {
        context_log(ctx, QUALE_LOG_ERROR, "pictures sent after quale_flush()");
        err = -EINVAL;
        goto drop;
    }
    if ((err = atomic_load(&ctx->error))) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u not taken: the run failed before it (%s)",
                    ctx->frames_sent, strerror(-err));
        goto drop;
    }
    if ((err = check_pictures(ctx, ref, dist))) goto drop;
    if (ctx->frames_sent == UINT32_MAX / 2) {
        context_log(ctx, QUALE_LOG_ERROR, "too many frames");
        err = -ERANGE;
        goto drop;
    }
    if (!ctx->format_known) {
        ctx->format = ref->format;
        ctx->format_known = true;
        if ((err = start_metrics(ctx, &ctx->format))) {
            record_error(ctx, err);
            goto drop;
        }
    }
    if ((picture_on_device(ref) || picture_on_device(dist)) &&
        (err = take_device_pictures(ctx, ref, dist)))
        goto drop;

    FrameJob *job = calloc(1, sizeof(*job));
    if (!job) {
        err = -ENOMEM;
        goto drop;
    }
    job->ctx = ctx;
    job->index = ctx->frames_sent;
    /* The job takes references of its own, so that ref == dist (one
     * picture sent as both) holds two; the caller's are dropped below. */
    if ((err = adopt_picture(ctx, &job->ref, ref)) ||
        (err = adopt_picture(ctx, &job->dist, dist))) {
        release_job(job);
        goto drop;
    }
    quale_picture_unref(ref);
    quale_picture_unref(dist); /* a no-op when dist == ref: cleared above */
    for (unsigned h = 0; h < ctx->history; h++) {
        if (ctx->prev_ref[h].buffer) quale_picture_ref(&job->prev_ref[h], &ctx->prev_ref[h]);
        if (ctx->prev_dist[h].buffer) quale_picture_ref(&job->prev_dist[h], &ctx->prev_dist[h]);
    }
    /* Shift the history: this frame becomes index - 1 for the next one. */
    if (ctx->history) {
        quale_picture_unref(&ctx->prev_ref[1]);
        quale_picture_unref(&ctx->prev_dist[1]);
        ctx->prev_ref[1] = ctx->prev_ref[0];
        ctx->prev_dist[1] = ctx->prev_dist[0];
        quale_picture_ref(&ctx->prev_ref[0], &job->ref);
        quale_picture_ref(&ctx->prev_dist[0], &job->dist);
        if (ctx->history < 2) {
            quale_picture_unref(&ctx->prev_ref[1]);
            quale_picture_unref(&ctx->prev_dist[1]);
        }
    }

    pthread_mutex_lock(&ctx->flow_lock);
    while (ctx->in_flight >= ctx->max_in_flight)
        pthread_cond_wait(&ctx->slot_free, &ctx->flow_lock);
    ctx->in_flight++;
    /* With in_flight, so that quale_frames_done() never counts this frame
     * as done. */
    ctx->frames_sent++;
    job->slot = ctx->free_slots[--ctx->free_slot_count];
    pthread_mutex_unlock(&ctx->flow_lock);

    if (ctx->gpu_used) {
        /* Uploads and kernels are queued here, in frame order, so that a
         * frame's twins can rely on the frames before it being queued. */
        const MetricFrame frame = job_frame(job);
        err = ctx->gpu_ops->submit(ctx->gpu, job->slot, &frame);
    }
    if (!err) err = thread_pool_submit(ctx->pool, run_frame, job);
    if (err) {
        const unsigned slot = job->slot;
        release_job(job);
        pthread_mutex_lock(&ctx->flow_lock);
        ctx->in_flight--;
        ctx->free_slots[ctx->free_slot_count++] = slot;
        pthread_mutex_unlock(&ctx->flow_lock);
        record_error(ctx, err);
    }
    return err;

drop:
    quale_picture_unref(ref);
    quale_picture_unref(dist);
    return err;
}

int quale_send_pictures(QualeContext *ctx, QualePicture *ref, QualePicture *dist)
{
    if (!ctx) return -EINVAL;
    /* Callers on several threads take turns (send_lock): each frame gets
     * its own number, the history is shifted once a frame, and a GPU
     * backend's submit() queues frames in their order. */
    pthread_mutex_lock(&ctx->send_lock);
    const int err = send_locked(ctx, ref, dist);
    pthread_mutex_unlock(&ctx->send_lock);
    return err;
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
            record_error(ctx, err);
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
    if (err) record_error(ctx, err);
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

int quale_context_alloc_picture(QualeContext *ctx, QualePicture *pic,
                                const QualeVideoFormat *format)
{
    if (!ctx || !pic) return -EINVAL;
    return picture_pool_get(ctx->pictures, pic, format);
}

/* quale_use_cuda_context() under the context's send_lock. */
static int use_cuda_context_locked(QualeContext *ctx, void *cu_context)
{
    if (ctx->frames_sent || ctx->format_known || ctx->device_pictures) {
        context_log(ctx, QUALE_LOG_ERROR, "quale_use_cuda_context: %s",
                    ctx->device_pictures ? "device pictures were allocated in the context before"
                                         : "called after the first picture");
        return -EINVAL;
    }
    const GpuOps *ops = gpu_ops(QUALE_BACKEND_CUDA);
    if (ops->unavailable) {
        context_log(ctx, QUALE_LOG_ERROR, "the cuda backend is not available: %s", ops->unavailable);
        return -ENOSYS;
    }
    GpuBackend *gpu = NULL;
    char error[512] = "";
    int err = ops->adopt(ctx, cu_context, &gpu, error, sizeof(error));
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "the cuda backend cannot start%s: %s",
                    cu_context ? " in the given CUDA context" : "", error);
        return err;
    }
    PicturePool *pictures = NULL;
    const PictureAllocator *host = ops->host_allocator(gpu);
    if ((err = picture_pool_open(&pictures, host, pool_keep(ctx)))) {
        /* No pool took the host allocator's reference: drop it too. */
        const PictureAllocator kept = *host;
        ops->close(gpu);
        kept.release(kept.opaque);
        return err;
    }
    /* Pictures handed out before keep their pool (and its backend) until
     * they come back. */
    picture_pool_close(&ctx->pictures);
    if (ctx->gpu) ctx->gpu_ops->close(ctx->gpu);
    ctx->pictures = pictures;
    ctx->gpu = gpu;
    ctx->gpu_ops = ops;
    ctx->backend = QUALE_BACKEND_CUDA;
    ctx->settings.backend = QUALE_BACKEND_CUDA;
    context_log(ctx, QUALE_LOG_INFO, "using cuda%s", cu_context ? " in the caller's CUDA context" : "");
    return 0;
}

int quale_use_cuda_context(QualeContext *ctx, void *cu_context)
{
    if (!ctx) return -EINVAL;
    /* The backend changes under it: no frame may be half taken meanwhile. */
    pthread_mutex_lock(&ctx->send_lock);
    const int err = use_cuda_context_locked(ctx, cu_context);
    pthread_mutex_unlock(&ctx->send_lock);
    return err;
}

int context_decode_context(QualeContext *ctx, void **native, char *error, size_t error_size)
{
    if (!ctx->gpu || !ctx->gpu_ops->native_context) {
        snprintf(error, error_size, "decoding on the GPU needs the CUDA backend");
        return -ENOTSUP;
    }
    *native = ctx->gpu_ops->native_context(ctx->gpu);
    return 0;
}

int context_import_frame(QualeContext *ctx, const GpuFrameImport *src, QualePicture *dst,
                         char *error, size_t error_size)
{
    if (!ctx->gpu || !ctx->gpu_ops->import_frame) {
        snprintf(error, error_size, "decoding on the GPU needs the CUDA backend");
        return -ENOTSUP;
    }
    return ctx->gpu_ops->import_frame(ctx->gpu, src, dst, error, error_size);
}

void context_import_release(QualeContext *ctx, void *state)
{
    if (state && ctx && ctx->gpu && ctx->gpu_ops->import_release)
        ctx->gpu_ops->import_release(ctx->gpu, state);
}

int quale_context_alloc_device_picture(QualeContext *ctx, QualePicture *pic,
                                       const QualeVideoFormat *format)
{
    if (!ctx || !pic) return -EINVAL;
    memset(pic, 0, sizeof(*pic));
    if (!ctx->gpu || !ctx->gpu_ops->device_allocator) {
        context_log(ctx, QUALE_LOG_ERROR, "device pictures need the cuda backend (this context "
                    "runs on %s)", quale_backend_name(ctx->backend));
        return -EINVAL;
    }
    /* Readers on several threads (one per video) may ask first at once:
     * one pool for all of them. */
    pthread_mutex_lock(&ctx->flow_lock);
    int err = 0;
    if (!ctx->device_pictures) {
        const PictureAllocator *device = ctx->gpu_ops->device_allocator(ctx->gpu);
        err = picture_pool_open(&ctx->device_pictures, device, pool_keep(ctx));
        if (err) device->release(device->opaque);
    }
    pthread_mutex_unlock(&ctx->flow_lock);
    if (err) return err;
    return picture_pool_get(ctx->device_pictures, pic, format);
}

unsigned quale_frame_count(const QualeContext *ctx)
{
    if (!ctx) return 0;
    /* Under flow_lock, as quale_frames_done() reads it: a progress display
     * may ask while another thread sends. */
    pthread_mutex_t *lock = (pthread_mutex_t *)&ctx->flow_lock;
    pthread_mutex_lock(lock);
    const unsigned sent = ctx->frames_sent;
    pthread_mutex_unlock(lock);
    return sent;
}

int context_import_score(QualeContext *ctx, const char *key, unsigned index, double value)
{
    if (!ctx || !key) return -EINVAL;
    /* One owner for every imported key: imports may fill any frame of
     * their keys, and no metric or model may write them too. */
    static const char import_owner = 0;
    FeatureSink sink = ctx->raw_sink;
    sink.owner = &import_owner;
    unsigned id;
    int err = feature_sink_declare_plain(&sink, key, &id);
    if (err == -EEXIST) {
        context_log(ctx, QUALE_LOG_ERROR, "cannot import '%s': a metric or model writes it",
                    key);
        return -EINVAL;
    }
    if (!err) err = feature_sink_put(&sink, id, index, value);
    return err;
}

unsigned quale_frames_done(const QualeContext *ctx)
{
    if (!ctx) return 0;
    /* The lock is the context's own; reading under it changes nothing. */
    pthread_mutex_t *lock = (pthread_mutex_t *)&ctx->flow_lock;
    pthread_mutex_lock(lock);
    const unsigned done = ctx->frames_sent - ctx->in_flight;
    pthread_mutex_unlock(lock);
    return done;
}

/* ---- results ------------------------------------------------------------ */

int context_results_ready(const QualeContext *ctx, const char *caller)
{
    if (!ctx->flushed) {
        context_log(ctx, QUALE_LOG_ERROR, "%s() before quale_flush(): the results are not "
                    "complete yet (the frames in flight and the models come with the flush)",
                    caller);
        return -EBUSY;
    }
    const int err = atomic_load(&ctx->error);
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "%s(): the run failed (%s); it has no results",
                    caller, strerror(-err));
        return err;
    }
    if (ctx->frames_sent == 0) {
        context_log(ctx, QUALE_LOG_ERROR, "%s(): no frames were scored", caller);
        return -ENODATA;
    }
    return 0;
}

unsigned quale_feature_count(const QualeContext *ctx)
{
    return ctx ? collector_key_count(ctx->collector) : 0;
}

const char *quale_feature_name(const QualeContext *ctx, unsigned i)
{
    return ctx ? collector_key_name(ctx->collector, collector_output_key(ctx->collector, i))
               : NULL;
}

int quale_feature_value(const QualeContext *ctx, const char *key, unsigned frame,
                        double *value)
{
    if (!ctx || !key || !value) return -EINVAL;
    unsigned id;
    int err = collector_find(ctx->collector, key, &id);
    if (err) return err;
    return collector_get(ctx->collector, id, frame, value);
}

int context_pool_range(const QualeContext *ctx, const char *key, enum QualePool method,
                       unsigned first, unsigned end, double *value)
{
    unsigned id;
    const int err = collector_find(ctx->collector, key, &id);
    if (err) return err;
    return collector_pool_range(ctx->collector, id, method, first, end,
                                ctx->settings.subsample, value);
}

int quale_pool_method_check(const char *method)
{
    PoolMethod m;
    return method ? pool_method_parse(method, &m) : -EINVAL;
}

int quale_feature_pooled_by(const QualeContext *ctx, const char *key, const char *method,
                            double *value)
{
    if (!ctx || !key || !method || !value) return -EINVAL;
    PoolMethod m;
    int err = pool_method_parse(method, &m);
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "'%s' is not a pooling method (min, max, mean, "
                    "harmonic_mean, pN, lowN)", method);
        return err;
    }
    if ((err = context_results_ready(ctx, "quale_feature_pooled_by"))) return err;
    unsigned id;
    if ((err = collector_find(ctx->collector, key, &id))) return err;
    return collector_pool_method(ctx->collector, id, &m, 0, ctx->frames_sent,
                                 ctx->settings.subsample, value);
}

int quale_feature_pooled(const QualeContext *ctx, const char *key,
                         enum QualePool method, double *value)
{
    if (!ctx || !key || !value) return -EINVAL;
    int err = context_results_ready(ctx, "quale_feature_pooled");
    if (err) return err;
    unsigned id;
    err = collector_find(ctx->collector, key, &id);
    if (err) return err;
    return collector_pool(ctx->collector, id, method, ctx->frames_sent,
                          ctx->settings.subsample, value);
}
