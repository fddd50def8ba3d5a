/*
 * libvmaf's feature dictionaries, models and model collections: quale
 * model specs and option text, made requests on a context when used.
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

/* ---- feature dictionaries ----------------------------------------------- */


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
void add_options(Text *t, const VmafFeatureDictionary *d, const char *prefix)
{
    for (unsigned i = 0; d && i < d->count; i++)
        text_add(t, ":%s%s=%s", prefix, d->key[i], d->value[i]);
}

/* ---- models ------------------------------------------------------------- */



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
