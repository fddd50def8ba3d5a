/*
 * quale report RESULT.json... -o report.html, and --html on a scoring run:
 * one HTML file that a browser opens offline, with the results' per-frame
 * curves, pooled scores, worst frames and settings.
 *
 * The page (tools/report_template.html, built in) draws from one JSON
 * object this file writes into it (the contract is in docs/report.md):
 * every number the page shows as a score is computed here, by the library's
 * own pooling, so that the page says what the results files say.  A large
 * run keeps every frame of its models' scores and min/max envelopes of the
 * other keys, so that a two-hour title stays a few megabytes.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "output_file.h"
#include "report.h"

enum { EXIT_RUN_FAILED = 1, EXIT_USAGE = 2 };

extern const unsigned char report_template[];
extern const size_t report_template_size;

/* Per-frame values of every key up to this many numbers; beyond it the
 * models' keys alone, the others as envelopes of ENVELOPE_POINTS buckets. */
#define FULL_VALUES_LIMIT 2000000
#define ENVELOPE_POINTS 4000
#define WORST_FRAMES 20

static const char *const report_pools[] = { "mean", "harmonic_mean", "min", "max",
                                            "p1", "p5", "low1", "low5" };

/* ---- JSON text out ------------------------------------------------------ */

/* The length of the UTF-8 sequence at s (1 to 4 bytes), or 0 when it is
 * not one (a stray or cut byte, an overlong form, a surrogate, past U+10FFFF);
 * *code is the code point. */
static unsigned utf8_sequence(const unsigned char *s, unsigned *code)
{
    static const unsigned min_code[] = { 0, 0, 0x80, 0x800, 0x10000 };
    const unsigned lead = s[0];
    const unsigned len = lead < 0x80 ? 1 : (lead & 0xe0) == 0xc0 ? 2 : (lead & 0xf0) == 0xe0 ? 3
                       : (lead & 0xf8) == 0xf0 ? 4 : 0;
    if (!len) return 0;
    unsigned c = len == 1 ? lead : lead & (0x7fu >> len);
    for (unsigned i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0; /* also stops at the string's end */
        c = c << 6 | (s[i] & 0x3f);
    }
    if (c < min_code[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    *code = c;
    return len;
}

/*
 * A JSON string inside the page's <script> element, written so that no
 * string can change how the page parses: '<', '>' and '&' as \u003c, \u003e,
 * \u0026 (so that no "</script>", "<!--" or "<script" can end the element
 * or put the HTML parser into the escaped states in which the data runs on
 * over the rest of the page), U+2028 and U+2029 escaped (line ends to older
 * JavaScript), and a byte that is not UTF-8 (a path given on the command
 * line is any bytes) as U+FFFD, so that the page is UTF-8 throughout.
 */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
        unsigned code = 0;
        const unsigned len = utf8_sequence(c, &code);
        if (!len) {
            fputs("\\ufffd", f);
            c++;
            continue;
        }
        if (code == '"' || code == '\\') fprintf(f, "\\%c", (int)code);
        else if (code < 0x20 || code == 0x7f || code == '<' || code == '>' || code == '&' ||
                 code == 0x2028 || code == 0x2029)
            fprintf(f, "\\u%04x", code);
        else fwrite(c, 1, len, f);
        c += len;
    }
    fputc('"', f);
}

static void put_number(FILE *f, double x)
{
    if (isfinite(x)) fprintf(f, "%.17g", x);
    else fputs("null", f);
}

/* Six decimals, trailing zeros dropped: drawing and hovering need no more,
 * and a long run's page stays small.  From 1e15 on, where "%.6f" would
 * write up to 316 digits, "%.17g" (exact): no value takes more than
 * 24 bytes, which bounds the page (docs/report.md). */
static void put_short(FILE *f, double x)
{
    if (!isfinite(x)) {
        fputs("null", f);
        return;
    }
    if (fabs(x) >= 1e15) {
        fprintf(f, "%.17g", x);
        return;
    }
    char text[64];
    int n = snprintf(text, sizeof(text), "%.6f", x);
    while (n > 1 && text[n - 1] == '0') text[--n] = '\0';
    if (n > 1 && text[n - 1] == '.') text[--n] = '\0';
    if (!strcmp(text, "-0")) strcpy(text, "0");
    fputs(text, f);
}

/* ---- which keys are models ------------------------------------------------ */

/* A key some metric writes (its name, or its name with an option suffix). */
static bool metric_key(const char *key)
{
    const unsigned n = quale_metric_count();
    for (unsigned i = 0; i < n; i++) {
        QualeMetricInfo info;
        if (quale_metric_info(i, &info)) continue;
        for (unsigned k = 0; info.keys[k]; k++) {
            const size_t len = strlen(info.keys[k]);
            if (!strncmp(key, info.keys[k], len) && (key[len] == '\0' || key[len] == '_'))
                return true;
        }
    }
    return false;
}

static const char *const bootstrap_suffixes[] = { "_bagging", "_stddev", "_ci_p95_lo",
                                                  "_ci_p95_hi" };

/* A bootstrap model's statistic (vmaf_b_ci_p95_lo) or member (vmaf_b_0001)
 * of a key among keys. */
static bool has_key(const QualeResults *r, const char *key);

static bool bootstrap_statistic(const QualeResults *r, const char *key)
{
    const size_t len = strlen(key);
    /* a member of the collection: <model>_0001 */
    if (len > 5 && key[len - 5] == '_' && strspn(key + len - 4, "0123456789") == 4) {
        char base[256];
        if (len - 5 < sizeof(base)) {
            memcpy(base, key, len - 5);
            base[len - 5] = '\0';
            if (has_key(r, base)) return true;
        }
    }
    for (unsigned s = 0; s < 4; s++) {
        const size_t sl = strlen(bootstrap_suffixes[s]);
        char base[256];
        if (len <= sl || len - sl >= sizeof(base) || strcmp(key + len - sl, bootstrap_suffixes[s]))
            continue;
        memcpy(base, key, len - sl);
        base[len - sl] = '\0';
        if (has_key(r, base)) return true;
    }
    return false;
}

static bool is_model(const ReportInput *in, const char *key)
{
    if (in->models) {
        for (unsigned i = 0; i < in->model_count; i++)
            if (!strcmp(in->models[i], key)) return true;
        return false;
    }
    return !metric_key(key) && !bootstrap_statistic(in->results, key);
}

static bool has_key(const QualeResults *r, const char *key)
{
    for (unsigned k = 0; k < quale_results_key_count(r); k++)
        if (!strcmp(quale_results_key_name(r, k), key)) return true;
    return false;
}

/* ---- one result ----------------------------------------------------------- */

typedef struct Worst {
    unsigned frame;
    double score;
} Worst;

static int compare_worst(const void *a, const void *b)
{
    const Worst *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? -1 : 1;
    return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* The frame rate a note gives ("24000/1001"), or the caller's. */
static double frame_rate_of(const ReportInput *in)
{
    if (in->frame_rate > 0) return in->frame_rate;
    for (unsigned i = 0; quale_results_note(in->results, i); i++) {
        const QualeOutputNote *n = quale_results_note(in->results, i);
        unsigned num, den;
        if (!strcmp(n->name, "distorted_frame_rate") &&
            sscanf(n->value, "%u/%u", &num, &den) == 2 && num && den)
            return (double)num / den;
    }
    return 0.;
}

static double bitrate_of(const ReportInput *in)
{
    if (in->bitrate_kbps > 0) return in->bitrate_kbps;
    for (unsigned i = 0; quale_results_note(in->results, i); i++) {
        const QualeOutputNote *n = quale_results_note(in->results, i);
        double kbps;
        if (!strcmp(n->name, "distorted_bitrate") && sscanf(n->value, "%lf", &kbps) == 1 &&
            kbps > 0)
            return kbps;
    }
    return 0.;
}

/* ---- the frames a result lists -------------------------------------------- */

/* Frames start, start + step, ... (count of them). */
typedef struct FrameRun {
    unsigned start, count;
} FrameRun;

/*
 * What the page of one result is made from, found before any of the page
 * is written, so that a result with nothing to show leaves no half page.
 * The frames that have a value, as runs, index the page's arrays: the
 * page's size follows the frames there are, not the span of their numbers
 * (frames 0, 1 and 16777215 are three frames, not 16777216).
 */
typedef struct Analysis {
    FrameRun *runs;
    unsigned run_count;
    unsigned frames;        /* in all the runs */
    unsigned step;
    const char *main_key;   /* what the page opens on; its worst frames are listed */
    Worst *worst;           /* the main key's scored frames, lowest first */
    unsigned scored;
} Analysis;

static void analysis_free(Analysis *a)
{
    free(a->runs);
    free(a->worst);
    *a = (Analysis){ 0 };
}

/* Adds frame to the runs: the last one grows, or a new one starts. */
static int add_frame(Analysis *a, unsigned *capacity, unsigned frame, unsigned count)
{
    FrameRun *last = a->run_count ? &a->runs[a->run_count - 1] : NULL;
    a->frames += count;
    if (last && last->start + (uint64_t)last->count * a->step == frame) {
        last->count += count;
        return 0;
    }
    if (a->run_count == *capacity) {
        const unsigned grown = *capacity ? *capacity * 2 : 16;
        FrameRun *runs = realloc(a->runs, sizeof(*runs) * grown);
        if (!runs) return -ENOMEM;
        a->runs = runs;
        *capacity = grown;
    }
    a->runs[a->run_count++] = (FrameRun){ frame, count };
    return 0;
}

/* The frames of the span that have a value of one of keys. */
static int scan_frames(const QualeResults *r, Analysis *a, const char *const *keys,
                       unsigned key_count, unsigned first, unsigned end)
{
    unsigned capacity = 0, hint = 0;
    for (uint64_t frame = first; frame < end; frame += a->step) {
        bool present = false;
        /* the key found last first: one lookup a frame along a run */
        for (unsigned t = 0; t < key_count && !present; t++) {
            const unsigned k = (hint + t) % key_count;
            double v;
            if (!quale_results_value(r, keys[k], (unsigned)frame, &v)) {
                present = true;
                hint = k;
            }
        }
        if (present && add_frame(a, &capacity, (unsigned)frame, 1)) return -ENOMEM;
    }
    return 0;
}

/*
 * The frames that have a value (those the results file lists).  The results
 * say where their frames are only as a span (first, end, step): a span
 * whose every slot is listed is one run, found at once (every ordinary
 * run); another is looked at slot by slot through the library's lookup
 * by key name, first by its first key alone (one lookup a slot), and by
 * every key only when some listed frame lacks the first key.
 */
static int find_frames(const QualeResults *r, Analysis *a)
{
    unsigned first, end, step;
    quale_results_frames(r, &first, &end, &step);
    a->step = step ? step : 1;
    const uint64_t slots = end > first ? ((uint64_t)end - first + a->step - 1) / a->step : 0;
    const unsigned listed = quale_results_frame_count(r);
    unsigned capacity = 0;
    if (listed == slots) return slots ? add_frame(a, &capacity, first, listed) : 0;

    const unsigned keys = quale_results_key_count(r);
    const char **names = malloc(sizeof(*names) * (keys ? keys : 1));
    if (!names) return -ENOMEM;
    for (unsigned k = 0; k < keys; k++) names[k] = quale_results_key_name(r, k);
    int err = scan_frames(r, a, names, keys ? 1 : 0, first, end);
    if (!err && a->frames != listed && keys > 1) {
        free(a->runs);
        a->runs = NULL;
        a->run_count = a->frames = 0;
        err = scan_frames(r, a, names, keys, first, end);
    }
    free(names);
    return err;
}

/* The frames of the runs in order: `FrameCursor c = { a, 0, 0 };` then
 * `while (next_frame(&c, &frame))`. */
typedef struct FrameCursor {
    const Analysis *a;
    unsigned run, at;
} FrameCursor;

static bool next_frame(FrameCursor *c, unsigned *frame)
{
    while (c->run < c->a->run_count && c->at == c->a->runs[c->run].count) {
        c->run++;
        c->at = 0;
    }
    if (c->run == c->a->run_count) return false;
    *frame = c->a->runs[c->run].start + c->at++ * c->a->step;
    return true;
}

/* The page's view of a result: its frames, its main key and its worst
 * frames; -1 with the reason in error when it has nothing to show. */
static int analyse(const ReportInput *in, Analysis *a, char *error, size_t error_size)
{
    const QualeResults *r = in->results;
    const char *shown = in->source ? in->source : in->name;
    *a = (Analysis){ 0 };
    const unsigned keys = quale_results_key_count(r);
    for (unsigned k = 0; k < keys && !a->main_key; k++)
        if (is_model(in, quale_results_key_name(r, k))) a->main_key = quale_results_key_name(r, k);
    /* without a model, the first key is what the page opens on */
    if (!a->main_key && keys) a->main_key = quale_results_key_name(r, 0);
    if (!a->main_key) {
        snprintf(error, error_size, "%s: no scores to show", shown);
        return -1;
    }
    if (find_frames(r, a) ||
        !(a->worst = malloc(sizeof(*a->worst) * (a->frames ? a->frames : 1)))) {
        snprintf(error, error_size, "out of memory");
        analysis_free(a);
        return -1;
    }
    FrameCursor c = { a, 0, 0 };
    unsigned frame;
    while (next_frame(&c, &frame)) {
        double v;
        if (quale_results_value(r, a->main_key, frame, &v) || isnan(v)) continue;
        a->worst[a->scored++] = (Worst){ frame, v };
    }
    if (a->scored == 0) {
        snprintf(error, error_size, "%s: '%s' has no score at any frame (every value is NaN or "
                 "missing): nothing to show", shown, a->main_key);
        analysis_free(a);
        return -1;
    }
    qsort(a->worst, a->scored, sizeof(*a->worst), compare_worst);
    return 0;
}

/* ---- one result's data ------------------------------------------------------ */

/* 0, or the stream's error (its errno, which the failed write set). */
static int stream_error(FILE *f)
{
    return ferror(f) ? -(errno ? errno : EIO) : 0;
}

static void put_values(FILE *f, const QualeResults *r, const char *key, const Analysis *a)
{
    bool any = false;
    fputc('[', f);
    FrameCursor c = { a, 0, 0 };
    unsigned frame;
    while (next_frame(&c, &frame)) {
        double v = NAN;
        quale_results_value(r, key, frame, &v);
        if (any) fputc(',', f);
        put_short(f, v);
        any = true;
    }
    fputc(']', f);
}

/* The min and max of each run of `bucket` frames (of the frames there are,
 * so that a bucket never stands for frame numbers no frame has). */
static int put_envelope(FILE *f, const QualeResults *r, const char *key, const Analysis *a)
{
    const unsigned bucket = (a->frames + ENVELOPE_POINTS - 1) / ENVELOPE_POINTS;
    const unsigned buckets = (a->frames + bucket - 1) / bucket;
    double *low = malloc(sizeof(*low) * 2 * buckets), *high = low ? low + buckets : NULL;
    if (!low) return -ENOMEM;
    for (unsigned b = 0; b < buckets; b++) low[b] = high[b] = NAN;
    unsigned i = 0;
    FrameCursor c = { a, 0, 0 };
    unsigned frame;
    while (next_frame(&c, &frame)) {
        const unsigned b = i++ / bucket;
        double v;
        if (quale_results_value(r, key, frame, &v) || isnan(v)) continue;
        if (isnan(low[b]) || v < low[b]) low[b] = v;
        if (isnan(high[b]) || v > high[b]) high[b] = v;
    }
    fprintf(f, "{\"bucket\": %u", bucket);
    for (int pass = 0; pass < 2; pass++) {
        fprintf(f, ", \"%s\": [", pass ? "max" : "min");
        for (unsigned b = 0; b < buckets; b++) {
            if (b) fputc(',', f);
            put_short(f, pass ? high[b] : low[b]);
        }
        fputc(']', f);
    }
    fputc('}', f);
    free(low);
    return 0;
}

/* A key whose every frame the page keeps on a long run: a model, or its
 * bootstrap band and members; the others are drawn as envelopes. */
static bool drawn_whole(const ReportInput *in, const char *key)
{
    return is_model(in, key) || bootstrap_statistic(in->results, key);
}

/* The run's settings: quale's version, the caller's, the notes on the
 * inputs, the speed; as [name, value] pairs. */
static void put_settings(FILE *f, const ReportInput *in)
{
    const QualeResults *r = in->results;
    bool any = false;
    const char *version = quale_results_version(r);
    if (version) {
        fprintf(f, "[\"version\", ");
        put_string(f, version);
        fputc(']', f);
        any = true;
    }
    for (unsigned i = 0; i < in->setting_count; i++) {
        fprintf(f, "%s[", any ? ", " : "");
        put_string(f, in->settings[i].name);
        fputs(", ", f);
        put_string(f, in->settings[i].value);
        fputc(']', f);
        any = true;
    }
    for (unsigned i = 0; quale_results_note(r, i); i++) {
        const QualeOutputNote *n = quale_results_note(r, i);
        fprintf(f, "%s[", any ? ", " : "");
        put_string(f, n->name);
        fputs(", ", f);
        put_string(f, n->value);
        fputc(']', f);
        any = true;
    }
    const double fps = quale_results_fps(r);
    if (isfinite(fps)) {
        char text[64];
        snprintf(text, sizeof(text), "%.2f frames per second", fps);
        fprintf(f, "%s[\"speed\", ", any ? ", " : "");
        put_string(f, text);
        fputc(']', f);
    }
}

/* What produced the run, as the file says (its "provenance"): records of
 * a section and its [name, value] facts. */
static void put_provenance(FILE *f, const QualeResults *r)
{
    for (unsigned i = 0; quale_results_provenance(r, i); i++) {
        const QualeProvenanceRecord *rec = quale_results_provenance(r, i);
        fprintf(f, "%s{\"section\": ", i ? ", " : "");
        put_string(f, rec->section);
        fputs(", \"facts\": [", f);
        for (unsigned k = 0; k < rec->fact_count; k++) {
            fprintf(f, "%s[", k ? ", " : "");
            put_string(f, rec->facts[k].name);
            fputs(", ", f);
            put_string(f, rec->facts[k].value);
            fputc(']', f);
        }
        fputs("]}", f);
    }
}

/* Every key: its name, whether a model wrote it, its pooled values, and a
 * bootstrap model's confidence interval's keys. */
static void put_keys(FILE *f, const ReportInput *in)
{
    const QualeResults *r = in->results;
    const unsigned keys = quale_results_key_count(r);
    for (unsigned k = 0; k < keys; k++) {
        const char *name = quale_results_key_name(r, k);
        const bool model = is_model(in, name);
        fprintf(f, "%s{\"name\": ", k ? ", " : "");
        put_string(f, name);
        fprintf(f, ", \"model\": %s, \"pooled\": {", model ? "true" : "false");
        bool first_pool = true;
        for (unsigned m = 0; m < sizeof(report_pools) / sizeof(report_pools[0]); m++) {
            double v;
            const int pooled = quale_results_pooled_by(r, name, report_pools[m], &v);
            /* -ENOENT: a frame of the span lacks the key, which every method
             * finds; the percentiles would first take a buffer of the span's
             * size (128 MB for frames 0 to 16777215) to find it again */
            if (pooled == -ENOENT) break;
            if (pooled) continue;
            fprintf(f, "%s\"%s\": ", first_pool ? "" : ", ", report_pools[m]);
            put_number(f, v);
            first_pool = false;
        }
        fputc('}', f);
        char lo[300], hi[300];
        snprintf(lo, sizeof(lo), "%s_ci_p95_lo", name);
        snprintf(hi, sizeof(hi), "%s_ci_p95_hi", name);
        if (model && has_key(r, lo) && has_key(r, hi)) {
            fprintf(f, ", \"ci\": {\"lo\": ");
            put_string(f, lo);
            fprintf(f, ", \"hi\": ");
            put_string(f, hi);
            fputc('}', f);
        }
        fputc('}', f);
    }
}

/* Every frame of the models and their bands; the rest as envelopes when
 * the run is long.  A failed stream stops at the next key: a full disk
 * need not be fed the rest of a long run. */
static int put_values_and_envelopes(FILE *f, const ReportInput *in, const Analysis *a,
                                    bool full)
{
    const QualeResults *r = in->results;
    const unsigned keys = quale_results_key_count(r);
    int err = stream_error(f);
    fprintf(f, "], \"values\": {");
    bool first_value = true;
    for (unsigned k = 0; k < keys && !err; k++) {
        const char *name = quale_results_key_name(r, k);
        if (!full && !drawn_whole(in, name)) continue;
        fprintf(f, "%s", first_value ? "" : ", ");
        put_string(f, name);
        fputs(": ", f);
        put_values(f, r, name, a);
        first_value = false;
        err = stream_error(f);
    }
    fprintf(f, "}, \"envelopes\": {");
    bool first_envelope = true;
    for (unsigned k = 0; k < keys && !full && !err; k++) {
        const char *name = quale_results_key_name(r, k);
        if (drawn_whole(in, name)) continue;
        fprintf(f, "%s", first_envelope ? "" : ", ");
        put_string(f, name);
        fputs(": ", f);
        err = put_envelope(f, r, name, a);
        first_envelope = false;
        if (!err) err = stream_error(f);
    }
    fputc('}', f);
    return err;
}

/* 0, -ENOMEM, or the stream's error (the rest of the result unwritten). */
static int put_result(FILE *f, const ReportInput *in, const Analysis *a)
{
    const QualeResults *r = in->results;
    const unsigned keys = quale_results_key_count(r);

    fprintf(f, "{\"name\": ");
    put_string(f, in->name);
    fprintf(f, ", \"frames\": %u, \"frame_numbers\": {\"first\": %u, \"step\": %u, "
            "\"runs\": [", quale_results_frame_count(r), a->runs[0].start, a->step);
    for (unsigned g = 0; g < a->run_count; g++)
        fprintf(f, "%s[%u, %u]", g ? ", " : "", a->runs[g].start, a->runs[g].count);
    fprintf(f, "]}, \"frame_rate\": ");
    const double rate = frame_rate_of(in), kbps = bitrate_of(in);
    if (rate > 0) put_number(f, rate);
    else fputs("null", f);
    fprintf(f, ", \"bitrate_kbps\": ");
    if (kbps > 0) put_number(f, kbps);
    else fputs("null", f);

    fprintf(f, ", \"settings\": [");
    put_settings(f, in);
    fprintf(f, "], \"provenance\": [");
    put_provenance(f, r);
    fprintf(f, "], \"models\": [");
    unsigned models = 0;
    for (unsigned k = 0; k < keys; k++) {
        const char *name = quale_results_key_name(r, k);
        if (!is_model(in, name)) continue;
        fprintf(f, "%s", models++ ? ", " : "");
        put_string(f, name);
    }

    fprintf(f, "], \"keys\": [");
    const bool full = (uint64_t)a->frames * keys <= FULL_VALUES_LIMIT;
    put_keys(f, in);
    int err = put_values_and_envelopes(f, in, a, full);
    fprintf(f, ", \"worst\": [");
    for (unsigned i = 0; i < a->scored && i < WORST_FRAMES; i++) {
        fprintf(f, "%s{\"frame\": %u, \"score\": ", i ? ", " : "", a->worst[i].frame);
        put_number(f, a->worst[i].score);
        fputc('}', f);
    }
    fputs("]}", f);
    return err ? err : stream_error(f);
}

/* ---- the page ------------------------------------------------------------- */

typedef struct Page {
    const ReportInput *inputs;
    unsigned count;
    const char *path;   /* where it goes, for messages; "-": standard output */
} Page;

static int format_page(void *cookie, FILE *f)
{
    const Page *page = cookie;
    static const char marker[] = "@QUALE_REPORT_DATA@";
    const char *tpl = (const char *)report_template;
    const char *at = NULL;
    for (size_t i = 0; i + sizeof(marker) - 1 <= report_template_size; i++)
        if (!memcmp(tpl + i, marker, sizeof(marker) - 1)) {
            at = tpl + i;
            break;
        }
    if (!at) {
        fprintf(stderr, "quale: error: the report's page has no place for its data\n");
        return -EINVAL;
    }
    Analysis *analyses = calloc(page->count ? page->count : 1, sizeof(*analyses));
    if (!analyses) {
        fprintf(stderr, "quale: error: out of memory\n");
        return -ENOMEM;
    }
    /* every result is looked at before a byte is written: "-o -" must not
     * get half a page for a result that has nothing to show */
    int err = 0;
    for (unsigned i = 0; i < page->count && !err; i++) {
        char error[512] = "";
        if (analyse(&page->inputs[i], &analyses[i], error, sizeof(error))) {
            fprintf(stderr, "quale: error: %s\n", error);
            err = -EINVAL;
        }
    }
    if (err) goto out;

    errno = 0;
    fwrite(tpl, 1, (size_t)(at - tpl), f);
    fprintf(f, "{\"generator\": ");
    char generator[64];
    snprintf(generator, sizeof(generator), "quale %s", quale_version());
    put_string(f, generator);
    fprintf(f, ", \"results\": [");
    err = stream_error(f);
    for (unsigned i = 0; i < page->count && !err; i++) {
        if (i) fputs(", ", f);
        err = put_result(f, &page->inputs[i], &analyses[i]);
    }
    if (!err) {
        fputs("]}", f);
        const size_t rest = report_template_size - (size_t)(at - tpl) - (sizeof(marker) - 1);
        fwrite(at + sizeof(marker) - 1, 1, rest, f);
        /* the page must arrive, standard output included: a full disk or a
         * closed pipe is said, not left to the exit's silent flush */
        if (fflush(f) || ferror(f)) err = -(errno ? errno : EIO);
    }
    if (err == -ENOMEM)
        fprintf(stderr, "quale: error: out of memory\n");
    else if (err && !strcmp(page->path, "-"))
        fprintf(stderr, "quale: error: cannot write the report to standard output: %s\n",
                strerror(-err));
    else if (err)
        fprintf(stderr, "quale: error: cannot write '%s': %s\n", page->path, strerror(-err));
out:
    for (unsigned i = 0; i < page->count; i++) analysis_free(&analyses[i]);
    free(analyses);
    return err;
}

int report_write(const ReportInput *inputs, unsigned count, const char *path)
{
    const Page page = { inputs, count, path };
    return output_file_write(path, format_page, (void *)&page);
}

/* ---- quale report ------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: quale report RESULT.json [RESULT.json ...] [-o REPORT.html]\n"
        "\n"
        "Writes one HTML file, which any browser opens offline: per-frame curves of\n"
        "the models and every feature (zoom by dragging), the pooled mean, harmonic\n"
        "mean, minimum, 1st and 5th percentiles, the worst frames, the bootstrap\n"
        "band, several results overlaid (an encoding ladder, with a bitrate-VMAF\n"
        "plot when the files give bitrates) and each run's settings.  RESULT files\n"
        "are quale's or libvmaf's JSON output (docs/report.md).\n"
        "\n"
        "  -o, --output PATH      the page (default, for one results file: beside it,\n"
        "                         RESULT.html)\n"
        "      --frame-rate R     the videos' frames per second, for time codes\n"
        "                         (compressed inputs note theirs in the results)\n");
}

/* The page of one results file, without -o: beside it, its name with .html
 * for .json ("run.json" -> "run.html").  Not for standard input. */
static bool page_beside(const char *results, char *page, size_t size)
{
    if (!strcmp(results, "-")) return false;
    size_t stem = strlen(results);
    if (stem > 5 && !strcmp(results + stem - 5, ".json")) stem -= 5;
    const int n = snprintf(page, size, "%.*s.html", (int)stem, results);
    return n > 0 && (size_t)n < size;
}

int report_main(int argc, char *argv[])
{
    enum { ARG_HELP = 256, ARG_FRAME_RATE };
    static const struct option options[] = {
        { "output", required_argument, NULL, 'o' },
        { "frame-rate", required_argument, NULL, ARG_FRAME_RATE },
        { "help", no_argument, NULL, ARG_HELP },
        { NULL, 0, NULL, 0 },
    };
    const char *output = NULL;
    double rate = 0.;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", options, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case ARG_FRAME_RATE: {
            char *end;
            rate = strtod(optarg, &end);
            if (*end || !(rate > 0 && rate < 1e6)) {
                fprintf(stderr, "quale report: --frame-rate takes frames per second, not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case ARG_HELP:
            usage(stdout);
            /* asked for, it must arrive: a full disk is said, not an exit 0 */
            if (fflush(stdout) || ferror(stdout)) {
                fprintf(stderr, "quale: error: cannot write the help to standard output: %s\n",
                        strerror(errno ? errno : EIO));
                return EXIT_RUN_FAILED;
            }
            return 0;
        case ':':
            fprintf(stderr, "quale report: option '%s' needs a value\n", argv[optind - 1]);
            return EXIT_USAGE;
        default:
            fprintf(stderr, "quale report: unknown option '%s'\nTry 'quale report --help'.\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    const unsigned count = (unsigned)(argc - optind);
    char beside[4096];
    if (count == 1 && !output && page_beside(argv[optind], beside, sizeof(beside)))
        output = beside;
    if (!count || !output) {
        fprintf(stderr, "quale report: %s\nTry 'quale report --help'.\n",
                count ? "give the page's path with -o REPORT.html (several results have no "
                        "one name to take)" : "no results given");
        return EXIT_USAGE;
    }
    /* the page never goes over a results file it reads (also through a
     * link, or -o - appended to one), as quale merge's -o never does */
    NamedFile *read = calloc(count, sizeof(*read));
    if (!read) {
        fprintf(stderr, "quale: error: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    for (unsigned i = 0; i < count; i++)
        read[i] = (NamedFile){ argv[optind + i], "a results file" };
    const NamedFile written = { output, "-o" };
    const int distinct = output_file_distinct(&written, 1, read, count);
    free(read);
    if (distinct) return EXIT_USAGE;
    if (strcmp(output, "-") && output_file_check(output)) return EXIT_RUN_FAILED;
    ReportInput *inputs = calloc(count, sizeof(*inputs));
    int status = EXIT_RUN_FAILED;
    if (!inputs) {
        fprintf(stderr, "quale: error: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    for (unsigned i = 0; i < count; i++) {
        const char *path = argv[optind + i];
        const char *slash = strrchr(path, '/');
        QualeResults *r = NULL;
        inputs[i].name = slash ? slash + 1 : path;
        inputs[i].source = path;
        inputs[i].frame_rate = rate;
        if (results_load(path, &r)) goto out;
        inputs[i].results = r;
    }
    if (!report_write(inputs, count, output)) {
        status = 0;
        if (output == beside) fprintf(stderr, "quale report: wrote %s\n", output);
    }
out:
    for (unsigned i = 0; i < count; i++) quale_results_close((QualeResults **)&inputs[i].results);
    free(inputs);
    return status;
}
