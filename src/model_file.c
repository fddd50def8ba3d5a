/*
 * libvmaf's model files: a JSON document (one "model_dict", or a bootstrap
 * collection "0".."N") whose libsvm text holds the SVR, read into model
 * descriptions (model.h's ModelDesc) with a message that names the file,
 * line and column of anything it refuses.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "json.h"
#include "model_file.h"

void *model_pool_alloc(ModelPool *pool, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) return NULL;
    if (pool->count == pool->capacity) {
        const size_t fresh = pool->capacity ? pool->capacity * 2 : 32;
        void **blocks = realloc(pool->blocks, fresh * sizeof(*blocks));
        if (!blocks) return NULL;
        pool->blocks = blocks;
        pool->capacity = fresh;
    }
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) return NULL;
    pool->blocks[pool->count++] = p;
    return p;
}

void model_pool_free(ModelPool *pool)
{
    for (size_t i = 0; i < pool->count; i++) free(pool->blocks[i]);
    free(pool->blocks);
    memset(pool, 0, sizeof(*pool));
}

char *model_dup_string(const char *s)
{
    const size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

/* Where a loader reports from: the source ("model file x.json", "built-in
 * model vmaf_v0.6.1") and, for JSON files, the text for line:column. */
typedef struct Loader {
    const char *source;
    const char *path;   /* file name for "path:line:col:", NULL if built-in */
    const char *text;
    size_t length;
    ModelPool *pool;
    bool (*feature_known)(const char *feature);
    char *error;
    size_t error_size;
} Loader;

/* Messages quote text from the model file and the spec (names, values,
 * libsvm tokens), which may hold decoded control characters such as "\n"
 * or ESC: a message must stay one line and must not drive a terminal. */
static void replace_controls(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f) *s = '?';
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int load_fail(const Loader *L, const JsonValue *at, int err,
                     const char *fmt, ...)
{
    if (!L->error || !L->error_size) return err;
    char what[384];
    va_list args;
    va_start(args, fmt);
    vsnprintf(what, sizeof(what), fmt, args);
    va_end(args);
    if (L->path && at && L->text) {
        unsigned line, column;
        json_position(L->text, L->length, at->offset, &line, &column);
        snprintf(L->error, L->error_size, "model file %s:%u:%u: %s", L->path,
                 line, column, what);
    } else {
        snprintf(L->error, L->error_size, "%s: %s", L->source, what);
    }
    replace_controls(L->error);
    return err;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int model_set_error(char *error, size_t size, const char *fmt, ...)
{
    if (error && size) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(error, size, fmt, args);
        va_end(args);
        replace_controls(error);
    }
    return -EINVAL;
}

int model_out_of_memory(char *error, size_t size)
{
    model_set_error(error, size, "out of memory");
    return -ENOMEM;
}

/* ------------------------------------------------------------------------ */
/* Numbers in libsvm text and option values                                  */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
           c == '\f';
}

/*
 * A decimal number as libsvm's model reader (C++ operator>> for double)
 * takes it: [+-]digits[.digits][e[+-]digits], with digits on at least one
 * side of the point, converted by strtod.  0 and the value, or -EINVAL.
 */
static int parse_decimal(const char *s, size_t n, double *value)
{
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    while (i < n && is_digit(s[i])) i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i])) i++, digits++;
    }
    if (!digits) return -EINVAL;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n || !is_digit(s[i])) return -EINVAL;
        while (i < n && is_digit(s[i])) i++;
    }
    if (i != n || n >= 128) return -EINVAL;
    char buf[128];
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end = NULL;
    const double v = json_strtod(buf, &end);
    if (end != buf + n || !isfinite(v)) return -EINVAL;
    *value = v;
    return 0;
}

static int parse_count(const char *s, size_t n, unsigned long max,
                       unsigned long *value)
{
    if (n == 0 || n > 9) return -EINVAL; /* fits any unsigned long */
    unsigned long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i])) return -EINVAL;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v > max) return -EINVAL;
    *value = v;
    return 0;
}

/*
 * libvmaf stores numeric option values as "%g" of their strtof() value
 * (dict.c, VMAF_DICT_NORMALIZE_NUMERICAL_VALUES): "1.0" becomes "1".
 * Text that does not start with a number is kept as it is.
 */
void model_normalise_number(const char *text, char *out, size_t size)
{
    char *end = NULL;
    const float f = json_strtof(text, &end);
    if (f == 0 && end == text) {
        snprintf(out, size, "%s", text);
        return;
    }
    snprintf(out, size, "%g", (double)f);
    /* printf writes the C locale's decimal point; options want '.'. */
    const struct lconv *lc = localeconv();
    const char *point = lc && lc->decimal_point && lc->decimal_point[0]
                            ? lc->decimal_point : ".";
    char *at = strcmp(point, ".") ? strstr(out, point) : NULL;
    if (at) {
        const size_t plen = strlen(point);
        *at = '.';
        memmove(at + 1, at + plen, strlen(at + plen) + 1);
    }
}

/* libvmaf's isnumeric() for option values given on the command line:
 * the whole text (surrounding blanks aside) is one float. */
bool model_is_numeric(const char *text)
{
    char *end = NULL;
    json_strtof(text, &end);
    if (end == text) return false;
    while (is_space(*end)) end++;
    return *end == '\0';
}

/* ------------------------------------------------------------------------ */
/* libsvm model text                                                        */

typedef struct Cursor {
    const char *s;
    size_t n, pos;
} Cursor;

/* The next blank-separated token, false at the end. */
static bool next_token(Cursor *c, const char **token, size_t *length)
{
    while (c->pos < c->n && is_space(c->s[c->pos])) c->pos++;
    if (c->pos >= c->n) return false;
    const size_t start = c->pos;
    while (c->pos < c->n && !is_space(c->s[c->pos])) c->pos++;
    *token = c->s + start;
    *length = c->pos - start;
    return true;
}

static bool token_is(const char *token, size_t length, const char *word)
{
    return strlen(word) == length && !memcmp(token, word, length);
}

#define SVM_FAIL(...) load_fail(L, at, -EINVAL, __VA_ARGS__)

/* The libsvm header, from the start to its "SV" line (past it at the
 * end): gamma and rho into svm, total_sv. */
static int parse_libsvm_header(const Loader *L, const JsonValue *at, const char *where,
                               Cursor *cursor, ModelSvmDesc *svm, unsigned long *total_out)
{
    Cursor c = *cursor;
    const char *tok;
    size_t len;
    bool have_type = false, have_kernel = false, have_gamma = false;
    bool have_rho = false;
    unsigned long nr_class = 0, total_sv = 0;
    bool have_nr_class = false, have_total = false;
    for (;;) {
        if (!next_token(&c, &tok, &len))
            return SVM_FAIL("%s: the libsvm model has no \"SV\" line", where);
        if (token_is(tok, len, "SV")) break;

        const char *key = tok;
        const size_t key_len = len;
        if (token_is(key, key_len, "svm_type")) {
            if (!next_token(&c, &tok, &len))
                return SVM_FAIL("%s: svm_type without a value", where);
            if (!token_is(tok, len, "nu_svr") && !token_is(tok, len, "epsilon_svr"))
                return SVM_FAIL("%s: svm_type \"%.*s\" is not supported (VMAF "
                                "models are nu_svr)", where, (int)QUALE_MIN(len, 40), tok);
            have_type = true;
        } else if (token_is(key, key_len, "kernel_type")) {
            if (!next_token(&c, &tok, &len))
                return SVM_FAIL("%s: kernel_type without a value", where);
            if (!token_is(tok, len, "rbf"))
                return SVM_FAIL("%s: kernel_type \"%.*s\" is not supported (VMAF "
                                "models use rbf)", where, (int)QUALE_MIN(len, 40), tok);
            have_kernel = true;
        } else if (token_is(key, key_len, "gamma")) {
            if (!next_token(&c, &tok, &len) || parse_decimal(tok, len, &svm->gamma))
                return SVM_FAIL("%s: gamma needs a number", where);
            have_gamma = true;
        } else if (token_is(key, key_len, "coef0") || token_is(key, key_len, "degree")) {
            double ignored; /* not used by the rbf kernel */
            if (!next_token(&c, &tok, &len) || parse_decimal(tok, len, &ignored))
                return SVM_FAIL("%s: %.*s needs a number", where, (int)key_len, key);
        } else if (token_is(key, key_len, "nr_class")) {
            if (!next_token(&c, &tok, &len) || parse_count(tok, len, 1000, &nr_class))
                return SVM_FAIL("%s: nr_class needs a count", where);
            if (nr_class != 2)
                return SVM_FAIL("%s: nr_class is %lu; a regression model has 2",
                                where, nr_class);
            have_nr_class = true;
        } else if (token_is(key, key_len, "total_sv")) {
            if (!next_token(&c, &tok, &len) ||
                parse_count(tok, len, MODEL_MAX_SV, &total_sv) || total_sv == 0)
                return SVM_FAIL("%s: total_sv needs a count from 1 to %u", where,
                                MODEL_MAX_SV);
            have_total = true;
        } else if (token_is(key, key_len, "rho") || token_is(key, key_len, "label") ||
                   token_is(key, key_len, "nr_sv") || token_is(key, key_len, "probA") ||
                   token_is(key, key_len, "probB")) {
            /* Lists whose length libsvm takes from nr_class: one rho (and
             * probA/probB) per pair of classes, one label / nr_sv each. */
            if (!have_nr_class)
                return SVM_FAIL("%s: %.*s comes before nr_class", where,
                                (int)key_len, key);
            const bool per_class = token_is(key, key_len, "label") ||
                                   token_is(key, key_len, "nr_sv");
            const unsigned long count = per_class ? nr_class
                                                  : nr_class * (nr_class - 1) / 2;
            for (unsigned long i = 0; i < count; i++) {
                double v;
                if (!next_token(&c, &tok, &len) || parse_decimal(tok, len, &v))
                    return SVM_FAIL("%s: %.*s needs %lu number(s)", where,
                                    (int)key_len, key, count);
                if (token_is(key, key_len, "rho")) svm->rho = v;
            }
            if (token_is(key, key_len, "rho")) have_rho = true;
        } else {
            return SVM_FAIL("%s: unknown text \"%.*s\" in the libsvm model header",
                            where, (int)QUALE_MIN(key_len, 40), key);
        }
    }
    if (!have_type) return SVM_FAIL("%s: the libsvm model has no svm_type", where);
    if (!have_kernel) return SVM_FAIL("%s: the libsvm model has no kernel_type", where);
    if (!have_gamma) return SVM_FAIL("%s: the libsvm model has no gamma", where);
    if (!have_nr_class) return SVM_FAIL("%s: the libsvm model has no nr_class", where);
    if (!have_total) return SVM_FAIL("%s: the libsvm model has no total_sv", where);
    if (!have_rho) return SVM_FAIL("%s: the libsvm model has no rho", where);

    /* The rest of the "SV" line must be blank; the vectors start below it. */
    while (c.pos < c.n && c.s[c.pos] != '\n') {
        if (!is_space(c.s[c.pos]))
            return SVM_FAIL("%s: unexpected text after \"SV\"", where);
        c.pos++;
    }
    if (c.pos < c.n) c.pos++;

    *cursor = c;
    *total_out = total_sv;
    return 0;
}

/* total_sv lines of "coef index:value ..." from the cursor on, the
 * vectors `dimension` long (indices from 1, increasing). */
static int parse_support_vectors(const Loader *L, const JsonValue *at, const char *where,
                                 Cursor c, unsigned long total_sv, unsigned dimension,
                                 ModelSvmDesc *svm)
{
    const char *tok;
    size_t len;
    /* Before allocating, check that the text has room for total_sv lines. */
    size_t lines = 1;
    for (size_t i = c.pos; i < c.n; i++) lines += c.s[i] == '\n';
    if (lines < total_sv)
        return SVM_FAIL("%s: total_sv is %lu but the model has only %zu lines of "
                        "support vectors", where, total_sv, lines);

    double *coef = model_pool_alloc(L->pool, total_sv, sizeof(double));
    double *sv = model_pool_alloc(L->pool, (size_t)total_sv * dimension, sizeof(double));
    if (!coef || !sv) return load_fail(L, at, -ENOMEM, "out of memory");

    for (unsigned long s = 0; s < total_sv; s++) {
        size_t end = c.pos;
        while (end < c.n && c.s[end] != '\n') end++;
        Cursor line = { c.s, end, c.pos };
        c.pos = end < c.n ? end + 1 : end;

        if (!next_token(&line, &tok, &len))
            return SVM_FAIL("%s: support vector %lu of %lu is missing", where,
                            s + 1, total_sv);
        if (parse_decimal(tok, len, &coef[s]))
            return SVM_FAIL("%s: support vector %lu: bad coefficient \"%.*s\"",
                            where, s + 1, (int)QUALE_MIN(len, 40), tok);
        unsigned long last = 0;
        while (next_token(&line, &tok, &len)) {
            const char *colon = memchr(tok, ':', len);
            unsigned long index;
            double value;
            if (!colon || parse_count(tok, (size_t)(colon - tok), 999999999ul, &index) ||
                parse_decimal(colon + 1, len - (size_t)(colon - tok) - 1, &value))
                return SVM_FAIL("%s: support vector %lu: bad entry \"%.*s\" "
                                "(expected index:value)", where, s + 1,
                                (int)QUALE_MIN(len, 40), tok);
            if (index < 1 || index > dimension)
                return SVM_FAIL("%s: support vector %lu: index %lu out of range "
                                "(the model has %u features)", where, s + 1,
                                index, dimension);
            if (index <= last)
                return SVM_FAIL("%s: support vector %lu: index %lu after %lu "
                                "(indices must increase)", where, s + 1, index, last);
            last = index;
            sv[(size_t)s * dimension + (index - 1)] = value;
        }
    }
    for (; c.pos < c.n; c.pos++)
        if (!is_space(c.s[c.pos]))
            return SVM_FAIL("%s: more support vectors than total_sv (%lu)", where,
                            total_sv);

    svm->sv_count = (unsigned)total_sv;
    svm->dimension = dimension;
    svm->coef = coef;
    svm->sv = sv;
    return 0;
}

/*
 * Parses the "model" string (libsvm's model file format) of a model with
 * `dimension` features into svm, the way libvmaf's svm.cpp reads it: a
 * header of "key value" pairs up to "SV", then total_sv lines of
 * "coef index:value ...".  Only what VMAF models use is accepted: nu_svr
 * (or epsilon_svr, which predicts the same way), rbf, two "classes".
 */
static int parse_libsvm(const Loader *L, const JsonValue *at, const char *where,
                        const char *text, size_t length, unsigned dimension,
                        ModelSvmDesc *svm)
{
    Cursor c = { text, length, 0 };
    unsigned long total_sv = 0;
    memset(svm, 0, sizeof(*svm));
    if (memchr(text, '\0', length))
        return SVM_FAIL("%s: the libsvm model holds a NUL character", where);
    const int err = parse_libsvm_header(L, at, where, &c, svm, &total_sv);
    return err ? err : parse_support_vectors(L, at, where, c, total_sv, dimension, svm);
}

#undef SVM_FAIL

/* ------------------------------------------------------------------------ */
/* model_dict from JSON                                                      */

#define FAIL(at, ...) load_fail(L, (at), -EINVAL, __VA_ARGS__)

/* A member of obj checked for type; NULL (and *err 0) when absent. */
static const JsonValue *field(const Loader *L, const JsonValue *obj,
                              const char *where, const char *key,
                              enum JsonType type, bool required, int *err)
{
    *err = 0;
    const JsonValue *v = json_object_get(obj, key);
    if (!v) {
        if (required) *err = FAIL(obj, "%s: missing field \"%s\"", where, key);
        return NULL;
    }
    if (v->type != type) {
        *err = FAIL(v, "%s.%s: expected %s, found %s", where, key,
                    json_type_name(type), json_type_name(v->type));
        return NULL;
    }
    return v;
}

static int number_array(const Loader *L, const JsonValue *obj, const char *where,
                        const char *key, size_t count, double **out)
{
    int err;
    const JsonValue *a = field(L, obj, where, key, JSON_ARRAY, true, &err);
    if (!a) return err;
    if (a->u.array.count != count)
        return FAIL(a, "%s.%s: expected %zu numbers (one for the score and one "
                    "per feature), found %zu", where, key, count, a->u.array.count);
    double *v = model_pool_alloc(L->pool, count, sizeof(double));
    if (!v) return load_fail(L, a, -ENOMEM, "out of memory");
    for (size_t i = 0; i < count; i++) {
        const JsonValue *item = &a->u.array.items[i];
        if (item->type != JSON_NUMBER)
            return FAIL(item, "%s.%s[%zu]: expected a number, found %s", where,
                        key, i, json_type_name(item->type));
        v[i] = item->u.number.value;
    }
    *out = v;
    return 0;
}

static int load_transform(const Loader *L, const JsonValue *st, const char *where,
                          ModelTransformDesc *t)
{
    char here[96];
    snprintf(here, sizeof(here), "%s.score_transform", where);
    int err;
    t->present = true;

    const JsonValue *v = json_object_get(st, "enabled");
    if (v) {
        if (v->type != JSON_BOOL)
            return FAIL(v, "%s.enabled: expected a boolean, found %s", here,
                        json_type_name(v->type));
        t->enabled = v->u.boolean;
    }
    static const char *const p_names[3] = { "p0", "p1", "p2" };
    for (int k = 0; k < 3; k++) {
        v = json_object_get(st, p_names[k]);
        if (!v || v->type == JSON_NULL) continue;
        if (v->type != JSON_NUMBER)
            return FAIL(v, "%s.%s: expected a number or null, found %s", here,
                        p_names[k], json_type_name(v->type));
        t->p_enabled[k] = true;
        t->p[k] = v->u.number.value;
    }
    v = json_object_get(st, "knots");
    if (v && v->type != JSON_NULL) {
        if (v->type != JSON_ARRAY)
            return FAIL(v, "%s.knots: expected an array or null, found %s", here,
                        json_type_name(v->type));
        if (v->u.array.count > MODEL_MAX_KNOTS)
            return FAIL(v, "%s.knots: %zu knots, at most %d", here,
                        v->u.array.count, MODEL_MAX_KNOTS);
        ModelKnot *knots = model_pool_alloc(L->pool, v->u.array.count, sizeof(*knots));
        if (!knots) return load_fail(L, v, -ENOMEM, "out of memory");
        for (size_t i = 0; i < v->u.array.count; i++) {
            const JsonValue *k = &v->u.array.items[i];
            if (k->type != JSON_ARRAY || k->u.array.count != 2 ||
                k->u.array.items[0].type != JSON_NUMBER ||
                k->u.array.items[1].type != JSON_NUMBER)
                return FAIL(k, "%s.knots[%zu]: expected [x, y], two numbers", here, i);
            knots[i].x = k->u.array.items[0].u.number.value;
            knots[i].y = k->u.array.items[1].u.number.value;
            /* libvmaf gives up mid-way through the mapping on such knots
             * and returns a partial result; refuse them here instead. */
            if (i > 0 && !(knots[i - 1].x < knots[i].x && knots[i - 1].y <= knots[i].y))
                return FAIL(k, "%s.knots[%zu]: x must increase and y must not "
                            "decrease from one knot to the next", here, i);
        }
        t->knots_enabled = true;
        t->knot_count = (unsigned)v->u.array.count;
        t->knots = knots;
    }
    static const char *const rect_names[2] = { "out_lte_in", "out_gte_in" };
    for (int k = 0; k < 2; k++) {
        v = field(L, st, here, rect_names[k], JSON_STRING, false, &err);
        if (err) return err;
        /* libvmaf: the string "true" sets it, any other string leaves it. */
        const bool set = v && !strcmp(v->u.string.chars, "true");
        if (k == 0) t->out_lte_in = set;
        else t->out_gte_in = set;
    }
    return 0;
}

static int load_options(const Loader *L, const JsonValue *dict, const char *where,
                        ModelFeatureDesc *feature)
{
    if (dict->type != JSON_OBJECT)
        return FAIL(dict, "%s: expected an object, found %s", where,
                    json_type_name(dict->type));
    const size_t count = dict->u.object.count;
    if (count == 0) return 0;
    if (count > MODEL_MAX_OPTIONS)
        return FAIL(dict, "%s: %zu options, at most %d", where, count,
                    MODEL_MAX_OPTIONS);
    ModelOptionDesc *opts = model_pool_alloc(L->pool, count, sizeof(*opts));
    if (!opts) return load_fail(L, dict, -ENOMEM, "out of memory");
    for (size_t i = 0; i < count; i++) {
        const JsonMember *m = &dict->u.object.members[i];
        const JsonValue *v = &m->value;
        if (m->key_length == 0 || strlen(m->key) != m->key_length)
            return FAIL(v, "%s: empty option name", where);
        opts[i].key = m->key;
        switch (v->type) {
        case JSON_NUMBER:
            opts[i].type = MODEL_OPTION_NUMBER;
            opts[i].text = v->u.number.text;
            break;
        case JSON_BOOL:
            opts[i].type = MODEL_OPTION_BOOL;
            opts[i].text = v->u.boolean ? "true" : "false";
            break;
        case JSON_STRING:
            if (strlen(v->u.string.chars) != v->u.string.length)
                return FAIL(v, "%s.%s: the value holds a NUL character", where, m->key);
            opts[i].type = MODEL_OPTION_STRING;
            opts[i].text = v->u.string.chars;
            break;
        default:
            return FAIL(v, "%s.%s: expected a number, a boolean or a string, "
                        "found %s", where, m->key, json_type_name(v->type));
        }
    }
    feature->option_count = (unsigned)count;
    feature->options = opts;
    return 0;
}

/*
 * libvmaf's chroma-from-luma correction needs exactly one feature whose
 * name holds "speed_chroma" (the guided one) and one that holds "adm3"
 * (the guiding one): libvmaf fails the prediction on a second of either
 * and reads an unset index without the first.  A parameter of 0 makes
 * libvmaf skip the prediction altogether (no score is written): refused.
 */
static int load_chroma_correction(const Loader *L, const JsonValue *v, const char *where,
                                  ModelDesc *d)
{
    const double c = v->u.number.value;
    if (c == 0.0)
        return FAIL(v, "%s.chroma_correction_parameter: 0 makes libvmaf write no score; "
                    "leave the field out instead", where);
    int guided = -1, guiding = -1;
    for (unsigned i = 0; i < d->feature_count; i++) {
        const char *name = d->features[i].name;
        for (int k = 0; k < 2; k++) {
            const char *part = k ? "adm3" : "speed_chroma";
            int *index = k ? &guiding : &guided;
            if (!strstr(name, part)) continue;
            if (*index >= 0)
                return FAIL(v, "%s.chroma_correction_parameter: more than one feature "
                            "names \"%s\" (%s and %s)", where, part,
                            d->features[*index].name, name);
            *index = (int)i;
        }
    }
    if (guided < 0 || guiding < 0)
        return FAIL(v, "%s.chroma_correction_parameter needs a feature naming "
                    "\"speed_chroma\" and one naming \"adm3\"", where);
    d->chroma_correction = true;
    d->chroma_correction_parameter = c;
    d->chroma_guided = (unsigned)guided;
    d->chroma_guiding = (unsigned)guiding;
    return 0;
}

/* feature_names: every one a feature some metric provides. */
static int load_feature_names(const Loader *L, const JsonValue *md, const char *where,
                              ModelDesc *d)
{
    int err;
    const JsonValue *names = field(L, md, where, "feature_names", JSON_ARRAY, true, &err);
    if (!names) return err;
    const size_t n = names->u.array.count;
    if (n == 0 || n > MODEL_MAX_FEATURES)
        return FAIL(names, "%s.feature_names: %zu features; a model has 1 to %d",
                    where, n, MODEL_MAX_FEATURES);
    ModelFeatureDesc *features = model_pool_alloc(L->pool, n, sizeof(*features));
    if (!features) return load_fail(L, names, -ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const JsonValue *v = &names->u.array.items[i];
        if (v->type != JSON_STRING)
            return FAIL(v, "%s.feature_names[%zu]: expected a string, found %s",
                        where, i, json_type_name(v->type));
        if (!L->feature_known(v->u.string.chars) ||
            strlen(v->u.string.chars) != v->u.string.length)
            return FAIL(v, "%s.feature_names[%zu]: unknown feature \"%.80s\" "
                        "(no metric provides it)", where, i, v->u.string.chars);
        features[i].name = v->u.string.chars;
    }
    d->feature_count = (unsigned)n;
    d->features = features;

    return 0;
}

/* model_type (libvmaf reads it but predicts every type the same way; it
 * matters for bootstrap collections) and norm_type (libvmaf fails at the
 * first prediction without it), with its slopes and intercepts. */
static int load_types(const Loader *L, const JsonValue *md, const char *where, ModelDesc *d)
{
    int err;
    const size_t n = d->feature_count;
    const JsonValue *v = field(L, md, where, "model_type", JSON_STRING, false, &err);
    if (err) return err;
    if (v) {
        const char *t = v->u.string.chars;
        if (!strcmp(t, "LIBSVMNUSVR"))
            d->type = MODEL_TYPE_SVM_NUSVR;
        else if (!strcmp(t, "BOOTSTRAP_LIBSVMNUSVR"))
            d->type = MODEL_TYPE_BOOTSTRAP_SVM_NUSVR;
        else if (!strcmp(t, "RESIDUEBOOTSTRAP_LIBSVMNUSVR"))
            d->type = MODEL_TYPE_RESIDUE_BOOTSTRAP_SVM_NUSVR;
        else
            return FAIL(v, "%s.model_type: unknown type \"%.60s\" (expected "
                        "LIBSVMNUSVR, BOOTSTRAP_LIBSVMNUSVR or "
                        "RESIDUEBOOTSTRAP_LIBSVMNUSVR)", where, t);
    }

    v = field(L, md, where, "norm_type", JSON_STRING, true, &err);
    if (!v) return err;
    if (!strcmp(v->u.string.chars, "linear_rescale"))
        d->norm = MODEL_NORM_LINEAR_RESCALE;
    else if (!strcmp(v->u.string.chars, "none"))
        d->norm = MODEL_NORM_NONE;
    else
        return FAIL(v, "%s.norm_type: \"%.60s\" is not supported (expected "
                    "linear_rescale or none)", where, v->u.string.chars);

    if (d->norm == MODEL_NORM_LINEAR_RESCALE) {
        double *slopes = NULL, *intercepts = NULL;
        err = number_array(L, md, where, "slopes", n + 1, &slopes);
        if (err) return err;
        err = number_array(L, md, where, "intercepts", n + 1, &intercepts);
        if (err) return err;
        d->slopes = slopes;
        d->intercepts = intercepts;
    }

    return 0;
}

static int load_model_dict(const Loader *L, const JsonValue *md, const char *where,
                           ModelDesc *d)
{
    int err;
    memset(d, 0, sizeof(*d));
    if (md->type != JSON_OBJECT)
        return FAIL(md, "%s: expected an object, found %s", where,
                    json_type_name(md->type));
    if ((err = load_feature_names(L, md, where, d)) || (err = load_types(L, md, where, d)))
        return err;
    const size_t n = d->feature_count;
    /* the pool's memory load_feature_names() made, filled in below */
    ModelFeatureDesc *features = (ModelFeatureDesc *)d->features;
    const JsonValue *v;
    /* score_clip */
    v = field(L, md, where, "score_clip", JSON_ARRAY, false, &err);
    if (err) return err;
    if (v) {
        if (v->u.array.count != 2 || v->u.array.items[0].type != JSON_NUMBER ||
            v->u.array.items[1].type != JSON_NUMBER)
            return FAIL(v, "%s.score_clip: expected [min, max], two numbers", where);
        d->clip_present = true;
        d->clip_min = v->u.array.items[0].u.number.value;
        d->clip_max = v->u.array.items[1].u.number.value;
    }

    /* score_transform */
    v = field(L, md, where, "score_transform", JSON_OBJECT, false, &err);
    if (err) return err;
    if (v) {
        err = load_transform(L, v, where, &d->transform);
        if (err) return err;
    }

    /* feature_opts_dicts: one object per feature, possibly fewer. */
    v = field(L, md, where, "feature_opts_dicts", JSON_ARRAY, false, &err);
    if (err) return err;
    if (v) {
        if (v->u.array.count > n)
            return FAIL(v, "%s.feature_opts_dicts: %zu entries for %zu features",
                        where, v->u.array.count, n);
        for (size_t i = 0; i < v->u.array.count; i++) {
            char here[96];
            snprintf(here, sizeof(here), "%s.feature_opts_dicts[%zu]", where, i);
            err = load_options(L, &v->u.array.items[i], here, &features[i]);
            if (err) return err;
        }
    }

    /* chroma_correction_parameter (the v1 models): where the speed_chroma
     * feature is 0, the SVM reads c (1 - adm3) in its place instead. */
    v = field(L, md, where, "chroma_correction_parameter", JSON_NUMBER, false, &err);
    if (err) return err;
    if (v) {
        err = load_chroma_correction(L, v, where, d);
        if (err) return err;
    }

    /* model: the libsvm text */
    v = field(L, md, where, "model", JSON_STRING, true, &err);
    if (!v) return err;
    char here[96];
    snprintf(here, sizeof(here), "%s.model", where);
    return parse_libsvm(L, v, here, v->u.string.chars, v->u.string.length,
                        d->feature_count, &d->svm);
}

/* A whole model file: one model_dict, or a bootstrap collection "0".."N". */
static int load_document(const Loader *L, const JsonValue *root, ModelDesc **descs,
                         unsigned *count, bool *collection)
{
    if (root->type != JSON_OBJECT)
        return FAIL(root, "expected an object at the top, found %s",
                    json_type_name(root->type));

    const JsonValue *md = json_object_get(root, "model_dict");
    if (md) {
        ModelDesc *d = model_pool_alloc(L->pool, 1, sizeof(*d));
        if (!d) return load_fail(L, root, -ENOMEM, "out of memory");
        int err = load_model_dict(L, md, "model_dict", d);
        if (err) return err;
        *descs = d;
        *count = 1;
        *collection = false;
        return 0;
    }

    /* libvmaf reads "0", "1", ... while they follow in order and ignores the
     * rest; we look them up by name up to the first number missing, and
     * refuse a numbered model after it. */
    unsigned n = 0;
    char key[16];
    for (;;) {
        snprintf(key, sizeof(key), "%u", n);
        if (!json_object_get(root, key)) break;
        if (++n > MODEL_MAX_PARTS)
            return FAIL(root, "more than %d models in the bootstrap collection",
                        MODEL_MAX_PARTS - 1);
    }
    if (n == 0)
        return FAIL(root, "neither \"model_dict\" nor bootstrap models \"0\", "
                    "\"1\", ... at the top");
    /* A numbered model past the gap would be left out silently (libvmaf
     * reads up to the gap): name the gap instead. */
    for (size_t i = 0; i < root->u.object.count; i++) {
        const JsonMember *member = &root->u.object.members[i];
        const char *name = member->key;
        if (member->key_length == 0 || strspn(name, "0123456789") != member->key_length)
            continue;
        if (member->key_length > 9 || strtoul(name, NULL, 10) >= n)
            return FAIL(&member->value, "bootstrap model \"%u\" is missing: the "
                        "collection has \"0\" to \"%u\", then \"%s\"", n, n - 1, name);
    }
    if (n == 1)
        return FAIL(root, "a bootstrap collection needs models \"0\" and "
                    "\"1\" at least; \"1\" is missing");

    ModelDesc *d = model_pool_alloc(L->pool, n, sizeof(*d));
    if (!d) return load_fail(L, root, -ENOMEM, "out of memory");
    for (unsigned i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "%u", i);
        const JsonValue *entry = json_object_get(root, key);
        char where[48];
        snprintf(where, sizeof(where), "\"%u\"", i);
        if (entry->type != JSON_OBJECT)
            return FAIL(entry, "%s: expected an object, found %s", where,
                        json_type_name(entry->type));
        int err;
        md = field(L, entry, where, "model_dict", JSON_OBJECT, true, &err);
        if (!md) return err;
        snprintf(where, sizeof(where), "\"%u\".model_dict", i);
        err = load_model_dict(L, md, where, &d[i]);
        if (err) return err;
    }
    *descs = d;
    *count = n;
    *collection = true;
    return 0;
}

#undef FAIL

int model_file_descriptions(const char *source, const char *path, const char *text,
                            size_t length, ModelPool *pool, const JsonValue *root,
                            bool (*feature_known)(const char *feature), ModelDesc **descs,
                            unsigned *count, bool *collection, char *error,
                            size_t error_size)
{
    const Loader L = { source, path, text, length, pool, feature_known, error, error_size };
    return load_document(&L, root, descs, count, collection);
}
