/*
 * The metric descriptor: what every metric of the registry provides.
 *
 * A descriptor is a const struct next to the metric's C reference in
 * src/metrics/<metric>.c.  Everything that changes during a run lives in the
 * instance's state (state_size bytes, allocated by the library, options
 * written into it by offset before init) or in per-thread scratch.
 *
 * Life of an instance:
 *   options parsed into state -> init(state, format) once
 *   -> extract() for every scored frame, from any worker thread, several
 *      frames at once (state is read-only there; use scratch and
 *      the atomic helpers for anything mutable)
 *   -> flush() once, after every frame, on one thread
 *   -> close(state).
 */
#ifndef QUALE_SRC_METRIC_H
#define QUALE_SRC_METRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quale/quale.h"
#include "option.h"

typedef struct FeatureSink FeatureSink;

typedef struct MetricRunner MetricRunner;

/* The pictures one extract() call sees. */
typedef struct MetricFrame {
    unsigned index;               /* frame number, from 0 */
    const QualePicture *ref;
    const QualePicture *dist;
    /* Earlier reference pictures, prev_ref[0] = index - 1, prev_ref[1] =
     * index - 2; present up to the metric's history (NULL before frame 0). */
    const QualePicture *prev_ref[2];
    const QualePicture *prev_dist[2];
    /* The context's, for metric_run_tasks(); NULL outside a context. */
    const MetricRunner *runner;
    unsigned worker;
} MetricFrame;

/*
 * Runs tasks 0 .. count-1 of fn within one extract() (row bands of a large
 * picture), on this thread and on other workers that are idle or waiting
 * on groups of their own, and returns when all are done.  Each task gets
 * the metric's per-thread scratch of the thread that runs it (`scratch` is
 * the caller's own); tasks write disjoint parts of a result or integer
 * sums, so which thread runs a task, and how many threads there are,
 * changes no digit.  A task may run on a worker that is in the middle of
 * an extract() of its own (this metric's, another frame's, waiting on one
 * of its groups): in that scratch it may use only what it needs for
 * itself (row buffers), never what an extract() keeps across its groups
 * (decimated pictures, approximation planes: those of the caller come
 * through arg).  An error making a worker's scratch comes back (some
 * tasks may not have run).
 */
typedef void (*MetricTaskFn)(void *arg, unsigned task, void *scratch);
int metric_run_tasks(const MetricFrame *frame, void *scratch, unsigned count, MetricTaskFn fn,
                     void *arg);

/* What runs a metric's tasks: the context's scheduler hands one down in
 * every MetricFrame, so that no metric calls into the context. */
struct MetricRunner {
    unsigned threads; /* the workers that may run tasks */
    /* Tasks 0 .. count-1 of fn, worker being the caller's, as
     * metric_run_tasks() says. */
    int (*run_tasks)(const MetricRunner *runner, unsigned worker, void *scratch,
                     unsigned count, MetricTaskFn fn, void *arg);
};

/*
 * Rows a band when `rows` rows are cut into bands for metric_run_tasks()
 * by the thread count (the context's workers, 1 outside a context): all of
 * them on one thread, where the rows a band makes again for its edges
 * would only cost; else about four bands a thread, of at least min_rows
 * rows and at most METRIC_MAX_BANDS bands.  Only for results that no band
 * geometry can change: integer sums, or each row's sums made whole by one
 * band and added in row order.
 */
#define METRIC_MAX_BANDS 64
unsigned metric_band_rows(const MetricFrame *frame, unsigned rows, unsigned min_rows);

enum MetricFlags {
    /* Runs on every frame even when --subsample skips frames (libvmaf's
     * temporal extractors do: motion and psnr). */
    METRIC_EVERY_FRAME = 1u << 0,
    /* Reads only the luma plane: readers may skip chroma in the file. */
    METRIC_LUMA_ONLY = 1u << 1,
    /* libvmaf runs it (a temporal extractor) on the calling thread before
     * a frame's other extractors, so its tool lists the keys this metric
     * writes at a frame before the others' (collector.h, KeyPhase). */
    METRIC_WRITES_FIRST = 1u << 2,
};

/*
 * A feature a model file may name, and the key the metric writes it under.
 * libvmaf finds a model feature's extractor by searching every extractor's
 * provided_features and reads the value under the feature's output name
 * (alias.c's alias when it has one, else the name itself) plus the option
 * suffix; our metrics carry libvmaf's extractor names and write libvmaf's
 * output names as their base keys, so the name and the key say it all.
 */
typedef struct MetricModelFeature {
    const char *feature; /* as in a model's feature_names */
    const char *key;     /* the base key it is read from */
} MetricModelFeature;

typedef struct Metric {
    const char *name;                /* "psnr"; what --feature takes */
    const char *const *keys;         /* NULL-terminated, every key it writes */
    /* The model features it provides, terminated by a NULL feature (NULL:
     * none): models find their metrics here. */
    const MetricModelFeature *model_features;
    const MetricOption *options;     /* terminated by an entry with name NULL */
    size_t state_size;
    unsigned flags;
    unsigned history;                /* previous frames extract() needs: 0..2 */

    /* The planes it reads under these options (state holds the parsed
     * options; may be called before init): bit p for plane p.  NULL: 1 for
     * METRIC_LUMA_ONLY, else 7. */
    unsigned (*planes)(const void *state);

    /* Optional: checks the options together, when the metric is requested
     * (quale_use_metric()), for what each option's own range cannot say;
     * -EINVAL with a message naming the option.  init() then needs to
     * check only the format. */
    int (*check_options)(const void *state, FeatureSink *sink);

    /* Checks the format and prepares the state; declares the keys it will
     * write with feature_sink_declare() and keeps their ids in the state.
     * A format the metric cannot score is an error with a message naming
     * the metric and the format. */
    int (*init)(void *state, const QualeVideoFormat *format,
                FeatureSink *sink);

    /* Per-thread scratch: created on first use by each worker. */
    int (*scratch_alloc)(const void *state, void **scratch);
    void (*scratch_free)(void *scratch);

    int (*extract)(const void *state, void *scratch, const MetricFrame *frame,
                   FeatureSink *sink);

    /* After every frame: end-of-stream keys (motion2 of the last frame,
     * aggregates).  May read the metric's own per-frame values. */
    int (*flush)(void *state, FeatureSink *sink, unsigned frame_count);

    /* Optional: forgets what a run gathered in the state (accumulators of
     * aggregates, the last frame seen), so that the next pair of a context
     * reset with quale_reset() starts as a new run; -ENOTSUP where it
     * cannot (files of the run's own).  NULL: the state holds nothing of
     * the run beyond the collector's values. */
    int (*restart)(void *state, FeatureSink *sink);

    void (*close)(void *state);
} Metric;

/* The registry: a const array, in --list-features order. */
extern const Metric *const quale_metrics[];
extern const unsigned quale_metric_total;

const Metric *metric_find(const char *name);

/* The planes a metric reads under these options (its planes(), else from
 * METRIC_LUMA_ONLY): bit p for plane p.  Readers and GPU backends ask this. */
unsigned metric_planes(const Metric *m, const void *state);

/* ---- writing results ---------------------------------------------------- */

/* Declares an output key (e.g. "psnr_y") and returns its id in *id.
 * Declaring a key twice returns the same id.  The outputs list keys as
 * libvmaf's tool does, by when libvmaf first writes them (collector.h):
 * feature_sink_declare() for keys written at their frame (declared in the
 * order libvmaf writes them), _later() for keys libvmaf first writes while
 * extracting a later frame, _at_flush() for keys it writes at the end of
 * the stream. */
int feature_sink_declare(FeatureSink *sink, const char *key, unsigned *id);
int feature_sink_declare_later(FeatureSink *sink, const char *key, unsigned *id);
int feature_sink_declare_at_flush(FeatureSink *sink, const char *key, unsigned *id);

/* feature_sink_declare() of the first `count` keys of a metric's key list,
 * their ids in ids[0 .. count): most metrics write a prefix of their list
 * (the score alone, or every key with debug or enable_lcs), in list order. */
int feature_sink_declare_keys(FeatureSink *sink, const char *const *keys, unsigned count,
                              unsigned *ids);

/* A model's score: listed after every feature. */
int feature_sink_declare_model(FeatureSink *sink, const char *key, unsigned *id);

/* Declares a key that keeps its name whatever the options (libvmaf leaves
 * a few keys without the option suffix, e.g. cambi_source). */
int feature_sink_declare_plain(FeatureSink *sink, const char *key, unsigned *id);

/* Stores the value of a declared key at a frame.  Safe from any thread. */
int feature_sink_put(FeatureSink *sink, unsigned id, unsigned frame,
                     double value);

/* Reads back a stored value; -ENOENT if none. */
int feature_sink_get(const FeatureSink *sink, unsigned id, unsigned frame,
                     double *value);

/* Stores a run-wide value (libvmaf's aggregate_metrics, e.g. apsnr_y). */
int feature_sink_set_aggregate(FeatureSink *sink, const char *key,
                               double value);

/* Logs through the context that owns the sink. */
/* The QUALE_CPU_* instruction sets the metric may use (the CPU's, less
 * the settings' cpumask): init() picks its kernels from them. */
unsigned feature_sink_cpu_flags(const FeatureSink *sink);

void feature_sink_log(const FeatureSink *sink, enum QualeLogLevel level,
                      const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif /* QUALE_SRC_METRIC_H */
