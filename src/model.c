/*
 * VMAF models: the model spec, the built-in tables or a file
 * (model_file.c) made into a model, the metrics a model needs, and the
 * interface; the prediction is model_predict.c's.
 *
 * The arithmetic follows libvmaf (predict.c) and libsvm (svm.cpp) in the
 * same order of operations in double, so that every score is bit-for-bit
 * libvmaf's given the same features and the same libm:
 *   feature  x' = slope_i * x + intercept_i             (linear_rescale)
 *   svm      sum_s coef_s * exp(-gamma * |x' - sv_s|^2) - rho
 *   score    (svm - intercept_0) / slope_0               (linear_rescale)
 *   then the score transform (polynomial, knots, out_lte_in / out_gte_in)
 *   and the clip, each when enabled.
 */
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "json.h"
#include "metric.h"
#include "model_private.h"
#include "nearest_name.h"


/* ------------------------------------------------------------------------ */
/* Which metric provides each feature a model can name                      */

/* A model feature's source: the metric that provides it and its key. */
typedef struct FeatureSource {
    const char *metric; /* its name */
    const char *key;    /* the metric's base key */
} FeatureSource;

/* Each metric lists the model features it provides (metric.h). */
static bool find_feature_source(const char *feature, FeatureSource *source)
{
    for (unsigned i = 0; i < quale_metric_total; i++) {
        const MetricModelFeature *f = quale_metrics[i]->model_features;
        for (; f && f->feature; f++) {
            if (strcmp(f->feature, feature)) continue;
            source->metric = quale_metrics[i]->name;
            source->key = f->key;
            return true;
        }
    }
    return false;
}

static bool model_feature_known(const char *feature)
{
    FeatureSource source;
    return find_feature_source(feature, &source);
}

/* ------------------------------------------------------------------------ */
/* The spec                                                                  */

typedef struct Spec {
    char *version;
    char *path;
    char *name;
    bool disable_clip;
    bool enable_transform;
    bool no_prediction;
    unsigned overload_count;
    ModelOverload overloads[MODEL_MAX_OPTIONS];
} Spec;

static void spec_free(Spec *s)
{
    free(s->version);
    free(s->path);
    free(s->name);
    for (unsigned i = 0; i < s->overload_count; i++) {
        free(s->overloads[i].metric);
        free(s->overloads[i].option);
        free(s->overloads[i].value);
    }
    memset(s, 0, sizeof(*s));
}

static char *dup_range(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* An option name or value: not empty, no separator, no control character
 * (none is meaningful, and the metric would quote it in a message). */
static bool valid_option_text(const char *s)
{
    if (!*s || strchr(s, ':') || strchr(s, '=')) return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f) return false;
    return true;
}

/* A model's name= becomes output keys (NAME, NAME_ci_p95_lo, ...) in every
 * layout, XML attribute names included, which have no escapes: a letter
 * or '_', then letters, digits, '_', '-' and '.'. */
#define MODEL_MAX_NAME 128
static bool valid_model_name(const char *s)
{
    const size_t n = strlen(s);
    if (n == 0 || n > MODEL_MAX_NAME) return false;
    for (size_t i = 0; i < n; i++) {
        const char c = s[i];
        const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        const bool other = (c >= '0' && c <= '9') || c == '-' || c == '.';
        if (!letter && (i == 0 || !other)) return false;
    }
    return true;
}

static const ModelBuiltin *find_builtin(const char *version)
{
    for (unsigned i = 0; i < model_builtin_count; i++)
        if (!strcmp(model_builtins[i].version, version)) return &model_builtins[i];
    return NULL;
}

/* A bare word in a model spec that names a model ("-m vmaf_v0.6.1", "-m
 * model.json"): a built-in version or a file, version= or path= left out. */
static bool is_model_word(const char *word)
{
    return find_builtin(word) || !access(word, R_OK);
}

static int parse_spec(const char *text, Spec *s, char *error, size_t error_size)
{
    memset(s, 0, sizeof(*s));
    if (!text || !*text) text = "version=" MODEL_DEFAULT_VERSION;

    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ':');
        const size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        const size_t key_len = eq ? (size_t)(eq - p) : n;
        char *key = dup_range(p, key_len);
        char *value = eq ? dup_range(eq + 1, n - key_len - 1) : NULL;
        int err = 0;
        if (!key || (eq && !value)) {
            err = model_out_of_memory(error, error_size);
        } else if (key_len == 0) {
            err = model_set_error(error, error_size, "model \"%s\": empty option "
                            "(options are separated by ':')", text);
        } else if (!strcmp(key, "version") || !strcmp(key, "path") ||
                   !strcmp(key, "name")) {
            char **slot = key[0] == 'v' ? &s->version : key[0] == 'p' ? &s->path
                                                                    : &s->name;
            if (!value || !*value) {
                err = model_set_error(error, error_size, "model \"%s\": %s= needs a value",
                                text, key);
            } else if (*slot) {
                err = model_set_error(error, error_size, "model \"%s\": %s= given twice",
                                text, key);
            } else if (slot == &s->name && !valid_model_name(value)) {
                err = model_set_error(error, error_size, "model \"%s\": name=%s cannot name output "
                                "keys: use up to %d letters, digits, '_', '-' and '.', starting "
                                "with a letter or '_' (the name is an XML attribute, a JSON key "
                                "and a CSV column)", text, value, MODEL_MAX_NAME);
            } else {
                *slot = value;
                value = NULL;
            }
        } else if (!strcmp(key, "disable_clip") || !strcmp(key, "enable_transform") ||
                   !strcmp(key, "no_prediction")) {
            bool *flag = key[0] == 'd' ? &s->disable_clip
                         : key[0] == 'e' ? &s->enable_transform : &s->no_prediction;
            if (!value || !strcmp(value, "true"))
                *flag = true;
            else if (strcmp(value, "false"))
                err = model_set_error(error, error_size, "model \"%s\": %s takes true or "
                                "false, not \"%s\"", text, key, value);
        } else {
            /* "<metric>.<option>=<value>" overloads the metric's option for
             * every feature of the model that the metric provides. */
            const char *dot = strchr(key, '.');
            if (!value && is_model_word(key)) {
                err = model_set_error(error, error_size, "model \"%s\": did you mean %s=%s?",
                                      text, access(key, R_OK) ? "version" : "path", key);
            } else if (!dot || dot == key || !dot[1] || strchr(dot + 1, '.') || !value ||
                !valid_option_text(value)) {
                err = model_set_error(error, error_size,
                                "model \"%s\": bad option \"%s%s%s\" (expected "
                                "version=, path=, name=, disable_clip, "
                                "enable_transform, no_prediction or "
                                "<metric>.<option>=<value>)",
                                text, key, value ? "=" : "", value ? value : "");
            } else if (s->overload_count == MODEL_MAX_OPTIONS) {
                err = model_set_error(error, error_size, "model \"%s\": more than %d "
                                "feature options", text, MODEL_MAX_OPTIONS);
            } else {
                ModelOverload *o = &s->overloads[s->overload_count];
                char normal[64];
                if (model_is_numeric(value)) model_normalise_number(value, normal, sizeof(normal));
                o->metric = dup_range(key, (size_t)(dot - key));
                o->option = model_dup_string(dot + 1);
                o->value = model_dup_string(model_is_numeric(value) ? normal : value);
                s->overload_count++;
                if (!o->metric || !o->option || !o->value)
                    err = model_out_of_memory(error, error_size);
            }
        }
        free(key);
        free(value);
        if (err) {
            spec_free(s);
            return err;
        }
        if (!end) break;
        p = end + 1;
    }
    if (s->version && s->path) {
        spec_free(s);
        return model_set_error(error, error_size, "model \"%s\": give version= or "
                         "path=, not both", text);
    }
    if (!s->version && !s->path) {
        spec_free(s);
        return model_set_error(error, error_size, "model \"%s\": version= or path= is "
                         "needed", text);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Building a model from descriptions                                        */

typedef struct OptionPair {
    const char *key;
    char value[128];
} OptionPair;

static int compare_pairs(const void *a, const void *b)
{
    return strcmp(((const OptionPair *)a)->key, ((const OptionPair *)b)->key);
}

/* The options string of one feature: its feature_opts_dicts entry with the
 * spec's overloads for its metric merged over it, sorted by name. */
static int feature_options(const ModelFeatureDesc *f, const char *metric, Spec *spec,
                           char **out, char *error, size_t error_size,
                           const char *source)
{
    OptionPair pairs[2 * MODEL_MAX_OPTIONS];
    unsigned n = 0;
    for (unsigned i = 0; i < f->option_count && i < MODEL_MAX_OPTIONS; i++) {
        const ModelOptionDesc *o = &f->options[i];
        if (!valid_option_text(o->key))
            return model_set_error(error, error_size, "%s: feature %s: bad option name "
                             "\"%s\"", source, f->name, o->key);
        pairs[n].key = o->key;
        if (o->type == MODEL_OPTION_NUMBER)
            model_normalise_number(o->text, pairs[n].value, sizeof(pairs[n].value));
        else if ((size_t)snprintf(pairs[n].value, sizeof(pairs[n].value), "%s",
                                  o->text) >= sizeof(pairs[n].value))
            return model_set_error(error, error_size, "%s: feature %s: option %s: value "
                             "too long", source, f->name, o->key);
        if (!valid_option_text(pairs[n].value))
            return model_set_error(error, error_size, "%s: feature %s: option %s: bad "
                             "value \"%s\"", source, f->name, o->key, pairs[n].value);
        for (unsigned k = 0; k < n; k++)
            if (!strcmp(pairs[k].key, o->key))
                return model_set_error(error, error_size, "%s: feature %s: option %s "
                                 "given twice", source, f->name, o->key);
        n++;
    }
    for (unsigned i = 0; i < spec->overload_count; i++) {
        ModelOverload *o = &spec->overloads[i];
        if (strcmp(o->metric, metric)) continue;
        o->used = true;
        unsigned k = 0;
        while (k < n && strcmp(pairs[k].key, o->option)) k++;
        if (k == n) n++;
        pairs[k].key = o->option;
        snprintf(pairs[k].value, sizeof(pairs[k].value), "%s", o->value);
    }
    qsort(pairs, n, sizeof(*pairs), compare_pairs);

    size_t len = 1;
    for (unsigned i = 0; i < n; i++) len += strlen(pairs[i].key) + strlen(pairs[i].value) + 2;
    char *s = malloc(len);
    if (!s) return -ENOMEM;
    s[0] = '\0';
    size_t at = 0;
    for (unsigned i = 0; i < n; i++)
        at += (size_t)snprintf(s + at, len - at, "%s%s=%s", i ? ":" : "",
                               pairs[i].key, pairs[i].value);
    *out = s;
    return 0;
}

static void model_free(Model *m)
{
    if (!m) return;
    free(m->label);
    free(m->name);
    for (unsigned i = 0; i < m->part_count; i++) free(m->parts[i].input);
    free(m->parts);
    for (unsigned i = 0; i < m->input_count; i++) free(m->inputs[i].options);
    free(m->inputs);
    for (unsigned i = 0; m->outputs && i < m->output_count; i++) free(m->outputs[i]);
    free(m->outputs);
    free(m->output_ids);
    model_pool_free(&m->pool);
    json_document_free(&m->doc);
    free(m);
}

static int find_or_add_input(Model *m, const FeatureSource *src, const char *feature,
                             char *options, unsigned *index)
{
    for (unsigned i = 0; i < m->input_count; i++) {
        const ModelInput *in = &m->inputs[i];
        if (!strcmp(in->metric, src->metric) && !strcmp(in->key, src->key) &&
            !strcmp(in->options, options)) {
            free(options);
            *index = i;
            return 0;
        }
    }
    ModelInput *grown = realloc(m->inputs, (m->input_count + 1) * sizeof(*grown));
    if (!grown) {
        free(options);
        return -ENOMEM;
    }
    m->inputs = grown;
    ModelInput *in = &m->inputs[m->input_count];
    memset(in, 0, sizeof(*in));
    in->feature = feature;
    in->metric = src->metric;
    in->key = src->key;
    in->options = options;
    *index = m->input_count++;
    return 0;
}

static int build_model(Model *m, const ModelDesc *descs, unsigned count,
                       bool collection, Spec *spec, const char *source,
                       char *error, size_t error_size)
{
    if (count == 0 || count > MODEL_MAX_PARTS || (collection && count < 2))
        return model_set_error(error, error_size, "%s: %u models", source, count);
    if (collection) {
        /* libvmaf refuses a collection whose bootstrap models differ in
         * type, and scores only the bootstrap types as a collection. */
        const enum ModelType t = descs[1].type;
        for (unsigned i = 1; i < count; i++) {
            if (descs[i].type != MODEL_TYPE_BOOTSTRAP_SVM_NUSVR &&
                descs[i].type != MODEL_TYPE_RESIDUE_BOOTSTRAP_SVM_NUSVR)
                return model_set_error(error, error_size, "%s: model \"%u\" of the "
                                 "collection is not a bootstrap model (model_type "
                                 "BOOTSTRAP_LIBSVMNUSVR or "
                                 "RESIDUEBOOTSTRAP_LIBSVMNUSVR)", source, i);
            if (descs[i].type != t)
                return model_set_error(error, error_size, "%s: the bootstrap models "
                                 "are not all of the same model_type", source);
        }
    }

    m->collection = collection;
    m->parts = calloc(count, sizeof(*m->parts));
    if (!m->parts) return -ENOMEM;
    m->part_count = count;

    for (unsigned p = 0; p < count; p++) {
        const ModelDesc *d = &descs[p];
        ModelPart *part = &m->parts[p];
        part->desc = d;
        if (d->feature_count == 0 || d->feature_count > MODEL_MAX_FEATURES ||
            d->svm.dimension != d->feature_count || !d->svm.coef || !d->svm.sv ||
            (d->norm == MODEL_NORM_LINEAR_RESCALE && (!d->slopes || !d->intercepts)) ||
            (d->transform.knot_count && !d->transform.knots))
            return model_set_error(error, error_size, "%s: inconsistent model "
                             "description (model %u)", source, p);
        part->input = calloc(d->feature_count, sizeof(*part->input));
        if (!part->input) return -ENOMEM;
        for (unsigned i = 0; i < d->feature_count; i++) {
            const ModelFeatureDesc *f = &d->features[i];
            FeatureSource found;
            const FeatureSource *src = &found;
            if (!find_feature_source(f->name, &found))
                return model_set_error(error, error_size, "%s: unknown feature \"%s\" "
                                 "(no metric provides it)", source, f->name);
            char *options = NULL;
            int err = feature_options(f, src->metric, spec, &options, error,
                                      error_size, source);
            if (err) return err;
            err = find_or_add_input(m, src, f->name, options, &part->input[i]);
            if (err) return err;
        }
        /* libvmaf applies the flags while reading the file: enable_transform
         * switches on a score_transform the model has, disable_clip leaves
         * score_clip off. */
        part->transform = d->transform.enabled ||
                          (d->transform.present && spec->enable_transform);
        part->clip = d->clip_present && !spec->disable_clip;
    }

    m->output_count = collection ? count + 4 : 1;
    m->outputs = calloc(m->output_count, sizeof(*m->outputs));
    m->output_ids = calloc(m->output_count, sizeof(*m->output_ids));
    if (!m->outputs || !m->output_ids) return -ENOMEM;
    const size_t size = strlen(m->name) + 16;
    for (unsigned i = 0; i < m->output_count; i++) {
        m->outputs[i] = malloc(size);
        if (!m->outputs[i]) return -ENOMEM;
        static const char *const suffixes[4] = { "_bagging", "_stddev",
                                                 "_ci_p95_lo", "_ci_p95_hi" };
        if (i == 0)
            snprintf(m->outputs[i], size, "%s", m->name);
        else if (i < count)
            snprintf(m->outputs[i], size, "%s_%04u", m->name, i);
        else
            snprintf(m->outputs[i], size, "%s%s", m->name, suffixes[i - count]);
    }
    return 0;
}

/* "unknown model version", every built-in version, and the nearest. */
static int unknown_version(const char *version, char *error, size_t error_size)
{
    const char *names[64];
    unsigned count = 0;
    size_t list_size = 1;
    for (; count < model_builtin_count && count < QUALE_ARRAY_SIZE(names); count++) {
        names[count] = model_builtins[count].version;
        list_size += strlen(names[count]) + 2;
    }
    char *list = calloc(1, list_size);
    if (!list) return model_out_of_memory(error, error_size);
    size_t at = 0;
    for (unsigned i = 0; i < count; i++)
        at += (size_t)snprintf(list + at, list_size - at, "%s%s", i ? ", " : "", names[i]);
    char meant[256];
    if (nearest_names(version, names, count, meant, sizeof(meant)))
        model_set_error(error, error_size, "unknown model version \"%s\" (did you mean %s?); "
                        "the built-in versions are: %s", version, meant, list);
    else
        model_set_error(error, error_size, "unknown model version \"%s\"; the built-in "
                        "versions are: %s", version, list);
    free(list);
    return -EINVAL;
}

/* Loads spec into a new model; error gets one line on failure. */
static int load(Model **out, Spec *spec, char *error, size_t error_size)
{
    *out = NULL;
    Model *m = calloc(1, sizeof(*m));
    if (!m) return model_out_of_memory(error, error_size);
    m->label = model_dup_string(spec->version ? spec->version : spec->path);
    m->name = model_dup_string(spec->name ? spec->name : "vmaf");
    if (!m->label || !m->name) {
        model_free(m);
        return model_out_of_memory(error, error_size);
    }

    int err;
    if (spec->version) {
        const ModelBuiltin *b = find_builtin(spec->version);
        if (!b) {
            model_free(m);
            return unknown_version(spec->version, error, error_size);
        }
        char source[128];
        snprintf(source, sizeof(source), "built-in model %s", b->version);
        err = build_model(m, b->models, b->model_count, b->collection, spec, source,
                          error, error_size);
    } else {
        char *text = NULL;
        size_t length = 0;
        char why[256];
        err = json_read_file(spec->path, MODEL_MAX_FILE_SIZE, &text, &length, why,
                             sizeof(why));
        if (err) {
            model_free(m);
            model_set_error(error, error_size, "cannot read model file %s", why);
            return err;
        }
        JsonDocument *doc = NULL;
        JsonError jerr;
        err = json_parse(&doc, text, length, NULL, &jerr);
        if (err) {
            model_set_error(error, error_size, "model file %s:%u:%u: %s", spec->path,
                      jerr.line, jerr.column, jerr.message);
            free(text);
            model_free(m);
            return err;
        }
        char source[300];
        snprintf(source, sizeof(source), "model file %s", spec->path);
        ModelDesc *descs = NULL;
        unsigned count = 0;
        bool collection = false;
        /* The descriptions point into the document's strings: the model
         * keeps the document until it is freed. */
        m->doc = doc;
        err = model_file_descriptions(source, spec->path, text, length, &m->pool,
                                      json_document_root(doc), model_feature_known, &descs,
                                      &count, &collection, error, error_size);
        if (!err)
            err = build_model(m, descs, count, collection, spec, source, error,
                              error_size);
        free(text);
    }
    if (err) {
        if (err == -ENOMEM && error && error_size && !error[0])
            model_set_error(error, error_size, "out of memory");
        model_free(m);
        return err;
    }
    *out = m;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Public interface                                                          */

int model_load(Model **model, const char *spec_text, char *error, size_t error_size)
{
    if (error && error_size) error[0] = '\0';
    if (!model) return model_set_error(error, error_size, "no model pointer");
    *model = NULL;
    Spec spec;
    int err = parse_spec(spec_text, &spec, error, error_size);
    if (err) return err;
    err = load(model, &spec, error, error_size);
    spec_free(&spec);
    return err;
}

int model_open(Model **model, const ModelHost *host, const char *spec_text)
{
    char error[1024] = ""; /* as long as a log line: every built-in version fits */
    if (!model) return -EINVAL;
    *model = NULL;

    Spec spec;
    int err = parse_spec(spec_text, &spec, error, sizeof(error));
    if (!err) err = load(model, &spec, error, sizeof(error));
    if (err) {
        log_sink_print(host->log, QUALE_LOG_ERROR, "%s", error[0] ? error : "cannot load model");
        spec_free(&spec);
        return err;
    }
    Model *m = *model;
    m->no_prediction = spec.no_prediction;
    m->host = *host;

    for (unsigned i = 0; i < spec.overload_count; i++)
        if (!spec.overloads[i].used)
            log_sink_print(host->log, QUALE_LOG_WARNING, "model %s: no feature of the "
                        "model comes from metric \"%s\"; %s.%s=%s has no effect",
                        m->label, spec.overloads[i].metric, spec.overloads[i].metric,
                        spec.overloads[i].option, spec.overloads[i].value);
    spec_free(&spec);

    for (unsigned i = 0; i < m->input_count; i++) {
        ModelInput *in = &m->inputs[i];
        err = host->request_metric(host->context, in->metric, in->options, &in->instance);
        if (err) {
            log_sink_print(host->log, QUALE_LOG_ERROR, "model %s: cannot use metric \"%s\"%s%s%s "
                        "for feature %s", m->label, in->metric,
                        in->options[0] ? " with options \"" : "", in->options,
                        in->options[0] ? "\"" : "", in->feature);
            model_close(model);
            return err;
        }
    }
    return 0;
}

int model_declare_keys(Model *m, FeatureSink *sink, enum ModelKeyGroup group)
{
    if (!m || !sink) return -EINVAL;
    if (group != MODEL_KEYS_MAIN && group != MODEL_KEYS_COLLECTION) return -EINVAL;
    if (m->declared[group]) return 0;
    const unsigned from = group == MODEL_KEYS_MAIN ? 0 : 1;
    const unsigned to = group == MODEL_KEYS_MAIN ? 1 : m->output_count;
    for (unsigned i = from; i < to; i++) {
        const int err = feature_sink_declare_model(sink, m->outputs[i], &m->output_ids[i]);
        if (err) {
            feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: cannot declare "
                             "key %s", m->label, m->outputs[i]);
            return err;
        }
    }
    m->declared[group] = true;
    return 0;
}

/* The ids of the inputs' keys, known once the metrics are initialised. */
static int resolve_inputs(Model *m, FeatureSink *sink)
{
    if (m->resolved) return 0;
    for (unsigned i = 0; i < m->input_count; i++) {
        ModelInput *in = &m->inputs[i];
        if (!in->instance || !m->host.instance_key) {
            feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: loaded without a "
                             "context, it has no metrics to read", m->label);
            return -EINVAL;
        }
        const int err = m->host.instance_key(in->instance, in->key, &in->id);
        if (err) {
            feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: metric \"%s\" has "
                             "no key \"%s\" (for feature %s)", m->label, in->metric,
                             in->key, in->feature);
            return err;
        }
    }
    m->resolved = true;
    return 0;
}

void model_restart(Model *m)
{
    if (!m) return;
    m->frames_done = 0;
    m->warned_shared_key = false;
}

int model_predict(Model *m, FeatureSink *sink, unsigned frame_count,
                  unsigned subsample)
{
    if (!m || !sink) return -EINVAL;
    int err = model_declare_keys(m, sink, MODEL_KEYS_MAIN);
    if (!err && m->collection) err = model_declare_keys(m, sink, MODEL_KEYS_COLLECTION);
    if (!err) err = resolve_inputs(m, sink);
    if (err) return err;

    double *inputs = malloc((m->input_count + m->output_count) * sizeof(double));
    if (!inputs) return -ENOMEM;
    double *outputs = inputs + m->input_count;

    for (unsigned f = m->frames_done; f < frame_count; f++) {
        if (subsample > 1 && f % subsample) continue;
        for (unsigned i = 0; i < m->input_count; i++) {
            const ModelInput *in = &m->inputs[i];
            err = feature_sink_get(sink, in->id, f, &inputs[i]);
            if (err) {
                char key[256];
                if (!m->host.instance_key_name ||
                    m->host.instance_key_name(in->instance, in->key, key, sizeof(key)))
                    snprintf(key, sizeof(key), "%s", in->key);
                feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: no value of "
                                 "%s at frame %u", m->label, key, f);
                goto done;
            }
        }
        err = model_predict_features(m, inputs, outputs);
        if (err) goto done;

        for (unsigned o = 0; o < m->output_count; o++) {
            double existing;
            if (!feature_sink_get(sink, m->output_ids[o], f, &existing)) {
                /* libvmaf keeps the first score of a model name that two
                 * models share; its collections fail on the clash. */
                if (o == 0) {
                    if (!m->warned_shared_key)
                        feature_sink_log(sink, QUALE_LOG_WARNING, "model %s: key "
                                         "%s already holds another model's "
                                         "scores, kept (give the models "
                                         "different names with name=)",
                                         m->label, m->outputs[0]);
                    m->warned_shared_key = true;
                    continue;
                }
                feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: key %s at "
                                 "frame %u was already written by another model "
                                 "(give the models different names with name=)",
                                 m->label, m->outputs[o], f);
                err = -EEXIST;
                goto done;
            }
            err = feature_sink_put(sink, m->output_ids[o], f, outputs[o]);
            if (err) {
                feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: cannot store "
                                 "%s at frame %u", m->label, m->outputs[o], f);
                goto done;
            }
        }
        m->frames_done = f + 1;
    }
    if (frame_count > m->frames_done) m->frames_done = frame_count;

done:
    free(inputs);
    return err;
}

bool model_predicts(const Model *m)
{
    return m && !m->no_prediction;
}

const char *model_name(const Model *m)
{
    return m ? m->name : NULL;
}

const char *model_label(const Model *m)
{
    return m ? m->label : NULL;
}

int model_is_bootstrap(const Model *m)
{
    return m && m->collection;
}

void model_close(Model **model)
{
    if (!model || !*model) return;
    model_free(*model);
    *model = NULL;
}

const char *const *model_builtin_versions(void)
{
    return model_builtin_version_list;
}

/* The viewing condition each built-in model was trained for (libvmaf's
 * models_v0.md and models_v1.md). */
static const struct {
    const char *version;
    const char *condition;
} builtin_conditions[] = {
    { "vmaf_v0.6.1", "1080p display at 3H (v0 default)" },
    { "vmaf_v0.6.1neg", "1080p at 3H, no gain from enhancement (v0)" },
    { "vmaf_4k_v0.6.1", "4K display at 1.5H (v0)" },
    { "vmaf_4k_v0.6.1neg", "4K at 1.5H, no gain from enhancement (v0)" },
    { "vmaf_b_v0.6.3", "1080p at 3H, with a 95% confidence interval (v0)" },
    { "vmaf_v1.0.16_3d0h", "1080p display at 3H (v1 standard)" },
    { "vmaf_v1.0.16_5d0h", "phone: 1080p at 5H (v1)" },
    { "vmaf_v1.0.16_1d5h_2160", "4K display at 1.5H (v1 4K default)" },
    { "vmaf_v1.0.16_3d0h_2160", "4K consumer TV at 3H, to 110 (v1)" },
    { "vmaf_v1.0.16_hfr_3d0h", "HFR (50-60 fps), 1080p at 3H (v1)" },
    { "vmaf_v1.0.16_hfr_5d0h", "HFR (50-60 fps), phone at 5H (v1)" },
    { "vmaf_v1.0.16_hfr_1d5h_2160", "HFR (50-60 fps), 4K at 1.5H (v1)" },
    { "vmaf_v1.0.16_hfr_3d0h_2160", "HFR (50-60 fps), 4K TV at 3H, to 110 (v1)" },
    { "vmaf_float_v0.6.1", "1080p at 3H, float features (v0)" },
    { "vmaf_float_v0.6.1neg", "1080p at 3H, float, no enhancement gain (v0)" },
    { "vmaf_float_4k_v0.6.1", "4K at 1.5H, float features (v0)" },
    { "vmaf_float_b_v0.6.3", "1080p at 3H, float, confidence interval (v0)" },
};

int model_builtin_describe(const char *version, QualeBuiltinModelInfo *info)
{
    memset(info, 0, sizeof(*info));
    const ModelBuiltin *b = NULL;
    for (unsigned i = 0; i < model_builtin_count && !b; i++)
        if (!strcmp(model_builtins[i].version, version)) b = &model_builtins[i];
    if (!b) return -EINVAL;
    info->version = b->version;
    info->condition = "";
    for (size_t i = 0; i < QUALE_ARRAY_SIZE(builtin_conditions); i++)
        if (!strcmp(builtin_conditions[i].version, version))
            info->condition = builtin_conditions[i].condition;
    info->bootstrap = b->collection;
    const ModelDesc *d = &b->models[0];
    if (d->clip_present) {
        info->score_min = d->clip_min;
        info->score_max = d->clip_max;
    }
    /* The metrics of its features, each once, in the model's order. */
    size_t len = 0;
    for (unsigned f = 0; f < d->feature_count; f++) {
        FeatureSource src, other;
        if (!find_feature_source(d->features[f].name, &src)) continue;
        bool seen = false;
        for (unsigned g = 0; g < f && !seen; g++)
            seen = find_feature_source(d->features[g].name, &other) &&
                   !strcmp(other.metric, src.metric);
        if (seen || len >= sizeof(info->features)) continue;
        len += (size_t)snprintf(info->features + len, sizeof(info->features) - len, "%s%s",
                                len ? ", " : "", src.metric);
    }
    return 0;
}

unsigned model_input_count(const Model *m)
{
    return m ? m->input_count : 0;
}

int model_input(const Model *m, unsigned index, const char **metric,
                const char **options, const char **key)
{
    if (!m || index >= m->input_count) return -EINVAL;
    if (metric) *metric = m->inputs[index].metric;
    if (options) *options = m->inputs[index].options;
    if (key) *key = m->inputs[index].key;
    return 0;
}

unsigned model_output_count(const Model *m)
{
    return m ? m->output_count : 0;
}

const char *model_output_name(const Model *m, unsigned index)
{
    return m && index < m->output_count ? m->outputs[index] : NULL;
}
