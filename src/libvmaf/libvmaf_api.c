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
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "libvmaf/libvmaf.h"
#include "libvmaf/libvmaf_cuda.h"
#include "quale/quale.h"

/* The libvmaf API version this face implements. */
#define VMAF_API_VERSION "3.0.0"

/* ---- log ---------------------------------------------------------------- */

static void say(enum VmafLogLevel level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The log level of the last vmaf_init(), for the calls that have no
 * context (libvmaf keeps one global level too). */
static _Atomic int log_level = VMAF_LOG_LEVEL_INFO;

static void say(enum VmafLogLevel level, const char *fmt, ...)
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

static void log_from_quale(void *cookie, enum QualeLogLevel level, const char *message)
{
    (void)cookie;
    static const enum VmafLogLevel map[] = {
        [QUALE_LOG_ERROR] = VMAF_LOG_LEVEL_ERROR, [QUALE_LOG_WARNING] = VMAF_LOG_LEVEL_WARNING,
        [QUALE_LOG_INFO] = VMAF_LOG_LEVEL_INFO, [QUALE_LOG_DEBUG] = VMAF_LOG_LEVEL_DEBUG,
    };
    say((unsigned)level <= QUALE_LOG_DEBUG ? map[level] : VMAF_LOG_LEVEL_DEBUG, "%s", message);
}

/* ---- growing strings ---------------------------------------------------- */

typedef struct Text {
    char *s;
    size_t len, cap;
    bool failed;
} Text;

static void text_add(Text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void text_add(Text *t, const char *fmt, ...)
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

static char *text_take(Text *t)
{
    if (t->failed) {
        free(t->s);
        return NULL;
    }
    if (!t->s) return strdup("");
    return t->s;
}

/* ---- feature dictionaries ----------------------------------------------- */

struct VmafFeatureDictionary {
    unsigned count;
    char **key, **value;
};

int vmaf_feature_dictionary_set(VmafFeatureDictionary **dict, const char *key,
                                const char *val)
{
    if (!dict || !key || !val || !*key) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_feature_dictionary_set: a dictionary, a key and a "
            "value are needed");
        return -EINVAL;
    }
    /* quale's option syntax separates options with ':' and names with
     * '=': a key or value holding them would read as another option. */
    if (strpbrk(key, ":=") || strchr(val, ':')) {
        say(VMAF_LOG_LEVEL_ERROR, "feature option %s=%s: ':' and '=' cannot be part of an "
            "option's name, nor ':' of its value", key, val);
        return -EINVAL;
    }
    VmafFeatureDictionary *d = *dict;
    if (!d && !(d = calloc(1, sizeof(*d)))) return -ENOMEM;
    for (unsigned i = 0; i < d->count; i++) {
        if (!strcmp(d->key[i], key)) {
            char *v = strdup(val);
            if (!v) return -ENOMEM;
            free(d->value[i]);
            d->value[i] = v;
            *dict = d;
            return 0;
        }
    }
    char **keys = realloc(d->key, sizeof(*keys) * (d->count + 1));
    if (keys) d->key = keys;
    char **values = realloc(d->value, sizeof(*values) * (d->count + 1));
    if (values) d->value = values;
    char *k = strdup(key), *v = strdup(val);
    if (!keys || !values || !k || !v) {
        free(k);
        free(v);
        if (!*dict) vmaf_feature_dictionary_free(&d);
        return -ENOMEM;
    }
    d->key[d->count] = k;
    d->value[d->count] = v;
    d->count++;
    *dict = d;
    return 0;
}

int vmaf_feature_dictionary_free(VmafFeatureDictionary **dict)
{
    if (!dict) return -EINVAL;
    VmafFeatureDictionary *d = *dict;
    if (!d) return 0;
    for (unsigned i = 0; i < d->count; i++) {
        free(d->key[i]);
        free(d->value[i]);
    }
    free(d->key);
    free(d->value);
    free(d);
    *dict = NULL;
    return 0;
}

/* "k=v:k2=v2" into t, each key prefixed with prefix ("adm." or ""). */
static void add_options(Text *t, const VmafFeatureDictionary *d, const char *prefix)
{
    for (unsigned i = 0; d && i < d->count; i++)
        text_add(t, ":%s%s=%s", prefix, d->key[i], d->value[i]);
}

/* ---- models ------------------------------------------------------------- */

struct VmafModel {
    char *spec; /* quale's model spec: version= or path=, name=, flags, overloads */
    char *name; /* the key of its scores */
    int fd;     /* the file of a path holding ':' (see model_path()), else -1 */
};

struct VmafModelCollection {
    VmafModel *model; /* the collection's own copy */
};

/* Whether a spec is one quale takes: tried on a context of its own, so
 * that a bad version or file is refused when it is loaded, as in libvmaf. */
static int check_model_spec(const char *spec)
{
    QualeSettings settings;
    quale_settings_default(&settings);
    settings.threads = 1;
    settings.log = log_from_quale;
    QualeContext *ctx = NULL;
    int err = quale_open(&ctx, &settings);
    if (!err) err = quale_use_model(ctx, spec);
    quale_close(&ctx);
    return err;
}

/*
 * The path= of a model file in quale's spec, whose options ':' separates.
 * A path holding ':' (a directory named "a:b") is opened here, and the spec
 * names the open file instead (/proc/self/fd/N, Linux's name of the file
 * behind a descriptor: opening it opens the file afresh, at its start), for
 * as long as the model lives.  *fd is that descriptor, or -1.
 */
static int model_path(const char *path, Text *spec, int *fd)
{
    *fd = -1;
    if (!strchr(path, ':')) {
        text_add(spec, "path=%s", path);
        return 0;
    }
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        const int e = errno;
        say(VMAF_LOG_LEVEL_ERROR, "cannot read model file '%s': %s", path, strerror(e));
        return -e;
    }
    text_add(spec, "path=/proc/self/fd/%d", *fd);
    return 0;
}

/* A copy of model (for a collection), with a descriptor of its own. */
static VmafModel *model_copy(const VmafModel *model)
{
    VmafModel *copy = calloc(1, sizeof(*copy));
    if (!copy) return NULL;
    copy->fd = -1;
    copy->name = strdup(model->name);
    if (model->fd < 0) {
        copy->spec = strdup(model->spec);
    } else if ((copy->fd = fcntl(model->fd, F_DUPFD_CLOEXEC, 0)) >= 0) {
        /* The same spec, naming the copy's descriptor. */
        Text spec = { 0 };
        const char *rest = strchr(model->spec, ':');
        text_add(&spec, "path=/proc/self/fd/%d%s", copy->fd, rest ? rest : "");
        copy->spec = text_take(&spec);
    }
    if (!copy->name || !copy->spec) {
        vmaf_model_destroy(copy);
        return NULL;
    }
    return copy;
}

static int model_new(VmafModel **out, const VmafModelConfig *cfg, const char *how,
                     const char *what)
{
    if (!out || !what || !*what) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_model_load: a model pointer and a %s are needed",
            strcmp(how, "path") ? "version" : "path");
        return -EINVAL;
    }
    *out = NULL;
    const char *name = cfg && cfg->name ? cfg->name : "vmaf";
    const bool path = !strcmp(how, "path");
    if ((!path && strchr(what, ':')) || strchr(name, ':')) {
        say(VMAF_LOG_LEVEL_ERROR, "model %s '%s' (name '%s'): ':' cannot be part of it", how,
            what, name);
        return -EINVAL;
    }
    Text spec = { 0 };
    int fd = -1;
    if (path) {
        const int err = model_path(what, &spec, &fd);
        if (err) return err;
    } else {
        text_add(&spec, "version=%s", what);
    }
    text_add(&spec, ":name=%s", name);
    if (cfg && (cfg->flags & VMAF_MODEL_FLAG_DISABLE_CLIP)) text_add(&spec, ":disable_clip");
    /* DISABLE_TRANSFORM is quale's default: a transform applies only when
     * asked for. */
    if (cfg && (cfg->flags & VMAF_MODEL_FLAG_ENABLE_TRANSFORM) &&
        !(cfg->flags & VMAF_MODEL_FLAG_DISABLE_TRANSFORM))
        text_add(&spec, ":enable_transform");
    VmafModel *m = calloc(1, sizeof(*m));
    char *s = text_take(&spec);
    char *n = strdup(name);
    if (!m || !s || !n) {
        free(m);
        free(s);
        free(n);
        if (fd >= 0) close(fd);
        return -ENOMEM;
    }
    m->spec = s;
    m->name = n;
    m->fd = fd;
    const int err = check_model_spec(m->spec);
    if (err) {
        if (fd >= 0)
            say(VMAF_LOG_LEVEL_ERROR, "(/proc/self/fd/%d is the model file '%s', opened so: "
                "its path holds ':')", fd, what);
        vmaf_model_destroy(m);
        return err;
    }
    *out = m;
    return 0;
}

int vmaf_model_load(VmafModel **model, VmafModelConfig *cfg, const char *version)
{
    return model_new(model, cfg, "version", version);
}

int vmaf_model_load_from_path(VmafModel **model, VmafModelConfig *cfg, const char *path)
{
    return model_new(model, cfg, "path", path);
}

int vmaf_model_feature_overload(VmafModel *model, const char *feature_name,
                                VmafFeatureDictionary *opts_dict)
{
    if (!model || !feature_name || !*feature_name || strpbrk(feature_name, ":=.")) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_model_feature_overload: a model and a feature name are "
            "needed");
        vmaf_feature_dictionary_free(&opts_dict);
        return -EINVAL;
    }
    Text spec = { 0 };
    text_add(&spec, "%s", model->spec);
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "%s.", feature_name);
    add_options(&spec, opts_dict, prefix);
    vmaf_feature_dictionary_free(&opts_dict);
    char *s = text_take(&spec);
    if (!s) return -ENOMEM;
    const int err = check_model_spec(s);
    if (err) {
        free(s);
        return err;
    }
    free(model->spec);
    model->spec = s;
    return 0;
}

void vmaf_model_destroy(VmafModel *model)
{
    if (!model) return;
    if (model->fd >= 0) close(model->fd);
    free(model->spec);
    free(model->name);
    free(model);
}

static int collection_new(VmafModel **model, VmafModelCollection **collection,
                          VmafModelConfig *cfg, const char *how, const char *what)
{
    if (!model || !collection) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_model_collection_load: model and collection pointers "
            "are needed");
        return -EINVAL;
    }
    *collection = NULL;
    int err = model_new(model, cfg, how, what);
    if (err) return err;
    VmafModelCollection *c = calloc(1, sizeof(*c));
    VmafModel *copy = model_copy(*model);
    if (!c || !copy) {
        free(c);
        vmaf_model_destroy(copy);
        vmaf_model_destroy(*model);
        *model = NULL;
        return -ENOMEM;
    }
    c->model = copy;
    *collection = c;
    return 0;
}

int vmaf_model_collection_load(VmafModel **model, VmafModelCollection **model_collection,
                               VmafModelConfig *cfg, const char *version)
{
    return collection_new(model, model_collection, cfg, "version", version);
}

int vmaf_model_collection_load_from_path(VmafModel **model,
                                         VmafModelCollection **model_collection,
                                         VmafModelConfig *cfg, const char *path)
{
    return collection_new(model, model_collection, cfg, "path", path);
}

int vmaf_model_collection_feature_overload(VmafModel *model,
                                           VmafModelCollection **model_collection,
                                           const char *feature_name,
                                           VmafFeatureDictionary *opts_dict)
{
    if (!model || !model_collection || !*model_collection) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_model_collection_feature_overload: a model and a "
            "collection are needed");
        vmaf_feature_dictionary_free(&opts_dict);
        return -EINVAL;
    }
    /* The model and the collection each get the options. */
    VmafFeatureDictionary *copy = NULL;
    for (unsigned i = 0; opts_dict && i < opts_dict->count; i++) {
        const int err = vmaf_feature_dictionary_set(&copy, opts_dict->key[i], opts_dict->value[i]);
        if (err) {
            vmaf_feature_dictionary_free(&copy);
            vmaf_feature_dictionary_free(&opts_dict);
            return err;
        }
    }
    int err = vmaf_model_feature_overload(model, feature_name, opts_dict);
    if (err) {
        vmaf_feature_dictionary_free(&copy);
        return err;
    }
    return vmaf_model_feature_overload((*model_collection)->model, feature_name, copy);
}

void vmaf_model_collection_destroy(VmafModelCollection *model_collection)
{
    if (!model_collection) return;
    vmaf_model_destroy(model_collection->model);
    free(model_collection);
}

/* ---- pictures ----------------------------------------------------------- */

/* The owners of a picture vmaf_picture_alloc() or a preallocated pool
 * made: the memory is a quale picture. */
struct VmafRef {
    atomic_int count;
    QualePicture pic;
};

static const struct {
    enum VmafPixelFormat vmaf;
    enum QualeChroma quale;
} pixel_formats[] = {
    { VMAF_PIX_FMT_YUV420P, QUALE_CHROMA_420 },
    { VMAF_PIX_FMT_YUV422P, QUALE_CHROMA_422 },
    { VMAF_PIX_FMT_YUV444P, QUALE_CHROMA_444 },
    { VMAF_PIX_FMT_YUV400P, QUALE_CHROMA_400 },
};

static int format_of(enum VmafPixelFormat pix_fmt, unsigned bpc, unsigned w, unsigned h,
                     QualeVideoFormat *f)
{
    for (unsigned i = 0; i < sizeof(pixel_formats) / sizeof(pixel_formats[0]); i++) {
        if (pixel_formats[i].vmaf == pix_fmt) {
            *f = (QualeVideoFormat){ .chroma = pixel_formats[i].quale, .bitdepth = bpc,
                                     .width = w, .height = h };
            char error[256];
            if (quale_video_format_check(f, error, sizeof(error))) {
                say(VMAF_LOG_LEVEL_ERROR, "picture of %ux%u, %u bits: %s", w, h, bpc, error);
                return -EINVAL;
            }
            return 0;
        }
    }
    say(VMAF_LOG_LEVEL_ERROR, "picture: unknown pixel format %d", (int)pix_fmt);
    return -EINVAL;
}

/* Fills a VmafPicture that owns (a reference to) ref->pic. */
static void describe_picture(VmafPicture *pic, struct VmafRef *ref, enum VmafPixelFormat pix_fmt)
{
    memset(pic, 0, sizeof(*pic));
    pic->pix_fmt = pix_fmt;
    pic->bpc = ref->pic.format.bitdepth;
    for (unsigned p = 0; p < ref->pic.plane_count && p < 3; p++) {
        pic->w[p] = ref->pic.plane_width[p];
        pic->h[p] = ref->pic.plane_height[p];
        pic->stride[p] = ref->pic.stride[p];
        pic->data[p] = ref->pic.data[p];
    }
    pic->ref = ref;
}

int vmaf_picture_alloc(VmafPicture *pic, enum VmafPixelFormat pix_fmt, unsigned bpc,
                       unsigned w, unsigned h)
{
    if (!pic) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_picture_alloc: no picture");
        return -EINVAL;
    }
    memset(pic, 0, sizeof(*pic));
    QualeVideoFormat f;
    int err = format_of(pix_fmt, bpc, w, h, &f);
    if (err) return err;
    struct VmafRef *ref = calloc(1, sizeof(*ref));
    if (!ref) return -ENOMEM;
    err = quale_picture_alloc(&ref->pic, &f);
    if (err) {
        free(ref);
        return err;
    }
    atomic_init(&ref->count, 1);
    describe_picture(pic, ref, pix_fmt);
    return 0;
}

static void ref_release(struct VmafRef *ref)
{
    if (atomic_fetch_sub(&ref->count, 1) != 1) return;
    quale_picture_unref(&ref->pic);
    free(ref);
}

int vmaf_picture_unref(VmafPicture *pic)
{
    if (!pic || !pic->ref) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_picture_unref: %s", pic ? "the picture holds no "
            "reference (unreferenced already, or never allocated)" : "no picture");
        return -EINVAL;
    }
    ref_release(pic->ref);
    memset(pic, 0, sizeof(*pic));
    return 0;
}

/* ---- contexts ------------------------------------------------------------ */

/* Every context ever made stays listed; a closed one keeps its husk, so
 * that a call on it (a second vmaf_close(), say) is refused instead of
 * reading freed memory.
 *
 * Every call on a context holds its lock from start to end (enter() and
 * leave()), so that calls from several threads take turns: two
 * vmaf_read_pictures() cannot both take one index, a flush waits for the
 * frame being read, and vmaf_close() waits for the calls in progress
 * (those after it find the context closed).  The husk keeps the lock, so
 * it is never destroyed. */
struct VmafContext {
    struct VmafContext *next_made;
    pthread_mutex_t lock;
    bool closed; /* under lock */

    QualeContext *ctx;
    VmafConfiguration cfg;
    unsigned next_index;       /* the index vmaf_read_pictures() expects */
    bool flushed;
    double started, elapsed;   /* for the fps of the output files */

    bool preallocated;
    bool pool_on_device; /* vmaf_cuda_preallocate_pictures(), DEVICE */
    QualeVideoFormat pool_format;
    enum VmafPixelFormat pool_pix_fmt;
    VmafCudaState *cuda_state; /* imported: freed with the context */
};

static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct VmafContext *contexts;

/* Takes the context's lock for a call, when vmaf is an open context made
 * by vmaf_init(); else says why not, and the call is refused.  leave()
 * ends the call. */
static bool enter(VmafContext *vmaf, const char *caller)
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

static void leave(VmafContext *vmaf)
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

static bool before_frames(VmafContext *vmaf, const char *caller)
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

/* ---- preallocated pictures ------------------------------------------------ */

/* Where fetched pictures come from: the context's recycled host pictures,
 * or (on_device) its device pictures. */
static int set_pool(VmafContext *vmaf, const char *caller, enum VmafPixelFormat pix_fmt,
                    unsigned bpc, unsigned w, unsigned h, bool on_device)
{
    if (vmaf->preallocated) {
        say(VMAF_LOG_LEVEL_ERROR, "%s: pictures were preallocated already", caller);
        return -EINVAL;
    }
    QualeVideoFormat f;
    const int err = format_of(pix_fmt, bpc, w, h, &f);
    if (err) return err;
    /* The context's pool recycles pictures as they come back: pic_cnt is
     * how many libvmaf would make ahead, which quale does not need. */
    vmaf->pool_format = f;
    vmaf->pool_pix_fmt = pix_fmt;
    vmaf->pool_on_device = on_device;
    vmaf->preallocated = true;
    return 0;
}

static int fetch(VmafContext *vmaf, VmafPicture *pic, const char *caller)
{
    if (!pic || !vmaf->preallocated) {
        say(VMAF_LOG_LEVEL_ERROR, "%s: %s", caller, pic ? "no preallocation before" : "no picture");
        return -EINVAL;
    }
    struct VmafRef *ref = calloc(1, sizeof(*ref));
    if (!ref) return -ENOMEM;
    const int err = vmaf->pool_on_device
                        ? quale_context_alloc_device_picture(vmaf->ctx, &ref->pic, &vmaf->pool_format)
                        : quale_context_alloc_picture(vmaf->ctx, &ref->pic, &vmaf->pool_format);
    if (err) {
        free(ref);
        return err;
    }
    atomic_init(&ref->count, 1);
    describe_picture(pic, ref, vmaf->pool_pix_fmt);
    return 0;
}

int vmaf_preallocate_pictures(VmafContext *vmaf, VmafPictureConfiguration cfg)
{
    if (!enter(vmaf, "vmaf_preallocate_pictures")) return -EINVAL;
    const int err = set_pool(vmaf, "vmaf_preallocate_pictures", cfg.pic_params.pix_fmt,
                             cfg.pic_params.bpc, cfg.pic_params.w, cfg.pic_params.h, false);
    leave(vmaf);
    return err;
}

int vmaf_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic)
{
    if (!enter(vmaf, "vmaf_fetch_preallocated_picture")) return -EINVAL;
    const int err = fetch(vmaf, pic, "vmaf_fetch_preallocated_picture");
    leave(vmaf);
    return err;
}

/* ---- CUDA ------------------------------------------------------------------ */

struct VmafCudaState {
    void *cu_ctx; /* the caller's CUcontext, or NULL for the primary one */
};

int vmaf_cuda_state_init(VmafCudaState **cu_state, VmafCudaConfiguration cfg)
{
    if (!cu_state) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_cuda_state_init: no state pointer");
        return -EINVAL;
    }
    *cu_state = NULL;
    if (!quale_backend_built(QUALE_BACKEND_CUDA)) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_cuda_state_init: this build of quale has no CUDA backend");
        return -ENOSYS;
    }
    /* The driver must load and see a device; the context itself is checked
     * when a VmafContext takes the state. */
    unsigned count = 0;
    char error[512] = "";
    const int err = quale_list_devices(QUALE_BACKEND_CUDA, NULL, 0, &count, error, sizeof(error));
    if (err || count == 0) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_cuda_state_init: %s", err ? error : "no CUDA device");
        return err ? err : -ENODEV;
    }
    VmafCudaState *state = calloc(1, sizeof(*state));
    if (!state) return -ENOMEM;
    state->cu_ctx = cfg.cu_ctx;
    *cu_state = state;
    return 0;
}

/* vmaf_cuda_import_state(), inside its call. */
static int import_state(VmafContext *vmaf, VmafCudaState *cu_state)
{
    if (!before_frames(vmaf, "vmaf_cuda_import_state")) return -EINVAL;
    if (!cu_state || vmaf->cuda_state) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_cuda_import_state: %s",
            cu_state ? "the context has a CUDA state already" : "no state");
        return -EINVAL;
    }
    if (vmaf->preallocated) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_cuda_import_state: after the pictures were preallocated "
            "(import the state first)");
        return -EINVAL;
    }
    const int err = quale_use_cuda_context(vmaf->ctx, cu_state->cu_ctx);
    if (!err) vmaf->cuda_state = cu_state;
    return err;
}

int vmaf_cuda_import_state(VmafContext *vmaf, VmafCudaState *cu_state)
{
    if (!enter(vmaf, "vmaf_cuda_import_state")) return -EINVAL;
    const int err = import_state(vmaf, cu_state);
    leave(vmaf);
    return err;
}

/* vmaf_cuda_preallocate_pictures(), inside its call. */
static int cuda_preallocate(VmafContext *vmaf, VmafCudaPictureConfiguration cfg)
{
    static const char caller[] = "vmaf_cuda_preallocate_pictures";
    if (!vmaf->cuda_state) {
        say(VMAF_LOG_LEVEL_ERROR, "%s: no CUDA state (vmaf_cuda_import_state() first)", caller);
        return -EINVAL;
    }
    switch (cfg.pic_prealloc_method) {
    case VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_NONE:
        return 0;
    case VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE:
    case VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST:
    case VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST_PINNED:
        /* Host pictures of a CUDA context are pinned memory already. */
        return set_pool(vmaf, caller, cfg.pic_params.pix_fmt, cfg.pic_params.bpc, cfg.pic_params.w,
                        cfg.pic_params.h,
                        cfg.pic_prealloc_method == VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE);
    }
    say(VMAF_LOG_LEVEL_ERROR, "%s: unknown preallocation method %d", caller,
        (int)cfg.pic_prealloc_method);
    return -EINVAL;
}

int vmaf_cuda_preallocate_pictures(VmafContext *vmaf, VmafCudaPictureConfiguration cfg)
{
    if (!enter(vmaf, "vmaf_cuda_preallocate_pictures")) return -EINVAL;
    const int err = cuda_preallocate(vmaf, cfg);
    leave(vmaf);
    return err;
}

int vmaf_cuda_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic)
{
    if (!enter(vmaf, "vmaf_cuda_fetch_preallocated_picture")) return -EINVAL;
    const int err = fetch(vmaf, pic, "vmaf_cuda_fetch_preallocated_picture");
    leave(vmaf);
    return err;
}

/* ---- output -------------------------------------------------------------- */

/*
 * A call that fails leaves the file as it was: everything that can be
 * checked is checked before the file is touched, and the results go to a
 * new file beside it that is renamed over it once whole (a failed write
 * removes that file).  The new file takes the old one's mode and owner.
 * Where a rename cannot keep the file as the user has it (a device or a
 * FIFO such as /dev/stdout, a file of several hard links, one whose owner
 * cannot be kept, a directory that takes no new file) the results are
 * written into the file directly, after the same checks.
 */

/* The results, at libvmaf 3.x's 6 decimals, into f, which is closed. */
static int write_stream(VmafContext *vmaf, FILE *f, enum QualeOutputFormat format,
                        const char *path)
{
    const QualeOutputOptions options = {
        .precision = 6,
        .fps = vmaf->elapsed > 0 ? vmaf->next_index / vmaf->elapsed : 0,
    };
    int err = quale_write_output(vmaf->ctx, f, format, &options);
    if (fclose(f) && !err) {
        say(VMAF_LOG_LEVEL_ERROR, "writing '%s' failed: %s", path, strerror(errno));
        err = -EIO;
    }
    return err;
}

static int write_direct(VmafContext *vmaf, const char *path, enum QualeOutputFormat format)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        const int e = errno;
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(e));
        return -e;
    }
    return write_stream(vmaf, f, format, path);
}

/* ".NAME.PID-N.partial" in target's directory: hidden, and unique to this
 * call (N counts the calls of the process), shortened to fit a name of
 * NAME_MAX bytes.  NULL without memory. */
static char *partial_name(const char *target)
{
    static atomic_uint calls;
    const char *slash = strrchr(target, '/');
    const size_t dir_len = slash ? (size_t)(slash - target) + 1 : 0;
    const char *base = target + dir_len;
    char suffix[48];
    const int n = snprintf(suffix, sizeof(suffix), ".%ld-%u.partial", (long)getpid(),
                           atomic_fetch_add(&calls, 1));
    if (n < 0) return NULL;
    size_t keep = strlen(base);
    const size_t room = NAME_MAX - 1 - (size_t)n; /* 1: the leading '.' */
    if (keep > room) keep = room;
    char *out = malloc(dir_len + 1 + keep + (size_t)n + 1);
    if (!out) return NULL;
    memcpy(out, target, dir_len);
    out[dir_len] = '.';
    memcpy(out + dir_len + 1, base, keep);
    memcpy(out + dir_len + 1 + keep, suffix, (size_t)n + 1);
    return out;
}

/* The results into a new file renamed over target (old: the file there,
 * NULL for none).  1 when this way cannot keep the old file as it is (its
 * owner, or a directory that takes no new file): write it directly. */
static int write_replacing(VmafContext *vmaf, const char *path, const char *target,
                           const struct stat *old, enum QualeOutputFormat format)
{
    char *partial = NULL;
    int fd = -1, e = 0;
    for (unsigned attempt = 0; attempt < 16 && fd < 0; attempt++) {
        free(partial);
        if (!(partial = partial_name(target))) return -ENOMEM;
        /* A new file gets the mode fopen() would give it (0666 less the
         * umask); a replacement starts private and takes the old mode. */
        fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, old ? 0600 : 0666);
        e = fd < 0 ? errno : 0;
        if (fd < 0 && e != EEXIST) break;
    }
    if (fd < 0) {
        free(partial);
        if (old && (e == EACCES || e == EPERM || e == EROFS)) return 1;
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(e));
        return -e;
    }
    if (old && (((old->st_uid != geteuid() || old->st_gid != getegid()) &&
                 fchown(fd, old->st_uid, old->st_gid)) ||
                fchmod(fd, old->st_mode & 07777))) {
        close(fd);
        unlink(partial);
        free(partial);
        return 1;
    }
    FILE *f = fdopen(fd, "w");
    int err = 0;
    if (!f) {
        err = -errno;
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(-err));
        close(fd);
    } else {
        err = write_stream(vmaf, f, format, path);
    }
    if (!err && rename(partial, target)) {
        err = -errno;
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(-err));
    }
    if (err) unlink(partial);
    free(partial);
    return err;
}

/* vmaf_write_output(), inside its call. */
static int write_output(VmafContext *vmaf, const char *path, enum VmafOutputFormat fmt)
{
    static const enum QualeOutputFormat formats[] = {
        [VMAF_OUTPUT_FORMAT_XML] = QUALE_OUTPUT_XML, [VMAF_OUTPUT_FORMAT_JSON] = QUALE_OUTPUT_JSON,
        [VMAF_OUTPUT_FORMAT_CSV] = QUALE_OUTPUT_CSV, [VMAF_OUTPUT_FORMAT_SUB] = QUALE_OUTPUT_SUB,
    };
    if (!path || !*path || fmt <= VMAF_OUTPUT_FORMAT_NONE || fmt > VMAF_OUTPUT_FORMAT_SUB) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_write_output: %s", path && *path ? "unknown output "
            "format" : "no path");
        return -EINVAL;
    }
    const enum QualeOutputFormat format = formats[fmt];
    /* Nothing to write yet, or a run without results: the file is not
     * touched. */
    if (!vmaf->flushed) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_write_output: before the end of the stream "
            "(vmaf_read_pictures(vmaf, NULL, NULL, 0)) the scores are not complete; '%s' is "
            "left as it was", path);
        return -EINVAL;
    }
    int err = context_results_ready(vmaf->ctx, "vmaf_write_output");
    if (err) return err;

    struct stat st;
    if (stat(path, &st)) {
        const int e = errno;
        struct stat link;
        if (e != ENOENT) {
            say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(e));
            return -e;
        }
        /* A link to no file: fopen() makes the file it names. */
        if (!lstat(path, &link) && S_ISLNK(link.st_mode)) return write_direct(vmaf, path, format);
        return write_replacing(vmaf, path, path, NULL, format);
    }
    if (S_ISDIR(st.st_mode)) {
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(EISDIR));
        return -EISDIR;
    }
    if (!S_ISREG(st.st_mode)) return write_direct(vmaf, path, format);
    /* A file the caller may not write stays as it is: a rename would go
     * around its permissions. */
    if (access(path, W_OK)) {
        const int e = errno;
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(e));
        return -e;
    }
    /* A rename would part a file of several names; a symbolic link stays
     * and its target gets the results. */
    if (st.st_nlink > 1) return write_direct(vmaf, path, format);
    char *target = realpath(path, NULL);
    err = write_replacing(vmaf, path, target ? target : path, &st, format);
    free(target);
    return err == 1 ? write_direct(vmaf, path, format) : err;
}

int vmaf_write_output(VmafContext *vmaf, const char *output_path, enum VmafOutputFormat fmt)
{
    if (!enter(vmaf, "vmaf_write_output")) return -EINVAL;
    const int err = write_output(vmaf, output_path, fmt);
    leave(vmaf);
    return err;
}
