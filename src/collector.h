/*
 * Feature storage: one row of per-frame values for every key, plus run-wide
 * aggregates.  Writes come from the worker threads; the lock is taken once
 * per value, which is cheap next to the work that produced it.
 *
 * Keys are listed (collector_output_key()) in the order libvmaf's tool lists
 * them: its collector keeps keys in the order of their first value, so a
 * key's place follows when libvmaf first writes it (enum KeyPhase), then
 * the order of declaration (models' features before --feature ones, as
 * libvmaf registers them; each metric's keys in the order it writes them).
 */
#ifndef QUALE_SRC_COLLECTOR_H
#define QUALE_SRC_COLLECTOR_H

#include <stdbool.h>

#include "log.h"
#include "metric.h"
#include "quale/quale.h"

typedef struct Collector Collector;

int collector_open(Collector **collector);
void collector_close(Collector **collector);

/* When libvmaf writes a key first.  Its temporal extractors (psnr,
 * float_motion, speed_temporal) run on the calling thread, the others as a
 * batch on a worker; the calling thread goes on to the next frame while
 * the worker starts, so in practice the temporal extractors' keys come
 * first, those they first write at frame 1 too (float_motion's motion3 of
 * frame 0: the golden files show it before the batch's keys in 4 runs of
 * 5, the fifth one key later), then the batch's, then what is first
 * written at a later frame by the batch, then the keys of the end of the
 * stream (integer motion2 and motion3), then the models' scores. */
enum KeyPhase {
    KEY_PHASE_FIRST,
    KEY_PHASE_FIRST_LATER,
    KEY_PHASE_FRAME,
    KEY_PHASE_LATER,
    KEY_PHASE_FLUSH,
    KEY_PHASE_MODEL,
};

/* Declares key (or finds it) for owner: -EEXIST when another owner
 * declared it.  A NULL owner shares the key with anyone.  A key keeps the
 * phase of its first declaration. */
int collector_declare(Collector *c, const char *key, const void *owner, enum KeyPhase phase,
                      unsigned *id);
int collector_find(const Collector *c, const char *key, unsigned *id);
/* Forgets every value and aggregate; the keys, their owners and their
 * order stay (a context reset for its next pair). */
void collector_clear(Collector *c);
int collector_put(Collector *c, unsigned id, unsigned frame, double value);
int collector_get(const Collector *c, unsigned id, unsigned frame, double *value);
int collector_set_aggregate(Collector *c, const char *key, double value);

unsigned collector_key_count(const Collector *c);
const char *collector_key_name(const Collector *c, unsigned id);
/* The id of the key listed at position (0 .. count - 1) of the outputs. */
unsigned collector_output_key(const Collector *c, unsigned position);
/* Frames below base are never stored (a run read back that starts late
 * keeps no room for them); only before the first value.  Default 0. */
int collector_set_base(Collector *c, unsigned base);
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

/* The same over frames [first, end), under the collector's lock, so that it
 * may run while frames are still being written (libvmaf's pooling over an
 * index range).  -EINVAL for an empty range. */
int collector_pool_range(const Collector *c, unsigned id, enum QualePool method,
                         unsigned first, unsigned end, unsigned subsample, double *value);

/* A view of the collector through which one metric instance writes: keys it
 * declares get the instance's option suffix. */
struct FeatureSink {
    Collector *collector;
    const MetricOption *options; /* NULL: keys are stored as given */
    const void *state;
    const LogSink *log;          /* where its messages go */
    const void *owner;           /* the instance or model declaring keys */
    const char *name;            /* its metric's name, for messages */
    bool writes_first;           /* METRIC_WRITES_FIRST: KEY_PHASE_FIRST, _FIRST_LATER */
    unsigned cpu_flags;          /* QUALE_CPU_* sets the metric may use */
};

/*
 * Pooling by name: libvmaf's four ("min", "max", "mean", "harmonic_mean"),
 * "pN" the N-th percentile of the frames (0 < N < 100, linear between the
 * closest ranks: numpy's default) and "lowN" the mean of the lowest N% of
 * them (at least one frame): FFmpeg's pool= and the 1% and 5% lows.  Any
 * NaN among the frames makes the order statistics NaN, as it makes the
 * mean.
 */
typedef struct PoolMethod {
    enum { POOL_PLAIN, POOL_PERCENTILE, POOL_LOW } kind;
    enum QualePool plain;
    double share; /* N */
} PoolMethod;

int pool_method_parse(const char *name, PoolMethod *method);
int collector_pool_method(const Collector *c, unsigned id, const PoolMethod *method,
                          unsigned first, unsigned end, unsigned subsample, double *value);

#endif /* QUALE_SRC_COLLECTOR_H */
