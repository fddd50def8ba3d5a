/*
 * VMAF models: the model spec, loading from JSON or the built-in tables, the
 * metrics a model needs, and libvmaf's prediction, step for step.
 *
 * The arithmetic follows libvmaf (predict.c) and libsvm (svm.cpp) in the
 * same order of operations in double, so that every score is bit-for-bit
 * libvmaf's given the same features and the same libm:
 *   feature  x' = slope_i * x + intercept_i             (linear_rescale)
 *   svm      sum_s coef_s * exp(-gamma * |x' - sv_s|^2) - rho
 *   score    (svm - intercept_0) / slope_0               (linear_rescale)
 *   then the score transform (polynomial, knots, out_lte_in / out_gte_in)
 *   and the clip, each when enabled.
 */
#include "model.h"

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

/* libvmaf's limits (MAX_FEATURE_COUNT, MAX_KNOT_COUNT), and ours for the
 * rest: generous for real models, small enough to keep the stack arrays of
 * the predictor small and hostile files cheap. */
#define MODEL_MAX_FEATURES 64
#define MODEL_MAX_KNOTS 10
#define MODEL_MAX_PARTS 257         /* main model + 256 bootstrap models */
#define MODEL_MAX_OPTIONS 32        /* per feature */
#define MODEL_MAX_SV ((unsigned)1 << 20)
#define MODEL_MAX_FILE_SIZE ((size_t)64 << 20)
#define MODEL_DEFAULT_VERSION "vmaf_v0.6.1"

/* ------------------------------------------------------------------------ */
/* Which metric provides each feature a model can name                      */

/*
 * libvmaf finds a model feature's extractor by searching every extractor's
 * provided_features (feature_extractor.c) and reads the value under the
 * feature's output name: the alias of alias.c when there is one, else the
 * name itself, plus the option suffix.  Our metrics carry libvmaf's
 * extractor names and write libvmaf's output names as their base keys, so
 * one row per provided feature says everything: the name in model files,
 * the metric, and the key.
 */
typedef struct FeatureSource {
    const char *feature; /* as in a model's feature_names */
    const char *metric;
    const char *key;     /* the metric's base key */
} FeatureSource;

static const FeatureSource feature_sources[] = {
    /* vif (integer_vif.c) */
    { "VMAF_integer_feature_vif_scale0_score", "vif", "integer_vif_scale0" },
    { "VMAF_integer_feature_vif_scale1_score", "vif", "integer_vif_scale1" },
    { "VMAF_integer_feature_vif_scale2_score", "vif", "integer_vif_scale2" },
    { "VMAF_integer_feature_vif_scale3_score", "vif", "integer_vif_scale3" },
    { "integer_vif", "vif", "integer_vif" },
    { "integer_vif_num", "vif", "integer_vif_num" },
    { "integer_vif_den", "vif", "integer_vif_den" },
    { "integer_vif_num_scale0", "vif", "integer_vif_num_scale0" },
    { "integer_vif_den_scale0", "vif", "integer_vif_den_scale0" },
    { "integer_vif_num_scale1", "vif", "integer_vif_num_scale1" },
    { "integer_vif_den_scale1", "vif", "integer_vif_den_scale1" },
    { "integer_vif_num_scale2", "vif", "integer_vif_num_scale2" },
    { "integer_vif_den_scale2", "vif", "integer_vif_den_scale2" },
    { "integer_vif_num_scale3", "vif", "integer_vif_num_scale3" },
    { "integer_vif_den_scale3", "vif", "integer_vif_den_scale3" },
    /* adm (integer_adm.c) */
    { "VMAF_integer_feature_adm2_score", "adm", "integer_adm2" },
    { "VMAF_integer_feature_aim_score", "adm", "integer_aim" },
    { "VMAF_integer_feature_adm3_score", "adm", "integer_adm3" },
    { "integer_adm_scale0", "adm", "integer_adm_scale0" },
    { "integer_adm_scale1", "adm", "integer_adm_scale1" },
    { "integer_adm_scale2", "adm", "integer_adm_scale2" },
    { "integer_adm_scale3", "adm", "integer_adm_scale3" },
    { "integer_adm", "adm", "integer_adm" },
    { "integer_adm_num", "adm", "integer_adm_num" },
    { "integer_adm_den", "adm", "integer_adm_den" },
    { "integer_adm_num_scale0", "adm", "integer_adm_num_scale0" },
    { "integer_adm_den_scale0", "adm", "integer_adm_den_scale0" },
    { "integer_adm_num_scale1", "adm", "integer_adm_num_scale1" },
    { "integer_adm_den_scale1", "adm", "integer_adm_den_scale1" },
    { "integer_adm_num_scale2", "adm", "integer_adm_num_scale2" },
    { "integer_adm_den_scale2", "adm", "integer_adm_den_scale2" },
    { "integer_adm_num_scale3", "adm", "integer_adm_num_scale3" },
    { "integer_adm_den_scale3", "adm", "integer_adm_den_scale3" },
    /* motion (integer_motion.c) */
    { "VMAF_integer_feature_motion_sad_score", "motion",
      "VMAF_integer_feature_motion_sad_score" },
    { "VMAF_integer_feature_motion_score", "motion", "integer_motion" },
    { "VMAF_integer_feature_motion2_score", "motion", "integer_motion2" },
    { "VMAF_integer_feature_motion3_score", "motion", "integer_motion3" },
    /* float_vif (float_vif.c) */
    { "VMAF_feature_vif_scale0_score", "float_vif", "vif_scale0" },
    { "VMAF_feature_vif_scale1_score", "float_vif", "vif_scale1" },
    { "VMAF_feature_vif_scale2_score", "float_vif", "vif_scale2" },
    { "VMAF_feature_vif_scale3_score", "float_vif", "vif_scale3" },
    { "vif", "float_vif", "vif" },
    { "vif_num", "float_vif", "vif_num" },
    { "vif_den", "float_vif", "vif_den" },
    { "vif_num_scale0", "float_vif", "vif_num_scale0" },
    { "vif_den_scale0", "float_vif", "vif_den_scale0" },
    { "vif_num_scale1", "float_vif", "vif_num_scale1" },
    { "vif_den_scale1", "float_vif", "vif_den_scale1" },
    { "vif_num_scale2", "float_vif", "vif_num_scale2" },
    { "vif_den_scale2", "float_vif", "vif_den_scale2" },
    { "vif_num_scale3", "float_vif", "vif_num_scale3" },
    { "vif_den_scale3", "float_vif", "vif_den_scale3" },
    /* float_adm (float_adm.c) */
    { "VMAF_feature_adm2_score", "float_adm", "adm2" },
    { "VMAF_feature_aim_score", "float_adm", "aim" },
    { "VMAF_feature_adm3_score", "float_adm", "adm3" },
    { "VMAF_feature_adm_scale0_score", "float_adm", "adm_scale0" },
    { "VMAF_feature_adm_scale1_score", "float_adm", "adm_scale1" },
    { "VMAF_feature_adm_scale2_score", "float_adm", "adm_scale2" },
    { "VMAF_feature_adm_scale3_score", "float_adm", "adm_scale3" },
    { "adm_num", "float_adm", "adm_num" },
    { "adm_den", "float_adm", "adm_den" },
    { "adm_scale0", "float_adm", "adm_scale0" },
    { "adm_num_scale0", "float_adm", "adm_num_scale0" },
    { "adm_den_scale0", "float_adm", "adm_den_scale0" },
    { "adm_num_scale1", "float_adm", "adm_num_scale1" },
    { "adm_den_scale1", "float_adm", "adm_den_scale1" },
    { "adm_num_scale2", "float_adm", "adm_num_scale2" },
    { "adm_den_scale2", "float_adm", "adm_den_scale2" },
    { "adm_num_scale3", "float_adm", "adm_num_scale3" },
    { "adm_den_scale3", "float_adm", "adm_den_scale3" },
    /* float_motion (float_motion.c) */
    { "VMAF_feature_motion_score", "float_motion", "motion" },
    { "VMAF_feature_motion2_score", "float_motion", "motion2" },
    { "VMAF_feature_motion3_score", "float_motion", "motion3" },
    /* the others provide their output names directly */
    { "psnr_y", "psnr", "psnr_y" },
    { "psnr_cb", "psnr", "psnr_cb" },
    { "psnr_cr", "psnr", "psnr_cr" },
    { "float_psnr", "float_psnr", "float_psnr" },
    { "float_ansnr", "float_ansnr", "float_ansnr" },
    { "float_moment", "float_moment", "float_moment" },
    { "float_ssim", "float_ssim", "float_ssim" },
    { "float_ms_ssim", "float_ms_ssim", "float_ms_ssim" },
    { "ciede2000", "ciede", "ciede2000" },
    { "psnr_hvs_y", "psnr_hvs", "psnr_hvs_y" },
    { "psnr_hvs_cb", "psnr_hvs", "psnr_hvs_cb" },
    { "psnr_hvs_cr", "psnr_hvs", "psnr_hvs_cr" },
    { "psnr_hvs", "psnr_hvs", "psnr_hvs" },
    { "Cambi_feature_cambi_score", "cambi", "cambi" },
    /* speed_chroma and speed_temporal (speed.c) */
    { "Speed_chroma_feature_speed_chroma_u_score", "speed_chroma", "speed_chroma_u" },
    { "Speed_chroma_feature_speed_chroma_v_score", "speed_chroma", "speed_chroma_v" },
    { "Speed_chroma_feature_speed_chroma_uv_score", "speed_chroma", "speed_chroma_uv" },
    { "Speed_temporal_feature_speed_temporal_score", "speed_temporal", "speed_temporal" },
};

static const FeatureSource *find_feature_source(const char *feature)
{
    for (size_t i = 0; i < QUALE_ARRAY_SIZE(feature_sources); i++)
        if (!strcmp(feature_sources[i].feature, feature))
            return &feature_sources[i];
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The model                                                                 */

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

/* Memory of a model loaded from a file: freed all at once. */
typedef struct Pool {
    void **blocks;
    size_t count, capacity;
} Pool;

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

    Pool pool;          /* descriptions loaded from a file */
    JsonDocument *doc;  /* the file's strings they point to */
};

static void *pool_alloc(Pool *pool, size_t count, size_t size)
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

static void pool_free(Pool *pool)
{
    for (size_t i = 0; i < pool->count; i++) free(pool->blocks[i]);
    free(pool->blocks);
    memset(pool, 0, sizeof(*pool));
}

static char *dup_string(const char *s)
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
    Pool *pool;
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
static int set_error(char *error, size_t size, const char *fmt, ...)
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

static int out_of_memory(char *error, size_t size)
{
    set_error(error, size, "out of memory");
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
static void normalise_number(const char *text, char *out, size_t size)
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
static bool is_numeric(const char *text)
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
    const char *tok;
    size_t len;
    bool have_type = false, have_kernel = false, have_gamma = false;
    bool have_rho = false;
    unsigned long nr_class = 0, total_sv = 0;
    bool have_nr_class = false, have_total = false;

    memset(svm, 0, sizeof(*svm));
    if (memchr(text, '\0', length))
        return SVM_FAIL("%s: the libsvm model holds a NUL character", where);

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

    /* Before allocating, check that the text has room for total_sv lines. */
    size_t lines = 1;
    for (size_t i = c.pos; i < c.n; i++) lines += c.s[i] == '\n';
    if (lines < total_sv)
        return SVM_FAIL("%s: total_sv is %lu but the model has only %zu lines of "
                        "support vectors", where, total_sv, lines);

    double *coef = pool_alloc(L->pool, total_sv, sizeof(double));
    double *sv = pool_alloc(L->pool, (size_t)total_sv * dimension, sizeof(double));
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
    double *v = pool_alloc(L->pool, count, sizeof(double));
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
        ModelKnot *knots = pool_alloc(L->pool, v->u.array.count, sizeof(*knots));
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
    ModelOptionDesc *opts = pool_alloc(L->pool, count, sizeof(*opts));
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

static int load_model_dict(const Loader *L, const JsonValue *md, const char *where,
                           ModelDesc *d)
{
    int err;
    memset(d, 0, sizeof(*d));
    if (md->type != JSON_OBJECT)
        return FAIL(md, "%s: expected an object, found %s", where,
                    json_type_name(md->type));

    /* feature_names */
    const JsonValue *names = field(L, md, where, "feature_names", JSON_ARRAY, true, &err);
    if (!names) return err;
    const size_t n = names->u.array.count;
    if (n == 0 || n > MODEL_MAX_FEATURES)
        return FAIL(names, "%s.feature_names: %zu features; a model has 1 to %d",
                    where, n, MODEL_MAX_FEATURES);
    ModelFeatureDesc *features = pool_alloc(L->pool, n, sizeof(*features));
    if (!features) return load_fail(L, names, -ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const JsonValue *v = &names->u.array.items[i];
        if (v->type != JSON_STRING)
            return FAIL(v, "%s.feature_names[%zu]: expected a string, found %s",
                        where, i, json_type_name(v->type));
        if (!find_feature_source(v->u.string.chars) ||
            strlen(v->u.string.chars) != v->u.string.length)
            return FAIL(v, "%s.feature_names[%zu]: unknown feature \"%.80s\" "
                        "(no metric provides it)", where, i, v->u.string.chars);
        features[i].name = v->u.string.chars;
    }
    d->feature_count = (unsigned)n;
    d->features = features;

    /* model_type: libvmaf reads it but predicts every type the same way;
     * it matters for bootstrap collections. */
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

    /* norm_type: libvmaf fails at the first prediction without it. */
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
        ModelDesc *d = pool_alloc(L->pool, 1, sizeof(*d));
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

    ModelDesc *d = pool_alloc(L->pool, n, sizeof(*d));
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

/* ------------------------------------------------------------------------ */
/* The spec                                                                  */

typedef struct Spec {
    char *version;
    char *path;
    char *name;
    bool disable_clip;
    bool enable_transform;
    bool no_prediction;
    unsigned overload_count;
    ModelOverload overloads[MODEL_MAX_OPTIONS];
} Spec;

static void spec_free(Spec *s)
{
    free(s->version);
    free(s->path);
    free(s->name);
    for (unsigned i = 0; i < s->overload_count; i++) {
        free(s->overloads[i].metric);
        free(s->overloads[i].option);
        free(s->overloads[i].value);
    }
    memset(s, 0, sizeof(*s));
}

static char *dup_range(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* An option name or value: not empty, no separator, no control character
 * (none is meaningful, and the metric would quote it in a message). */
static bool valid_option_text(const char *s)
{
    if (!*s || strchr(s, ':') || strchr(s, '=')) return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f) return false;
    return true;
}

/* A model's name= becomes output keys (NAME, NAME_ci_p95_lo, ...) in every
 * layout, XML attribute names included, which have no escapes: a letter
 * or '_', then letters, digits, '_', '-' and '.'. */
#define MODEL_MAX_NAME 128
static bool valid_model_name(const char *s)
{
    const size_t n = strlen(s);
    if (n == 0 || n > MODEL_MAX_NAME) return false;
    for (size_t i = 0; i < n; i++) {
        const char c = s[i];
        const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        const bool other = (c >= '0' && c <= '9') || c == '-' || c == '.';
        if (!letter && (i == 0 || !other)) return false;
    }
    return true;
}

static int parse_spec(const char *text, Spec *s, char *error, size_t error_size)
{
    memset(s, 0, sizeof(*s));
    if (!text || !*text) text = "version=" MODEL_DEFAULT_VERSION;

    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ':');
        const size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        const size_t key_len = eq ? (size_t)(eq - p) : n;
        char *key = dup_range(p, key_len);
        char *value = eq ? dup_range(eq + 1, n - key_len - 1) : NULL;
        int err = 0;
        if (!key || (eq && !value)) {
            err = out_of_memory(error, error_size);
        } else if (key_len == 0) {
            err = set_error(error, error_size, "model \"%s\": empty option "
                            "(options are separated by ':')", text);
        } else if (!strcmp(key, "version") || !strcmp(key, "path") ||
                   !strcmp(key, "name")) {
            char **slot = key[0] == 'v' ? &s->version : key[0] == 'p' ? &s->path
                                                                    : &s->name;
            if (!value || !*value) {
                err = set_error(error, error_size, "model \"%s\": %s= needs a value",
                                text, key);
            } else if (*slot) {
                err = set_error(error, error_size, "model \"%s\": %s= given twice",
                                text, key);
            } else if (slot == &s->name && !valid_model_name(value)) {
                err = set_error(error, error_size, "model \"%s\": name=%s cannot name output "
                                "keys: use up to %d letters, digits, '_', '-' and '.', starting "
                                "with a letter or '_' (the name is an XML attribute, a JSON key "
                                "and a CSV column)", text, value, MODEL_MAX_NAME);
            } else {
                *slot = value;
                value = NULL;
            }
        } else if (!strcmp(key, "disable_clip") || !strcmp(key, "enable_transform") ||
                   !strcmp(key, "no_prediction")) {
            bool *flag = key[0] == 'd' ? &s->disable_clip
                         : key[0] == 'e' ? &s->enable_transform : &s->no_prediction;
            if (!value || !strcmp(value, "true"))
                *flag = true;
            else if (strcmp(value, "false"))
                err = set_error(error, error_size, "model \"%s\": %s takes true or "
                                "false, not \"%s\"", text, key, value);
        } else {
            /* "<metric>.<option>=<value>" overloads the metric's option for
             * every feature of the model that the metric provides. */
            const char *dot = strchr(key, '.');
            if (!dot || dot == key || !dot[1] || strchr(dot + 1, '.') || !value ||
                !valid_option_text(value)) {
                err = set_error(error, error_size,
                                "model \"%s\": bad option \"%s%s%s\" (expected "
                                "version=, path=, name=, disable_clip, "
                                "enable_transform, no_prediction or "
                                "<metric>.<option>=<value>)",
                                text, key, value ? "=" : "", value ? value : "");
            } else if (s->overload_count == MODEL_MAX_OPTIONS) {
                err = set_error(error, error_size, "model \"%s\": more than %d "
                                "feature options", text, MODEL_MAX_OPTIONS);
            } else {
                ModelOverload *o = &s->overloads[s->overload_count];
                char normal[64];
                if (is_numeric(value)) normalise_number(value, normal, sizeof(normal));
                o->metric = dup_range(key, (size_t)(dot - key));
                o->option = dup_string(dot + 1);
                o->value = dup_string(is_numeric(value) ? normal : value);
                s->overload_count++;
                if (!o->metric || !o->option || !o->value)
                    err = out_of_memory(error, error_size);
            }
        }
        free(key);
        free(value);
        if (err) {
            spec_free(s);
            return err;
        }
        if (!end) break;
        p = end + 1;
    }
    if (s->version && s->path) {
        spec_free(s);
        return set_error(error, error_size, "model \"%s\": give version= or "
                         "path=, not both", text);
    }
    if (!s->version && !s->path) {
        spec_free(s);
        return set_error(error, error_size, "model \"%s\": version= or path= is "
                         "needed", text);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Building a model from descriptions                                        */

typedef struct OptionPair {
    const char *key;
    char value[128];
} OptionPair;

static int compare_pairs(const void *a, const void *b)
{
    return strcmp(((const OptionPair *)a)->key, ((const OptionPair *)b)->key);
}

/* The options string of one feature: its feature_opts_dicts entry with the
 * spec's overloads for its metric merged over it, sorted by name. */
static int feature_options(const ModelFeatureDesc *f, const char *metric, Spec *spec,
                           char **out, char *error, size_t error_size,
                           const char *source)
{
    OptionPair pairs[2 * MODEL_MAX_OPTIONS];
    unsigned n = 0;
    for (unsigned i = 0; i < f->option_count && i < MODEL_MAX_OPTIONS; i++) {
        const ModelOptionDesc *o = &f->options[i];
        if (!valid_option_text(o->key))
            return set_error(error, error_size, "%s: feature %s: bad option name "
                             "\"%s\"", source, f->name, o->key);
        pairs[n].key = o->key;
        if (o->type == MODEL_OPTION_NUMBER)
            normalise_number(o->text, pairs[n].value, sizeof(pairs[n].value));
        else if ((size_t)snprintf(pairs[n].value, sizeof(pairs[n].value), "%s",
                                  o->text) >= sizeof(pairs[n].value))
            return set_error(error, error_size, "%s: feature %s: option %s: value "
                             "too long", source, f->name, o->key);
        if (!valid_option_text(pairs[n].value))
            return set_error(error, error_size, "%s: feature %s: option %s: bad "
                             "value \"%s\"", source, f->name, o->key, pairs[n].value);
        for (unsigned k = 0; k < n; k++)
            if (!strcmp(pairs[k].key, o->key))
                return set_error(error, error_size, "%s: feature %s: option %s "
                                 "given twice", source, f->name, o->key);
        n++;
    }
    for (unsigned i = 0; i < spec->overload_count; i++) {
        ModelOverload *o = &spec->overloads[i];
        if (strcmp(o->metric, metric)) continue;
        o->used = true;
        unsigned k = 0;
        while (k < n && strcmp(pairs[k].key, o->option)) k++;
        if (k == n) n++;
        pairs[k].key = o->option;
        snprintf(pairs[k].value, sizeof(pairs[k].value), "%s", o->value);
    }
    qsort(pairs, n, sizeof(*pairs), compare_pairs);

    size_t len = 1;
    for (unsigned i = 0; i < n; i++) len += strlen(pairs[i].key) + strlen(pairs[i].value) + 2;
    char *s = malloc(len);
    if (!s) return -ENOMEM;
    s[0] = '\0';
    size_t at = 0;
    for (unsigned i = 0; i < n; i++)
        at += (size_t)snprintf(s + at, len - at, "%s%s=%s", i ? ":" : "",
                               pairs[i].key, pairs[i].value);
    *out = s;
    return 0;
}

static void model_free(Model *m)
{
    if (!m) return;
    free(m->label);
    free(m->name);
    for (unsigned i = 0; i < m->part_count; i++) free(m->parts[i].input);
    free(m->parts);
    for (unsigned i = 0; i < m->input_count; i++) free(m->inputs[i].options);
    free(m->inputs);
    for (unsigned i = 0; m->outputs && i < m->output_count; i++) free(m->outputs[i]);
    free(m->outputs);
    free(m->output_ids);
    pool_free(&m->pool);
    json_document_free(&m->doc);
    free(m);
}

static int find_or_add_input(Model *m, const FeatureSource *src, const char *feature,
                             char *options, unsigned *index)
{
    for (unsigned i = 0; i < m->input_count; i++) {
        const ModelInput *in = &m->inputs[i];
        if (!strcmp(in->metric, src->metric) && !strcmp(in->key, src->key) &&
            !strcmp(in->options, options)) {
            free(options);
            *index = i;
            return 0;
        }
    }
    ModelInput *grown = realloc(m->inputs, (m->input_count + 1) * sizeof(*grown));
    if (!grown) {
        free(options);
        return -ENOMEM;
    }
    m->inputs = grown;
    ModelInput *in = &m->inputs[m->input_count];
    memset(in, 0, sizeof(*in));
    in->feature = feature;
    in->metric = src->metric;
    in->key = src->key;
    in->options = options;
    *index = m->input_count++;
    return 0;
}

static int build_model(Model *m, const ModelDesc *descs, unsigned count,
                       bool collection, Spec *spec, const char *source,
                       char *error, size_t error_size)
{
    if (count == 0 || count > MODEL_MAX_PARTS || (collection && count < 2))
        return set_error(error, error_size, "%s: %u models", source, count);
    if (collection) {
        /* libvmaf refuses a collection whose bootstrap models differ in
         * type, and scores only the bootstrap types as a collection. */
        const enum ModelType t = descs[1].type;
        for (unsigned i = 1; i < count; i++) {
            if (descs[i].type != MODEL_TYPE_BOOTSTRAP_SVM_NUSVR &&
                descs[i].type != MODEL_TYPE_RESIDUE_BOOTSTRAP_SVM_NUSVR)
                return set_error(error, error_size, "%s: model \"%u\" of the "
                                 "collection is not a bootstrap model (model_type "
                                 "BOOTSTRAP_LIBSVMNUSVR or "
                                 "RESIDUEBOOTSTRAP_LIBSVMNUSVR)", source, i);
            if (descs[i].type != t)
                return set_error(error, error_size, "%s: the bootstrap models "
                                 "are not all of the same model_type", source);
        }
    }

    m->collection = collection;
    m->parts = calloc(count, sizeof(*m->parts));
    if (!m->parts) return -ENOMEM;
    m->part_count = count;

    for (unsigned p = 0; p < count; p++) {
        const ModelDesc *d = &descs[p];
        ModelPart *part = &m->parts[p];
        part->desc = d;
        if (d->feature_count == 0 || d->feature_count > MODEL_MAX_FEATURES ||
            d->svm.dimension != d->feature_count || !d->svm.coef || !d->svm.sv ||
            (d->norm == MODEL_NORM_LINEAR_RESCALE && (!d->slopes || !d->intercepts)) ||
            (d->transform.knot_count && !d->transform.knots))
            return set_error(error, error_size, "%s: inconsistent model "
                             "description (model %u)", source, p);
        part->input = calloc(d->feature_count, sizeof(*part->input));
        if (!part->input) return -ENOMEM;
        for (unsigned i = 0; i < d->feature_count; i++) {
            const ModelFeatureDesc *f = &d->features[i];
            const FeatureSource *src = find_feature_source(f->name);
            if (!src)
                return set_error(error, error_size, "%s: unknown feature \"%s\" "
                                 "(no metric provides it)", source, f->name);
            char *options = NULL;
            int err = feature_options(f, src->metric, spec, &options, error,
                                      error_size, source);
            if (err) return err;
            err = find_or_add_input(m, src, f->name, options, &part->input[i]);
            if (err) return err;
        }
        /* libvmaf applies the flags while reading the file: enable_transform
         * switches on a score_transform the model has, disable_clip leaves
         * score_clip off. */
        part->transform = d->transform.enabled ||
                          (d->transform.present && spec->enable_transform);
        part->clip = d->clip_present && !spec->disable_clip;
    }

    m->output_count = collection ? count + 4 : 1;
    m->outputs = calloc(m->output_count, sizeof(*m->outputs));
    m->output_ids = calloc(m->output_count, sizeof(*m->output_ids));
    if (!m->outputs || !m->output_ids) return -ENOMEM;
    const size_t size = strlen(m->name) + 16;
    for (unsigned i = 0; i < m->output_count; i++) {
        m->outputs[i] = malloc(size);
        if (!m->outputs[i]) return -ENOMEM;
        static const char *const suffixes[4] = { "_bagging", "_stddev",
                                                 "_ci_p95_lo", "_ci_p95_hi" };
        if (i == 0)
            snprintf(m->outputs[i], size, "%s", m->name);
        else if (i < count)
            snprintf(m->outputs[i], size, "%s_%04u", m->name, i);
        else
            snprintf(m->outputs[i], size, "%s%s", m->name, suffixes[i - count]);
    }
    return 0;
}

static const ModelBuiltin *find_builtin(const char *version)
{
    for (unsigned i = 0; i < model_builtin_count; i++)
        if (!strcmp(model_builtins[i].version, version)) return &model_builtins[i];
    return NULL;
}

/* Loads spec into a new model; error gets one line on failure. */
static int load(Model **out, Spec *spec, char *error, size_t error_size)
{
    *out = NULL;
    Model *m = calloc(1, sizeof(*m));
    if (!m) return out_of_memory(error, error_size);
    m->label = dup_string(spec->version ? spec->version : spec->path);
    m->name = dup_string(spec->name ? spec->name : "vmaf");
    if (!m->label || !m->name) {
        model_free(m);
        return out_of_memory(error, error_size);
    }

    int err;
    if (spec->version) {
        const ModelBuiltin *b = find_builtin(spec->version);
        if (!b) {
            char list[256] = "";
            size_t at = 0;
            for (unsigned i = 0; i < model_builtin_count && at < sizeof(list); i++)
                at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s",
                                       i ? ", " : "", model_builtins[i].version);
            model_free(m);
            return set_error(error, error_size, "unknown model version \"%s\"; "
                             "the built-in versions are: %s", spec->version, list);
        }
        char source[128];
        snprintf(source, sizeof(source), "built-in model %s", b->version);
        err = build_model(m, b->models, b->model_count, b->collection, spec, source,
                          error, error_size);
    } else {
        char *text = NULL;
        size_t length = 0;
        char why[256];
        err = json_read_file(spec->path, MODEL_MAX_FILE_SIZE, &text, &length, why,
                             sizeof(why));
        if (err) {
            model_free(m);
            set_error(error, error_size, "cannot read model file %s", why);
            return err;
        }
        JsonDocument *doc = NULL;
        JsonError jerr;
        err = json_parse(&doc, text, length, NULL, &jerr);
        if (err) {
            set_error(error, error_size, "model file %s:%u:%u: %s", spec->path,
                      jerr.line, jerr.column, jerr.message);
            free(text);
            model_free(m);
            return err;
        }
        char source[300];
        snprintf(source, sizeof(source), "model file %s", spec->path);
        const Loader L = { source, spec->path, text, length, &m->pool, error,
                           error_size };
        ModelDesc *descs = NULL;
        unsigned count = 0;
        bool collection = false;
        /* The descriptions point into the document's strings: the model
         * keeps the document until it is freed. */
        m->doc = doc;
        err = load_document(&L, json_document_root(doc), &descs, &count, &collection);
        if (!err)
            err = build_model(m, descs, count, collection, spec, source, error,
                              error_size);
        free(text);
    }
    if (err) {
        if (err == -ENOMEM && error && error_size && !error[0])
            set_error(error, error_size, "out of memory");
        model_free(m);
        return err;
    }
    *out = m;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Prediction (libvmaf predict.c, libsvm svm.cpp)                            */

/* libsvm's svm_predict() for an RBF nu-SVR: the kernel sums squared
 * differences in index order, the decision function adds coef * kernel in
 * support-vector order, then subtracts rho. */
static double svm_predict(const ModelSvmDesc *svm, const double *x)
{
    double sum = 0.0;
    for (unsigned s = 0; s < svm->sv_count; s++) {
        const double *v = svm->sv + (size_t)s * svm->dimension;
        double distance = 0.0;
        for (unsigned k = 0; k < svm->dimension; k++) {
            const double d = x[k] - v[k];
            distance += d * d;
        }
        sum += svm->coef[s] * exp(-svm->gamma * distance);
    }
    sum -= svm->rho;
    return sum;
}

/* The prediction before transform and clip. */
/*
 * libvmaf's post_process_feature_from_another(): the speed_chroma input
 * taken back out of its normalisation; where that is exactly 0, the input
 * becomes c (1 - adm3) (adm3 also taken back out of its normalisation,
 * which need not give its value back bit for bit), normalised again.
 */
static void correct_chroma(const ModelDesc *d, double *x)
{
    const unsigned g = d->chroma_guided, a = d->chroma_guiding;
    const bool linear = d->norm == MODEL_NORM_LINEAR_RESCALE;
    double guided = x[g], guiding = x[a];
    if (linear) {
        guided = (guided - d->intercepts[g + 1]) / d->slopes[g + 1];
        guiding = (guiding - d->intercepts[a + 1]) / d->slopes[a + 1];
    }
    if (guided != 0.0) return;
    const double c = d->chroma_correction_parameter;
    double corrected = (-c * guiding) + c;
    if (linear) corrected = d->slopes[g + 1] * corrected + d->intercepts[g + 1];
    x[g] = corrected;
}

static double predict_raw(const ModelPart *part, const double *inputs)
{
    const ModelDesc *d = part->desc;
    double x[MODEL_MAX_FEATURES];
    for (unsigned i = 0; i < d->feature_count; i++) {
        double v = inputs[part->input[i]];
        if (d->norm == MODEL_NORM_LINEAR_RESCALE)
            v = d->slopes[i + 1] * v + d->intercepts[i + 1];
        x[i] = v;
    }
    if (d->chroma_correction) correct_chroma(d, x);
    double y = svm_predict(&d->svm, x);
    if (d->norm == MODEL_NORM_LINEAR_RESCALE)
        y = (y - d->intercepts[0]) / d->slopes[0];
    return y;
}

/* libvmaf's find_linear_function_parameters() for a knot segment that is
 * neither horizontal nor vertical (validated at load). */
static void segment_line(ModelKnot a, ModelKnot b, double *slope, double *offset)
{
    if (b.x - a.x == 0 || b.y - a.y == 0) {
        *slope = 1.0;
        *offset = 0.0;
    } else if (a.x == 0) {
        *offset = a.y;
        *slope = (b.y - *offset) / b.x;
    } else {
        *slope = (b.y - a.y) / (b.x - a.x);
        *offset = a.y - (a.x * (*slope));
    }
}

/* libvmaf's piecewise_linear_mapping(): every segment is visited and the
 * last one that claims x wins, so a shared knot takes the later segment's
 * value; outside the knots the first and last segments extend. */
static double piecewise_linear(double x, const ModelKnot *k, unsigned n, double y_in)
{
    if (n <= 1) return y_in; /* libvmaf leaves the value as it was */
    double y = 0.0;
    for (unsigned i = 0; i + 1 < n; i++) {
        const bool from = k[i].x <= x;
        const bool to = x <= k[i + 1].x;
        const bool below = i == 0 && x < k[i].x;
        const bool above = i + 2 == n && x > k[i + 1].x;
        if (k[i].y == k[i + 1].y) {
            if ((from && to) || below || above) y = k[i].y;
        } else {
            double slope, offset;
            segment_line(k[i], k[i + 1], &slope, &offset);
            if ((from && to) || below || above) y = slope * x + offset;
        }
    }
    return y;
}

/* libvmaf's transform(): polynomial, then knots, then rectification
 * against the untransformed score. */
static double transform_score(const ModelPart *part, double y_in)
{
    if (!part->transform) return y_in;
    const ModelTransformDesc *t = &part->desc->transform;
    double y_out;
    if (t->p_enabled[0] || t->p_enabled[1] || t->p_enabled[2]) {
        y_out = 0.;
        if (t->p_enabled[0]) y_out += t->p[0];
        if (t->p_enabled[1]) y_out += t->p[1] * y_in;
        if (t->p_enabled[2]) y_out += t->p[2] * y_in * y_in;
    } else {
        y_out = y_in;
    }
    if (t->knots_enabled)
        y_out = piecewise_linear(y_out, t->knots, t->knot_count, y_out);
    if (t->out_lte_in) y_out = (y_out > y_in) ? y_in : y_out;
    if (t->out_gte_in) y_out = (y_out < y_in) ? y_in : y_out;
    return y_out;
}

static double clip_score(const ModelPart *part, double y)
{
    if (!part->clip) return y;
    const ModelDesc *d = part->desc;
    y = (y < d->clip_min) ? d->clip_min : y;
    y = (y > d->clip_max) ? d->clip_max : y;
    return y;
}

static double finish(const ModelPart *part, double y)
{
    return clip_score(part, transform_score(part, y));
}

static int compare_scores(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    if (x > y) return 1;
    if (x < y) return -1;
    return 0;
}

/* libvmaf's percentile(): linear between the two nearest ranks. */
static double percentile(const double *sorted, unsigned n, double perc)
{
    const double p = perc * (n - 1) / 100.;
    const int lo = (int)floor(p);
    const int hi = (int)ceil(p);
    return (lo == hi) ? sorted[lo]
                      : sorted[lo] * (hi - p) + sorted[hi] * (p - lo);
}

int model_predict_features(const Model *m, const double *inputs, double *outputs)
{
    if (!m || !inputs || !outputs) return -EINVAL;

    outputs[0] = finish(&m->parts[0], predict_raw(&m->parts[0], inputs));
    if (!m->collection) return 0;

    /*
     * libvmaf's bootstrap (vmaf_bootstrap_predict_score_at_index): each
     * bootstrap model's score is written transformed and clipped, while the
     * statistics use the raw scores; the mean and the 95% interval are then
     * transformed and clipped with the first bootstrap model's settings, and
     * the standard deviation is scaled by the transform's slope at the mean.
     */
    const unsigned n = m->part_count - 1;
    double raw[MODEL_MAX_PARTS];
    for (unsigned i = 0; i < n; i++) {
        const ModelPart *part = &m->parts[1 + i];
        raw[i] = predict_raw(part, inputs);
        outputs[1 + i] = finish(part, raw[i]);
    }

    double sum = 0.;
    for (unsigned i = 0; i < n; i++) sum += raw[i];
    const double mean = sum / n;

    const double delta = 0.01;
    double plus_delta = mean + delta;
    double minus_delta = mean - delta;

    double ssd = 0.;
    for (unsigned i = 0; i < n; i++) ssd += pow(raw[i] - mean, 2);
    double stddev = sqrt(ssd / n);

    qsort(raw, n, sizeof(raw[0]), compare_scores);
    double lo = percentile(raw, n, 2.5);
    double hi = percentile(raw, n, 97.5);

    const ModelPart *first = &m->parts[1];
    const double bagging = finish(first, mean);
    lo = finish(first, lo);
    hi = finish(first, hi);
    plus_delta = finish(first, plus_delta);
    minus_delta = finish(first, minus_delta);
    const double slope = (plus_delta - minus_delta) / (2.0 * delta);
    stddev *= slope;

    outputs[m->part_count + 0] = bagging;
    outputs[m->part_count + 1] = stddev;
    outputs[m->part_count + 2] = lo;
    outputs[m->part_count + 3] = hi;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Public interface                                                          */

int model_load(Model **model, const char *spec_text, char *error, size_t error_size)
{
    if (error && error_size) error[0] = '\0';
    if (!model) return set_error(error, error_size, "no model pointer");
    *model = NULL;
    Spec spec;
    int err = parse_spec(spec_text, &spec, error, error_size);
    if (err) return err;
    err = load(model, &spec, error, error_size);
    spec_free(&spec);
    return err;
}

int model_open(Model **model, const ModelHost *host, const char *spec_text)
{
    char error[512] = "";
    if (!model) return -EINVAL;
    *model = NULL;

    Spec spec;
    int err = parse_spec(spec_text, &spec, error, sizeof(error));
    if (!err) err = load(model, &spec, error, sizeof(error));
    if (err) {
        log_sink_print(host->log, QUALE_LOG_ERROR, "%s", error[0] ? error : "cannot load model");
        spec_free(&spec);
        return err;
    }
    Model *m = *model;
    m->no_prediction = spec.no_prediction;
    m->host = *host;

    for (unsigned i = 0; i < spec.overload_count; i++)
        if (!spec.overloads[i].used)
            log_sink_print(host->log, QUALE_LOG_WARNING, "model %s: no feature of the "
                        "model comes from metric \"%s\"; %s.%s=%s has no effect",
                        m->label, spec.overloads[i].metric, spec.overloads[i].metric,
                        spec.overloads[i].option, spec.overloads[i].value);
    spec_free(&spec);

    for (unsigned i = 0; i < m->input_count; i++) {
        ModelInput *in = &m->inputs[i];
        err = host->request_metric(host->context, in->metric, in->options, &in->instance);
        if (err) {
            log_sink_print(host->log, QUALE_LOG_ERROR, "model %s: cannot use metric \"%s\"%s%s%s "
                        "for feature %s", m->label, in->metric,
                        in->options[0] ? " with options \"" : "", in->options,
                        in->options[0] ? "\"" : "", in->feature);
            model_close(model);
            return err;
        }
    }
    return 0;
}

int model_declare_keys(Model *m, FeatureSink *sink, enum ModelKeyGroup group)
{
    if (!m || !sink) return -EINVAL;
    if (group != MODEL_KEYS_MAIN && group != MODEL_KEYS_COLLECTION) return -EINVAL;
    if (m->declared[group]) return 0;
    const unsigned from = group == MODEL_KEYS_MAIN ? 0 : 1;
    const unsigned to = group == MODEL_KEYS_MAIN ? 1 : m->output_count;
    for (unsigned i = from; i < to; i++) {
        const int err = feature_sink_declare_model(sink, m->outputs[i], &m->output_ids[i]);
        if (err) {
            feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: cannot declare "
                             "key %s", m->label, m->outputs[i]);
            return err;
        }
    }
    m->declared[group] = true;
    return 0;
}

/* The ids of the inputs' keys, known once the metrics are initialised. */
static int resolve_inputs(Model *m, FeatureSink *sink)
{
    if (m->resolved) return 0;
    for (unsigned i = 0; i < m->input_count; i++) {
        ModelInput *in = &m->inputs[i];
        if (!in->instance || !m->host.instance_key) {
            feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: loaded without a "
                             "context, it has no metrics to read", m->label);
            return -EINVAL;
        }
        const int err = m->host.instance_key(in->instance, in->key, &in->id);
        if (err) {
            feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: metric \"%s\" has "
                             "no key \"%s\" (for feature %s)", m->label, in->metric,
                             in->key, in->feature);
            return err;
        }
    }
    m->resolved = true;
    return 0;
}

int model_predict(Model *m, FeatureSink *sink, unsigned frame_count,
                  unsigned subsample)
{
    if (!m || !sink) return -EINVAL;
    int err = model_declare_keys(m, sink, MODEL_KEYS_MAIN);
    if (!err && m->collection) err = model_declare_keys(m, sink, MODEL_KEYS_COLLECTION);
    if (!err) err = resolve_inputs(m, sink);
    if (err) return err;

    double *inputs = malloc((m->input_count + m->output_count) * sizeof(double));
    if (!inputs) return -ENOMEM;
    double *outputs = inputs + m->input_count;

    for (unsigned f = m->frames_done; f < frame_count; f++) {
        if (subsample > 1 && f % subsample) continue;
        for (unsigned i = 0; i < m->input_count; i++) {
            const ModelInput *in = &m->inputs[i];
            err = feature_sink_get(sink, in->id, f, &inputs[i]);
            if (err) {
                char key[256];
                if (!m->host.instance_key_name ||
                    m->host.instance_key_name(in->instance, in->key, key, sizeof(key)))
                    snprintf(key, sizeof(key), "%s", in->key);
                feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: no value of "
                                 "%s at frame %u", m->label, key, f);
                goto done;
            }
        }
        err = model_predict_features(m, inputs, outputs);
        if (err) goto done;

        for (unsigned o = 0; o < m->output_count; o++) {
            double existing;
            if (!feature_sink_get(sink, m->output_ids[o], f, &existing)) {
                /* libvmaf keeps the first score of a model name that two
                 * models share; its collections fail on the clash. */
                if (o == 0) {
                    if (!m->warned_shared_key)
                        feature_sink_log(sink, QUALE_LOG_WARNING, "model %s: key "
                                         "%s already holds another model's "
                                         "scores, kept (give the models "
                                         "different names with name=)",
                                         m->label, m->outputs[0]);
                    m->warned_shared_key = true;
                    continue;
                }
                feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: key %s at "
                                 "frame %u was already written by another model "
                                 "(give the models different names with name=)",
                                 m->label, m->outputs[o], f);
                err = -EEXIST;
                goto done;
            }
            err = feature_sink_put(sink, m->output_ids[o], f, outputs[o]);
            if (err) {
                feature_sink_log(sink, QUALE_LOG_ERROR, "model %s: cannot store "
                                 "%s at frame %u", m->label, m->outputs[o], f);
                goto done;
            }
        }
        m->frames_done = f + 1;
    }
    if (frame_count > m->frames_done) m->frames_done = frame_count;

done:
    free(inputs);
    return err;
}

bool model_predicts(const Model *m)
{
    return m && !m->no_prediction;
}

const char *model_name(const Model *m)
{
    return m ? m->name : NULL;
}

const char *model_label(const Model *m)
{
    return m ? m->label : NULL;
}

int model_is_bootstrap(const Model *m)
{
    return m && m->collection;
}

void model_close(Model **model)
{
    if (!model || !*model) return;
    model_free(*model);
    *model = NULL;
}

const char *const *model_builtin_versions(void)
{
    return model_builtin_version_list;
}

/* The viewing condition each built-in model was trained for (libvmaf's
 * models_v0.md and models_v1.md). */
static const struct {
    const char *version;
    const char *condition;
} builtin_conditions[] = {
    { "vmaf_v0.6.1", "1080p display at 3H (v0 default)" },
    { "vmaf_v0.6.1neg", "1080p at 3H, no gain from enhancement (v0)" },
    { "vmaf_4k_v0.6.1", "4K display at 1.5H (v0)" },
    { "vmaf_4k_v0.6.1neg", "4K at 1.5H, no gain from enhancement (v0)" },
    { "vmaf_b_v0.6.3", "1080p at 3H, with a 95% confidence interval (v0)" },
    { "vmaf_v1.0.16_3d0h", "1080p display at 3H (v1 standard)" },
    { "vmaf_v1.0.16_5d0h", "phone: 1080p at 5H (v1)" },
    { "vmaf_v1.0.16_1d5h_2160", "4K display at 1.5H (v1 4K default)" },
    { "vmaf_v1.0.16_3d0h_2160", "4K consumer TV at 3H, to 110 (v1)" },
    { "vmaf_v1.0.16_hfr_3d0h", "HFR (50-60 fps), 1080p at 3H (v1)" },
    { "vmaf_v1.0.16_hfr_5d0h", "HFR (50-60 fps), phone at 5H (v1)" },
    { "vmaf_v1.0.16_hfr_1d5h_2160", "HFR (50-60 fps), 4K at 1.5H (v1)" },
    { "vmaf_v1.0.16_hfr_3d0h_2160", "HFR (50-60 fps), 4K TV at 3H, to 110 (v1)" },
    { "vmaf_float_v0.6.1", "1080p at 3H, float features (v0)" },
    { "vmaf_float_v0.6.1neg", "1080p at 3H, float, no enhancement gain (v0)" },
    { "vmaf_float_4k_v0.6.1", "4K at 1.5H, float features (v0)" },
    { "vmaf_float_b_v0.6.3", "1080p at 3H, float, confidence interval (v0)" },
};

int model_builtin_describe(const char *version, QualeBuiltinModelInfo *info)
{
    memset(info, 0, sizeof(*info));
    const ModelBuiltin *b = NULL;
    for (unsigned i = 0; i < model_builtin_count && !b; i++)
        if (!strcmp(model_builtins[i].version, version)) b = &model_builtins[i];
    if (!b) return -EINVAL;
    info->version = b->version;
    info->condition = "";
    for (size_t i = 0; i < QUALE_ARRAY_SIZE(builtin_conditions); i++)
        if (!strcmp(builtin_conditions[i].version, version))
            info->condition = builtin_conditions[i].condition;
    info->bootstrap = b->collection;
    const ModelDesc *d = &b->models[0];
    if (d->clip_present) {
        info->score_min = d->clip_min;
        info->score_max = d->clip_max;
    }
    /* The metrics of its features, each once, in the model's order. */
    size_t len = 0;
    for (unsigned f = 0; f < d->feature_count; f++) {
        const FeatureSource *src = find_feature_source(d->features[f].name);
        if (!src) continue;
        bool seen = false;
        for (unsigned g = 0; g < f && !seen; g++) {
            const FeatureSource *other = find_feature_source(d->features[g].name);
            seen = other && !strcmp(other->metric, src->metric);
        }
        if (seen || len >= sizeof(info->features)) continue;
        len += (size_t)snprintf(info->features + len, sizeof(info->features) - len, "%s%s",
                                len ? ", " : "", src->metric);
    }
    return 0;
}

unsigned model_input_count(const Model *m)
{
    return m ? m->input_count : 0;
}

int model_input(const Model *m, unsigned index, const char **metric,
                const char **options, const char **key)
{
    if (!m || index >= m->input_count) return -EINVAL;
    if (metric) *metric = m->inputs[index].metric;
    if (options) *options = m->inputs[index].options;
    if (key) *key = m->inputs[index].key;
    return 0;
}

unsigned model_output_count(const Model *m)
{
    return m ? m->output_count : 0;
}

const char *model_output_name(const Model *m, unsigned index)
{
    return m && index < m->output_count ? m->outputs[index] : NULL;
}
