/*
 * Fuzz target: the JSON parser (src/json.c) and the model loader
 * (src/model.c) on any bytes.
 *
 *  - json_parse() with the default limits and with tight ones: a document
 *    whose every value can be walked, or an error with a position inside
 *    the text and a message without control characters;
 *  - model_load("path=<the bytes as a file>") plain and with
 *    name=, disable_clip and enable_transform: a model, or -EINVAL /
 *    -ENOMEM with a one-line message; a model answers every accessor and
 *    predicts any input vector (zeros, ones, large, negative).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "json.h"
#include "model.h"

/* No byte below 0x20 nor DEL: a message is one line and cannot drive a
 * terminal.  UTF-8 from the document is allowed. */
static bool no_controls(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f) return false;
    return true;
}

/* Touches every value; returns how many there are. */
static size_t walk(const JsonValue *v, size_t length, unsigned depth)
{
    FUZZ_CHECK(depth <= JSON_MAX_DEPTH_CAP + 1);
    FUZZ_CHECK(v->offset < length);
    size_t n = 1;
    switch (v->type) {
    case JSON_NULL:
    case JSON_BOOL:
        break;
    case JSON_NUMBER:
        FUZZ_CHECK(isfinite(v->u.number.value) && v->u.number.text[0]);
        break;
    case JSON_STRING:
        FUZZ_CHECK(v->u.string.chars[v->u.string.length] == '\0');
        break;
    case JSON_ARRAY:
        for (size_t i = 0; i < v->u.array.count; i++)
            n += walk(&v->u.array.items[i], length, depth + 1);
        break;
    case JSON_OBJECT:
        for (size_t i = 0; i < v->u.object.count; i++) {
            const JsonMember *m = &v->u.object.members[i];
            FUZZ_CHECK(m->key[m->key_length] == '\0' && m->key_offset < length);
            /* (a key holding \u0000 cannot be looked up as a C string) */
            if (strlen(m->key) == m->key_length) FUZZ_CHECK(json_object_get(v, m->key) != NULL);
            n += walk(&m->value, length, depth + 1);
        }
        break;
    default:
        FUZZ_CHECK(!"unknown JSON type");
    }
    return n;
}

static void parse(const uint8_t *data, size_t size, const JsonLimits *limits)
{
    JsonDocument *doc = NULL;
    JsonError error;
    const int err = json_parse(&doc, (const char *)data, size, limits, &error);
    if (err) {
        FUZZ_CHECK(err == -EINVAL || err == -ENOMEM);
        FUZZ_CHECK(doc == NULL);
        FUZZ_CHECK(error.message[0] && no_controls(error.message));
        FUZZ_CHECK(error.line >= 1 && error.column >= 1);
        FUZZ_CHECK(error.line <= size + 1 && error.column <= size + 1);
        return;
    }
    const size_t values = walk(json_document_root(doc), size, 0);
    if (limits) FUZZ_CHECK(values <= limits->max_values);
    json_document_free(&doc);
    FUZZ_CHECK(doc == NULL);
}

static void load(const char *spec)
{
    Model *m = NULL;
    char error[512];
    const int err = model_load(&m, spec, error, sizeof(error));
    if (err) {
        FUZZ_CHECK(err == -EINVAL || err == -ENOMEM);
        FUZZ_CHECK(m == NULL);
        FUZZ_CHECK(error[0] && no_controls(error));
        return;
    }
    FUZZ_CHECK(m != NULL);
    FUZZ_CHECK(model_name(m)[0] && model_label(m)[0]);
    const unsigned inputs = model_input_count(m), outputs = model_output_count(m);
    FUZZ_CHECK(inputs >= 1 && outputs >= 1);
    for (unsigned i = 0; i < inputs; i++) {
        const char *metric, *options, *key;
        FUZZ_CHECK(model_input(m, i, &metric, &options, &key) == 0);
        FUZZ_CHECK(metric[0] && key[0] && no_controls(options));
    }
    for (unsigned i = 0; i < outputs; i++) FUZZ_CHECK(model_output_name(m, i) != NULL);

    double *in = calloc(inputs, sizeof(*in));
    double *out = calloc(outputs, sizeof(*out));
    FUZZ_CHECK(in && out);
    static const double probes[] = { 0.0, 1.0, -1.0, 0.5, 1e6, -1e300 };
    for (size_t p = 0; p < sizeof(probes) / sizeof(probes[0]); p++) {
        for (unsigned i = 0; i < inputs; i++) in[i] = probes[p] * (i % 2 ? 1.0 : 0.75);
        FUZZ_CHECK(model_predict_features(m, in, out) == 0);
    }
    free(in);
    free(out);
    model_close(&m);
    FUZZ_CHECK(m == NULL);
}

int quale_fuzz_model(const uint8_t *data, size_t size)
{
    parse(data, size, NULL);
    const JsonLimits tight = { 4, 64 };
    parse(data, size, &tight);

    char path[64];
    const int fd = fuzz_memfd(data, size, path, sizeof(path));
    if (fd < 0) return 0;
    char spec[160];
    snprintf(spec, sizeof(spec), "path=%s", path);
    load(spec);
    snprintf(spec, sizeof(spec), "path=%s:name=fuzz:disable_clip:enable_transform", path);
    load(spec);
    close(fd);
    return 0;
}

FUZZ_TARGET(quale_fuzz_model)
