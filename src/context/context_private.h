/*
 * The context's layout, private to its rooms (src/context/): nothing
 * outside them sees a QualeContext's fields.
 */
#ifndef QUALE_SRC_CONTEXT_CONTEXT_PRIVATE_H
#define QUALE_SRC_CONTEXT_CONTEXT_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "collector.h"
#include "context.h"
#include "log.h"
#include "metric.h"
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

/* Frees the metrics' per-worker buffers, to be made again as workers
 * need them: what they cached was keyed by frame numbers that a reset
 * context counts again (context.c). */
void context_drop_scratch(QualeContext *ctx);

/* How many recycled pictures a pool keeps (context.c). */
unsigned context_pool_keep(const QualeContext *ctx);

/* scheduler.c: the metrics set up at the first frame; a worker's failure
 * kept (the first one wins); a job's pictures given back; the view of a
 * job that metrics and twins get; a frame job queued on a free slot (the
 * GPU backend's submit() first). */
int context_start_metrics(QualeContext *ctx, const QualeVideoFormat *format);
void context_record_error(QualeContext *ctx, int err);
void context_release_job(FrameJob *job);
MetricFrame context_job_frame(const FrameJob *job);
int context_submit_job(QualeContext *ctx, FrameJob *job);

/* provenance.c: the records that say what produced the results (the
 * build, the backend, the models, the metrics); p->error. */
struct Provenance;
int context_describe(const QualeContext *ctx, struct Provenance *p);

#endif /* QUALE_SRC_CONTEXT_CONTEXT_PRIVATE_H */
