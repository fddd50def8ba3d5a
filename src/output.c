/*
 * Writers for libvmaf's four layouts: XML, JSON, CSV and subtitle.  The
 * structure, key names and order of pooled methods follow libvmaf's
 * output.c so that tools reading its files read ours.  Numbers are written
 * at full precision ("%.17g", which reads back to the same double) unless a
 * precision is asked for; then libvmaf's rule applies: "%.Nf", or "%.16f"
 * for values whose first significant digit lies further right than N.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "common.h"
#include "log.h"
#include "output.h"
#include "quale/quale.h"

/* What is written (src) and how: the precision (full for a part), the
 * subsample and note count as the layouts use them. */
typedef struct Writer {
    const OutputSource *src;
    const Collector *collector;
    FILE *f;
    int precision;
    unsigned subsample;   /* 1 for none */
    unsigned note_count;  /* 0 without notes */
    char *error;          /* where a failure's reason goes without a context */
    size_t error_size;
} Writer;

static void writer_error(const Writer *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A context's writers log through its sink; results read back have none:
 * their reason goes to the caller's buffer. */
static void writer_error(const Writer *w, const char *fmt, ...)
{
    char text[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof(text), fmt, args);
    va_end(args);
    if (w->src->log) log_sink_print(w->src->log, QUALE_LOG_ERROR, "%s", text);
    else if (w->error && w->error_size) snprintf(w->error, w->error_size, "%s", text);
}

static const char *const pool_names[] = {
    [QUALE_POOL_MIN] = "min",
    [QUALE_POOL_MAX] = "max",
    [QUALE_POOL_MEAN] = "mean",
    [QUALE_POOL_HARMONIC_MEAN] = "harmonic_mean",
};

/* libvmaf's count of zeros between the point and the first significant
 * fractional digit. */
static int leading_fraction_zeros(double x)
{
    x = fabs(x);
    double fraction = x - (double)(long long)x;
    int zeros = 0;
    while (fraction < 1.0 && fraction != 0) {
        fraction *= 10;
        zeros++;
    }
    return zeros;
}

/* Formats a value; returns its text in buf.  NaN and infinities are
 * "nan", "inf" and "-inf" in every layout but JSON (which has null for
 * them, as libvmaf writes), whatever the sign of a NaN and the C
 * library's spelling. */
static const char *format_number(const Writer *w, double x, char *buf, size_t size)
{
    if (isnan(x)) return "nan";
    if (isinf(x)) return x > 0 ? "inf" : "-inf";
    if (w->precision < 0)
        snprintf(buf, size, "%.17g", x);
    else if (fabs(x) < 9.2e18 && leading_fraction_zeros(x) > w->precision)
        snprintf(buf, size, "%.16f", x);
    else
        snprintf(buf, size, "%.*f", w->precision, x);
    return buf;
}

/* JSON has no NaN or infinity: libvmaf writes null. */
static const char *json_number(const Writer *w, double x, char *buf, size_t size)
{
    /* A part keeps them apart, as strings, for the merged file's other
     * layouts. */
    if (!isfinite(x) && w->src->segment)
        return isnan(x) ? "\"nan\"" : x > 0 ? "\"inf\"" : "\"-inf\"";
    if (!isfinite(x)) return "null";
    return format_number(w, x, buf, size);
}

static bool frame_listed(const Writer *w, unsigned i)
{
    if (i < w->src->first || i >= w->src->end) return false;
    if (w->subsample > 1 && i % w->subsample) return false;
    return collector_frame_has_values(w->collector, i);
}

static unsigned key_count(const Writer *w)
{
    return collector_key_count(w->collector);
}

/* The id of the k-th key in libvmaf's order (collector.h). */
static unsigned key_id(const Writer *w, unsigned k)
{
    return collector_output_key(w->collector, k);
}

static const char *key_name(const Writer *w, unsigned k)
{
    return collector_key_name(w->collector, key_id(w, k));
}

/* libvmaf's pooling over the frames written. */
static int pool(const Writer *w, unsigned k, enum QualePool method, double *value)
{
    return collector_pool_range(w->collector, key_id(w, k), method, w->src->first, w->src->end,
                                w->subsample, value);
}

/* A pooling method beyond libvmaf's four (output_write() checked them);
 * libvmaf's own are written once, above. */
static int extra_pool(const Writer *w, unsigned k, unsigned e, double *value)
{
    PoolMethod m;
    if (pool_method_parse(w->src->pool_methods[e], &m) || m.kind == POOL_PLAIN) return -EINVAL;
    return collector_pool_method(w->collector, key_id(w, k), &m, w->src->first, w->src->end,
                                 w->subsample, value);
}

/* ---- key names in each layout -------------------------------------------- */

/* The length of the valid UTF-8 sequence at s (1 to 4), 0 if it is not
 * one (stray continuation bytes, overlong forms, surrogates, > U+10FFFF). */
static size_t utf8_sequence(const unsigned char *s)
{
    if (s[0] < 0x80) return 1;
    size_t n;
    unsigned cp;
    if ((s[0] & 0xe0) == 0xc0) n = 2, cp = s[0] & 0x1f;
    else if ((s[0] & 0xf0) == 0xe0) n = 3, cp = s[0] & 0x0f;
    else if ((s[0] & 0xf8) == 0xf0) n = 4, cp = s[0] & 0x07;
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const unsigned smallest[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (cp < smallest[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

/* A JSON string: quotes, backslashes and control characters escaped
 * (check_keys() has made sure that it is UTF-8, as JSON text is). */
static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f) fprintf(f, "\\u%04x", *c);
        else fputc(*c, f);
    }
    fputc('"', f);
}

static bool is_utf8(const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
        const size_t n = utf8_sequence(c);
        if (!n) return false;
        c += n;
    }
    return true;
}

/* A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line
 * break, quotes doubled. */
static void put_csv_field(FILE *f, const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* An XML name as libvmaf's keys are (ASCII): a letter or '_', then
 * letters, digits, '_', '-' and '.'.  Attribute names cannot be escaped. */
static bool is_xml_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return false;
    for (s++; *s; s++) {
        const char c = *s;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

/* Whether a key can be written in the layout: XML attribute names have no
 * escapes, and the subtitle layout separates keys by '|' on one line. */
static bool key_fits(enum QualeOutputFormat format, const char *key)
{
    switch (format) {
    /* A frame's keys are attributes beside its frameNum. */
    case QUALE_OUTPUT_XML: return is_xml_name(key) && strcmp(key, "frameNum");
    case QUALE_OUTPUT_SUB:
        for (const char *c = key; *c; c++)
            if (*c == '|' || *c == '{' || *c == '}' || (unsigned char)*c < 0x20) return false;
        return *key != '\0';
    case QUALE_OUTPUT_JSON: return is_utf8(key); /* escaped, but JSON text is UTF-8 */
    default: return true; /* CSV quotes what it must */
    }
}

static int check_keys(const Writer *w, enum QualeOutputFormat format)
{
    static const char *const layout[] = { "XML", "JSON", "CSV", "subtitle" };
    const unsigned keys = collector_key_count(w->collector);
    const unsigned aggregates = collector_aggregate_count(w->collector);
    for (unsigned k = 0; k < keys + aggregates; k++) {
        const char *key;
        double unused;
        if (k < keys) key = collector_key_name(w->collector, k);
        else collector_aggregate(w->collector, k - keys, &key, &unused);
        if (key_fits(format, key)) continue;
        const char *why = format == QUALE_OUTPUT_XML
                              ? "an XML attribute name other than frameNum is a letter or '_', "
                                "then letters, digits, '_', '-' and '.'"
                          : format == QUALE_OUTPUT_JSON ? "it is not UTF-8"
                                                        : "it holds '|', '{', '}' or a control "
                                                          "character";
        /* the key as a message may show it: control bytes as \xNN */
        char shown[256];
        size_t n = 0;
        for (const unsigned char *c = (const unsigned char *)key; *c && n + 5 < sizeof(shown); c++)
            n += (size_t)snprintf(shown + n, sizeof(shown) - n,
                                  *c < 0x20 || *c == 0x7f ? "\\x%02x" : "%c", *c);
        writer_error(w, "the key '%s' cannot be written in the %s layout (%s); write %s", shown,
                     layout[format], why, format == QUALE_OUTPUT_JSON ? "CSV" : "JSON or CSV");
        return -EINVAL;
    }
    return 0;
}

/* An XML attribute value, escaped. */
static void put_xml_value(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
    fputc('"', f);
}

/* ---- provenance ------------------------------------------------------------ */

/* Whether record r is the first of its section: sections are written
 * together, in the order they first appear. */
static bool first_of_section(const OutputSource *src, unsigned r)
{
    for (unsigned i = 0; i < r; i++)
        if (!strcmp(src->provenance[i].section, src->provenance[r].section)) return false;
    return true;
}

/* "provenance": {"section": [{"fact": "value", ...}, ...], ...}, a
 * section on a line of its own. */
static void write_json_provenance(FILE *f, const OutputSource *src)
{
    fprintf(f, "  \"provenance\": {");
    bool first_section = true;
    for (unsigned s = 0; s < src->provenance_count; s++) {
        if (!first_of_section(src, s)) continue;
        const char *section = src->provenance[s].section;
        fprintf(f, "%s\n    ", first_section ? "" : ",");
        put_json_string(f, section);
        fprintf(f, ": [");
        first_section = false;
        bool first_record = true;
        for (unsigned r = s; r < src->provenance_count; r++) {
            const QualeProvenanceRecord *rec = &src->provenance[r];
            if (strcmp(rec->section, section)) continue;
            fprintf(f, "%s{", first_record ? "" : ", ");
            first_record = false;
            for (unsigned i = 0; i < rec->fact_count; i++) {
                fprintf(f, "%s", i ? ", " : "");
                put_json_string(f, rec->facts[i].name);
                fprintf(f, ": ");
                put_json_string(f, rec->facts[i].value);
            }
            fprintf(f, "}");
        }
        fprintf(f, "]");
    }
    fprintf(f, "\n  },\n");
}

/* <provenance> with an element a record, named by its section. */
static void write_xml_provenance(FILE *f, const OutputSource *src)
{
    fprintf(f, "  <provenance>\n");
    for (unsigned s = 0; s < src->provenance_count; s++) {
        if (!first_of_section(src, s)) continue;
        for (unsigned r = s; r < src->provenance_count; r++) {
            const QualeProvenanceRecord *rec = &src->provenance[r];
            if (strcmp(rec->section, src->provenance[s].section)) continue;
            fprintf(f, "    <%s", rec->section);
            for (unsigned i = 0; i < rec->fact_count; i++) {
                fprintf(f, " %s=", rec->facts[i].name);
                put_xml_value(f, rec->facts[i].value);
            }
            fprintf(f, " />\n");
        }
    }
    fprintf(f, "  </provenance>\n");
}

/* Why a record cannot be written (a name that is not an XML name, a
 * value that is not UTF-8, a fact named twice), or NULL. */
static const char *provenance_fault(const QualeProvenanceRecord *rec)
{
    if (!rec->section || !is_xml_name(rec->section)) return "its section is not an XML name";
    if (rec->fact_count && !rec->facts) return "it has no facts";
    for (unsigned i = 0; i < rec->fact_count; i++) {
        const QualeOutputNote *n = &rec->facts[i];
        if (!n->name || !n->value) return "a fact has no name or no value";
        if (!is_xml_name(n->name)) return "a fact's name is not an XML name";
        if (!is_utf8(n->value)) return "a fact's value is not UTF-8";
        for (unsigned j = 0; j < i; j++)
            if (!strcmp(rec->facts[j].name, n->name)) return "it names a fact twice";
    }
    return NULL;
}

static void write_json(const Writer *w, double fps)
{
    FILE *f = w->f;
    char num[64];
    fprintf(f, "{\n");
    fprintf(f, "  \"version\": \"%s\",\n", quale_version());
    if (isfinite(fps)) fprintf(f, "  \"fps\": %.2f,\n", fps);
    else fprintf(f, "  \"fps\": null,\n");
    if (w->src->segment) {
        const QualeSegment *g = w->src->segment;
        fprintf(f, "  \"segment\": {\"part\": %u, \"parts\": %u, \"first\": %u, \"end\": %u, "
                "\"range_first\": %u, \"subsample\": %u, \"width\": %u, \"height\": %u, "
                "\"precision\": %d, \"run\": ", g->part, g->parts, g->first, g->end,
                g->range_first, w->subsample, w->src->width, w->src->height,
                g->precision < 0 ? -1 : g->precision);
        put_json_string(f, g->run ? g->run : "");
        fprintf(f, "},\n");
    }
    if (w->note_count) {
        fprintf(f, "  \"input\": {");
        for (unsigned i = 0; i < w->note_count; i++) {
            fprintf(f, "%s\n    ", i ? "," : "");
            put_json_string(f, w->src->notes[i].name);
            fprintf(f, ": ");
            put_json_string(f, w->src->notes[i].value);
        }
        fprintf(f, "\n  },\n");
    }
    if (w->src->provenance_count) write_json_provenance(f, w->src);

    fprintf(f, "  \"frames\": [");
    bool first_frame = true;
    const unsigned span = QUALE_MIN(collector_frame_span(w->collector), w->src->end);
    for (unsigned i = w->src->first; i < span; i++) {
        if (!frame_listed(w, i)) continue;
        fprintf(f, "%s    {\n", first_frame ? "\n" : ",\n");
        first_frame = false;
        fprintf(f, "      \"frameNum\": %u,\n", i + w->src->offset);
        fprintf(f, "      \"metrics\": {\n");
        bool first_key = true;
        for (unsigned k = 0; k < key_count(w); k++) {
            double v;
            if (collector_get(w->collector, key_id(w, k), i, &v)) continue;
            fprintf(f, "%s        ", first_key ? "" : ",\n");
            put_json_string(f, key_name(w, k));
            fprintf(f, ": %s", json_number(w, v, num, sizeof(num)));
            first_key = false;
        }
        fprintf(f, "\n      }\n    }");
    }
    fprintf(f, "\n  ],\n");

    fprintf(f, "  \"pooled_metrics\": {");
    for (unsigned k = 0; k < key_count(w); k++) {
        fprintf(f, "%s    ", k ? ",\n" : "\n");
        put_json_string(f, key_name(w, k));
        fprintf(f, ": {");
        bool first = true;
        for (int m = QUALE_POOL_MIN; m <= QUALE_POOL_HARMONIC_MEAN; m++) {
            double v;
            if (pool(w, k, (enum QualePool)m, &v)) continue;
            fprintf(f, "%s      \"%s\": %s", first ? "\n" : ",\n", pool_names[m],
                    json_number(w, v, num, sizeof(num)));
            first = false;
        }
        for (unsigned e = 0; e < w->src->pool_method_count; e++) {
            double v;
            if (extra_pool(w, k, e, &v)) continue;
            fprintf(f, "%s      ", first ? "\n" : ",\n");
            put_json_string(f, w->src->pool_methods[e]);
            fprintf(f, ": %s", json_number(w, v, num, sizeof(num)));
            first = false;
        }
        fprintf(f, "\n    }");
    }
    fprintf(f, "\n  },\n");

    fprintf(f, "  \"aggregate_metrics\": {");
    const unsigned n_aggregates = collector_aggregate_count(w->collector);
    for (unsigned a = 0; a < n_aggregates; a++) {
        const char *name;
        double v;
        collector_aggregate(w->collector, a, &name, &v);
        fprintf(f, "%s\n    ", a ? "," : "");
        put_json_string(f, name);
        fprintf(f, ": %s", json_number(w, v, num, sizeof(num)));
    }
    fprintf(f, "\n  }\n}\n");
}

static void write_xml(const Writer *w, double fps)
{
    FILE *f = w->f;
    char num[64];
    fprintf(f, "<VMAF version=\"%s\">\n", quale_version());
    fprintf(f, "  <params qualityWidth=\"%u\" qualityHeight=\"%u\" />\n", w->src->width,
            w->src->height);
    fprintf(f, "  <fyi fps=\"%.2f\" />\n", fps);
    if (w->note_count) {
        fprintf(f, "  <input");
        for (unsigned i = 0; i < w->note_count; i++) {
            fprintf(f, " %s=", w->src->notes[i].name);
            put_xml_value(f, w->src->notes[i].value);
        }
        fprintf(f, " />\n");
    }
    if (w->src->provenance_count) write_xml_provenance(f, w->src);
    fprintf(f, "  <frames>\n");
    const unsigned span = QUALE_MIN(collector_frame_span(w->collector), w->src->end);
    for (unsigned i = w->src->first; i < span; i++) {
        if (!frame_listed(w, i)) continue;
        fprintf(f, "    <frame frameNum=\"%u\" ", i + w->src->offset);
        for (unsigned k = 0; k < key_count(w); k++) {
            double v;
            if (collector_get(w->collector, key_id(w, k), i, &v)) continue;
            fprintf(f, "%s=\"%s\" ", key_name(w, k), format_number(w, v, num, sizeof(num)));
        }
        fprintf(f, "/>\n");
    }
    fprintf(f, "  </frames>\n");
    fprintf(f, "  <pooled_metrics>\n");
    for (unsigned k = 0; k < key_count(w); k++) {
        fprintf(f, "    <metric name=\"%s\" ", key_name(w, k));
        for (int m = QUALE_POOL_MIN; m <= QUALE_POOL_HARMONIC_MEAN; m++) {
            double v;
            if (pool(w, k, (enum QualePool)m, &v)) continue;
            fprintf(f, "%s=\"%s\" ", pool_names[m], format_number(w, v, num, sizeof(num)));
        }
        for (unsigned e = 0; e < w->src->pool_method_count; e++) {
            double v;
            if (extra_pool(w, k, e, &v)) continue;
            fprintf(f, "%s=\"%s\" ", w->src->pool_methods[e],
                    format_number(w, v, num, sizeof(num)));
        }
        fprintf(f, "/>\n");
    }
    fprintf(f, "  </pooled_metrics>\n");
    fprintf(f, "  <aggregate_metrics ");
    const unsigned n_aggregates = collector_aggregate_count(w->collector);
    for (unsigned a = 0; a < n_aggregates; a++) {
        const char *name;
        double v;
        collector_aggregate(w->collector, a, &name, &v);
        fprintf(f, "%s=\"%s\" ", name, format_number(w, v, num, sizeof(num)));
    }
    fprintf(f, "/>\n");
    fprintf(f, "</VMAF>\n");
}

static void write_csv(const Writer *w)
{
    FILE *f = w->f;
    char num[64];
    fprintf(f, "Frame,");
    for (unsigned k = 0; k < key_count(w); k++) {
        put_csv_field(f, key_name(w, k));
        fputc(',', f);
    }
    fprintf(f, "\n");
    const unsigned span = QUALE_MIN(collector_frame_span(w->collector), w->src->end);
    for (unsigned i = w->src->first; i < span; i++) {
        if (!frame_listed(w, i)) continue;
        fprintf(f, "%u,", i + w->src->offset);
        for (unsigned k = 0; k < key_count(w); k++) {
            /* A key without a value at this frame is an empty field, so
             * that the columns stay under their names (libvmaf leaves the
             * field out; every key has a value at every listed frame of
             * its runs, so the files are the same). */
            double v;
            if (collector_get(w->collector, key_id(w, k), i, &v)) fputc(',', f);
            else fprintf(f, "%s,", format_number(w, v, num, sizeof(num)));
        }
        fprintf(f, "\n");
    }
}

static void write_sub(const Writer *w)
{
    FILE *f = w->f;
    char num[64];
    const unsigned span = QUALE_MIN(collector_frame_span(w->collector), w->src->end);
    for (unsigned i = w->src->first; i < span; i++) {
        if (!frame_listed(w, i)) continue;
        const unsigned number = i + w->src->offset;
        fprintf(f, "{%u}{%u}frame: %u|", number, number + 1, number);
        for (unsigned k = 0; k < key_count(w); k++) {
            double v;
            if (collector_get(w->collector, key_id(w, k), i, &v)) continue;
            fprintf(f, "%s: %s|", key_name(w, k), format_number(w, v, num, sizeof(num)));
        }
        fprintf(f, "\n");
    }
}

int output_write(const OutputSource *src, FILE *stream, enum QualeOutputFormat format,
                 int precision, char *error, size_t error_size)
{
    Writer w = {
        .src = src,
        .collector = src->collector,
        .f = stream,
        .precision = src->segment ? -1 : precision,
        .subsample = src->subsample > 1 ? src->subsample : 1,
        .note_count = src->notes ? src->note_count : 0,
        .error = error,
        .error_size = error_size,
    };
    if (precision > 17) {
        writer_error(&w, "precision must be at most 17 digits");
        return -EINVAL;
    }
    if (format < QUALE_OUTPUT_XML || format > QUALE_OUTPUT_SUB) {
        writer_error(&w, "unknown output format %d", (int)format);
        return -EINVAL;
    }
    if (src->segment && format != QUALE_OUTPUT_JSON) {
        writer_error(&w, "a part of a split run is written as JSON (the merge gives the other "
                     "layouts)");
        return -EINVAL;
    }
    if (src->first >= src->end) {
        writer_error(&w, "no frames to write: the frames [%u, %u) hold none", src->first,
                     src->end);
        return -EINVAL;
    }
    for (unsigned i = 0; i < w.note_count; i++) {
        const QualeOutputNote *n = &src->notes[i];
        if (!n->name || !n->value || !is_xml_name(n->name) || !is_utf8(n->value)) {
            writer_error(&w, "output note %u: %s", i,
                         !n->name || !n->value ? "no name or no value"
                         : !is_xml_name(n->name) ? "its name is not an XML name"
                                                 : "its value is not UTF-8");
            return -EINVAL;
        }
    }
    if (src->provenance_count && !src->provenance) {
        writer_error(&w, "%u provenance records, but none given", src->provenance_count);
        return -EINVAL;
    }
    for (unsigned r = 0; r < src->provenance_count; r++) {
        const char *fault = provenance_fault(&src->provenance[r]);
        if (fault) {
            writer_error(&w, "provenance record %u: %s", r, fault);
            return -EINVAL;
        }
    }
    for (unsigned e = 0; e < src->pool_method_count; e++) {
        PoolMethod m;
        if (!src->pool_methods[e] || pool_method_parse(src->pool_methods[e], &m)) {
            writer_error(&w, "'%s' is not a pooling method (min, max, mean, harmonic_mean, pN, "
                         "lowN)", src->pool_methods[e] ? src->pool_methods[e] : "(null)");
            return -EINVAL;
        }
    }
    if (src->segment && (!src->segment->run || !is_utf8(src->segment->run))) {
        writer_error(&w, "a part's run description must be UTF-8 text");
        return -EINVAL;
    }
    const int err = check_keys(&w, format);
    if (err) return err;
    switch (format) {
    case QUALE_OUTPUT_XML: write_xml(&w, src->fps); break;
    case QUALE_OUTPUT_JSON: write_json(&w, src->fps); break;
    case QUALE_OUTPUT_CSV: write_csv(&w); break;
    case QUALE_OUTPUT_SUB: write_sub(&w); break;
    }
    if (fflush(stream) || ferror(stream)) {
        writer_error(&w, "writing the results failed: %s", strerror(errno));
        return -EIO;
    }
    return 0;
}
