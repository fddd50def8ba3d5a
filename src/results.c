/*
 * Results read back from a JSON file (quale's layout or libvmaf's), and the
 * merge of the parts of a run split in segments (quale --segment K/N).
 *
 * A part lists its frames at full precision (%.17g reads back to the same
 * double) and says in its "segment" object which frames of which run it
 * holds.  The merge puts every part's values into one collector at their
 * frame numbers and hands it to the same writers and the same pooling as a
 * run: the mean, harmonic mean, min and max come out of the same sums, in
 * the same frame order, so the merged file is the file of the whole run.
 * Values a part could not write as JSON numbers (NaN, infinities) are
 * strings there, so that the merged XML and CSV still tell them apart.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "json.h"
#include "output.h"
#include "provenance.h"
#include "quale/quale.h"

/* 2^24 frames: 77 hours at 60 frames a second.  A file whose frame
 * numbers span more is not a run's: refused before its rows take memory. */
#define MAX_FRAMES (1u << 24)

struct QualeResults {
    char *name;               /* for messages: the file it was read from */
    Collector *collector;     /* values at their frame numbers */
    char *version;
    double fps;               /* NaN: not given */
    QualeOutputNote *notes;   /* name and value strings owned */
    unsigned note_count;
    Provenance provenance;    /* what produced them */
    unsigned frames;          /* frames listed */
    unsigned first, end;      /* the frames it covers */
    unsigned subsample;
    unsigned width, height;   /* 0 when the file does not say */
    int precision;            /* the precision its run asked for (< 0: full) */
    QualeSegment segment;     /* a part's (parts > 0); segment.run owned */
};

/* A part of a run split in segments: it has read a "segment". */
static bool is_part(const QualeResults *r)
{
    return r->segment.parts > 0;
}

static int fail(char *error, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int fail(char *error, size_t size, const char *fmt, ...)
{
    if (error && size) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(error, size, fmt, args);
        va_end(args);
    }
    return -EINVAL;
}

void quale_results_close(QualeResults **results)
{
    if (!results || !*results) return;
    QualeResults *r = *results;
    collector_close(&r->collector);
    for (unsigned i = 0; i < r->note_count; i++) {
        free((char *)r->notes[i].name);
        free((char *)r->notes[i].value);
    }
    free(r->notes);
    provenance_free(&r->provenance);
    free(r->version);
    free((char *)r->segment.run);
    free(r->name);
    free(r);
    *results = NULL;
}

static QualeResults *results_new(const char *name)
{
    QualeResults *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    r->fps = NAN;
    r->subsample = 1;
    r->precision = -1;
    r->name = strdup(name ? name : "results");
    if (!r->name || collector_open(&r->collector)) quale_results_close(&r);
    return r;
}

/* ---- reading ------------------------------------------------------------ */

typedef struct Reader {
    const char *text;
    size_t length;
    const char *name;
    char *error;
    size_t error_size;
} Reader;

static int read_fail(const Reader *rd, const JsonValue *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* "<name>:<line>:<column>: <what>" */
static int read_fail(const Reader *rd, const JsonValue *at, const char *fmt, ...)
{
    char what[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(what, sizeof(what), fmt, args);
    va_end(args);
    if (!at) return fail(rd->error, rd->error_size, "%s: %s", rd->name, what);
    unsigned line, column;
    json_position(rd->text, rd->length, at->offset, &line, &column);
    return fail(rd->error, rd->error_size, "%s:%u:%u: %s", rd->name, line, column, what);
}

/* A frame's value: a number, null (a value JSON cannot hold, as libvmaf
 * writes it) or a part's "nan", "inf", "-inf". */
static int read_value(const Reader *rd, const JsonValue *v, const char *key, double *out)
{
    if (v->type == JSON_NUMBER) {
        *out = v->u.number.value;
        return 0;
    }
    if (v->type == JSON_NULL) {
        *out = NAN;
        return 0;
    }
    if (v->type == JSON_STRING) {
        const char *s = v->u.string.chars;
        if (!strcmp(s, "nan")) *out = NAN;
        else if (!strcmp(s, "inf")) *out = INFINITY;
        else if (!strcmp(s, "-inf")) *out = -INFINITY;
        else return read_fail(rd, v, "'%s' is \"%s\", not a number", key, s);
        return 0;
    }
    return read_fail(rd, v, "'%s' is %s, not a number", key, json_type_name(v->type));
}

static int read_unsigned(const Reader *rd, const JsonValue *obj, const char *key, unsigned *out)
{
    const JsonValue *v = json_object_get(obj, key);
    if (!v) return read_fail(rd, obj, "the segment has no \"%s\"", key);
    if (v->type != JSON_NUMBER || v->u.number.value < 0 || v->u.number.value > UINT32_MAX / 2 ||
        v->u.number.value != floor(v->u.number.value))
        return read_fail(rd, v, "\"%s\" is not a frame count or number", key);
    *out = (unsigned)v->u.number.value;
    return 0;
}

static int read_segment(const Reader *rd, const JsonValue *seg, QualeResults *r)
{
    if (seg->type != JSON_OBJECT) return read_fail(rd, seg, "\"segment\" is not an object");
    int err;
    QualeSegment *g = &r->segment;
    if ((err = read_unsigned(rd, seg, "part", &g->part)) ||
        (err = read_unsigned(rd, seg, "parts", &g->parts)) ||
        (err = read_unsigned(rd, seg, "first", &g->first)) ||
        (err = read_unsigned(rd, seg, "end", &g->end)) ||
        (err = read_unsigned(rd, seg, "range_first", &g->range_first)) ||
        (err = read_unsigned(rd, seg, "subsample", &r->subsample)) ||
        (err = read_unsigned(rd, seg, "width", &r->width)) ||
        (err = read_unsigned(rd, seg, "height", &r->height)))
        return err;
    const JsonValue *p = json_object_get(seg, "precision");
    if (!p || p->type != JSON_NUMBER || p->u.number.value < -1 || p->u.number.value > 17 ||
        p->u.number.value != floor(p->u.number.value))
        return read_fail(rd, p ? p : seg, "the segment's \"precision\" is not -1 to 17");
    g->precision = (int)p->u.number.value;
    r->precision = g->precision;
    const JsonValue *run = json_object_get(seg, "run");
    if (!run || run->type != JSON_STRING)
        return read_fail(rd, run ? run : seg, "the segment's \"run\" is not a string");
    if (!(g->run = strdup(run->u.string.chars))) return -ENOMEM;
    if (g->parts == 0 || g->part == 0 || g->part > g->parts)
        return read_fail(rd, seg, "part %u of %u is not a part", g->part, g->parts);
    if (g->first >= g->end || g->first < g->range_first)
        return read_fail(rd, seg, "the frames [%u, %u) are not a segment of a range from %u",
                         g->first, g->end, g->range_first);
    if (g->end - g->first > MAX_FRAMES)
        return read_fail(rd, seg, "the segment's %u frames are more than a results file holds "
                         "(%u)", g->end - g->first, MAX_FRAMES);
    if (r->subsample == 0) r->subsample = 1;
    return collector_set_base(r->collector, g->first);
}

static int read_notes(const Reader *rd, const JsonValue *input, QualeResults *r)
{
    if (input->type != JSON_OBJECT) return read_fail(rd, input, "\"input\" is not an object");
    r->notes = calloc(input->u.object.count ? input->u.object.count : 1, sizeof(*r->notes));
    if (!r->notes) return -ENOMEM;
    for (size_t i = 0; i < input->u.object.count; i++) {
        const JsonMember *m = &input->u.object.members[i];
        if (m->value.type != JSON_STRING)
            return read_fail(rd, &m->value, "the input note '%s' is not a string", m->key);
        char *name = strdup(m->key), *value = strdup(m->value.u.string.chars);
        r->notes[r->note_count++] = (QualeOutputNote){ name, value };
        if (!name || !value) return -ENOMEM;
    }
    return 0;
}

/* "provenance": {"section": [{"fact": "text", ...}, ...], ...}: the
 * records as written (an unknown section is kept like any other). */
static int read_provenance(const Reader *rd, const JsonValue *v, QualeResults *r)
{
    if (v->type != JSON_OBJECT) return read_fail(rd, v, "\"provenance\" is not an object");
    for (size_t s = 0; s < v->u.object.count; s++) {
        const JsonMember *section = &v->u.object.members[s];
        if (section->value.type != JSON_ARRAY)
            return read_fail(rd, &section->value, "the provenance's \"%s\" is not an array",
                             section->key);
        for (size_t i = 0; i < section->value.u.array.count; i++) {
            const JsonValue *record = &section->value.u.array.items[i];
            if (record->type != JSON_OBJECT)
                return read_fail(rd, record, "a record of the provenance's \"%s\" is not an "
                                 "object", section->key);
            if (provenance_begin(&r->provenance, section->key)) return -ENOMEM;
            for (size_t k = 0; k < record->u.object.count; k++) {
                const JsonMember *fact = &record->u.object.members[k];
                if (fact->value.type != JSON_STRING)
                    return read_fail(rd, &fact->value, "the provenance's %s fact '%s' is not a "
                                     "string", section->key, fact->key);
                if (provenance_fact(&r->provenance, fact->key, fact->value.u.string.chars))
                    return -ENOMEM;
            }
        }
    }
    provenance_records(&r->provenance);
    return 0;
}

/* The key's id, declared in the order keys are met (the files list them
 * in output order). */
static int key_id(QualeResults *r, const char *key, unsigned *id)
{
    if (!collector_find(r->collector, key, id)) return 0;
    return collector_declare(r->collector, key, NULL, KEY_PHASE_FRAME, id);
}

static int read_frames(const Reader *rd, const JsonValue *frames, QualeResults *r)
{
    if (frames->type != JSON_ARRAY) return read_fail(rd, frames, "\"frames\" is not an array");
    long long previous = -1;
    unsigned gcd = 0;
    for (size_t i = 0; i < frames->u.array.count; i++) {
        const JsonValue *frame = &frames->u.array.items[i];
        if (frame->type != JSON_OBJECT) return read_fail(rd, frame, "a frame is not an object");
        const JsonValue *num = json_object_get(frame, "frameNum");
        const JsonValue *metrics = json_object_get(frame, "metrics");
        if (!num || num->type != JSON_NUMBER || num->u.number.value < 0 ||
            num->u.number.value >= UINT32_MAX / 2 ||
            num->u.number.value != floor(num->u.number.value))
            return read_fail(rd, num ? num : frame, "a frame has no frame number (\"frameNum\")");
        const unsigned index = (unsigned)num->u.number.value;
        if (previous < 0 && !is_part(r)) collector_set_base(r->collector, index);
        if (previous >= 0 && !is_part(r) && index - r->first >= MAX_FRAMES)
            return read_fail(rd, num, "frame %u is more than %u frames after the first: a "
                             "results file holds fewer", index, MAX_FRAMES);
        if ((long long)index <= previous)
            return read_fail(rd, num, "frame %u comes after frame %lld: the frames are not in "
                             "order", index, previous);
        if (!metrics || metrics->type != JSON_OBJECT)
            return read_fail(rd, metrics ? metrics : frame, "frame %u has no \"metrics\" object",
                             index);
        for (size_t k = 0; k < metrics->u.object.count; k++) {
            const JsonMember *m = &metrics->u.object.members[k];
            double value = 0.;
            unsigned id;
            int err = read_value(rd, &m->value, m->key, &value);
            if (!err) err = key_id(r, m->key, &id);
            if (!err) err = collector_put(r->collector, id, index, value);
            if (err == -ERANGE)
                return read_fail(rd, num, "frame %u is outside its segment's [%u, %u)", index,
                                 r->segment.first, r->segment.end);
            if (err) return err == -ENOMEM ? err : read_fail(rd, &m->value, "frame %u: '%s' "
                                                             "cannot be stored", index, m->key);
        }
        if (r->frames == 0) r->first = index;
        r->end = index + 1;
        r->frames++;
        previous = index;
        /* a file without a segment tells its --subsample by its frame
         * numbers, all multiples of it */
        unsigned a = gcd, b = index;
        while (b) {
            const unsigned t = a % b;
            a = b;
            b = t;
        }
        gcd = a;
    }
    if (!is_part(r) && gcd > 1) r->subsample = gcd;
    return 0;
}

int quale_results_read(QualeResults **results, const char *text, size_t length,
                       const char *name, char *error, size_t error_size)
{
    if (!results) return -EINVAL;
    *results = NULL;
    if (!text) return fail(error, error_size, "no text to read");
    const Reader rd = { text, length, name ? name : "results", error, error_size };
    /* every value takes a byte of text at least; a results file is flat */
    const JsonLimits limits = { .max_depth = 8, .max_values = length + 1 };
    JsonDocument *doc = NULL;
    JsonError jerr;
    int err = json_parse(&doc, text, length, &limits, &jerr);
    if (err) {
        if (err == -ENOMEM) return err;
        if (jerr.line)
            return fail(error, error_size, "%s:%u:%u: %s", rd.name, jerr.line, jerr.column,
                        jerr.message);
        return fail(error, error_size, "%s: %s", rd.name, jerr.message);
    }
    const JsonValue *root = json_document_root(doc);
    QualeResults *r = results_new(rd.name);
    if (!r) {
        err = -ENOMEM;
        goto out;
    }
    if (root->type != JSON_OBJECT || !json_object_get(root, "frames")) {
        err = read_fail(&rd, root, "not the results of quale or libvmaf (a JSON object with "
                        "\"frames\")");
        goto out;
    }
    const JsonValue *v;
    if ((v = json_object_get(root, "version")) && v->type == JSON_STRING &&
        !(r->version = strdup(v->u.string.chars))) {
        err = -ENOMEM;
        goto out;
    }
    if ((v = json_object_get(root, "fps")) && v->type == JSON_NUMBER) r->fps = v->u.number.value;
    if ((v = json_object_get(root, "segment")) && (err = read_segment(&rd, v, r))) goto out;
    if ((v = json_object_get(root, "input")) && (err = read_notes(&rd, v, r))) goto out;
    if ((v = json_object_get(root, "provenance")) && (err = read_provenance(&rd, v, r)))
        goto out;
    /* pooled_metrics lists every key in output order, some perhaps with no
     * value at any frame: declared first, they keep their places */
    if ((v = json_object_get(root, "pooled_metrics"))) {
        if (v->type != JSON_OBJECT) {
            err = read_fail(&rd, v, "\"pooled_metrics\" is not an object");
            goto out;
        }
        for (size_t k = 0; k < v->u.object.count; k++) {
            unsigned id;
            if ((err = key_id(r, v->u.object.members[k].key, &id))) goto out;
        }
    }
    if ((err = read_frames(&rd, json_object_get(root, "frames"), r))) goto out;
    if (is_part(r) && r->frames && (r->first < r->segment.first || r->end > r->segment.end)) {
        err = read_fail(&rd, root, "it lists frames %u to %u, outside its segment's [%u, %u)",
                        r->first, r->end - 1, r->segment.first, r->segment.end);
        goto out;
    }
    if (is_part(r)) {
        r->first = r->segment.first;
        r->end = r->segment.end;
    }
    if ((v = json_object_get(root, "aggregate_metrics"))) {
        if (v->type != JSON_OBJECT) {
            err = read_fail(&rd, v, "\"aggregate_metrics\" is not an object");
            goto out;
        }
        for (size_t k = 0; k < v->u.object.count; k++) {
            const JsonMember *m = &v->u.object.members[k];
            double value = 0.;
            if ((err = read_value(&rd, &m->value, m->key, &value)) ||
                (err = collector_set_aggregate(r->collector, m->key, value)))
                goto out;
        }
    }
    /* a part may hold no frame --subsample scores; a run holds one */
    if (r->frames == 0 && !is_part(r)) {
        err = read_fail(&rd, NULL, "it lists no frames");
        goto out;
    }
out:
    json_document_free(&doc);
    if (err) quale_results_close(&r);
    *results = r;
    return err;
}

/* ---- merging ------------------------------------------------------------- */

static int compare_parts(const void *a, const void *b)
{
    const QualeResults *x = *(const QualeResults *const *)a;
    const QualeResults *y = *(const QualeResults *const *)b;
    return x->segment.first < y->segment.first ? -1 : x->segment.first > y->segment.first;
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The item of a run's description (items separated by "; ") where two
 * descriptions first differ, as "'item a' against 'item b'". */
static const char *run_difference(const char *a, const char *b, char *why, size_t size)
{
    size_t at = 0;
    while (a[at] && a[at] == b[at]) at++;
    /* back to the start of the item */
    while (at > 0 && !(at >= 2 && a[at - 2] == ';' && a[at - 1] == ' ')) at--;
    const size_t la = strcspn(a + at, ";"), lb = strcspn(b + at, ";");
    snprintf(why, size, "they are parts of different runs: '%.*s' against '%.*s'",
             (int)(la < 160 ? la : 160), a + at, (int)(lb < 160 ? lb : 160), b + at);
    return why;
}

/* Whether two parts hold the same keys in the same order, and the same
 * notes on the inputs: NULL, or why not (in why, or a constant). */
static const char *differs(const QualeResults *a, const QualeResults *b, char *why,
                           size_t size)
{
    if (!a->segment.run != !b->segment.run) return "they are parts of different runs";
    if (a->segment.run && strcmp(a->segment.run, b->segment.run))
        return run_difference(a->segment.run, b->segment.run, why, size);
    if (a->segment.parts != b->segment.parts) return "they split the run in different counts";
    if (a->segment.range_first != b->segment.range_first) return "they split different ranges";
    if (!same_text(a->version, b->version)) return "different versions of quale wrote them";
    if (a->subsample != b->subsample) return "their --subsample differs";
    if (a->width != b->width || a->height != b->height) return "their picture sizes differ";
    const unsigned keys = collector_key_count(a->collector);
    if (keys != collector_key_count(b->collector)) return "they hold different keys";
    for (unsigned k = 0; k < keys; k++) {
        const char *x = collector_key_name(a->collector, collector_output_key(a->collector, k));
        const char *y = collector_key_name(b->collector, collector_output_key(b->collector, k));
        if (strcmp(x, y)) return "they hold different keys";
    }
    if (a->note_count != b->note_count) return "their inputs were read differently";
    for (unsigned i = 0; i < a->note_count; i++)
        if (strcmp(a->notes[i].name, b->notes[i].name) ||
            strcmp(a->notes[i].value, b->notes[i].value))
            return "their inputs were read differently";
    return NULL;
}

static int copy_values(QualeResults *to, const QualeResults *from)
{
    const Collector *c = from->collector;
    const unsigned keys = collector_key_count(c);
    for (unsigned k = 0; k < keys; k++) {
        const unsigned src = collector_output_key(c, k);
        unsigned id;
        int err = key_id(to, collector_key_name(c, src), &id);
        if (err) return err;
        for (unsigned i = from->first; i < from->end; i++) {
            double v;
            if (collector_get(c, src, i, &v)) continue;
            if ((err = collector_put(to->collector, id, i, v))) return err;
        }
    }
    return 0;
}

static int copy_notes(QualeResults *to, const QualeResults *from)
{
    to->notes = calloc(from->note_count ? from->note_count : 1, sizeof(*to->notes));
    if (!to->notes) return -ENOMEM;
    for (unsigned i = 0; i < from->note_count; i++) {
        char *name = strdup(from->notes[i].name), *value = strdup(from->notes[i].value);
        to->notes[to->note_count++] = (QualeOutputNote){ name, value };
        if (!name || !value) return -ENOMEM;
    }
    return 0;
}

/* Whether part p has a record equal to rec. */
static bool part_has_record(const QualeResults *p, const QualeProvenanceRecord *rec)
{
    for (unsigned i = 0; i < p->provenance.count; i++)
        if (provenance_equal(&p->provenance.records[i], rec)) return true;
    return false;
}

/* The parts' provenance, each record once: as it is when every part has
 * it (the build, the models, the inputs), else with a fact "parts" that
 * names the parts that have it (a --gpu run's devices, each part's
 * command line). */
static int merge_provenance(QualeResults *r, const QualeResults *const *order, unsigned count)
{
    Provenance *to = &r->provenance;
    for (unsigned p = 0; p < count; p++) {
        const Provenance *from = &order[p]->provenance;
        for (unsigned i = 0; i < from->count; i++) {
            const QualeProvenanceRecord *rec = &from->records[i];
            bool seen = false;
            for (unsigned q = 0; q < p && !seen; q++) seen = part_has_record(order[q], rec);
            if (seen) continue;
            char holders[256] = "";
            unsigned held = 0;
            for (unsigned q = p; q < count; q++) {
                if (!part_has_record(order[q], rec)) continue;
                const size_t used = strlen(holders);
                snprintf(holders + used, sizeof(holders) - used, "%s%u", held ? ", " : "",
                         order[q]->segment.part);
                held++;
            }
            if (provenance_copy(to, rec) ||
                (held < count && provenance_fact(to, "parts", holders)))
                return -ENOMEM;
        }
    }
    provenance_records(to);
    return 0;
}

/* Whether the parts can be merged at all: each a part, none holding a
 * whole-run aggregate, all of one run.  0, or an error in error. */
static int check_mergeable(const QualeResults *const *parts, unsigned count, char *error,
                           size_t error_size)
{
    for (unsigned i = 0; i < count; i++) {
        if (!parts[i]) return fail(error, error_size, "part %u is NULL", i + 1);
        if (!is_part(parts[i]))
            return fail(error, error_size, "%s is not a part of a split run (it has no "
                        "\"segment\"; parts are written by quale --segment K/N)", parts[i]->name);
        if (collector_aggregate_count(parts[i]->collector)) {
            const char *key;
            double unused;
            collector_aggregate(parts[i]->collector, 0, &key, &unused);
            return fail(error, error_size, "%s holds '%s', computed over the whole run, which "
                        "its parts cannot give: score that run whole", parts[i]->name, key);
        }
        char text[512];
        const char *why = i ? differs(parts[0], parts[i], text, sizeof(text)) : NULL;
        if (why)
            return fail(error, error_size, "%s and %s cannot be merged: %s", parts[0]->name,
                        parts[i]->name, why);
    }
    return 0;
}

/* Every part of 1..n once (by_part, indexed by part), or an error naming
 * the ones given twice or missing. */
static int check_parts_present(const QualeResults *const *parts, unsigned count, unsigned n,
                               const QualeResults **by_part, char *error, size_t error_size)
{
    for (unsigned i = 0; i < count; i++) {
        const unsigned k = parts[i]->segment.part - 1;
        if (by_part[k])
            return fail(error, error_size, "%s and %s are both part %u of %u", by_part[k]->name,
                        parts[i]->name, k + 1, n);
        by_part[k] = parts[i];
    }
    if (count == n) return 0;
    char missing[512] = "";
    size_t used = 0;
    unsigned listed = 0;
    for (unsigned k = 0; k < n && used < sizeof(missing) - 16; k++) {
        if (by_part[k]) continue;
        if (listed++ == 8) {
            used += (size_t)snprintf(missing + used, sizeof(missing) - used, ", ...");
            break;
        }
        used += (size_t)snprintf(missing + used, sizeof(missing) - used, "%s%u",
                                 listed > 1 ? ", " : "", k + 1);
    }
    return fail(error, error_size, "%u of the %u parts %s missing: part%s %s (run them again: "
                "quale --segment K/%u)", n - count, n, n - count == 1 ? "is" : "are",
                n - count == 1 ? "" : "s", missing, n);
}

/* The parts in frame order cover the range from its first frame, each
 * from where the one before ends, in the order of their numbers. */
static int check_contiguous(const QualeResults *const *order, unsigned count, char *error,
                            size_t error_size)
{
    if (order[0]->segment.first != order[0]->segment.range_first)
        return fail(error, error_size, "no part starts the range at frame %u (%s starts at %u)",
                    order[0]->segment.range_first, order[0]->name, order[0]->segment.first);
    for (unsigned i = 1; i < count; i++) {
        const QualeSegment *a = &order[i - 1]->segment, *b = &order[i]->segment;
        if (b->first < a->end)
            return fail(error, error_size, "%s (frames %u to %u) and %s (frames %u to %u) "
                        "overlap", order[i - 1]->name, a->first, a->end - 1, order[i]->name,
                        b->first, b->end - 1);
        if (b->first > a->end)
            return fail(error, error_size, "frames %u to %u are in no part: %s ends before "
                        "them, %s starts after them", a->end, b->first - 1, order[i - 1]->name,
                        order[i]->name);
        if (a->part + 1 != b->part)
            return fail(error, error_size, "%s is part %u but follows part %u, %s",
                        order[i]->name, b->part, a->part, order[i - 1]->name);
    }
    return 0;
}

/* The merged results of the parts in frame order: every value at its
 * frame, the first part's notes, the run's speed over every part. */
static int join_parts(QualeResults *r, const QualeResults *const *order, unsigned count,
                      char *error, size_t error_size)
{
    const QualeResults *p0 = order[0];
    int err = 0;
    r->version = p0->version ? strdup(p0->version) : NULL;
    r->subsample = p0->subsample;
    r->width = p0->width;
    r->height = p0->height;
    r->first = p0->first;
    r->end = order[count - 1]->end;
    if (r->end - r->first > MAX_FRAMES || (err = collector_set_base(r->collector, r->first)))
        return err ? err : fail(error, error_size, "the parts span %u frames, more than %u",
                                r->end - r->first, MAX_FRAMES);
    r->precision = p0->precision;
    if ((p0->version && !r->version) || (err = copy_notes(r, p0)) ||
        (err = merge_provenance(r, order, count)))
        return err ? err : -ENOMEM;
    /* the run's speed: every part's frames over every part's time */
    double seconds = 0.;
    for (unsigned i = 0; i < count && (err = copy_values(r, order[i])) == 0; i++) {
        r->frames += order[i]->frames;
        seconds += order[i]->fps > 0 ? order[i]->frames / order[i]->fps : NAN;
    }
    if (err) return err;
    r->fps = seconds > 0 ? r->frames / seconds : NAN;
    return 0;
}

int quale_results_merge(QualeResults **merged, const QualeResults *const *parts,
                        unsigned count, char *error, size_t error_size)
{
    if (!merged) return -EINVAL;
    *merged = NULL;
    if (!parts || count == 0) return fail(error, error_size, "no parts to merge");
    int err = check_mergeable(parts, count, error, error_size);
    if (err) return err;
    const unsigned n = parts[0]->segment.parts;
    const QualeResults **order = malloc(sizeof(*order) * count);
    const QualeResults **by_part = calloc(n, sizeof(*by_part));
    QualeResults *r = NULL;
    if (!order || !by_part) {
        err = -ENOMEM;
        goto out;
    }
    if ((err = check_parts_present(parts, count, n, by_part, error, error_size))) goto out;
    memcpy(order, parts, sizeof(*order) * count);
    qsort(order, count, sizeof(*order), compare_parts);
    if ((err = check_contiguous(order, count, error, error_size))) goto out;
    if (!(r = results_new("merged"))) err = -ENOMEM;
    else err = join_parts(r, order, count, error, error_size);
out:
    free(order);
    free(by_part);
    if (err) quale_results_close(&r);
    *merged = r;
    return err;
}

int quale_results_precision(const QualeResults *results)
{
    return results ? results->precision : -1;
}

unsigned quale_results_frame_count(const QualeResults *results)
{
    return results ? results->frames : 0;
}

unsigned quale_results_key_count(const QualeResults *results)
{
    return results ? collector_key_count(results->collector) : 0;
}

const char *quale_results_key_name(const QualeResults *results, unsigned i)
{
    if (!results || i >= collector_key_count(results->collector)) return NULL;
    return collector_key_name(results->collector, collector_output_key(results->collector, i));
}

int quale_results_pooled(const QualeResults *results, const char *key, enum QualePool method,
                         double *value)
{
    if (!results || !key || !value) return -EINVAL;
    unsigned id;
    const int err = collector_find(results->collector, key, &id);
    if (err) return err;
    return collector_pool_range(results->collector, id, method, results->first, results->end,
                                results->subsample, value);
}

int quale_results_pooled_by(const QualeResults *results, const char *key, const char *method,
                            double *value)
{
    if (!results || !key || !method || !value) return -EINVAL;
    PoolMethod m;
    unsigned id;
    int err = pool_method_parse(method, &m);
    if (!err) err = collector_find(results->collector, key, &id);
    if (err) return err;
    return collector_pool_method(results->collector, id, &m, results->first, results->end,
                                 results->subsample, value);
}

void quale_results_frames(const QualeResults *results, unsigned *first, unsigned *end,
                          unsigned *step)
{
    if (first) *first = results ? results->first : 0;
    if (end) *end = results ? results->end : 0;
    if (step) *step = results ? results->subsample : 1;
}

int quale_results_value(const QualeResults *results, const char *key, unsigned frame,
                        double *value)
{
    if (!results || !key || !value) return -EINVAL;
    unsigned id;
    const int err = collector_find(results->collector, key, &id);
    if (err) return err;
    return collector_get(results->collector, id, frame, value);
}

const QualeOutputNote *quale_results_note(const QualeResults *results, unsigned i)
{
    return results && i < results->note_count ? &results->notes[i] : NULL;
}

const char *quale_results_version(const QualeResults *results)
{
    return results ? results->version : NULL;
}

const QualeProvenanceRecord *quale_results_provenance(const QualeResults *results, unsigned i)
{
    return results && i < results->provenance.count ? &results->provenance.records[i] : NULL;
}

double quale_results_fps(const QualeResults *results)
{
    return results ? results->fps : NAN;
}

int quale_results_write(const QualeResults *results, FILE *stream,
                        enum QualeOutputFormat format, const QualeOutputOptions *options,
                        char *error, size_t error_size)
{
    if (!results || !stream) return fail(error, error_size, "no results or no stream");
    const OutputSource src = {
        .collector = results->collector,
        .width = results->width,
        .height = results->height,
        .subsample = results->subsample,
        .first = results->first,
        .end = results->end,
        .fps = results->fps,
        .notes = results->notes,
        .note_count = results->note_count,
        .provenance = results->provenance.records,
        .provenance_count = results->provenance.count,
        .pool_methods = options ? options->pool_methods : NULL,
        .pool_method_count = options && options->pool_methods ? options->pool_method_count : 0,
    };
    return output_write(&src, stream, format, options ? options->precision : results->precision,
                        error, error_size);
}
