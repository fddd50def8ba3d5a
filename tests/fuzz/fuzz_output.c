/*
 * Fuzz target: the output writers (src/output.c) with any key names and
 * values, and model names (name=) on their way to becoming keys.
 *
 * The input is NUL-separated strings: the first few are tried as model
 * names (model_load with name=...: accepted names add the model's output
 * keys), the rest are key names; the bytes after the last string choose
 * the values (NaN, infinities, zero, tiny and huge numbers, a frame left
 * without a value) and which keys are run-wide aggregates.  After a real
 * two-frame run, the keys are added to the context's results and every
 * layout is written at full precision and at 0 and 6 digits.
 *
 * Checks: a layout is written or refused with an error (XML and the
 * subtitle layout for a key they cannot carry, JSON for a key that is not
 * UTF-8 and only then);
 * JSON parses and gives every key back, and non-finite values as null;
 * XML is well formed (elements nest, attributes are names, unique, and
 * quoted without '<', '&' or '"'); every CSV row has the header's field
 * count and the header gives the keys back; a subtitle line is one line
 * per frame with every key of the frame.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "context.h"
#include "fuzz.h"
#include "json.h"
#include "model.h"
#include "quale/quale.h"

enum { MAX_KEYS = 24, FRAMES = 2 };

typedef struct Key {
    char name[160];
    bool aggregate;
    bool has[FRAMES];
    double value[FRAMES];
} Key;

static double pick_value(unsigned b)
{
    static const double specials[] = { 0.0, -0.0, 1.0, -1.0, 1e-300, 5e-324, 1e300, -1e300,
                                       0.1, 99.99999999, 123456789.123 };
    switch (b % 16) {
    case 0: return NAN;
    case 1: return -NAN;
    case 2: return INFINITY;
    case 3: return -INFINITY;
    default: return specials[b % (sizeof(specials) / sizeof(specials[0]))] * (1 + (b >> 4));
    }
}

/* ---- XML ------------------------------------------------------------------ */

static bool xml_name_char(char c, bool first)
{
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':') return true;
    if ((unsigned char)c >= 0x80) return true;
    return !first && ((c >= '0' && c <= '9') || c == '-' || c == '.');
}

static const char *xml_name(const char *p)
{
    if (!xml_name_char(*p, true)) return NULL;
    while (xml_name_char(*p, false)) p++;
    return p;
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

/* A well-formedness check of the writer's XML: elements with attributes,
 * empty or with children, no text but white space, no declaration. */
static bool xml_well_formed(const char *p)
{
    const char *stack[8];
    size_t stack_len[8];
    unsigned depth = 0;
    bool root_seen = false;
    p = skip_space(p);
    while (*p) {
        if (*p != '<') return false;
        p++;
        if (*p == '/') {
            const char *name = p + 1, *end = xml_name(name);
            if (!end || !depth || (size_t)(end - name) != stack_len[depth - 1] ||
                strncmp(name, stack[depth - 1], stack_len[depth - 1]))
                return false;
            depth--;
            p = skip_space(end);
            if (*p != '>') return false;
            p = skip_space(p + 1);
            if (!depth && *p) return false; /* one root element */
            continue;
        }
        const char *name = p, *end = xml_name(p);
        if (!end || (!depth && root_seen)) return false;
        root_seen = true;
        p = end;
        /* Attributes: name="value", each name once. */
        const char *names[MAX_KEYS * 2 + 8];
        size_t lens[MAX_KEYS * 2 + 8];
        unsigned count = 0;
        for (;;) {
            const char *q = skip_space(p);
            if (*q == '/' || *q == '>') {
                p = q;
                break;
            }
            if (q == p) return false; /* attributes are separated by space */
            const char *an = q, *ae = xml_name(q);
            if (!ae) return false;
            for (unsigned i = 0; i < count; i++)
                if (lens[i] == (size_t)(ae - an) && !strncmp(names[i], an, lens[i])) return false;
            if (count == sizeof(lens) / sizeof(lens[0])) return false;
            names[count] = an;
            lens[count++] = (size_t)(ae - an);
            if (ae[0] != '=' || ae[1] != '"') return false;
            q = ae + 2;
            while (*q && *q != '"') {
                if (*q == '<' || *q == '&') return false;
                q++;
            }
            if (*q != '"') return false;
            p = q + 1;
        }
        if (*p == '/') {
            if (p[1] != '>') return false;
            p = skip_space(p + 2);
            if (!depth && *p) return false;
        } else {
            if (depth == 8) return false;
            stack[depth] = name;
            stack_len[depth++] = (size_t)(end - name);
            p = skip_space(p + 1);
        }
    }
    return depth == 0 && root_seen;
}

/* ---- CSV ------------------------------------------------------------------- */

/* Splits one RFC 4180 record at *p into fields (unquoted into out, NUL
 * separated); returns the field count, or -1 for a malformed record. */
static int csv_record(const char **p, char *out, size_t out_size, size_t *used)
{
    int fields = 0;
    size_t n = 0;
    const char *s = *p;
    for (;;) {
        if (*s == '"') {
            s++;
            for (;;) {
                if (!*s) return -1;
                if (*s == '"') {
                    if (s[1] != '"') break;
                    s++;
                }
                if (n + 1 < out_size) out[n++] = *s;
                s++;
            }
            s++;
        } else {
            while (*s && *s != ',' && *s != '\n') {
                if (*s == '"' || *s == '\r') return -1;
                if (n + 1 < out_size) out[n++] = *s;
                s++;
            }
        }
        if (n < out_size) out[n++] = '\0';
        fields++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s != '\n') return -1;
        *p = s + 1;
        *used = n;
        return fields;
    }
}

/* ---- the target ------------------------------------------------------------ */

static void quiet(void *cookie, enum QualeLogLevel level, const char *message)
{
    (void)message;
    if (level == QUALE_LOG_ERROR) (*(unsigned *)cookie)++;
}

/* Whether s is UTF-8: JSON text is, so the writer must refuse a key that
 * is not. */
static bool valid_utf8(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        unsigned n = *s < 0x80 ? 1 : (*s & 0xe0) == 0xc0 ? 2 : (*s & 0xf0) == 0xe0 ? 3
                   : (*s & 0xf8) == 0xf0 ? 4 : 0;
        if (!n) return false;
        unsigned cp = n == 1 ? *s : *s & (0x7f >> n);
        for (unsigned i = 1; i < n; i++) {
            if ((s[i] & 0xc0) != 0x80) return false;
            cp = cp << 6 | (s[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        s += n;
    }
    return true;
}

static bool key_in(const Key *keys, unsigned n, const char *name, bool aggregate)
{
    for (unsigned i = 0; i < n; i++)
        if (keys[i].aggregate == aggregate && !strcmp(keys[i].name, name)) return true;
    return false;
}

static void check_json(const char *text, size_t size, const Key *keys, unsigned n)
{
    JsonDocument *doc = NULL;
    JsonError error;
    FUZZ_CHECK(json_parse(&doc, text, size, NULL, &error) == 0);
    const JsonValue *root = json_document_root(doc);
    const JsonValue *frames = json_object_get(root, "frames");
    const JsonValue *pooled = json_object_get(root, "pooled_metrics");
    const JsonValue *aggregates = json_object_get(root, "aggregate_metrics");
    FUZZ_CHECK(frames && frames->type == JSON_ARRAY && pooled && pooled->type == JSON_OBJECT &&
               aggregates && aggregates->type == JSON_OBJECT);
    for (size_t f = 0; f < frames->u.array.count; f++) {
        const JsonValue *metrics = json_object_get(&frames->u.array.items[f], "metrics");
        FUZZ_CHECK(metrics && metrics->type == JSON_OBJECT);
        for (size_t m = 0; m < metrics->u.object.count; m++) {
            const JsonMember *member = &metrics->u.object.members[m];
            /* Every key read back is one that was written, whatever its
             * characters (psnr_y is the run's own). */
            FUZZ_CHECK(!strcmp(member->key, "psnr_y") || key_in(keys, n, member->key, false));
            FUZZ_CHECK(member->value.type == JSON_NUMBER || member->value.type == JSON_NULL);
        }
    }
    for (unsigned k = 0; k < n; k++) {
        const JsonValue *where = keys[k].aggregate ? aggregates : pooled;
        FUZZ_CHECK(json_object_get(where, keys[k].name) != NULL);
        if (keys[k].aggregate) {
            const JsonValue *v = json_object_get(aggregates, keys[k].name);
            FUZZ_CHECK((v->type == JSON_NULL) == !isfinite(keys[k].value[0]));
        }
    }
    json_document_free(&doc);
}

static void check_csv(const char *text, const Key *keys, unsigned n)
{
    static char fields[1 << 16];
    size_t used = 0;
    const char *p = text;
    const int header = csv_record(&p, fields, sizeof(fields), &used);
    FUZZ_CHECK(header >= 2);
    /* "Frame", the keys with per-frame values, then the empty field of the
     * trailing comma. */
    const char *field = fields + strlen(fields) + 1;
    for (int i = 1; i < header - 1; i++) {
        FUZZ_CHECK(!strcmp(field, "psnr_y") || key_in(keys, n, field, false));
        field += strlen(field) + 1;
    }
    FUZZ_CHECK(*field == '\0');
    while (*p) {
        const int row = csv_record(&p, fields, sizeof(fields), &used);
        FUZZ_CHECK(row == header);
    }
}

static void check_sub(const char *text, const Key *keys, unsigned n)
{
    unsigned lines = 0;
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        FUZZ_CHECK(end != NULL);
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "{%u}{%u}frame: %u|", lines, lines + 1, lines);
        FUZZ_CHECK(!strncmp(p, prefix, strlen(prefix)) && end[-1] == '|');
        for (const char *c = p; c < end; c++) FUZZ_CHECK((unsigned char)*c >= 0x20);
        for (unsigned k = 0; k < n; k++) {
            if (keys[k].aggregate || !keys[k].has[lines]) continue;
            char field[sizeof(keys[k].name) + 4] = "|";
            strcat(field, keys[k].name);
            strcat(field, ": ");
            const char *at = strstr(p, field);
            FUZZ_CHECK(at && at < end);
        }
        lines++;
        p = end + 1;
    }
    FUZZ_CHECK(lines == FRAMES);
}

/* A context that scored FRAMES frames of psnr_y alone; its log counts
 * errors. */
static QualeContext *scored_context(unsigned *errors)
{
    QualeSettings settings;
    quale_settings_default(&settings);
    settings.threads = 1;
    settings.log = quiet;
    settings.log_cookie = errors;
    QualeContext *ctx = NULL;
    FUZZ_CHECK(quale_open(&ctx, &settings) == 0);
    FUZZ_CHECK(quale_use_metric(ctx, "psnr=enable_chroma=false") == 0); /* psnr_y alone */
    const QualeVideoFormat format = { QUALE_CHROMA_420, 8, 8, 8 };
    for (unsigned f = 0; f < FRAMES; f++) {
        QualePicture ref, dist;
        FUZZ_CHECK(quale_picture_alloc(&ref, &format) == 0 &&
                   quale_picture_alloc(&dist, &format) == 0);
        for (unsigned p = 0; p < 3; p++) {
            memset(ref.data[p], 16 * (int)f, (size_t)ref.stride[p] * ref.plane_height[p]);
            memset(dist.data[p], 17, (size_t)dist.stride[p] * dist.plane_height[p]);
        }
        FUZZ_CHECK(quale_send_pictures(ctx, &ref, &dist) == 0);
    }
    FUZZ_CHECK(quale_flush(ctx) == 0);
    return ctx;
}

/* Every layout at every precision: written whole and well formed, or
 * refused with a message (a key that is not UTF-8, where the layout
 * cannot hold it). */
static void write_every_layout(const QualeContext *ctx, const Key *keys, unsigned n,
                               const unsigned *errors)
{
    static const int precisions[] = { -1, 0, 6 };
    for (int layout = QUALE_OUTPUT_XML; layout <= QUALE_OUTPUT_SUB; layout++) {
        for (unsigned pr = 0; pr < 3; pr++) {
            char *out = NULL;
            size_t out_size = 0;
            FILE *stream = open_memstream(&out, &out_size);
            FUZZ_CHECK(stream != NULL);
            const QualeOutputOptions options = { .precision = precisions[pr], .fps = 1.5 };
            const unsigned before = *errors;
            const int err = quale_write_output(ctx, stream, (enum QualeOutputFormat)layout, &options);
            fclose(stream);
            bool all_utf8 = true;
            for (unsigned k = 0; k < n; k++) all_utf8 &= valid_utf8(keys[k].name);
            if (err) {
                FUZZ_CHECK(err == -EINVAL && *errors > before && out_size == 0);
                FUZZ_CHECK(layout == QUALE_OUTPUT_XML || layout == QUALE_OUTPUT_SUB ||
                           (layout == QUALE_OUTPUT_JSON && !all_utf8));
            } else {
                FUZZ_CHECK(layout != QUALE_OUTPUT_JSON || all_utf8);
                switch (layout) {
                case QUALE_OUTPUT_XML: FUZZ_CHECK(xml_well_formed(out)); break;
                case QUALE_OUTPUT_JSON: check_json(out, out_size, keys, n); break;
                case QUALE_OUTPUT_CSV: check_csv(out, keys, n); break;
                case QUALE_OUTPUT_SUB: check_sub(out, keys, n); break;
                }
            }
            free(out);
        }
    }
}

int quale_fuzz_output(const uint8_t *data, size_t size)
{
    /* The strings, then the value bytes. */
    char text[4096];
    const size_t len = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
    memcpy(text, data, len);
    text[len] = '\0';
    const char *strings[MAX_KEYS];
    unsigned string_count = 0;
    size_t at = 0;
    while (at < len && string_count < MAX_KEYS) {
        strings[string_count++] = text + at;
        const size_t n = strlen(text + at);
        at += n + 1;
        if (at > len) break;
    }
    const uint8_t *bytes = at < size ? data + at : NULL;
    size_t byte_count = at < size ? size - at : 0, next = 0;
#define NEXT_BYTE() (next < byte_count ? bytes[next++] : 0u)
    const unsigned model_names = string_count ? NEXT_BYTE() % 3 : 0;

    unsigned errors = 0;
    QualeContext *ctx = scored_context(&errors);

    /* The keys: model outputs of the names accepted, then the strings. */
    static Key keys[MAX_KEYS * 8];
    unsigned n = 0;
    FeatureSink *sink = context_sink(ctx);
    for (unsigned s = 0; s < string_count; s++) {
        const char *names[MAX_KEYS];
        unsigned name_count = 0;
        Model *model = NULL;
        if (s < model_names) {
            char spec[4200], error[512] = "";
            snprintf(spec, sizeof(spec), "version=vmaf_v0.6.1:name=%s", strings[s]);
            if (model_load(&model, spec, error, sizeof(error))) {
                /* One line: the name is quoted, control characters as '?'. */
                FUZZ_CHECK(error[0]);
                for (const char *c = error; *c; c++)
                    FUZZ_CHECK((unsigned char)*c >= 0x20 && (unsigned char)*c != 0x7f);
                continue;
            }
            for (unsigned o = 0; o < model_output_count(model) && name_count < MAX_KEYS; o++)
                names[name_count++] = model_output_name(model, o);
        } else {
            names[name_count++] = strings[s];
        }
        for (unsigned i = 0; i < name_count; i++) {
            if (!names[i][0] || strlen(names[i]) >= sizeof(keys[0].name) ||
                !strcmp(names[i], "psnr_y"))
                continue;
            bool seen = false;
            for (unsigned k = 0; k < n; k++) seen |= !strcmp(keys[k].name, names[i]);
            if (seen || n == sizeof(keys) / sizeof(keys[0])) continue;
            Key *key = &keys[n];
            memcpy(key->name, names[i], strlen(names[i]) + 1);
            const unsigned choice = NEXT_BYTE();
            key->aggregate = choice % 5 == 4;
            if (key->aggregate) {
                key->value[0] = pick_value(NEXT_BYTE());
                FUZZ_CHECK(feature_sink_set_aggregate(sink, key->name, key->value[0]) == 0);
            } else {
                unsigned id;
                FUZZ_CHECK(feature_sink_declare(sink, key->name, &id) == 0);
                for (unsigned f = 0; f < FRAMES; f++) {
                    key->has[f] = !(choice & (1u << (f + 3)));
                    key->value[f] = pick_value(NEXT_BYTE());
                    if (key->has[f]) FUZZ_CHECK(feature_sink_put(sink, id, f, key->value[f]) == 0);
                }
            }
            n++;
        }
        model_close(&model);
    }

    write_every_layout(ctx, keys, n, &errors);
#undef NEXT_BYTE
    quale_close(&ctx);
    return 0;
}

FUZZ_TARGET(quale_fuzz_output)
