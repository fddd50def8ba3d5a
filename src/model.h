/*
 * VMAF models: loading (built-in or JSON file), the metrics they need, and
 * the per-frame prediction, reproducing libvmaf's numbers and keys.
 *
 * A model is one libsvm nu-SVR (RBF kernel) with feature normalisation,
 * score transform and clip, as in libvmaf's model files.  A bootstrap
 * collection (vmaf_b_v0.6.3) is a main model ("0" in the file) plus N
 * bootstrap models ("1".."N"); it writes NAME, NAME_0001..NAME_000N,
 * NAME_bagging, NAME_stddev, NAME_ci_p95_lo and NAME_ci_p95_hi.
 */
#ifndef QUALE_SRC_MODEL_H
#define QUALE_SRC_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "log.h"
#include "metric.h"
#include "model_desc.h"
#include "quale/quale.h"

typedef struct Model Model;
typedef struct MetricInstance MetricInstance; /* the context's */

/* What a model asks of the context it is opened in: the metrics its
 * features come from, their keys' ids and names once they are known, and
 * where its messages go.  The context fills it (context.c); the model
 * knows no more of the context than this. */
typedef struct ModelHost {
    void *context;
    const LogSink *log;
    int (*request_metric)(void *context, const char *name, const char *options,
                          MetricInstance **instance);
    int (*instance_key)(const MetricInstance *instance, const char *base_key, unsigned *id);
    int (*instance_key_name)(const MetricInstance *instance, const char *base_key, char *out,
                             size_t out_size);
} ModelHost;

/* ---- the interface context.c uses --------------------------------------- */

/*
 * spec, as libvmaf's --model: colon-separated "version=vmaf_v0.6.1",
 * "path=/x/model.json", "name=foo", "disable_clip", "enable_transform" and
 * feature overloads "<metric>.<option>=<value>" (e.g.
 * "adm.adm_enhn_gain_limit=1.2").  NULL or "" means "version=vmaf_v0.6.1".
 * Loads the model and requests the metrics it needs from the host.  Errors
 * are logged through the host (naming the file or version and the
 * problem) and returned as a negative errno; *model is then NULL.
 */
int model_open(Model **model, const ModelHost *host, const char *spec);

/*
 * After every frame is done and every metric flushed: computes the model's
 * keys at every scored frame (frame i is scored when subsample <= 1 or
 * i % subsample == 0) and stores them in sink.  Frames done by an earlier
 * call are not done again.  A feature missing at a scored frame is an error
 * naming the key and the frame.
 */
int model_predict(Model *model, FeatureSink *sink, unsigned frame_count,
                  unsigned subsample);

/*
 * Optional, for libvmaf's key order with several models: libvmaf lists
 * every model's main key (in --model order) before the keys of the bootstrap
 * collections.  Declaring MODEL_KEYS_MAIN of every model, then
 * MODEL_KEYS_COLLECTION of every model, then calling model_predict() gives
 * that order; model_predict() alone declares both groups of its model.
 */
enum ModelKeyGroup {
    MODEL_KEYS_MAIN = 0,  /* NAME */
    MODEL_KEYS_COLLECTION /* NAME_0001.., _bagging, _stddev, _ci_p95_lo/hi */
};
int model_declare_keys(Model *model, FeatureSink *sink, enum ModelKeyGroup group);

const char *model_name(const Model *model);   /* output key, default "vmaf" */
/* False for a model requested with no_prediction: its features are
 * computed, and it writes no key of its own. */
bool model_predicts(const Model *model);
const char *model_label(const Model *model);  /* version or path */
int model_is_bootstrap(const Model *model);
/* Forgets the frames predicted (a context reset for its next pair). */
void model_restart(Model *model);
void model_close(Model **model);

/* The built-in versions, NULL-terminated. */
const char *const *model_builtin_versions(void);

/* What built-in model `version` is for (quale_builtin_model_info()). */
int model_builtin_describe(const char *version, QualeBuiltinModelInfo *info);

/* ---- loading and predicting without a context (tests, tools) ------------ */

/*
 * Parses spec and loads the model, like model_open() but without requesting
 * metrics.  error receives one line on failure.
 */
int model_load(Model **model, const char *spec, char *error, size_t error_size);

/*
 * The model's inputs: distinct (metric, options, key) triples, in the order
 * the model's features first name them.  key is the metric's base key
 * ("integer_vif_scale0"); options is "" or "name=value:name=value" (sorted
 * by name), exactly what model_open() requests from the context.
 */
unsigned model_input_count(const Model *model);
int model_input(const Model *model, unsigned index, const char **metric,
                const char **options, const char **key);

/* The model's outputs: NAME, then for a collection NAME_0001.., NAME_bagging,
 * NAME_stddev, NAME_ci_p95_lo, NAME_ci_p95_hi. */
unsigned model_output_count(const Model *model);
const char *model_output_name(const Model *model, unsigned index);

/* Predicts one frame: inputs[model_input_count()] in, outputs[model_output_count()]
 * out. */
int model_predict_features(const Model *model, const double *inputs,
                           double *outputs);

#endif /* QUALE_SRC_MODEL_H */
