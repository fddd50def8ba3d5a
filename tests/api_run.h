/*
 * A run of metrics through the public API, for the tests that compare
 * backends (tests/gpu_parity.c, tests/test_cambi_vulkan.c): a context of
 * one backend, the metrics and a model, the frame pairs, and every key of
 * every frame read back.  C only (strdup).
 */
#ifndef QUALE_TESTS_API_RUN_H
#define QUALE_TESTS_API_RUN_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quale/quale.h"

typedef struct ApiRun {
    /* asked */
    enum QualeBackend backend;
    unsigned threads;
    enum QualeLogLevel log_level;
    /* what the messages at or above log_level go to, besides `error` */
    void (*on_message)(void *cookie, enum QualeLogLevel level, const char *message);
    void *cookie;

    /* found */
    int status;
    char error[512]; /* the first error message */
    unsigned keys, frames;
    char **names;
    double *values; /* keys x frames */
    bool *present;
} ApiRun;

static inline void api_run_free(ApiRun *r)
{
    for (unsigned k = 0; k < r->keys; k++) free(r->names[k]);
    free(r->names);
    free(r->values);
    free(r->present);
    r->names = NULL;
    r->values = NULL;
    r->present = NULL;
    r->keys = r->frames = 0;
}

static inline void api_run_message(void *cookie, enum QualeLogLevel level, const char *message)
{
    ApiRun *r = (ApiRun *)cookie;
    if (level == QUALE_LOG_ERROR && !r->error[0])
        snprintf(r->error, sizeof(r->error), "%s", message);
    if (r->on_message) r->on_message(r->cookie, level, message);
}

/* Runs the metrics (and the model, unless NULL) over `count` frame pairs on
 * r->backend; r's results are what it found (api_run_free() them). */
static inline void api_run(ApiRun *r, const char *model, const char *const *metrics,
                           unsigned metric_count, const QualePicture *refs,
                           const QualePicture *dists, unsigned count)
{
    r->status = 0;
    r->error[0] = '\0';
    r->keys = r->frames = 0;
    r->names = NULL;
    r->values = NULL;
    r->present = NULL;
    QualeSettings s;
    quale_settings_default(&s);
    s.backend = r->backend;
    s.threads = r->threads;
    s.log = api_run_message;
    s.log_cookie = r;
    s.log_level = r->log_level;
    QualeContext *ctx = NULL;
    int err = quale_open(&ctx, &s);
    if (!err && model) err = quale_use_model(ctx, model);
    for (unsigned i = 0; i < metric_count && !err; i++) err = quale_use_metric(ctx, metrics[i]);
    for (unsigned n = 0; n < count && !err; n++) {
        QualePicture a, b;
        quale_picture_ref(&a, &refs[n]);
        quale_picture_ref(&b, &dists[n]);
        err = quale_send_pictures(ctx, &a, &b);
    }
    if (!err) err = quale_flush(ctx);
    r->status = err;
    if (!err) {
        r->keys = quale_feature_count(ctx);
        r->frames = count;
        r->names = calloc(r->keys ? r->keys : 1, sizeof(*r->names));
        r->values = calloc((size_t)r->keys * r->frames + 1, sizeof(*r->values));
        r->present = calloc((size_t)r->keys * r->frames + 1, sizeof(*r->present));
        for (unsigned k = 0; k < r->keys; k++) {
            r->names[k] = strdup(quale_feature_name(ctx, k));
            for (unsigned n = 0; n < r->frames; n++)
                r->present[k * r->frames + n] =
                    !quale_feature_value(ctx, r->names[k], n, &r->values[k * r->frames + n]);
        }
    }
    quale_close(&ctx);
}

#endif /* QUALE_TESTS_API_RUN_H */
