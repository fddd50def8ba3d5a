/*
 * Internal view of a context, for the parts of the library that sit beside
 * the metrics: models request metrics and read their keys through it.
 */
#ifndef QUALE_SRC_CONTEXT_H
#define QUALE_SRC_CONTEXT_H

#include <stdarg.h>

#include "gpu/gpu.h"
#include "metric.h"
#include "quale/quale.h"

typedef struct MetricInstance MetricInstance;

/*
 * Requests a metric with options, e.g. ("vif", "vif_enhn_gain_limit=1").
 * options may be NULL or "".  If the same metric with the same effective
 * option values was requested before, that instance is returned.
 * Must be called before the first frame.
 */
int context_request_metric(QualeContext *ctx, const char *name,
                           const char *options, MetricInstance **instance);

/*
 * The collector id of one of the instance's keys, given by its base name
 * as listed in the descriptor (e.g. "integer_vif_scale0"); the stored key
 * carries the option suffix (e.g. "integer_vif_scale0_egl_1").
 * Valid once the instance is initialised (after the first frame).
 */
int metric_instance_key(const MetricInstance *instance, const char *base_key,
                        unsigned *id);

/* The output name of a base key under the instance's options. */
int metric_instance_key_name(const MetricInstance *instance,
                             const char *base_key, char *out, size_t out_size);

struct Collector;
/* The context's results, for the writers. */
/* Stores a score computed elsewhere under key at frame index (libvmaf's
 * vmaf_import_feature_score()); a key a metric or model writes is refused. */
int context_import_score(QualeContext *ctx, const char *key, unsigned index, double value);
/* libvmaf's pooling of key over frames [first, end), skipping those that
 * subsample leaves out (collector_pool_range()); -ENOENT for an unknown key
 * or a scored frame without it. */
int context_pool_range(const QualeContext *ctx, const char *key, enum QualePool method,
                       unsigned first, unsigned end, double *value);

const struct Collector *context_collector(const QualeContext *ctx);
unsigned context_subsample(const QualeContext *ctx);
/* The format of the pictures, NULL before the first frame. */
const QualeVideoFormat *context_format(const QualeContext *ctx);
/* The i-th requested metric instance, NULL past the end. */
const MetricInstance *context_instance(const QualeContext *ctx, unsigned i);

/* 0 when quale_flush() has run and succeeded, so that the results are
 * whole; else logs why not (naming `caller`) and returns -EBUSY (not
 * flushed yet) or the run's error. */
int context_results_ready(const QualeContext *ctx, const char *caller);

/* The context's feature storage, keys stored exactly as named. */
FeatureSink *context_sink(QualeContext *ctx);

/* Logging through the context's callback. */
void context_log(const QualeContext *ctx, enum QualeLogLevel level,
                 const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void context_vlog(const QualeContext *ctx, enum QualeLogLevel level,
                  const char *fmt, va_list args);

#endif /* QUALE_SRC_CONTEXT_H */
