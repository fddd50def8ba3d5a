/*
 * The metrics and models a run asks for (quale_use_metric(),
 * quale_use_model(), the models' own requests): their options, one
 * instance per metric and option values, and one writer per key.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "common.h"
#include "context_private.h"
#include "model.h"
#include "nearest_name.h"
#include "option.h"

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
        const char *names[64];
        unsigned count = 0;
        for (; count < quale_metric_total && count < QUALE_ARRAY_SIZE(names); count++)
            names[count] = quale_metrics[count]->name;
        char meant[160];
        if (nearest_names(name, names, count, meant, sizeof(meant)))
            context_log(ctx, QUALE_LOG_ERROR, "unknown metric '%s': did you mean %s? (quale "
                        "--list-features lists them)", name, meant);
        else
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
