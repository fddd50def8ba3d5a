/*
 * Feature storage: one row of per-frame values for every key, in the order
 * the keys were declared, plus run-wide aggregates.  Writes come from the
 * worker threads; the lock is taken once per value, which is cheap next to
 * the work that produced it.
 */
#ifndef QUALE_SRC_COLLECTOR_H
#define QUALE_SRC_COLLECTOR_H

#include <stdbool.h>

#include "metric.h"
#include "quale/quale.h"

typedef struct Collector Collector;

int collector_open(Collector **collector);
void collector_close(Collector **collector);

/* Declares key (or finds it) for owner: -EEXIST when another owner
 * declared it.  A NULL owner shares the key with anyone. */
int collector_declare(Collector *c, const char *key, const void *owner, unsigned *id);
int collector_find(const Collector *c, const char *key, unsigned *id);
int collector_put(Collector *c, unsigned id, unsigned frame, double value);
int collector_get(const Collector *c, unsigned id, unsigned frame, double *value);
int collector_set_aggregate(Collector *c, const char *key, double value);

unsigned collector_key_count(const Collector *c);
const char *collector_key_name(const Collector *c, unsigned id);
/* One past the highest frame written for any key. */
unsigned collector_frame_span(const Collector *c);
bool collector_frame_has_values(const Collector *c, unsigned frame);

unsigned collector_aggregate_count(const Collector *c);
void collector_aggregate(const Collector *c, unsigned i, const char **key,
                         double *value);

/*
 * libvmaf's pooling over frames [0, frame_count), skipping the frames that
 * --subsample leaves out: mean = sum / n, harmonic mean = n / sum(1 / (x + 1))
 * - 1, min and max; sums in frame order.  -ENOENT when a scored frame lacks
 * the key.
 */
int collector_pool(const Collector *c, unsigned id, enum QualePool method,
                   unsigned frame_count, unsigned subsample, double *value);

/* A view of the collector through which one metric instance writes: keys it
 * declares get the instance's option suffix. */
struct FeatureSink {
    Collector *collector;
    const MetricOption *options; /* NULL: keys are stored as given */
    const void *state;
    const QualeContext *ctx;     /* for logging */
    const void *owner;           /* the instance or model declaring keys */
    const char *name;            /* its metric's name, for messages */
    unsigned cpu_flags;          /* QUALE_CPU_* sets the metric may use */
};

#endif /* QUALE_SRC_COLLECTOR_H */
