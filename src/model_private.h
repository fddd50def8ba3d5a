/*
 * The layout of a model, shared by model.c (the spec, building and the
 * interface) and model_predict.c (the prediction).  Not for the rest of
 * the library, which sees model.h.
 */
#ifndef QUALE_SRC_MODEL_PRIVATE_H
#define QUALE_SRC_MODEL_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "model.h"
#include "model_file.h"


typedef struct ModelInput {
    const char *feature; /* the first model feature that names it */
    const char *metric;
    const char *key;
    char *options;       /* "" or "name=value:..." sorted by name */
    MetricInstance *instance;
    unsigned id;
} ModelInput;

/* One SVM of the model with the flags of the spec applied. */
typedef struct ModelPart {
    const ModelDesc *desc;
    unsigned *input;     /* per feature: index into Model.inputs */
    bool transform;
    bool clip;
} ModelPart;

/* An overload "<metric>.<option>=<value>" from the spec. */
typedef struct ModelOverload {
    char *metric;
    char *option;
    char *value;  /* normalised as libvmaf does */
    bool used;
} ModelOverload;


struct Model {
    char *label;
    ModelHost host; /* model_open()'s; zero for model_load() */
    char *name;
    bool collection;
    bool no_prediction; /* its features only, as libvmaf's -n with -m */

    unsigned part_count;
    ModelPart *parts;

    unsigned input_count;
    ModelInput *inputs;

    unsigned output_count;
    char **outputs;
    unsigned *output_ids;
    bool declared[2];
    bool resolved;
    bool warned_shared_key;
    unsigned frames_done;

    ModelPool pool;          /* descriptions loaded from a file */
    JsonDocument *doc;  /* the file's strings they point to */
};

#endif /* QUALE_SRC_MODEL_PRIVATE_H */
