#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "json.h"
#include "common.h"
#include "log.h"

typedef struct KeyRow {
    char *name;
    const void *owner; /* who declared it (NULL: anyone may write it) */
    enum KeyPhase phase;
    double *values;
    uint8_t *written;
} KeyRow;

typedef struct Aggregate {
    char *name;
    double value;
} Aggregate;

struct Collector {
    pthread_mutex_t lock;
    KeyRow *rows;
    unsigned row_count, row_capacity;
    unsigned *order; /* row ids in output order: by phase, then declaration */
    unsigned frame_capacity; /* every row holds this many frames */
    unsigned frame_span;
    unsigned base;           /* the frame a row's first slot holds */
    Aggregate *aggregates;
    unsigned aggregate_count;
};

/* Readers take the lock too: a const collector is const to its callers,
 * not to the mutex inside it. */
static pthread_mutex_t *lock_of(const Collector *c)
{
    return (pthread_mutex_t *)&c->lock;
}

int collector_open(Collector **out)
{
    Collector *c = calloc(1, sizeof(*c));
    if (!c) return -ENOMEM;
    if (pthread_mutex_init(&c->lock, NULL)) {
        free(c);
        return -ENOMEM;
    }
    *out = c;
    return 0;
}

void collector_close(Collector **pc)
{
    Collector *c = pc ? *pc : NULL;
    if (!c) return;
    for (unsigned i = 0; i < c->row_count; i++) {
        free(c->rows[i].name);
        free(c->rows[i].values);
        free(c->rows[i].written);
    }
    for (unsigned i = 0; i < c->aggregate_count; i++) free(c->aggregates[i].name);
    free(c->aggregates);
    free(c->rows);
    free(c->order);
    pthread_mutex_destroy(&c->lock);
    free(c);
    *pc = NULL;
}

void collector_clear(Collector *c)
{
    pthread_mutex_lock(&c->lock);
    for (unsigned i = 0; i < c->row_count; i++)
        if (c->rows[i].written) memset(c->rows[i].written, 0, c->frame_capacity);
    c->frame_span = 0;
    for (unsigned i = 0; i < c->aggregate_count; i++) free(c->aggregates[i].name);
    free(c->aggregates);
    c->aggregates = NULL;
    c->aggregate_count = 0;
    pthread_mutex_unlock(&c->lock);
}

static int find_locked(const Collector *c, const char *key, unsigned *id)
{
    for (unsigned i = 0; i < c->row_count; i++) {
        if (!strcmp(c->rows[i].name, key)) {
            *id = i;
            return 0;
        }
    }
    return -ENOENT;
}

static int grow_row(KeyRow *row, unsigned old_cap, unsigned new_cap)
{
    double *v = realloc(row->values, sizeof(*v) * new_cap);
    if (!v) return -ENOMEM;
    row->values = v;
    uint8_t *w = realloc(row->written, new_cap);
    if (!w) return -ENOMEM;
    row->written = w;
    memset(w + old_cap, 0, new_cap - old_cap);
    return 0;
}

int collector_declare(Collector *c, const char *key, const void *owner, enum KeyPhase phase,
                      unsigned *id)
{
    pthread_mutex_lock(&c->lock);
    int err = find_locked(c, key, id);
    if (!err) {
        /* Two writers of one key would mix their values frame by frame. */
        if (owner && c->rows[*id].owner && c->rows[*id].owner != owner) err = -EEXIST;
        else if (owner) c->rows[*id].owner = owner;
        goto out;
    }
    if (c->row_count == c->row_capacity) {
        const unsigned cap = c->row_capacity ? 2 * c->row_capacity : 32;
        KeyRow *rows = realloc(c->rows, sizeof(*rows) * cap);
        if (!rows) {
            err = -ENOMEM;
            goto out;
        }
        c->rows = rows;
        unsigned *order = realloc(c->order, sizeof(*order) * cap);
        if (!order) {
            err = -ENOMEM;
            goto out;
        }
        c->order = order;
        c->row_capacity = cap;
    }
    KeyRow *row = &c->rows[c->row_count];
    memset(row, 0, sizeof(*row));
    row->name = strdup(key);
    row->owner = owner;
    row->phase = phase;
    err = row->name ? grow_row(row, 0, c->frame_capacity) : -ENOMEM;
    if (err) {
        free(row->name);
        free(row->values);
        free(row->written);
        goto out;
    }
    *id = c->row_count++;
    /* After every key of its phase or an earlier one. */
    unsigned at = *id;
    while (at > 0 && c->rows[c->order[at - 1]].phase > phase) {
        c->order[at] = c->order[at - 1];
        at--;
    }
    c->order[at] = *id;
out:
    pthread_mutex_unlock(&c->lock);
    return err;
}

int collector_find(const Collector *c, const char *key, unsigned *id)
{
    pthread_mutex_lock(lock_of(c));
    const int err = find_locked(c, key, id);
    pthread_mutex_unlock(lock_of(c));
    return err;
}

/* Whether row holds a value of frame; *at is its slot (rows start at the
 * collector's base). */
static bool stored(const Collector *c, const KeyRow *row, unsigned frame, unsigned *at)
{
    if (frame < c->base || frame - c->base >= c->frame_capacity) return false;
    *at = frame - c->base;
    return row->written[*at];
}

int collector_put(Collector *c, unsigned id, unsigned frame, double value)
{
    int err = 0;
    pthread_mutex_lock(&c->lock);
    if (id >= c->row_count) {
        err = -EINVAL;
        goto out;
    }
    if (frame < c->base) {
        err = -ERANGE;
        goto out;
    }
    const unsigned at = frame - c->base;
    if (at >= c->frame_capacity) {
        if (frame >= UINT32_MAX / 2) {
            err = -ERANGE;
            goto out;
        }
        unsigned cap = c->frame_capacity ? c->frame_capacity : 256;
        while (cap <= at) cap *= 2;
        for (unsigned i = 0; i < c->row_count && !err; i++)
            err = grow_row(&c->rows[i], c->frame_capacity, cap);
        if (err) goto out;
        c->frame_capacity = cap;
    }
    c->rows[id].values[at] = value;
    c->rows[id].written[at] = 1;
    if (frame >= c->frame_span) c->frame_span = frame + 1;
out:
    pthread_mutex_unlock(&c->lock);
    return err;
}

int collector_get(const Collector *c, unsigned id, unsigned frame, double *value)
{
    int err = -ENOENT;
    pthread_mutex_lock(lock_of(c));
    unsigned at;
    if (id < c->row_count && stored(c, &c->rows[id], frame, &at)) {
        *value = c->rows[id].values[at];
        err = 0;
    }
    pthread_mutex_unlock(lock_of(c));
    return err;
}

int collector_set_aggregate(Collector *c, const char *key, double value)
{
    int err = 0;
    pthread_mutex_lock(&c->lock);
    for (unsigned i = 0; i < c->aggregate_count; i++) {
        if (!strcmp(c->aggregates[i].name, key)) {
            c->aggregates[i].value = value;
            goto out;
        }
    }
    Aggregate *a = realloc(c->aggregates, sizeof(*a) * (c->aggregate_count + 1));
    if (!a) {
        err = -ENOMEM;
        goto out;
    }
    c->aggregates = a;
    a[c->aggregate_count].name = strdup(key);
    if (!a[c->aggregate_count].name) {
        err = -ENOMEM;
        goto out;
    }
    a[c->aggregate_count++].value = value;
out:
    pthread_mutex_unlock(&c->lock);
    return err;
}

unsigned collector_key_count(const Collector *c)
{
    return c->row_count;
}

const char *collector_key_name(const Collector *c, unsigned id)
{
    return id < c->row_count ? c->rows[id].name : NULL;
}

unsigned collector_output_key(const Collector *c, unsigned position)
{
    return position < c->row_count ? c->order[position] : position;
}

int collector_set_base(Collector *c, unsigned base)
{
    if (c->frame_capacity) return -EBUSY;
    c->base = base;
    return 0;
}

unsigned collector_frame_span(const Collector *c)
{
    return c->frame_span;
}

bool collector_frame_has_values(const Collector *c, unsigned frame)
{
    unsigned at;
    for (unsigned i = 0; i < c->row_count; i++)
        if (stored(c, &c->rows[i], frame, &at)) return true;
    return false;
}

unsigned collector_aggregate_count(const Collector *c)
{
    return c->aggregate_count;
}

void collector_aggregate(const Collector *c, unsigned i, const char **key,
                         double *value)
{
    *key = c->aggregates[i].name;
    *value = c->aggregates[i].value;
}

static int pool_frames(const Collector *c, unsigned id, enum QualePool method, unsigned first,
                       unsigned end, unsigned subsample, double *value)
{
    if (id >= c->row_count || first >= end) return -EINVAL;
    const KeyRow *row = &c->rows[id];
    unsigned n = 0;
    double min = 0., max = 0., sum = 0., inverse_sum = 0.;
    for (unsigned i = first; i < end; i++) {
        if (subsample > 1 && i % subsample) continue;
        unsigned at;
        if (!stored(c, row, i, &at)) return -ENOENT;
        const double x = row->values[at];
        sum += x;
        inverse_sum += 1. / (x + 1.);
        if (n == 0 || x < min) min = x;
        if (n == 0 || x > max) max = x;
        n++;
    }
    if (n == 0) return -ENOENT; /* a range of frames --subsample left out */
    switch (method) {
    case QUALE_POOL_MIN: *value = min; return 0;
    case QUALE_POOL_MAX: *value = max; return 0;
    case QUALE_POOL_MEAN: *value = sum / n; return 0;
    case QUALE_POOL_HARMONIC_MEAN: *value = n / inverse_sum - 1.0; return 0;
    }
    return -EINVAL;
}

int pool_method_parse(const char *name, PoolMethod *method)
{
    static const char *const plain[] = { "min", "max", "mean", "harmonic_mean" };
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, plain[i])) {
            *method = (PoolMethod){ .kind = POOL_PLAIN, .plain = (enum QualePool)i };
            return 0;
        }
    const bool percentile = name[0] == 'p';
    const char *digits = percentile ? name + 1 : !strncmp(name, "low", 3) ? name + 3 : NULL;
    /* A decimal number as it is written in the key it names, one spelling
     * per share: digits without a leading zero (but "0.5"), then maybe a
     * fraction without a trailing one; no sign, exponent, hexadecimal
     * ("p0x10" is not p16), infinity or spaces. */
    if (!digits) return -EINVAL;
    const size_t whole = strspn(digits, "0123456789");
    if (whole == 0 || (digits[0] == '0' && whole > 1)) return -EINVAL;
    if (digits[whole]) {
        const size_t fraction = strspn(digits + whole + 1, "0123456789");
        if (digits[whole] != '.' || fraction == 0 || digits[whole + 1 + fraction] ||
            digits[whole + fraction] == '0')
            return -EINVAL;
    }
    char *end;
    const double share = json_strtod(digits, &end);
    if (*end || !(share > 0.) || !(share < 100.)) return -EINVAL;
    *method = (PoolMethod){ .kind = percentile ? POOL_PERCENTILE : POOL_LOW, .share = share };
    return 0;
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The percentile (linear between the closest ranks, as numpy's default)
 * or the mean of the lowest share of the values, which are sorted here. */
static double order_statistic(double *x, size_t n, const PoolMethod *m)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(x[i])) return NAN;
    qsort(x, n, sizeof(*x), compare_doubles);
    if (m->kind == POOL_PERCENTILE) {
        const double h = (double)(n - 1) * m->share / 100.;
        const size_t lo = (size_t)h;
        const double frac = h - (double)lo;
        return lo + 1 < n ? x[lo] + frac * (x[lo + 1] - x[lo]) : x[lo];
    }
    size_t k = (size_t)ceil((double)n * m->share / 100.);
    if (k < 1) k = 1;
    if (k > n) k = n;
    double sum = 0.;
    for (size_t i = 0; i < k; i++) sum += x[i];
    return sum / (double)k;
}

int collector_pool_method(const Collector *c, unsigned id, const PoolMethod *method,
                          unsigned first, unsigned end, unsigned subsample, double *value)
{
    if (method->kind == POOL_PLAIN)
        return collector_pool_range(c, id, method->plain, first, end, subsample, value);
    if (id >= c->row_count || first >= end) return -EINVAL;
    pthread_mutex_lock(lock_of(c));
    const KeyRow *row = &c->rows[id];
    double *x = malloc(sizeof(*x) * (end - first));
    size_t n = 0;
    int err = x ? 0 : -ENOMEM;
    for (unsigned i = first; i < end && !err; i++) {
        if (subsample > 1 && i % subsample) continue;
        unsigned at;
        if (!stored(c, row, i, &at)) err = -ENOENT;
        else x[n++] = row->values[at];
    }
    pthread_mutex_unlock(lock_of(c));
    if (!err && n == 0) err = -ENOENT;
    if (!err) *value = order_statistic(x, n, method);
    free(x);
    return err;
}

int collector_pool(const Collector *c, unsigned id, enum QualePool method,
                   unsigned frame_count, unsigned subsample, double *value)
{
    return pool_frames(c, id, method, 0, frame_count, subsample, value);
}

int collector_pool_range(const Collector *c, unsigned id, enum QualePool method,
                         unsigned first, unsigned end, unsigned subsample, double *value)
{
    pthread_mutex_lock(lock_of(c));
    const int err = pool_frames(c, id, method, first, end, subsample, value);
    pthread_mutex_unlock(lock_of(c));
    return err;
}

/* ---- the metric-facing view ------------------------------------------- */

static int declare(FeatureSink *sink, const char *name, enum KeyPhase phase, unsigned *id)
{
    const int err = collector_declare(sink->collector, name, sink->owner, phase, id);
    if (err == -EEXIST) {
        char request[256] = "a model";
        if (sink->name) options_describe(sink->name, sink->options, sink->state, request,
                                         sizeof(request));
        feature_sink_log(sink, QUALE_LOG_ERROR, "'%s' would write the key '%s', which another "
                         "request of this run writes; one run cannot hold both", request, name);
    }
    return err;
}

static int declare_suffixed(FeatureSink *sink, const char *key, enum KeyPhase phase,
                            unsigned *id)
{
    char name[256];
    int err = option_key_name(sink->options, sink->state, key, name, sizeof(name));
    if (err) return err;
    return declare(sink, name, phase, id);
}

int feature_sink_declare(FeatureSink *sink, const char *key, unsigned *id)
{
    return declare_suffixed(sink, key, sink->writes_first ? KEY_PHASE_FIRST : KEY_PHASE_FRAME, id);
}

int feature_sink_declare_keys(FeatureSink *sink, const char *const *keys, unsigned count,
                              unsigned *ids)
{
    for (unsigned k = 0; k < count; k++) {
        const int err = feature_sink_declare(sink, keys[k], &ids[k]);
        if (err) return err;
    }
    return 0;
}

int feature_sink_declare_later(FeatureSink *sink, const char *key, unsigned *id)
{
    return declare_suffixed(sink, key,
                            sink->writes_first ? KEY_PHASE_FIRST_LATER : KEY_PHASE_LATER, id);
}

int feature_sink_declare_at_flush(FeatureSink *sink, const char *key, unsigned *id)
{
    return declare_suffixed(sink, key, KEY_PHASE_FLUSH, id);
}

int feature_sink_declare_plain(FeatureSink *sink, const char *key, unsigned *id)
{
    return declare(sink, key, sink->writes_first ? KEY_PHASE_FIRST : KEY_PHASE_FRAME, id);
}

int feature_sink_declare_model(FeatureSink *sink, const char *key, unsigned *id)
{
    return declare(sink, key, KEY_PHASE_MODEL, id);
}

int feature_sink_put(FeatureSink *sink, unsigned id, unsigned frame, double value)
{
    return collector_put(sink->collector, id, frame, value);
}

int feature_sink_get(const FeatureSink *sink, unsigned id, unsigned frame,
                     double *value)
{
    return collector_get(sink->collector, id, frame, value);
}

int feature_sink_set_aggregate(FeatureSink *sink, const char *key, double value)
{
    char name[256];
    int err = option_key_name(sink->options, sink->state, key, name, sizeof(name));
    if (err) return err;
    return collector_set_aggregate(sink->collector, name, value);
}

unsigned feature_sink_cpu_flags(const FeatureSink *sink)
{
    return sink->cpu_flags;
}

void feature_sink_log(const FeatureSink *sink, enum QualeLogLevel level,
                      const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_sink_vprint(sink->log, level, fmt, args);
    va_end(args);
}
