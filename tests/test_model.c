/*
 * Models and the JSON parser, without running any metric:
 *   1. the predictor against libvmaf's golden per-frame outputs, fed with
 *      the golden per-frame features (vmaf_v0.6.1, vmaf_v0.6.1neg,
 *      vmaf_4k_v0.6.1 and the vmaf_b_v0.6.3 bootstrap collection);
 *   2. each published model loaded from its file gives bit-identical
 *      outputs to the built-in one;
 *   3. malformed models and specs fail with a message, without crashing;
 *   4. JSON parser edge cases.
 *
 * The corpus is found through QUALE_SHARED_DIR, by default the source
 * tree's ../shared.  Without it, the self-contained checks still run and
 * the test reports "skip" (exit 77).
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "metric.h"
#include "model.h"
#include "option.h"

#ifndef QUALE_SOURCE_DIR
#define QUALE_SOURCE_DIR "."
#endif

#define TOLERANCE 1e-9

static unsigned passed, failed;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void check(int ok, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    va_list args;
    va_start(args, fmt);
    fputs("FAIL: ", stdout);
    vprintf(fmt, args);
    va_end(args);
    fputc('\n', stdout);
}

/* ---- JSON parser ---------------------------------------------------------- */

static int parse_text(const char *text, JsonDocument **doc, JsonError *error)
{
    return json_parse(doc, text, strlen(text), NULL, error);
}

static void expect_json_error(const char *text, size_t length, unsigned line,
                              unsigned column, const char *fragment)
{
    JsonDocument *doc = NULL;
    JsonError error;
    const int err = json_parse(&doc, text, length, NULL, &error);
    check(err == -EINVAL && !doc, "json: %.40s: should fail", text);
    if (err != -EINVAL) {
        json_document_free(&doc);
        return;
    }
    check(!line || (error.line == line && error.column == column),
          "json: %.40s: error at %u:%u, expected %u:%u (%s)", text, error.line,
          error.column, line, column, error.message);
    check(!fragment || strstr(error.message, fragment),
          "json: %.40s: message \"%s\" lacks \"%s\"", text, error.message,
          fragment ? fragment : "");
}

static void expect_bad(const char *text, unsigned line, unsigned column,
                       const char *fragment)
{
    expect_json_error(text, strlen(text), line, column, fragment);
}

static void test_json_values(void)
{
    JsonDocument *doc = NULL;
    JsonError error;
    /* Values of every kind. */
    int err = parse_text(" {\"a\": [1, -2.5e3, 0, -0, 1E+2, 0.1], \"b\": true, "
                         "\"c\": false, \"d\": null, \"e\": \"x\", \"f\": {}, "
                         "\"g\": []}\n", &doc, &error);
    check(!err, "json: basic document: %s", error.message);
    if (!err) {
        const JsonValue *root = json_document_root(doc);
        const JsonValue *a = json_object_get(root, "a");
        check(root->type == JSON_OBJECT && root->u.object.count == 7, "json: root");
        check(a && a->type == JSON_ARRAY && a->u.array.count == 6, "json: array");
        if (a && a->u.array.count == 6) {
            check(a->u.array.items[0].u.number.value == 1.0, "json: 1");
            check(a->u.array.items[1].u.number.value == -2500.0, "json: -2.5e3");
            check(a->u.array.items[3].u.number.value == 0.0 &&
                  signbit(a->u.array.items[3].u.number.value), "json: -0");
            check(a->u.array.items[4].u.number.value == 100.0, "json: 1E+2");
            check(a->u.array.items[5].u.number.value == 0.1, "json: 0.1 exact");
            check(!strcmp(a->u.array.items[1].u.number.text, "-2.5e3"),
                  "json: number text kept");
        }
        const JsonValue *b = json_object_get(root, "b");
        check(b && b->type == JSON_BOOL && b->u.boolean, "json: true");
        const JsonValue *c = json_object_get(root, "c");
        check(c && c->type == JSON_BOOL && !c->u.boolean, "json: false");
        const JsonValue *d = json_object_get(root, "d");
        check(d && d->type == JSON_NULL, "json: null");
        check(!json_object_get(root, "zz"), "json: missing key");
        const JsonValue *f = json_object_get(root, "f");
        check(f && f->type == JSON_OBJECT && f->u.object.count == 0, "json: {}");
        json_document_free(&doc);
    }
}

static void test_json_numbers(void)
{
    JsonDocument *doc = NULL;
    JsonError error;
    int err;
    /* Numbers are correctly rounded, like strtod. */
    err = parse_text("[0.012020766332648465, 1.7976931348623157e308, 5e-324, "
                     "2.2250738585072011e-308, 1e-400, 123456789012345678901234567890]",
                     &doc, &error);
    check(!err, "json: numbers: %s", error.message);
    if (!err) {
        const JsonValue *a = json_document_root(doc);
        check(a->u.array.items[0].u.number.value == 0.012020766332648465,
              "json: slope value");
        check(a->u.array.items[1].u.number.value == 1.7976931348623157e308, "json: max");
        check(a->u.array.items[2].u.number.value == 5e-324, "json: min subnormal");
        check(a->u.array.items[4].u.number.value == 0.0, "json: underflow to 0");
        check(a->u.array.items[5].u.number.value == 1.2345678901234568e29,
              "json: long integer");
        json_document_free(&doc);
    }
}

static void test_json_strings(void)
{
    JsonDocument *doc = NULL;
    JsonError error;
    int err;
    /* Strings and escapes. */
    err = parse_text("[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\", \"\\u00e9\\u20AC\", "
                     "\"\\ud83d\\ude00\", \"\xc3\xa9\xe2\x82\xac\", \"a\\u0000b\"]",
                     &doc, &error);
    check(!err, "json: strings: %s", error.message);
    if (!err) {
        const JsonValue *a = json_document_root(doc);
        check(!strcmp(a->u.array.items[0].u.string.chars, "a\"b\\c/d\b\f\n\r\t"),
              "json: simple escapes");
        check(!strcmp(a->u.array.items[1].u.string.chars, "\xc3\xa9\xe2\x82\xac"),
              "json: \\u escapes to UTF-8");
        check(!strcmp(a->u.array.items[2].u.string.chars, "\xf0\x9f\x98\x80"),
              "json: surrogate pair");
        check(!strcmp(a->u.array.items[3].u.string.chars, "\xc3\xa9\xe2\x82\xac"),
              "json: raw UTF-8");
        check(a->u.array.items[4].u.string.length == 3 &&
              !memcmp(a->u.array.items[4].u.string.chars, "a\0b", 3),
              "json: \\u0000 kept with its length");
        json_document_free(&doc);
    }
}

static void test_json_bom(void)
{
    JsonDocument *doc = NULL;
    JsonError error;
    int err;
    /* Byte order mark and surrounding blanks are accepted. */
    err = parse_text("\xef\xbb\xbf \t\r\n[1]\n\n", &doc, &error);
    check(!err, "json: BOM: %s", error.message);
    json_document_free(&doc);
}

static void test_json_errors(void)
{
    /* Errors, with their positions. */
    expect_bad("", 1, 1, "empty");
    expect_bad("   \n  ", 2, 3, "empty");
    expect_bad("[1, 2", 1, 6, "end of the input");
    expect_bad("[1, 2,]", 1, 7, "expected a value");
    expect_bad("{\"a\": 1,}", 1, 9, "key");
    expect_bad("{\"a\" 1}", 1, 6, "':'");
    expect_bad("{\"a\": 1, \"a\": 2}", 1, 10, "duplicate key \"a\"");
    expect_bad("[1] x", 1, 5, "after the JSON value");
    expect_bad("[1]]", 1, 4, "after the JSON value");
    expect_bad("01", 1, 1, "leading zeros");
    expect_bad("-", 1, 2, "digit");
    expect_bad("1.", 1, 3, "digit after the decimal point");
    expect_bad(".5", 1, 1, "expected a value");
    expect_bad("1e", 1, 3, "exponent");
    expect_bad("+1", 1, 1, "expected a value");
    expect_bad("1e999", 1, 1, "out of range");
    expect_bad("-1e999", 1, 1, "out of range");
    expect_bad("NaN", 1, 1, NULL);
    expect_bad("Infinity", 1, 1, NULL);
    expect_bad("tru", 1, 1, NULL);
    expect_bad("nul", 1, 1, NULL);
    expect_bad("[true false]", 1, 7, "','");
    expect_bad("\"abc", 1, 1, "unterminated");
    expect_bad("\"a\\", 1, 1, "unterminated");
    expect_bad("\"a\\x\"", 1, 3, "invalid escape");
    expect_bad("\"\\u12\"", 1, 2, "4 hex digits");
    expect_bad("\"\\ud800\"", 1, 2, "surrogate");
    expect_bad("\"\\ud800\\u0041\"", 1, 2, "surrogate");
    expect_bad("\"\\udc00\"", 1, 2, "lone low surrogate");
    expect_bad("\"a\tb\"", 1, 3, "control character");
    expect_bad("\"\xff\"", 1, 2, "UTF-8");
    expect_bad("\"\xc0\xaf\"", 1, 2, "UTF-8");           /* overlong '/' */
    expect_bad("\"\xed\xa0\x80\"", 1, 2, "UTF-8");       /* encoded surrogate */
    expect_bad("\"\xf4\x90\x80\x80\"", 1, 2, "UTF-8");   /* above U+10FFFF */
    expect_bad("\"\xe2\x82\"", 1, 2, "UTF-8");           /* truncated */
    expect_bad("[1, /* c */ 2]", 1, 5, NULL);
    expect_bad("{\"a\":\n  [1,\n   2,,]}", 3, 6, "expected a value");
    expect_bad("[\"\xc3\xa9\xc3\xa9\", x]", 1, 8, NULL); /* columns count characters */
    expect_json_error("[1,\0 2]", 7, 1, 4, "byte 0x00");
    expect_json_error("\"a\0b\"", 5, 1, 3, "control character");
}

static void test_json_duplicates(void)
{
    JsonDocument *doc = NULL;
    JsonError error;
    int err;
    /* Duplicate keys in a large object (the sorted path). */
    {
        char big[4096];
        size_t n = 0;
        n += (size_t)snprintf(big + n, sizeof(big) - n, "{");
        for (int i = 0; i < 40; i++)
            n += (size_t)snprintf(big + n, sizeof(big) - n, "\"k%d\": %d, ", i, i);
        n += (size_t)snprintf(big + n, sizeof(big) - n, "\"k7\": 0}");
        expect_bad(big, 0, 0, "duplicate key \"k7\"");
        big[n - 6] = 'z'; /* "kz": no duplicate */
        err = parse_text(big, &doc, &error);
        check(!err, "json: 41 distinct keys: %s", error.message);
        json_document_free(&doc);
    }
}

static void test_json_depth(void)
{
    JsonDocument *doc = NULL;
    JsonError error;
    int err;
    /* Depth limit: 64 levels parse, 65 do not, and a deep hostile input
     * fails cleanly instead of exhausting the stack. */
    {
        static char deep[200001];
        for (int depth = 64; depth <= 65; depth++) {
            memset(deep, '[', (size_t)depth);
            memset(deep + depth, ']', (size_t)depth);
            deep[2 * depth] = '\0';
            err = parse_text(deep, &doc, &error);
            check(depth == 64 ? !err : (err == -EINVAL && strstr(error.message, "deeper")),
                  "json: depth %d: %s", depth, err ? error.message : "ok");
            json_document_free(&doc);
        }
        memset(deep, '[', sizeof(deep) - 1);
        deep[sizeof(deep) - 1] = '\0';
        err = parse_text(deep, &doc, &error);
        check(err == -EINVAL, "json: 200000 '[' refused");
        const JsonLimits limits = { 3, 100 };
        err = json_parse(&doc, "[[[1]]]", 7, &limits, &error);
        check(!err, "json: custom depth 3 allows 3 levels");
        json_document_free(&doc);
        err = json_parse(&doc, "[[[[1]]]]", 9, &limits, &error);
        check(err == -EINVAL, "json: custom depth 3 refuses 4 levels");
        err = json_parse(&doc, "[1,2,3,4,5,6,7,8,9,10]", 22,
                         &(JsonLimits){ 8, 5 }, &error);
        check(err == -EINVAL && strstr(error.message, "values"),
              "json: value limit: %s", error.message);
    }
}

static void test_json_fuzz(void)
{
    JsonDocument *doc = NULL;
    JsonError error;
    int err;
    /* Never crashes: every prefix of a valid document, and random bytes. */
    {
        const char *text = "{\"a\": [1.5e-3, \"\\u00e9x\\n\", true, null, {\"b\": []}], "
                           "\"c\": -0.25}";
        const size_t n = strlen(text);
        unsigned errors = 0;
        for (size_t len = 0; len < n; len++) {
            err = json_parse(&doc, text, len, NULL, &error);
            errors += err == -EINVAL;
            json_document_free(&doc);
        }
        check(errors == n, "json: every proper prefix is an error (%u of %zu)",
              errors, n);
        unsigned long state = 12345;
        char junk[64];
        for (int round = 0; round < 20000; round++) {
            const size_t len = (size_t)(round % 63) + 1;
            for (size_t i = 0; i < len; i++) {
                state = state * 6364136223846793005ul + 1442695040888963407ul;
                static const char alphabet[] = "{}[]\",:.-+0123456789eEtrufalsn \\u\x80\xc3";
                junk[i] = alphabet[(state >> 33) % (sizeof(alphabet) - 1)];
            }
            err = json_parse(&doc, junk, len, NULL, &error);
            json_document_free(&doc);
        }
        check(1, "json: random input");
    }
}

static void test_json(void)
{
    test_json_values();
    test_json_numbers();
    test_json_strings();
    test_json_bom();
    test_json_errors();
    test_json_duplicates();
    test_json_depth();
    test_json_fuzz();
}

/* ---- models: malformed input ---------------------------------------------- */

static char tmp_dir[256];

static const char *write_temp(const char *name, const char *text, size_t length)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return NULL;
    fwrite(text, 1, length, f);
    fclose(f);
    return path;
}

static void expect_load_error(const char *spec, const char *fragment,
                              const char *what)
{
    Model *m = NULL;
    char error[512] = "";
    const int err = model_load(&m, spec, error, sizeof(error));
    check(err < 0 && !m, "model: %s: should fail", what);
    check(error[0] && (!fragment || strstr(error, fragment)),
          "model: %s: message \"%s\" lacks \"%s\"", what, error,
          fragment ? fragment : "");
    model_close(&m);
}

static void expect_file_error(const char *text, const char *fragment,
                              const char *what)
{
    const char *path = write_temp("bad_model.json", text, strlen(text));
    if (!path) {
        check(0, "model: cannot write a temporary file in %s", tmp_dir);
        return;
    }
    char spec[600];
    snprintf(spec, sizeof(spec), "path=%s", path);
    expect_load_error(spec, fragment, what);
}

/* A small valid model_dict; tests break one piece of it at a time. */
#define GOOD_SVM "svm_type nu_svr\\nkernel_type rbf\\ngamma 0.04\\nnr_class 2\\n" \
                 "total_sv 2\\nrho -1.5\\nSV\\n-4 1:0.5 2:0.25 \\n4 2:0.75 \\n"
#define GOOD_FEATURES "[\"VMAF_integer_feature_adm2_score\", " \
                      "\"VMAF_integer_feature_motion2_score\"]"

static char *model_text(const char *features, const char *slopes,
                        const char *svm, const char *extra)
{
    static char text[4096];
    snprintf(text, sizeof(text),
             "{\"model_dict\": {\"model_type\": \"LIBSVMNUSVR\", "
             "\"norm_type\": \"linear_rescale\", \"feature_names\": %s, "
             "\"slopes\": %s, \"intercepts\": [0.5, -0.5, 0.25], "
             "\"score_clip\": [0.0, 100.0], \"model\": \"%s\"%s}}",
             features, slopes, svm, extra);
    return text;
}

static void test_small_model(void)
{
    /* The good one loads, and predicts what libsvm's formula says. */
    const char *path = write_temp("good_model.json",
                                  model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM, ""),
                                  strlen(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                                    GOOD_SVM, "")));
    char spec[600];
    snprintf(spec, sizeof(spec), "path=%s:name=tiny", path ? path : "");
    Model *m = NULL;
    char error[512] = "";
    int err = model_load(&m, spec, error, sizeof(error));
    check(!err, "model: small model: %s", error);
    if (!err) {
        check(model_input_count(m) == 2 && model_output_count(m) == 1,
              "model: small model shape");
        check(!strcmp(model_output_name(m, 0), "tiny"), "model: name=");
        const double in[2] = { 0.3, 0.6 };
        double out[1];
        model_predict_features(m, in, out);
        /* x = (1*0.3-0.5, 3*0.6+0.25); sv0 = (0.5, 0.25), sv1 = (0, 0.75) */
        const double x0 = 1.0 * 0.3 + -0.5, x1 = 3.0 * 0.6 + 0.25;
        double d0 = 0.0, d;
        d = x0 - 0.5; d0 += d * d;
        d = x1 - 0.25; d0 += d * d;
        double d1 = 0.0;
        d = x0 - 0.0; d1 += d * d;
        d = x1 - 0.75; d1 += d * d;
        double sum = 0.0;
        sum += -4.0 * exp(-0.04 * d0);
        sum += 4.0 * exp(-0.04 * d1);
        sum -= -1.5;
        double expect = (sum - 0.5) / 2.0;
        expect = expect < 0.0 ? 0.0 : expect > 100.0 ? 100.0 : expect;
        check(out[0] == expect, "model: small model predicts %.17g, expected %.17g",
              out[0], expect);
        model_close(&m);
    }
}

static void test_bad_specs(void)
{
    /* Specs. */
    expect_load_error("version=vmaf_v9", "vmaf_v0.6.1", "unknown version lists built-ins");
    expect_load_error("version=vmaf_v9", "vmaf_b_v0.6.3", "unknown version lists all");
    expect_load_error("name=foo", "version= or path=", "spec without a model");
    expect_load_error("version=vmaf_v0.6.1:path=/x", "not both", "version and path");
    expect_load_error("version=vmaf_v0.6.1:version=vmaf_v0.6.1", "twice", "version twice");
    expect_load_error("version=", "needs a value", "empty version");
    expect_load_error("version=vmaf_v0.6.1::name=x", "empty option", "empty option");
    expect_load_error("version=vmaf_v0.6.1:bogus", "bad option", "unknown flag");
    expect_load_error("version=vmaf_v0.6.1:adm.=1", "bad option", "overload without option");
    expect_load_error("version=vmaf_v0.6.1:adm.x.y=1", "bad option", "overload with 2 dots");
    expect_load_error("version=vmaf_v0.6.1:disable_clip=maybe", "true or false", "flag value");
}

static void test_output_names(void)
{
    /* name= becomes output keys in every layout: XML attribute names, JSON
     * keys, CSV columns, subtitle fields. */
    static const char *const bad_names[] = {
        "a\"b<c>&d", "two words", "comma,name", "new\nline", "1st", "-dash", ".dot", "tab\tx",
        "pipe|x", "brace{", "\xc3\xa9t\xc3\xa9",
    };
    for (unsigned i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
        char bad[128];
        snprintf(bad, sizeof(bad), "version=vmaf_v0.6.1:name=%s", bad_names[i]);
        expect_load_error(bad, "cannot name output keys", "a name no layout can carry");
    }
    char long_name[200];
    memset(long_name, 'x', sizeof(long_name));
    snprintf(long_name, sizeof(long_name), "version=vmaf_v0.6.1:name=%0129d", 0);
    long_name[25] = 'x';
    expect_load_error(long_name, "cannot name output keys", "a name over 128 bytes");
    {
        Model *named = NULL;
        char why[512] = "";
        check(!model_load(&named, "version=vmaf_v0.6.1:name=_vmaf-4k.v2", why, sizeof(why)),
              "model: letters, digits, '_', '-' and '.' make a name: %s", why);
        model_close(&named);
    }
    expect_load_error("path=/nonexistent/dir/model.json", "/nonexistent/dir/model.json",
                      "unreadable file");
    expect_load_error("path=/nonexistent/dir/model.json", "No such file", "errno text");
    expect_load_error("path=/", "/", "directory as a model");
}

static void test_bad_files(void)
{
    /* Files. */
    expect_file_error("", "empty", "empty file");
    expect_file_error("{\"model_dict\": {\"norm_type\": \"none\",", ":1:37:",
                      "truncated file has a position");
    expect_file_error("{\"model_dict\": {\"norm_type\": none}}", ":1:30:",
                      "syntax error line:col");
    expect_file_error("{\"model_dict\": {\n  \"norm_type\": \"none\",\n  \"x\": [1,]\n}}",
                      "bad_model.json:3:11:", "syntax error on line 3");
    expect_file_error("[1, 2]", "expected an object", "top-level array");
    expect_file_error("{\"foo\": 1}", "neither", "no model_dict");
    expect_file_error("{\"0\": {\"model_dict\": {}}}", "\"1\" is missing",
                      "collection of one");
}

static void test_numbering_gap(void)
{
    /* A numbered model after a gap would be left out: the gap is named. */
    expect_file_error("{\"0\": {}, \"1\": {}, \"2\": {}, \"4\": {}}",
                      "bootstrap model \"3\" is missing: the collection has \"0\" to \"2\", "
                      "then \"4\"", "bootstrap collection with a gap");
    expect_file_error("{\"0\": {}, \"1\": {}, \"12345678901\": {}}", "\"2\" is missing",
                      "bootstrap collection with a far number");
    expect_file_error(model_text("[\"VMAF_feature_bogus\", \"VMAF_integer_feature_motion2_score\"]",
                                 "[2.0, 1.0, 3.0]", GOOD_SVM, ""),
                      "unknown feature \"VMAF_feature_bogus\"", "unknown feature");
}

static void test_chroma_correction(void)
{
    /* chroma_correction_parameter (the v1 models) needs one speed_chroma
     * and one adm3 feature, and a value other than 0. */
#define CHROMA_FEATURES "[\"Speed_chroma_feature_speed_chroma_uv_score\", " \
                        "\"VMAF_integer_feature_adm3_score\"]"
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM,
                                 ", \"chroma_correction_parameter\": 120.0"),
                      "needs a feature naming \"speed_chroma\"", "correction without speed_chroma");
    expect_file_error(model_text(CHROMA_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM,
                                 ", \"chroma_correction_parameter\": 0"),
                      "0 makes libvmaf write no score", "correction parameter 0");
    expect_file_error(model_text(CHROMA_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM,
                                 ", \"chroma_correction_parameter\": \"120\""),
                      "chroma_correction_parameter", "correction parameter not a number");
    {
        /* Where the speed_chroma input is 0, the SVM reads c (1 - adm3). */
        const char *text = model_text(CHROMA_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM,
                                      ", \"chroma_correction_parameter\": 120.0");
        const char *with = write_temp("chroma_model.json", text, strlen(text));
        const char *plain_text = model_text(CHROMA_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM, "");
        char with_spec[600], plain_spec[600];
        snprintf(with_spec, sizeof(with_spec), "path=%s", with ? with : "");
        const char *plain = write_temp("plain_model.json", plain_text, strlen(plain_text));
        snprintf(plain_spec, sizeof(plain_spec), "path=%s", plain ? plain : "");
        Model *a = NULL, *b = NULL;
        char why[512] = "";
        check(!model_load(&a, with_spec, why, sizeof(why)), "model: chroma correction: %s", why);
        check(!model_load(&b, plain_spec, why, sizeof(why)), "model: no correction: %s", why);
        if (a && b) {
            double out_a[1], out_b[1];
            const double zero[2] = { 0.0, 0.9 }, some[2] = { 0.5, 0.9 };
            const double corrected[2] = { (-120.0 * ((3.0 * 0.9 + 0.25 - 0.25) / 3.0)) + 120.0,
                                          0.9 };
            model_predict_features(a, some, out_a);
            model_predict_features(b, some, out_b);
            check(out_a[0] == out_b[0], "model: no correction where speed_chroma is not 0");
            model_predict_features(a, zero, out_a);
            model_predict_features(b, corrected, out_b);
            check(out_a[0] == out_b[0], "model: speed_chroma 0 read as c (1 - adm3): %.17g vs "
                  "%.17g", out_a[0], out_b[0]);
        }
        model_close(&a);
        model_close(&b);
    }
}

/* Model files that are wrong in one field each: the message names it. */
static void test_file_errors(void)
{
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0]", GOOD_SVM, ""),
                      "slopes: expected 3 numbers", "slopes too short");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, \"3\"]", GOOD_SVM, ""),
                      "slopes[2]: expected a number, found a string", "slope type");
    expect_file_error(model_text(GOOD_FEATURES, "{}", GOOD_SVM, ""),
                      "slopes: expected an array, found an object", "slopes type");
    expect_file_error(model_text("\"adm2\"", "[2.0, 1.0, 3.0]", GOOD_SVM, ""),
                      "feature_names: expected an array", "feature_names type");
    expect_file_error(model_text("[]", "[2.0]", GOOD_SVM, ""),
                      "0 features", "no features");
    expect_file_error(model_text("[1, 2]", "[2.0, 1.0, 3.0]", GOOD_SVM, ""),
                      "feature_names[0]: expected a string", "feature name type");
    expect_file_error("{\"model_dict\": {\"feature_names\": " GOOD_FEATURES
                      ", \"norm_type\": \"none\"}}", "missing field \"model\"",
                      "missing model");
    expect_file_error("{\"model_dict\": {\"feature_names\": " GOOD_FEATURES
                      ", \"model\": \"" GOOD_SVM "\"}}", "missing field \"norm_type\"",
                      "missing norm_type");
    expect_file_error("{\"model_dict\": {\"feature_names\": " GOOD_FEATURES
                      ", \"norm_type\": \"clip_0to1\", \"model\": \"" GOOD_SVM "\"}}",
                      "clip_0to1", "unsupported norm_type");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM,
                                 ", \"score_clip\": [0.0]"), "duplicate key",
                      "duplicate field");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM,
                                 ", \"score_transform\": {\"p0\": \"1\"}"),
                      "score_transform.p0: expected a number or null", "transform type");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM,
                                 ", \"score_transform\": {\"knots\": [[0, 0], [0, 1]]}"),
                      "x must increase", "bad knots");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM,
                                 ", \"feature_opts_dicts\": [{}, {}, {}]"),
                      "3 entries for 2 features", "too many option dicts");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM,
                                 ", \"feature_opts_dicts\": [{\"a\": [1]}]"),
                      "expected a number, a boolean or a string", "option type");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM,
                                 ", \"model_type\": \"SVR\""), NULL, "duplicate model_type");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type nu_svr\\nkernel_type rbf\\ngamma 0.04\\n"
                                 "nr_class 2\\ntotal_sv 1\\nrho 1\\nSV\\n1 3:0.5\\n", ""),
                      "index 3 out of range", "SV index out of range");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type nu_svr\\nkernel_type rbf\\ngamma 0.04\\n"
                                 "nr_class 2\\ntotal_sv 1\\nrho 1\\nSV\\n1 2:0.5 1:0.5\\n", ""),
                      "indices must increase", "SV indices out of order");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type nu_svr\\nkernel_type rbf\\ngamma 0.04\\n"
                                 "nr_class 2\\ntotal_sv 3\\nrho 1\\nSV\\n1 2:0.5\\n", ""),
                      "total_sv is 3", "too few SVs");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type nu_svr\\nkernel_type rbf\\ngamma 0.04\\n"
                                 "nr_class 2\\ntotal_sv 1\\nrho 1\\nSV\\n1 2:0.5\\n2 1:1\\n", ""),
                      "more support vectors", "too many SVs");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type c_svc\\nkernel_type rbf\\nSV\\n", ""),
                      "c_svc", "unsupported svm_type");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type nu_svr\\nkernel_type linear\\nSV\\n", ""),
                      "linear", "unsupported kernel");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type nu_svr\\nkernel_type rbf\\nnr_class 2\\n"
                                 "total_sv 1\\nrho 1\\nSV\\n1 1:1\\n", ""),
                      "no gamma", "missing gamma");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type nu_svr\\nkernel_type rbf\\ngamma x\\nSV\\n", ""),
                      "gamma needs a number", "bad gamma");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type nu_svr\\nkernel_type rbf\\ngamma 1\\n"
                                 "nr_class 2\\ntotal_sv 99999999\\nrho 1\\nSV\\n", ""),
                      "total_sv", "huge total_sv");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type nu_svr\\nkernel_type rbf\\ngamma 1\\n"
                                 "nr_class 2\\ntotal_sv 1\\nrho 1\\nSV\\n1 1:0.5:3\\n", ""),
                      "bad entry", "bad SV entry");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type nu_svr\\nkernel_type rbf\\nfoo 1\\nSV\\n", ""),
                      "unknown text \"foo\"", "unknown libsvm header");
    expect_file_error(model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]",
                                 "svm_type nu_svr\\nkernel_type rbf\\ngamma 1\\n", ""),
                      "no \"SV\" line", "no SV line");
    expect_file_error("{\"0\": {\"model_dict\": {}}, \"1\": 5}", "\"0\".model_dict",
                      "bad collection member 0");
    {
        /* A collection whose bootstrap models are not bootstrap models
         * (room for two of model_text()'s 4096 bytes and the braces). */
        char text[2 * 4096 + 32];
        char *one = model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM, "");
        /* one = {"model_dict": {...}}: use it as "0" and "1". */
        snprintf(text, sizeof(text), "{\"0\": %s, \"1\": %s}", one, one);
        expect_file_error(text, "not a bootstrap model", "collection of plain models");
    }
}

static void test_mutations(void)
{
    /* Mutations of a real model never crash and either load or fail with a
     * message. */
    {
        const char *good = model_text(GOOD_FEATURES, "[2.0, 1.0, 3.0]", GOOD_SVM,
                                      ", \"score_transform\": {\"p0\": 1, \"p1\": 1, "
                                      "\"p2\": 0.5, \"knots\": [[0, 0], [50, 60], "
                                      "[100, 100]], \"out_gte_in\": \"true\"}, "
                                      "\"feature_opts_dicts\": [{\"adm_enhn_gain_limit\""
                                      ": 1.0}]");
        char base[4096];
        snprintf(base, sizeof(base), "%s", good);
        const size_t n = strlen(base);
        unsigned long state = 99;
        unsigned loaded = 0, refused = 0, silent = 0;
        for (int round = 0; round < 3000; round++) {
            char text[4096];
            memcpy(text, base, n + 1);
            size_t len = n;
            for (int k = 0; k < 1 + round % 3 && len > 0; k++) {
                state = state * 6364136223846793005ul + 1442695040888963407ul;
                const size_t at = (state >> 20) % len;
                const int action = (int)((state >> 50) % 3);
                static const char alphabet[] = "{}[]\",:.-0123456789e \\n";
                if (action == 0)
                    text[at] = alphabet[(state >> 8) % (sizeof(alphabet) - 1)];
                else if (action == 1)
                    len = at; /* truncate */
                else
                    memmove(text + at, text + at + 1, len - at), len--;
            }
            const char *p = write_temp("fuzz_model.json", text, len);
            if (!p) break;
            char s[600];
            snprintf(s, sizeof(s), "path=%s", p);
            Model *fm = NULL;
            char e[512] = "";
            if (!model_load(&fm, s, e, sizeof(e))) {
                loaded++;
                double in[8] = { 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5 }, out[32];
                if (model_input_count(fm) <= 8 && model_output_count(fm) <= 32)
                    model_predict_features(fm, in, out);
                model_close(&fm);
            } else {
                refused++;
                silent += !e[0];
            }
        }
        check(silent == 0, "model: mutated files: %u refused without a message", silent);
        printf("mutated model files: %u loaded, %u refused\n", loaded, refused);
    }
}

static void test_malformed(void)
{
    test_small_model();
    test_bad_specs();
    test_output_names();
    test_bad_files();
    test_numbering_gap();
    test_chroma_correction();
    test_file_errors();
    test_mutations();
}

/* ---- models against the golden data ---------------------------------------- */

typedef struct Worst {
    double diff;
    unsigned compared, exact;
    char where[1600];
} Worst;

static Worst worst_main, worst_bootstrap;

/* libvmaf's output name of a model input: the base key, then "_alias_value"
 * for each option (the published models only use the enhancement gain
 * limits, alias "egl"). */
/* The key a metric writes for `key` under `options` ("name=value:..."):
 * libvmaf's suffix rule as the library applies it (option.h), which the
 * golden parity test holds against libvmaf's own names. */
typedef struct KeyState {
    const Metric *metric;
    void *state;
} KeyState;

static int set_key_option(void *cookie, const char *name, const char *value)
{
    KeyState *k = cookie;
    const MetricOption *o = option_find(k->metric->options, name);
    char error[256];
    return o ? option_set(o, k->state, value, error, sizeof(error)) : -EINVAL;
}

static void golden_key(const char *metric_name, const char *key, const char *options, char *out,
                       size_t size)
{
    snprintf(out, size, "%s", key);
    const Metric *metric = metric_find(metric_name);
    if (!metric || !options || !*options) return;
    KeyState k = { metric, calloc(1, metric->state_size) };
    if (!k.state) return;
    options_set_defaults(metric->options, k.state);
    char spec[512], error[256];
    snprintf(spec, sizeof(spec), "%s=%s", metric_name, options);
    size_t name_len;
    if (!option_spec_split(spec, &name_len, set_key_option, &k, error, sizeof(error)))
        option_key_name(metric->options, k.state, key, out, size);
    options_free(metric->options, k.state);
    free(k.state);
}

static int read_json_file(const char *path, JsonDocument **doc)
{
    char *text = NULL;
    size_t length = 0;
    char error[512];
    int err = json_read_file(path, (size_t)64 << 20, &text, &length, error, sizeof(error));
    if (err) {
        check(0, "%s", error);
        return err;
    }
    JsonError jerr;
    const JsonLimits limits = { 64, (size_t)1 << 24 };
    err = json_parse(doc, text, length, &limits, &jerr);
    free(text);
    check(!err, "%s:%u:%u: %s", path, jerr.line, jerr.column, jerr.message);
    return err;
}

static void compare_golden(const char *golden_path, const char *version,
                           const char *models_dir)
{
    JsonDocument *doc = NULL;
    if (read_json_file(golden_path, &doc)) return;
    const JsonValue *frames = json_object_get(json_document_root(doc), "frames");
    check(frames && frames->type == JSON_ARRAY && frames->u.array.count > 0,
          "%s: no frames", golden_path);
    if (!frames || frames->type != JSON_ARRAY) {
        json_document_free(&doc);
        return;
    }

    Model *builtin = NULL, *file = NULL;
    char spec[900], error[512] = "";
    snprintf(spec, sizeof(spec), "version=%s", version);
    int err = model_load(&builtin, spec, error, sizeof(error));
    check(!err, "model %s: %s", version, error);
    /* The published file too, where the shared models have it: both must
     * predict the same bits. */
    snprintf(spec, sizeof(spec), "%s/%s.json", models_dir, version);
    const bool have_file = access(spec, F_OK) == 0;
    snprintf(spec, sizeof(spec), "path=%s/%s.json", models_dir, version);
    if (have_file) {
        err |= model_load(&file, spec, error, sizeof(error));
        check(!err, "model %s: %s", spec, error);
    }
    if (err) {
        model_close(&builtin);
        model_close(&file);
        json_document_free(&doc);
        return;
    }
    if (!file) file = builtin;
    check(model_input_count(builtin) == model_input_count(file) &&
          model_output_count(builtin) == model_output_count(file),
          "%s: file and built-in differ in shape", version);

    const unsigned n_in = model_input_count(builtin);
    const unsigned n_out = model_output_count(builtin);
    double *in = calloc(n_in + 2 * (size_t)n_out, sizeof(double));
    if (!in) {
        check(0, "out of memory");
        goto out;
    }
    double *out_builtin = in + n_in, *out_file = out_builtin + n_out;
    unsigned identical = 0, frames_done = 0;
    for (size_t f = 0; f < frames->u.array.count; f++) {
        const JsonValue *metrics = json_object_get(&frames->u.array.items[f], "metrics");
        bool ok = metrics != NULL;
        for (unsigned i = 0; ok && i < n_in; i++) {
            const char *metric, *key, *options;
            model_input(builtin, i, &metric, &options, &key);
            char name[256];
            golden_key(metric, key, options, name, sizeof(name));
            const JsonValue *v = json_object_get(metrics, name);
            ok = v && v->type == JSON_NUMBER;
            check(ok, "%s frame %zu: no feature %s", golden_path, f, name);
            if (ok) in[i] = v->u.number.value;
        }
        if (!ok) break;
        model_predict_features(builtin, in, out_builtin);
        model_predict_features(file, in, out_file);
        identical += !memcmp(out_builtin, out_file, n_out * sizeof(double));
        frames_done++;

        for (unsigned o = 0; o < n_out; o++) {
            const char *name = model_output_name(builtin, o);
            const JsonValue *v = json_object_get(metrics, name);
            check(v && v->type == JSON_NUMBER, "%s frame %zu: no %s", golden_path, f, name);
            if (!v || v->type != JSON_NUMBER) continue;
            const double diff = fabs(out_builtin[o] - v->u.number.value);
            Worst *w = o == 0 ? &worst_main : &worst_bootstrap;
            w->compared++;
            w->exact += diff == 0.0;
            if (diff > w->diff || w->compared == 1) {
                w->diff = diff;
                snprintf(w->where, sizeof(w->where), "%s frame %zu %s: %.17g vs %.17g",
                         golden_path, f, name, out_builtin[o], v->u.number.value);
            }
            check(diff <= TOLERANCE, "%s frame %zu %s: %.17g, golden %.17g (diff %.3g)",
                  golden_path, f, name, out_builtin[o], v->u.number.value, diff);
        }
    }
    check(identical == frames_done, "%s: file model and built-in model differ on "
          "%u of %u frames", version, frames_done - identical, frames_done);
    free(in);
out:
    if (file == builtin) file = NULL;
    model_close(&builtin);
    model_close(&file);
    json_document_free(&doc);
}

/* The built-in description equals the one loaded from the file, number for
 * number: the generator lost nothing. */
static void compare_descriptions(const char *models_dir)
{
    for (unsigned b = 0; b < model_builtin_count; b++) {
        const ModelBuiltin *builtin = &model_builtins[b];
        char spec[900], error[512] = "";
        snprintf(spec, sizeof(spec), "%s/%s.json", models_dir, builtin->version);
        if (access(spec, F_OK)) {
            /* Not among the shared files (vmaf_4k_v0.6.1neg): its golden
             * run (.neg4k.json) checks its predictions below instead. */
            printf("%s: no file in %s; checked by its golden run\n", builtin->version,
                   models_dir);
            continue;
        }
        snprintf(spec, sizeof(spec), "path=%s/%s.json", models_dir, builtin->version);
        Model *file = NULL;
        if (model_load(&file, spec, error, sizeof(error))) {
            check(0, "%s", error);
            continue;
        }
        check(model_is_bootstrap(file) == builtin->collection,
              "%s: collection flag", builtin->version);
        const unsigned expect_outputs = builtin->collection ? builtin->model_count + 4 : 1;
        check(model_output_count(file) == expect_outputs, "%s: outputs", builtin->version);
        model_close(&file);
    }
}

/* Each metric's model features: a feature is provided by one metric only,
 * and is read from a key that metric writes. */
static void test_model_features(void)
{
    unsigned total = 0;
    for (unsigned i = 0; i < quale_metric_total; i++) {
        const Metric *m = quale_metrics[i];
        for (const MetricModelFeature *f = m->model_features; f && f->feature; f++) {
            total++;
            bool written = false;
            for (const char *const *k = m->keys; *k && !written; k++)
                written = !strcmp(*k, f->key);
            check(written, "model feature %s: %s writes no key %s", f->feature, m->name,
                  f->key);
            for (unsigned j = 0; j < quale_metric_total; j++) {
                const MetricModelFeature *g = quale_metrics[j]->model_features;
                for (; g && g->feature; g++)
                    check(g == f || strcmp(g->feature, f->feature),
                          "model feature %s: provided by %s and %s", f->feature, m->name,
                          quale_metrics[j]->name);
            }
        }
    }
    check(total > 0, "model features: none listed");
}

static void test_builtin_list(void)
{
    const char *const *v = model_builtin_versions();
    unsigned n = 0;
    while (v && v[n]) n++;
    check(n == model_builtin_count && n == 17, "model: %u built-in versions", n);
    for (unsigned i = 0; i < n; i++) {
        QualeBuiltinModelInfo info;
        check(quale_builtin_model_info(i, &info) == 0 && !strcmp(info.version, v[i]) &&
              info.condition[0] && info.features[0], "model: info of %s", v[i]);
        const bool tv = strstr(v[i], "3d0h_2160") != NULL;
        check(info.score_min == 0 && info.score_max == (tv ? 110 : 100),
              "model: %s scores from %g to %g", v[i], info.score_min, info.score_max);
        if (!strncmp(v[i], "vmaf_v1.", 8))
            check(!strcmp(info.features, "cambi, speed_chroma, adm, motion"),
                  "model: %s reads %s", v[i], info.features);
    }
    QualeBuiltinModelInfo none;
    check(quale_builtin_model_info(n, &none) == -EINVAL, "model: info past the end");
    for (unsigned i = 0; i < n; i++) {
        Model *m = NULL;
        char spec[128], error[512] = "";
        snprintf(spec, sizeof(spec), "version=%s", v[i]);
        const int err = model_load(&m, spec, error, sizeof(error));
        check(!err, "model: built-in %s: %s", v[i], error);
        if (err) continue;
        check(!strcmp(model_label(m), v[i]), "model: label of %s", v[i]);
        check(!strcmp(model_name(m), "vmaf"), "model: default name of %s", v[i]);
        check(model_is_bootstrap(m) ==
                  (!strcmp(v[i], "vmaf_b_v0.6.3") || !strcmp(v[i], "vmaf_float_b_v0.6.3")),
              "model: bootstrap flag of %s", v[i]);
        model_close(&m);
    }

    /* Default spec, and the neg model's inputs carry its options. */
    Model *m = NULL;
    char error[512] = "";
    check(!model_load(&m, NULL, error, sizeof(error)) &&
          !strcmp(model_label(m), "vmaf_v0.6.1"), "model: NULL spec is vmaf_v0.6.1");
    model_close(&m);
    check(!model_load(&m, "version=vmaf_v0.6.1neg", error, sizeof(error)),
          "model: neg: %s", error);
    if (m) {
        unsigned with_options = 0;
        for (unsigned i = 0; i < model_input_count(m); i++) {
            const char *metric, *options, *key;
            model_input(m, i, &metric, &options, &key);
            if (!strcmp(metric, "vif"))
                with_options += !strcmp(options, "vif_enhn_gain_limit=1");
            if (!strcmp(metric, "adm"))
                with_options += !strcmp(options, "adm_enhn_gain_limit=1");
            if (!strcmp(metric, "motion"))
                with_options += !strcmp(options, "");
        }
        check(with_options == 6, "model: neg model options (%u of 6)", with_options);
        model_close(&m);
    }

    /* Overloads merge into the model's options, normalised as libvmaf does. */
    check(!model_load(&m, "version=vmaf_v0.6.1neg:adm.adm_enhn_gain_limit=1.20:"
                      "vif.vif_kernelscale=1.0:name=x", error, sizeof(error)),
          "model: overload: %s", error);
    if (m) {
        for (unsigned i = 0; i < model_input_count(m); i++) {
            const char *metric, *options, *key;
            model_input(m, i, &metric, &options, &key);
            if (!strcmp(metric, "adm"))
                check(!strcmp(options, "adm_enhn_gain_limit=1.2"), "model: adm "
                      "overload gives \"%s\"", options);
            if (!strcmp(metric, "vif"))
                check(!strcmp(options, "vif_enhn_gain_limit=1:vif_kernelscale=1"),
                      "model: vif overload gives \"%s\"", options);
        }
        check(!strcmp(model_output_name(m, 0), "x"), "model: name=x");
        model_close(&m);
    }

    /* Bootstrap names follow name=. */
    check(!model_load(&m, "version=vmaf_b_v0.6.3:name=b", error, sizeof(error)),
          "model: bootstrap: %s", error);
    if (m) {
        check(model_output_count(m) == 25, "model: bootstrap outputs");
        check(!strcmp(model_output_name(m, 1), "b_0001") &&
              !strcmp(model_output_name(m, 20), "b_0020") &&
              !strcmp(model_output_name(m, 21), "b_bagging") &&
              !strcmp(model_output_name(m, 22), "b_stddev") &&
              !strcmp(model_output_name(m, 23), "b_ci_p95_lo") &&
              !strcmp(model_output_name(m, 24), "b_ci_p95_hi"),
              "model: bootstrap output names");
        model_close(&m);
    }

    /* disable_clip and enable_transform change the numbers as in libvmaf. */
    Model *plain = NULL, *noclip = NULL, *transformed = NULL;
    model_load(&plain, "version=vmaf_v0.6.1", error, sizeof(error));
    model_load(&noclip, "version=vmaf_v0.6.1:disable_clip", error, sizeof(error));
    model_load(&transformed, "version=vmaf_v0.6.1:enable_transform", error, sizeof(error));
    if (plain && noclip && transformed) {
        /* inputs: adm2, motion2, vif 0..3 (the model's order) */
        const double perfect[6] = { 1.0, 10.0, 1.0, 1.0, 1.0, 1.0 };
        const double poor[6] = { 0.5, 20.0, 0.1, 0.2, 0.3, 0.4 };
        double a, b, c;
        model_predict_features(plain, perfect, &a);
        model_predict_features(noclip, perfect, &b);
        check(a == 100.0 && b > 100.0, "model: clip at 100 (%.17g), disable_clip "
              "leaves %.17g", a, b);
        model_predict_features(plain, poor, &a);
        model_predict_features(transformed, poor, &c);
        const double expect = 1.70674692 + 1.72643844 * a + -0.00705305 * a * a;
        check(c == (expect < a ? a : expect > 100 ? 100 : expect) || c == expect,
              "model: enable_transform: %.17g from %.17g", c, a);
        check(c > a, "model: transform raises a poor score");
    } else {
        check(0, "model: flags: %s", error);
    }
    model_close(&plain);
    model_close(&noclip);
    model_close(&transformed);
}

/* A host program may run in a locale whose decimal point is ','; numbers in
 * model files and option strings must not change.  Runs only where such a
 * locale is installed. */
static void test_locale(void)
{
    static const char *const names[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
                                         "fr_FR.utf8", "de_DE", "fr_FR" };
    const char *found = NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !found; i++)
        if (setlocale(LC_NUMERIC, names[i]) && strcmp(localeconv()->decimal_point, "."))
            found = names[i];
    if (!found) {
        setlocale(LC_NUMERIC, "C");
        printf("locale test: no locale with a decimal comma installed, not run\n");
        return;
    }
    JsonDocument *doc = NULL;
    JsonError error;
    const int err = json_parse(&doc, "[0.012020766332648465, 1e-3]", 28, NULL, &error);
    check(!err && json_document_root(doc)->u.array.items[0].u.number.value ==
                      0.012020766332648465,
          "locale %s: JSON numbers", found);
    json_document_free(&doc);
    char *end = NULL;
    check(json_strtod("2.5x", &end) == 2.5 && *end == 'x', "locale %s: json_strtod", found);
    Model *m = NULL;
    char e[512] = "";
    check(!model_load(&m, "version=vmaf_v0.6.1neg:adm.adm_enhn_gain_limit=1.2", e,
                      sizeof(e)), "locale %s: load: %s", found, e);
    for (unsigned i = 0; m && i < model_input_count(m); i++) {
        const char *metric, *options, *key;
        model_input(m, i, &metric, &options, &key);
        if (!strcmp(metric, "adm"))
            check(!strcmp(options, "adm_enhn_gain_limit=1.2"), "locale %s: options "
                  "\"%s\"", found, options);
    }
    model_close(&m);
    setlocale(LC_NUMERIC, "C");
    printf("locale test: ran under %s\n", found);
}

static int ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_golden(const char *shared)
{
    char golden_dir[700], models_dir[700];
    snprintf(golden_dir, sizeof(golden_dir), "%s/corpus/golden", shared);
    snprintf(models_dir, sizeof(models_dir), "%s/models", shared);

    compare_descriptions(models_dir);

    DIR *dir = opendir(golden_dir);
    check(dir != NULL, "cannot open %s", golden_dir);
    if (!dir) return;
    char *names[512];
    unsigned count = 0;
    struct dirent *e;
    while ((e = readdir(dir)) && count < 512)
        if (ends_with(e->d_name, ".json")) names[count++] = strdup(e->d_name);
    closedir(dir);
    qsort(names, count, sizeof(names[0]), compare_names);

    static const struct { const char *suffix, *version; } runs[] = {
        { ".vmaf.json", "vmaf_v0.6.1" },
        { ".neg.json", "vmaf_v0.6.1neg" },
        { ".4k.json", "vmaf_4k_v0.6.1" },
        { ".neg4k.json", "vmaf_4k_v0.6.1neg" },
        { ".b.json", "vmaf_b_v0.6.3" },
        { ".v1.json", "vmaf_v1.0.16_3d0h" },
        { ".v1phone.json", "vmaf_v1.0.16_5d0h" },
        { ".v1hfr.json", "vmaf_v1.0.16_hfr_3d0h" },
        { ".v1_2160.json", "vmaf_v1.0.16_1d5h_2160" },
        { ".v1tv_2160.json", "vmaf_v1.0.16_3d0h_2160" },
        { ".v1hfr_2160.json", "vmaf_v1.0.16_hfr_1d5h_2160" },
        { ".float.json", "vmaf_float_v0.6.1" },
        { ".floatb.json", "vmaf_float_b_v0.6.3" },
        { ".floatneg.json", "vmaf_float_v0.6.1neg" },
        { ".float4k.json", "vmaf_float_4k_v0.6.1" },
    };
    unsigned files = 0;
    for (unsigned i = 0; i < count; i++) {
        for (size_t r = 0; names[i] && r < sizeof(runs) / sizeof(runs[0]); r++) {
            if (!ends_with(names[i], runs[r].suffix)) continue;
            char path[1200];
            snprintf(path, sizeof(path), "%s/%s", golden_dir, names[i]);
            compare_golden(path, runs[r].version, models_dir);
            files++;
        }
        free(names[i]);
    }
    check(files >= 4, "golden: only %u files", files);
    printf("golden files: %u\n", files);
    printf("vmaf: %u frames compared, %u exact, worst |diff| %.3g (%s)\n",
           worst_main.compared, worst_main.exact, worst_main.diff, worst_main.where);
    printf("bootstrap keys: %u values compared, %u exact, worst |diff| %.3g (%s)\n",
           worst_bootstrap.compared, worst_bootstrap.exact, worst_bootstrap.diff,
           worst_bootstrap.where);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof(tmp_dir), "%s/quale_test_model_XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmp_dir)) {
        printf("cannot create a temporary directory\n");
        return 1;
    }

    test_json();
    test_malformed();
    test_model_features();
    test_builtin_list();
    test_locale();

    const char *shared = getenv("QUALE_SHARED_DIR");
    char shared_default[600];
    if (!shared || !*shared) {
        snprintf(shared_default, sizeof(shared_default), "%s/../shared", QUALE_SOURCE_DIR);
        shared = shared_default;
    }
    struct stat st;
    const int have_shared = !stat(shared, &st) && S_ISDIR(st.st_mode);
    if (have_shared) test_golden(shared);

    /* Leave no files behind. */
    static const char *const temp_files[] = { "bad_model.json", "good_model.json",
                                              "fuzz_model.json" };
    for (size_t i = 0; i < sizeof(temp_files) / sizeof(temp_files[0]); i++) {
        char path[600];
        snprintf(path, sizeof(path), "%s/%s", tmp_dir, temp_files[i]);
        remove(path);
    }
    remove(tmp_dir);

    printf("%u passed, %u failed\n", passed, failed);
    if (failed) return 1;
    if (!have_shared) {
        printf("skip: no shared directory at %s\n", shared);
        return 77;
    }
    return 0;
}
