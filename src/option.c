/* Parsing metric options into their state, and libvmaf's key suffix rule. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common.h"
#include "option.h"

static void *field(void *state, const MetricOption *o)
{
    return (char *)state + o->offset;
}

static const void *cfield(const void *state, const MetricOption *o)
{
    return (const char *)state + o->offset;
}

unsigned options_count(const MetricOption *options)
{
    unsigned n = 0;
    while (options && options[n].name) n++;
    return n;
}

void options_set_defaults(const MetricOption *options, void *state)
{
    for (const MetricOption *o = options; o && o->name; o++) {
        switch (o->type) {
        case QUALE_OPTION_BOOL: *(bool *)field(state, o) = o->default_value.b; break;
        case QUALE_OPTION_INT:
        case QUALE_OPTION_CHOICE: *(int *)field(state, o) = o->default_value.i; break;
        case QUALE_OPTION_DOUBLE: *(double *)field(state, o) = o->default_value.d; break;
        case QUALE_OPTION_STRING: *(char **)field(state, o) = NULL; break;
        }
    }
}

void options_free(const MetricOption *options, void *state)
{
    for (const MetricOption *o = options; o && o->name; o++) {
        if (o->type != QUALE_OPTION_STRING) continue;
        char **s = field(state, o);
        free(*s);
        *s = NULL;
    }
}

const MetricOption *option_find(const MetricOption *options, const char *name)
{
    for (const MetricOption *o = options; o && o->name; o++)
        if (!strcmp(o->name, name)) return o;
    return NULL;
}

const MetricOption *option_find_alias(const MetricOption *options, const char *alias)
{
    for (const MetricOption *o = options; o && o->name; o++)
        if (o->alias && !strcmp(o->alias, alias)) return o;
    return NULL;
}

int option_set(const MetricOption *o, void *state, const char *value,
               char *error, size_t error_size)
{
    char *end = NULL;
    switch (o->type) {
    case QUALE_OPTION_BOOL:
        if (!strcasecmp(value, "true") || !strcmp(value, "1")) {
            *(bool *)field(state, o) = true;
            return 0;
        }
        if (!strcasecmp(value, "false") || !strcmp(value, "0")) {
            *(bool *)field(state, o) = false;
            return 0;
        }
        snprintf(error, error_size, "option '%s' takes true or false, not '%s'",
                 o->name, value);
        return -EINVAL;
    case QUALE_OPTION_INT: {
        errno = 0;
        const long v = strtol(value, &end, 0);
        if (!*value || *end || errno) {
            snprintf(error, error_size, "option '%s' takes an integer, not '%s'",
                     o->name, value);
            return -EINVAL;
        }
        if ((double)v < o->min || (double)v > o->max) {
            snprintf(error, error_size, "option '%s' must be in [%g, %g], not %ld",
                     o->name, o->min, o->max, v);
            return -ERANGE;
        }
        *(int *)field(state, o) = (int)v;
        return 0;
    }
    case QUALE_OPTION_DOUBLE: {
        errno = 0;
        const double v = strtod(value, &end);
        if (!*value || *end || errno || !isfinite(v)) {
            snprintf(error, error_size, "option '%s' takes a number, not '%s'",
                     o->name, value);
            return -EINVAL;
        }
        if (v < o->min || v > o->max) {
            snprintf(error, error_size, "option '%s' must be in [%g, %g], not %g",
                     o->name, o->min, o->max, v);
            return -ERANGE;
        }
        *(double *)field(state, o) = v;
        return 0;
    }
    case QUALE_OPTION_CHOICE: {
        char names[256] = "";
        size_t len = 0;
        for (int i = 0; o->choices && o->choices[i]; i++) {
            if (!strcmp(value, o->choices[i])) {
                *(int *)field(state, o) = i;
                return 0;
            }
            if (len < sizeof(names))
                len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
                                        o->choices[i]);
        }
        snprintf(error, error_size, "option '%s' takes one of %s, not '%s'", o->name, names, value);
        return -EINVAL;
    }
    case QUALE_OPTION_STRING: {
        char *copy = strdup(value);
        if (!copy) {
            snprintf(error, error_size, "option '%s': out of memory", o->name);
            return -ENOMEM;
        }
        char **s = field(state, o);
        free(*s);
        *s = copy;
        return 0;
    }
    }
    snprintf(error, error_size, "option '%s' has an unknown type", o->name);
    return -EINVAL;
}

bool option_is_default(const MetricOption *o, const void *state)
{
    switch (o->type) {
    case QUALE_OPTION_BOOL: return *(const bool *)cfield(state, o) == o->default_value.b;
    case QUALE_OPTION_INT:
    case QUALE_OPTION_CHOICE: return *(const int *)cfield(state, o) == o->default_value.i;
    case QUALE_OPTION_DOUBLE: return *(const double *)cfield(state, o) == o->default_value.d;
    case QUALE_OPTION_STRING: return *(char *const *)cfield(state, o) == NULL;
    }
    return true;
}

static int by_option_name(const void *a, const void *b)
{
    const MetricOption *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

int option_key_name(const MetricOption *options, const void *state,
                    const char *key, char *out, size_t out_size)
{
    const MetricOption *changed[64];
    unsigned n = 0;
    for (const MetricOption *o = options; o && o->name; o++) {
        if (!(o->flags & OPTION_FEATURE_PARAM) || option_is_default(o, state))
            continue;
        if (n == QUALE_ARRAY_SIZE(changed)) return -E2BIG;
        changed[n++] = o;
    }
    qsort(changed, n, sizeof(changed[0]), by_option_name);

    size_t len = (size_t)snprintf(out, out_size, "%s", key);
    for (unsigned i = 0; i < n && len < out_size; i++) {
        const MetricOption *o = changed[i];
        const char *label = o->alias ? o->alias : o->name;
        const void *v = cfield(state, o);
        switch (o->type) {
        case QUALE_OPTION_BOOL:
            len += (size_t)snprintf(out + len, out_size - len, "_%s", label);
            break;
        case QUALE_OPTION_INT:
            len += (size_t)snprintf(out + len, out_size - len, "_%s_%d", label,
                                    *(const int *)v);
            break;
        case QUALE_OPTION_DOUBLE:
            len += (size_t)snprintf(out + len, out_size - len, "_%s_%g", label,
                                    *(const double *)v);
            break;
        case QUALE_OPTION_CHOICE:
            len += (size_t)snprintf(out + len, out_size - len, "_%s_%s", label,
                                    o->choices[*(const int *)v]);
            break;
        case QUALE_OPTION_STRING:
            len += (size_t)snprintf(out + len, out_size - len, "_%s_%s", label,
                                    *(char *const *)v);
            break;
        }
    }
    return len < out_size ? 0 : -ENAMETOOLONG;
}

int option_spec_split(const char *spec, size_t *name_len, OptionPairFn fn,
                      void *cookie, char *error, size_t error_size)
{
    /* Defined even when fn fails (fn reports its own errors). */
    if (error_size) error[0] = '\0';
    const char *eq = strchr(spec, '=');
    *name_len = eq ? (size_t)(eq - spec) : strlen(spec);
    if (*name_len == 0) {
        snprintf(error, error_size, "'%s': the metric name is missing", spec);
        return -EINVAL;
    }
    if (!eq) return 0;

    /* "name=k1=v1:k2=v2": split the rest on ':' then each pair on '='. */
    const char *p = eq + 1;
    /* A value may be a path (heatmaps_path): up to PATH_MAX bytes. */
    char key[128], value[4096];
    for (;;) {
        const char *colon = strchr(p, ':');
        const size_t pair_len = colon ? (size_t)(colon - p) : strlen(p);
        const char *sep = memchr(p, '=', pair_len);
        /* Messages quote at most 64 bytes of the spec and of the option, so
         * that the reason always fits the caller's buffer (callers log the
         * "key=value" errors of this function). */
        const int spec_len = (int)QUALE_MIN(strlen(spec), 64);
        const char *spec_more = strlen(spec) > 64 ? "..." : "";
        const int quoted = (int)QUALE_MIN(pair_len, 64);
        const char *more = pair_len > 64 ? "..." : "";
        if (!sep || sep == p || sep + 1 == p + pair_len) {
            snprintf(error, error_size, "'%.*s%s': option '%.*s%s' is not of the form key=value",
                     spec_len, spec, spec_more, quoted, p, more);
            return -EINVAL;
        }
        const size_t key_len = (size_t)(sep - p), value_len = pair_len - key_len - 1;
        if (key_len >= sizeof(key) || value_len >= sizeof(value)) {
            snprintf(error, error_size, "'%.*s%s': option '%.*s%s' is too long for key=value "
                     "(keys of up to %zu bytes, values of up to %zu)", spec_len, spec, spec_more,
                     quoted, p, more, sizeof(key) - 1, sizeof(value) - 1);
            return -EINVAL;
        }
        memcpy(key, p, key_len);
        key[key_len] = '\0';
        memcpy(value, sep + 1, value_len);
        value[value_len] = '\0';
        int err = fn(cookie, key, value);
        if (err) return err;
        if (!colon) break;
        p = colon + 1;
    }
    return 0;
}

bool options_equal(const MetricOption *options, const void *a, const void *b)
{
    for (const MetricOption *o = options; o && o->name; o++) {
        switch (o->type) {
        case QUALE_OPTION_BOOL:
            if (*(const bool *)cfield(a, o) != *(const bool *)cfield(b, o)) return false;
            break;
        case QUALE_OPTION_INT:
        case QUALE_OPTION_CHOICE:
            if (*(const int *)cfield(a, o) != *(const int *)cfield(b, o)) return false;
            break;
        case QUALE_OPTION_DOUBLE:
            if (*(const double *)cfield(a, o) != *(const double *)cfield(b, o)) return false;
            break;
        case QUALE_OPTION_STRING: {
            const char *x = *(char *const *)cfield(a, o), *y = *(char *const *)cfield(b, o);
            if ((x == NULL) != (y == NULL) || (x && strcmp(x, y))) return false;
            break;
        }
        }
    }
    return true;
}

int options_describe(const char *metric, const MetricOption *options, const void *state,
                     char *out, size_t out_size)
{
    size_t len = (size_t)snprintf(out, out_size, "%s", metric);
    char sep = '=';
    for (const MetricOption *o = options; o && o->name && len < out_size; o++) {
        if (option_is_default(o, state)) continue;
        const void *v = cfield(state, o);
        char value[64];
        const char *text = value;
        switch (o->type) {
        case QUALE_OPTION_BOOL: text = *(const bool *)v ? "true" : "false"; break;
        case QUALE_OPTION_INT: snprintf(value, sizeof(value), "%d", *(const int *)v); break;
        case QUALE_OPTION_DOUBLE: {
            /* The shortest text that reads back to the value. */
            const double d = *(const double *)v;
            for (int digits = 6; digits <= 17; digits++) {
                snprintf(value, sizeof(value), "%.*g", digits, d);
                if (strtod(value, NULL) == d) break;
            }
            break;
        }
        case QUALE_OPTION_CHOICE: text = o->choices[*(const int *)v]; break;
        case QUALE_OPTION_STRING: text = *(char *const *)v; break;
        }
        len += (size_t)snprintf(out + len, out_size - len, "%c%s=%s", sep, o->name, text);
        sep = ':';
    }
    return len < out_size ? 0 : -ENAMETOOLONG;
}
