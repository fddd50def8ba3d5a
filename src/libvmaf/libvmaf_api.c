/*
 * libvmaf's C API over libquale: the second public face of the library,
 * built as libvmaf.so.3 (src/libvmaf/meson.build) so that programs written
 * for libvmaf 3.x run on quale unchanged.
 *
 * A VmafContext is a QualeContext plus what libvmaf's calls need around
 * it: the pictures' reference counts (VmafRef), the frame index the
 * caller counts, and the requests made so far.  Models and feature
 * dictionaries are descriptions (a model spec in quale's syntax, option
 * pairs) that become requests on the context when used.  Where libvmaf
 * trusts its caller (NULL pointers, a closed context, frames out of
 * order, pictures of another format), these calls return -EINVAL and log
 * why.  docs/libvmaf.md lists what differs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libvmaf_private.h"
#include "context.h"

/* ---- log ---------------------------------------------------------------- */

/* The log level of the last vmaf_init(), for the calls that have no
 * context (libvmaf keeps one global level too). */
static _Atomic int log_level = VMAF_LOG_LEVEL_INFO;

void say(enum VmafLogLevel level, const char *fmt, ...)
{
    if ((int)level > atomic_load(&log_level)) return;
    static const char *const names[] = { "", "error", "warning", "info", "debug" };
    char text[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof(text), fmt, args);
    va_end(args);
    fprintf(stderr, "libvmaf (quale): %s: %s\n", names[level], text);
}

void log_from_quale(void *cookie, enum QualeLogLevel level, const char *message)
{
    (void)cookie;
    static const enum VmafLogLevel map[] = {
        [QUALE_LOG_ERROR] = VMAF_LOG_LEVEL_ERROR, [QUALE_LOG_WARNING] = VMAF_LOG_LEVEL_WARNING,
        [QUALE_LOG_INFO] = VMAF_LOG_LEVEL_INFO, [QUALE_LOG_DEBUG] = VMAF_LOG_LEVEL_DEBUG,
    };
    say((unsigned)level <= QUALE_LOG_DEBUG ? map[level] : VMAF_LOG_LEVEL_DEBUG, "%s", message);
}

/* ---- growing strings ---------------------------------------------------- */


void text_add(Text *t, const char *fmt, ...)
{
    if (t->failed) return;
    for (;;) {
        va_list args;
        va_start(args, fmt);
        const int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, args);
        va_end(args);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        const size_t cap = (t->len + (size_t)n + 1) * 2;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->failed = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

char *text_take(Text *t)
{
    if (t->failed) {
        free(t->s);
        return NULL;
    }
    if (!t->s) return strdup("");
    return t->s;
}

/* ---- contexts ------------------------------------------------------------ */


static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct VmafContext *contexts;

/* Takes the context's lock for a call, when vmaf is an open context made
 * by vmaf_init(); else says why not, and the call is refused.  leave()
 * ends the call. */
bool enter(VmafContext *vmaf, const char *caller)
{
    bool made = false;
    pthread_mutex_lock(&contexts_lock);
    for (const struct VmafContext *c = contexts; c && !made; c = c->next_made)
        made = c == vmaf;
    pthread_mutex_unlock(&contexts_lock);
    if (made) {
        pthread_mutex_lock(&vmaf->lock);
        if (!vmaf->closed) return true;
        pthread_mutex_unlock(&vmaf->lock);
    }
    say(VMAF_LOG_LEVEL_ERROR, "%s: %s", caller, !vmaf ? "no context" : made ? "the context is "
        "closed" : "not a context made by vmaf_init");
    return false;
}

void leave(VmafContext *vmaf)
{
    pthread_mutex_unlock(&vmaf->lock);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int vmaf_init(VmafContext **vmaf, VmafConfiguration cfg)
{
    if (!vmaf) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_init: no context pointer");
        return -EINVAL;
    }
    *vmaf = NULL;
    if (cfg.log_level > VMAF_LOG_LEVEL_DEBUG) cfg.log_level = VMAF_LOG_LEVEL_DEBUG;
    atomic_store(&log_level, (int)cfg.log_level);
    struct VmafContext *v = calloc(1, sizeof(*v));
    if (!v) return -ENOMEM;
    if (pthread_mutex_init(&v->lock, NULL)) {
        free(v);
        return -ENOMEM;
    }
    v->cfg = cfg;
    QualeSettings settings;
    quale_settings_default(&settings);
    /* libvmaf's 0 threads is the calling thread alone; quale's 0 is every
     * core: one worker is the nearest. */
    settings.threads = cfg.n_threads ? cfg.n_threads : 1;
    settings.subsample = cfg.n_subsample;
    settings.cpumask = (unsigned)cfg.cpumask;
    settings.log_level = QUALE_LOG_DEBUG; /* filtered by say() */
    settings.log = log_from_quale;
    int err = quale_open(&v->ctx, &settings);
    if (err) {
        pthread_mutex_destroy(&v->lock);
        free(v);
        return err;
    }
    pthread_mutex_lock(&contexts_lock);
    v->next_made = contexts;
    contexts = v;
    pthread_mutex_unlock(&contexts_lock);
    *vmaf = v;
    return 0;
}

int vmaf_close(VmafContext *vmaf)
{
    if (!enter(vmaf, "vmaf_close")) return -EINVAL;
    quale_close(&vmaf->ctx);
    free(vmaf->cuda_state);
    vmaf->cuda_state = NULL;
    vmaf->closed = true;
    leave(vmaf);
    return 0;
}

static char version_text[80];

static void make_version_text(void)
{
    snprintf(version_text, sizeof(version_text), "%s (quale %s)", VMAF_API_VERSION,
             quale_version());
}

const char *vmaf_version(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_version_text);
    return version_text;
}

bool before_frames(VmafContext *vmaf, const char *caller)
{
    if (vmaf->next_index == 0 && !vmaf->flushed) return true;
    say(VMAF_LOG_LEVEL_ERROR, "%s: after the first frame; features and models come first",
        caller);
    return false;
}

int vmaf_use_feature(VmafContext *vmaf, const char *feature_name,
                     VmafFeatureDictionary *opts_dict)
{
    int err = -EINVAL;
    if (!enter(vmaf, "vmaf_use_feature")) goto out;
    if (!before_frames(vmaf, "vmaf_use_feature")) goto unlock;
    if (!feature_name || !*feature_name || strpbrk(feature_name, ":=")) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_use_feature: no feature name");
        goto unlock;
    }
    Text spec = { 0 };
    text_add(&spec, "%s", feature_name);
    add_options(&spec, opts_dict, "");
    char *s = text_take(&spec);
    if (!s) {
        err = -ENOMEM;
        goto unlock;
    }
    /* quale's syntax: the first option after '=', the others after ':'. */
    char *colon = strchr(s, ':');
    if (colon) *colon = '=';
    err = quale_use_metric(vmaf->ctx, s);
    free(s);
unlock:
    leave(vmaf);
out:
    vmaf_feature_dictionary_free(&opts_dict); /* libvmaf takes it, used or not */
    return err;
}

int vmaf_use_features_from_model(VmafContext *vmaf, VmafModel *model)
{
    if (!enter(vmaf, "vmaf_use_features_from_model")) return -EINVAL;
    int err = -EINVAL;
    if (!model)
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_use_features_from_model: no model");
    else if (before_frames(vmaf, "vmaf_use_features_from_model"))
        err = quale_use_model(vmaf->ctx, model->spec);
    leave(vmaf);
    return err;
}

int vmaf_use_features_from_model_collection(VmafContext *vmaf,
                                            VmafModelCollection *model_collection)
{
    if (!model_collection) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_use_features_from_model_collection: no collection");
        return -EINVAL;
    }
    return vmaf_use_features_from_model(vmaf, model_collection->model);
}

int vmaf_import_feature_score(VmafContext *vmaf, const char *feature_name, double value,
                              unsigned index)
{
    if (!enter(vmaf, "vmaf_import_feature_score")) return -EINVAL;
    int err = -EINVAL;
    double stored;
    if (!feature_name || !*feature_name) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_import_feature_score: no feature name");
    } else if (!quale_feature_value(vmaf->ctx, feature_name, index, &stored)) {
        /* libvmaf's feature collector keeps the first score of a frame and
         * refuses another; the lock makes the look and the store one step
         * against another thread's import. */
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_import_feature_score: '%s' has a score at frame %u "
            "already (%.17g); a score is never replaced", feature_name, index, stored);
    } else {
        err = context_import_score(vmaf->ctx, feature_name, index, value);
    }
    leave(vmaf);
    return err;
}

/* A quale picture for one of the caller's: a reference to ours, or a
 * borrowed view of the caller's memory (which quale copies). */
static int quale_view(VmafContext *vmaf, const VmafPicture *pic, const char *which,
                      QualePicture *out)
{
    memset(out, 0, sizeof(*out));
    if (pic->ref) {
        /* One of ours: quale's picture, counted once more. */
        return quale_picture_ref(out, &pic->ref->pic);
    }
    QualeVideoFormat f;
    int err = format_of(pic->pix_fmt, pic->bpc, pic->w[0], pic->h[0], &f);
    if (err) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_read_pictures: the %s picture of frame %u is not a "
            "picture", which, vmaf->next_index);
        return err;
    }
    out->format = f;
    out->plane_count = f.chroma == QUALE_CHROMA_400 ? 1 : 3;
    for (unsigned p = 0; p < out->plane_count; p++) {
        out->plane_width[p] = pic->w[p];
        out->plane_height[p] = pic->h[p];
        out->stride[p] = pic->stride[p];
        out->data[p] = pic->data[p];
    }
    return 0;
}

static void release(VmafPicture *pic)
{
    if (pic->ref) ref_release(pic->ref);
    memset(pic, 0, sizeof(*pic));
}

/* The flush: vmaf_read_pictures(vmaf, NULL, NULL, 0), inside its call. */
static int flush(VmafContext *vmaf)
{
    if (vmaf->flushed) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_read_pictures: flushed already");
        return -EINVAL;
    }
    vmaf->flushed = true;
    const int err = quale_flush(vmaf->ctx);
    vmaf->elapsed = vmaf->next_index ? seconds() - vmaf->started : 0;
    return err;
}

/* A frame, inside its vmaf_read_pictures() call: the context's lock makes
 * the index check, the send and the count one step, so that of two threads
 * reading one index, one is refused. */
static int read_frame(VmafContext *vmaf, VmafPicture *ref, VmafPicture *dist, unsigned index)
{
    if (!ref || !dist) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_read_pictures: a reference and a distorted picture, or "
            "neither (the end of the stream)");
        return -EINVAL;
    }
    if (vmaf->flushed) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_read_pictures: frame %u after the end of the stream",
            index);
        return -EINVAL;
    }
    if (index != vmaf->next_index) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_read_pictures: frame %u where frame %u comes next "
            "(frames come in order from 0, each once)", index, vmaf->next_index);
        return -EINVAL;
    }
    QualePicture qref, qdist;
    int err = quale_view(vmaf, ref, "reference", &qref);
    if (err) return err;
    if ((err = quale_view(vmaf, dist, "distorted", &qdist))) {
        quale_picture_unref(&qref);
        return err;
    }
    if (index == 0) vmaf->started = seconds();
    err = quale_send_pictures(vmaf->ctx, &qref, &qdist);
    if (!err) vmaf->next_index++;
    return err;
}

int vmaf_read_pictures(VmafContext *vmaf, VmafPicture *ref, VmafPicture *dist, unsigned index)
{
    int err = -EINVAL;
    if (enter(vmaf, "vmaf_read_pictures")) {
        err = !ref && !dist ? flush(vmaf) : read_frame(vmaf, ref, dist, index);
        leave(vmaf);
    }
    /* The pictures are taken whatever happened, a closed context's too:
     * the caller's structs are cleared, and its references let go. */
    if (ref) release(ref);
    if (dist && dist != ref) release(dist);
    return err;
}

/* ---- scores -------------------------------------------------------------- */

/* The score of key at frame index, inside a call on vmaf. */
static int score_at(VmafContext *vmaf, const char *key, double *score, unsigned index,
                    const char *caller)
{
    if (!key || !score) {
        say(VMAF_LOG_LEVEL_ERROR, "%s: a %s and a score pointer are needed", caller,
            key ? "feature" : "model");
        return -EINVAL;
    }
    return quale_feature_value(vmaf->ctx, key, index, score);
}

int vmaf_score_at_index(VmafContext *vmaf, VmafModel *model, double *score, unsigned index)
{
    if (!enter(vmaf, "vmaf_score_at_index")) return -EINVAL;
    const int err = score_at(vmaf, model ? model->name : NULL, score, index,
                             "vmaf_score_at_index");
    leave(vmaf);
    return err;
}

int vmaf_feature_score_at_index(VmafContext *vmaf, const char *feature_name, double *score,
                                unsigned index)
{
    if (!enter(vmaf, "vmaf_feature_score_at_index")) return -EINVAL;
    const int err = score_at(vmaf, feature_name, score, index, "vmaf_feature_score_at_index");
    leave(vmaf);
    return err;
}

/* Pools key over frames low..high (those scored: with n_subsample the
 * others are not there), with quale's own pooling; inside a call on vmaf. */
static int pool(VmafContext *vmaf, const char *key, enum VmafPoolingMethod method,
                double *score, unsigned low, unsigned high, const char *caller)
{
    if (!key || !score || low > high || method <= VMAF_POOL_METHOD_UNKNOWN ||
        method >= VMAF_POOL_METHOD_NB) {
        say(VMAF_LOG_LEVEL_ERROR, "%s: %s", caller, !key || !score ? "a key and a score pointer "
            "are needed" : low > high ? "index_low is above index_high" : "unknown pooling "
            "method");
        return -EINVAL;
    }
    bool known = false;
    for (unsigned k = 0; k < quale_feature_count(vmaf->ctx) && !known; k++)
        known = !strcmp(quale_feature_name(vmaf->ctx, k), key);
    if (!known) {
        say(VMAF_LOG_LEVEL_ERROR, "%s: no scores named '%s'%s", caller, key,
            vmaf->flushed ? "" : " (model scores come with the flush: vmaf_read_pictures(vmaf, "
            "NULL, NULL, 0))");
        return -EINVAL;
    }
    static const enum QualePool methods[] = {
        [VMAF_POOL_METHOD_MIN] = QUALE_POOL_MIN, [VMAF_POOL_METHOD_MAX] = QUALE_POOL_MAX,
        [VMAF_POOL_METHOD_MEAN] = QUALE_POOL_MEAN,
        [VMAF_POOL_METHOD_HARMONIC_MEAN] = QUALE_POOL_HARMONIC_MEAN,
    };
    /* high may be UINT_MAX: frames past the last are not there either. */
    const unsigned end = high == UINT_MAX ? UINT_MAX : high + 1;
    if (context_pool_range(vmaf->ctx, key, methods[method], low, end, score)) {
        say(VMAF_LOG_LEVEL_ERROR, "%s: '%s' has no score at some frame of %u to %u", caller,
            key, low, high);
        return -EINVAL;
    }
    return 0;
}

int vmaf_score_pooled(VmafContext *vmaf, VmafModel *model, enum VmafPoolingMethod pool_method,
                      double *score, unsigned index_low, unsigned index_high)
{
    if (!enter(vmaf, "vmaf_score_pooled")) return -EINVAL;
    const int err = pool(vmaf, model ? model->name : NULL, pool_method, score, index_low,
                         index_high, "vmaf_score_pooled");
    leave(vmaf);
    return err;
}

int vmaf_feature_score_pooled(VmafContext *vmaf, const char *feature_name,
                              enum VmafPoolingMethod pool_method, double *score,
                              unsigned index_low, unsigned index_high)
{
    if (!enter(vmaf, "vmaf_feature_score_pooled")) return -EINVAL;
    const int err = pool(vmaf, feature_name, pool_method, score, index_low, index_high,
                         "vmaf_feature_score_pooled");
    leave(vmaf);
    return err;
}

/* A collection's keys: NAME_bagging, NAME_stddev, NAME_ci_p95_lo/hi;
 * inside a call on vmaf. */
static int collection_score_in(VmafContext *vmaf, const VmafModelCollection *c,
                               enum VmafPoolingMethod method, VmafModelCollectionScore *score,
                               unsigned low, unsigned high, bool pooled, const char *caller)
{
    if (!c || !score) {
        say(VMAF_LOG_LEVEL_ERROR, "%s: a collection and a score pointer are needed", caller);
        return -EINVAL;
    }
    static const char *const suffixes[4] = { "bagging", "stddev", "ci_p95_lo", "ci_p95_hi" };
    double values[4];
    for (unsigned k = 0; k < 4; k++) {
        char key[512];
        snprintf(key, sizeof(key), "%s_%s", c->model->name, suffixes[k]);
        const int err = pooled ? pool(vmaf, key, method, &values[k], low, high, caller)
                               : score_at(vmaf, key, &values[k], low, caller);
        if (err) return err;
    }
    memset(score, 0, sizeof(*score));
    score->type = VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP;
    score->bootstrap.bagging_score = values[0];
    score->bootstrap.stddev = values[1];
    score->bootstrap.ci.p95.lo = values[2];
    score->bootstrap.ci.p95.hi = values[3];
    return 0;
}

/* The four keys are read in one call: no frame or flush comes between. */
static int collection_score(VmafContext *vmaf, const VmafModelCollection *c,
                            enum VmafPoolingMethod method, VmafModelCollectionScore *score,
                            unsigned low, unsigned high, bool pooled, const char *caller)
{
    if (!enter(vmaf, caller)) return -EINVAL;
    const int err = collection_score_in(vmaf, c, method, score, low, high, pooled, caller);
    leave(vmaf);
    return err;
}

int vmaf_score_at_index_model_collection(VmafContext *vmaf,
                                         VmafModelCollection *model_collection,
                                         VmafModelCollectionScore *score, unsigned index)
{
    return collection_score(vmaf, model_collection, VMAF_POOL_METHOD_MEAN, score, index, index,
                            false, "vmaf_score_at_index_model_collection");
}

int vmaf_score_pooled_model_collection(VmafContext *vmaf,
                                       VmafModelCollection *model_collection,
                                       enum VmafPoolingMethod pool_method,
                                       VmafModelCollectionScore *score, unsigned index_low,
                                       unsigned index_high)
{
    return collection_score(vmaf, model_collection, pool_method, score, index_low, index_high,
                            true, "vmaf_score_pooled_model_collection");
}
