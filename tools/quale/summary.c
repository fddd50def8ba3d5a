/*
 * The summary a run prints (summary.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "model_choice.h"
#include "summary.h"

/* The values after the models' lines: "psnr_y (p1)" and its value. */
typedef struct Entries {
    char (*label)[96];
    double *value;
    unsigned count, capacity;
} Entries;

static void entry_add(Entries *e, const char *key, const char *method, double value)
{
    if (e->count == e->capacity) {
        const unsigned capacity = e->capacity ? 2 * e->capacity : 32;
        char(*label)[96] = realloc(e->label, capacity * sizeof(*label));
        if (label) e->label = label;
        double *values = realloc(e->value, capacity * sizeof(*values));
        if (values) e->value = values;
        if (!label || !values) return; /* a summary without the rest */
        e->capacity = capacity;
    }
    if (method && strcmp(method, "mean"))
        snprintf(e->label[e->count], sizeof(e->label[0]), "%s (%s)", key, method);
    else
        snprintf(e->label[e->count], sizeof(e->label[0]), "%s", key);
    e->value[e->count++] = value;
}

static unsigned terminal_columns(FILE *f)
{
    struct winsize w;
    if (!ioctl(fileno(f), TIOCGWINSZ, &w) && w.ws_col >= 20) return w.ws_col;
    return 80;
}

/* "key: value" a line each, as libvmaf prints a run without a model; on a
 * terminal as many "key  value" cells to a line as fit. */
static void entries_print(FILE *f, const Entries *e)
{
    if (!isatty(fileno(f))) {
        for (unsigned i = 0; i < e->count; i++) fprintf(f, "%s: %f\n", e->label[i], e->value[i]);
        return;
    }
    size_t widest = 0;
    for (unsigned i = 0; i < e->count; i++)
        if (strlen(e->label[i]) > widest) widest = strlen(e->label[i]);
    char value[64];
    size_t value_width = 0;
    for (unsigned i = 0; i < e->count; i++) {
        const size_t n = (size_t)snprintf(value, sizeof(value), "%f", e->value[i]);
        if (n > value_width) value_width = n;
    }
    const size_t cell = widest + 2 + value_width, gap = 4;
    const size_t per_line = (terminal_columns(f) + gap) / (cell + gap);
    const unsigned columns = per_line ? (unsigned)per_line : 1u;
    for (unsigned i = 0; i < e->count; i++) {
        const bool last = (i + 1) % columns == 0 || i + 1 == e->count;
        fprintf(f, "%-*s  %*f%s", (int)widest, e->label[i], (int)value_width, e->value[i],
                last ? "\n" : "    ");
    }
}

static int pooled(const SummarySource *src, const char *key, const char *method, double *value)
{
    return src->results ? quale_results_pooled_by(src->results, key, method, value)
                        : quale_feature_pooled_by(src->ctx, key, method, value);
}

/* A key that a metric asked for with --feature writes: one of its keys, or
 * one of them named for its options ("integer_adm2_egl_1"). */
static bool key_of_feature(const char *key, const QualeMetricInfo *metric)
{
    for (const char *const *k = metric->keys; k && *k; k++) {
        const size_t n = strlen(*k);
        if (!strncmp(key, *k, n) && (key[n] == '\0' || key[n] == '_')) return true;
    }
    return false;
}

static bool key_asked_for(const CliSettings *s, const char *key)
{
    for (unsigned i = 0; i < s->feature_count; i++) {
        const size_t name_len = strcspn(s->features[i], "=");
        for (unsigned m = 0; m < quale_metric_count(); m++) {
            QualeMetricInfo info;
            if (quale_metric_info(m, &info) || strlen(info.name) != name_len ||
                strncmp(info.name, s->features[i], name_len))
                continue;
            if (key_of_feature(key, &info)) return true;
        }
    }
    return false;
}

/* Every key of src (only the features asked for in asked, unless NULL),
 * pooled by each method (none: the mean). */
static void add_pooled_keys(Entries *e, const SummarySource *src, const CliSettings *asked,
                            const char *const *pools, unsigned pool_count)
{
    const unsigned keys = src->results ? quale_results_key_count(src->results)
                                       : quale_feature_count(src->ctx);
    const unsigned methods = pool_count ? pool_count : 1;
    for (unsigned k = 0; k < keys; k++) {
        const char *name = src->results ? quale_results_key_name(src->results, k)
                                        : quale_feature_name(src->ctx, k);
        if (asked && !key_asked_for(asked, name)) continue;
        for (unsigned m = 0; m < methods; m++) {
            const char *method = pool_count ? pools[m] : "mean";
            double v;
            if (!pooled(src, name, method, &v)) entry_add(e, name, method, v);
        }
    }
}

/* libvmaf's lines for one model. */
static void print_model(FILE *f, const CliSettings *s, const SummarySource *src,
                        const QualeModelInfo *info)
{
    char title[256];
    model_title(info, title, sizeof(title));
    double mean;
    /* --pool: FFmpeg's pool=, each method on a line of its own */
    for (unsigned m = 0; m < s->pool_count; m++) {
        double v;
        if (pooled(src, info->name, s->pools[m], &v)) continue;
        if (strcmp(s->pools[m], "mean")) fprintf(f, "%s (%s): %f\n", title, s->pools[m], v);
        else fprintf(f, "%s: %f\n", title, v);
    }
    if (s->pool_count || pooled(src, info->name, "mean", &mean)) return;
    /* the mean of every model, then for a bootstrap collection its bagged
     * score and confidence interval */
    fprintf(f, "%s: %f\n", title, mean);
    if (!info->bootstrap) return;
    static const char *const suffixes[] = { "_bagging", "_ci_p95_lo", "_ci_p95_hi", "_stddev" };
    double v[4] = { 0, 0, 0, 0 };
    for (unsigned i = 0; i < 4; i++) {
        char key[256];
        snprintf(key, sizeof(key), "%s%s", info->name, suffixes[i]);
        pooled(src, key, "mean", &v[i]);
    }
    fprintf(f, "%s: %f, ci.p95: [%f, %f], stddev: %f\n", title, v[0], v[1], v[2], v[3]);
}

void print_summary(FILE *f, const CliSettings *s, const SummarySource *src)
{
    if (src->segment)
        fprintf(f, "part %u of %u (frames %u to %u):\n", src->segment->part,
                src->segment->parts, src->segment->first, src->segment->end - 1);
    const unsigned models = s->no_prediction ? 0 : src->model_count;
    for (unsigned i = 0; i < models; i++) print_model(f, s, src, &src->models[i]);
    /* then the features asked for; without a model, every key */
    Entries e = { 0 };
    add_pooled_keys(&e, src, models ? s : NULL, s->pools, s->pool_count);
    entries_print(f, &e);
    free(e.label);
    free(e.value);
}

void print_pooled_keys(FILE *f, const QualeResults *results, const char *const *pools,
                       unsigned pool_count)
{
    const SummarySource src = { .results = results };
    Entries e = { 0 };
    add_pooled_keys(&e, &src, NULL, pools, pool_count);
    entries_print(f, &e);
    free(e.label);
    free(e.value);
}
