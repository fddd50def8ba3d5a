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

/* A JSON string that may sit inside a <script> element: "</" is written
 * "<\/" so that no text ends the element early. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f) fprintf(f, "\\u%04x", *c);
        else if (*c == '/' && c > (const unsigned char *)s && c[-1] == '<') fputs("\\/", f);
        else fputc(*c, f);
    }
    fputc('"', f);
}

static void put_number(FILE *f, double x)
{
    if (isfinite(x)) fprintf(f, "%.17g", x);
    else fputs("null", f);
}

/* Six decimals, trailing zeros dropped: drawing and hovering need no more,
 * and a long run's page stays small. */
static void put_short(FILE *f, double x)
{
    if (!isfinite(x)) {
        fputs("null", f);
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

static void put_values(FILE *f, const QualeResults *r, const char *key, unsigned first,
                       unsigned count, unsigned step)
{
    fputc('[', f);
    for (unsigned i = 0; i < count; i++) {
        double v = NAN;
        quale_results_value(r, key, first + i * step, &v);
        if (i) fputc(',', f);
        put_short(f, v);
    }
    fputc(']', f);
}

static void put_envelope(FILE *f, const QualeResults *r, const char *key, unsigned first,
                         unsigned count, unsigned step)
{
    const unsigned bucket = (count + ENVELOPE_POINTS - 1) / ENVELOPE_POINTS;
    fprintf(f, "{\"bucket\": %u", bucket);
    for (int pass = 0; pass < 2; pass++) {
        fprintf(f, ", \"%s\": [", pass ? "max" : "min");
        for (unsigned b = 0; b * bucket < count; b++) {
            double best = NAN;
            for (unsigned i = b * bucket; i < count && i < (b + 1) * bucket; i++) {
                double v;
                if (quale_results_value(r, key, first + i * step, &v) || isnan(v)) continue;
                if (isnan(best) || (pass ? v > best : v < best)) best = v;
            }
            if (b) fputc(',', f);
            put_short(f, best);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

/* A key whose every frame the page keeps on a long run: a model, or its
 * bootstrap band and members; the others are drawn as envelopes. */
static bool drawn_whole(const ReportInput *in, const char *key)
{
    return is_model(in, key) || bootstrap_statistic(in->results, key);
}

/* The main model's worst frames; -1 (with the reason) when it has no
 * score at all. */
static int put_result(FILE *f, const ReportInput *in, char *error, size_t error_size)
{
    const QualeResults *r = in->results;
    unsigned first, end, step;
    quale_results_frames(r, &first, &end, &step);
    step = step ? step : 1;
    const unsigned count = (end - first + step - 1) / step;
    const unsigned keys = quale_results_key_count(r);
    const char *main_model = NULL;
    for (unsigned k = 0; k < keys && !main_model; k++)
        if (is_model(in, quale_results_key_name(r, k))) main_model = quale_results_key_name(r, k);
    /* without a model, the first key is what the page opens on */
    const char *main_key = main_model ? main_model : keys ? quale_results_key_name(r, 0) : NULL;
    if (!main_key) {
        snprintf(error, error_size, "%s: no scores to show", in->source ? in->source : in->name);
        return -1;
    }

    /* the worst frames, which also tell whether there is any score */
    Worst *worst = malloc(sizeof(*worst) * (count ? count : 1));
    if (!worst) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    unsigned scored = 0;
    for (unsigned i = 0; i < count; i++) {
        double v;
        if (quale_results_value(r, main_key, first + i * step, &v) || isnan(v)) continue;
        worst[scored++] = (Worst){ first + i * step, v };
    }
    if (scored == 0) {
        free(worst);
        snprintf(error, error_size, "%s: '%s' has no score at any frame (every value is NaN or "
                 "missing): nothing to show", in->source ? in->source : in->name, main_key);
        return -1;
    }
    qsort(worst, scored, sizeof(*worst), compare_worst);

    fprintf(f, "{\"name\": ");
    put_string(f, in->name);
    fprintf(f, ", \"frames\": %u, \"frame_numbers\": {\"first\": %u, \"step\": %u}, "
            "\"frame_rate\": ", quale_results_frame_count(r), first, step);
    const double rate = frame_rate_of(in), kbps = bitrate_of(in);
    if (rate > 0) put_number(f, rate);
    else fputs("null", f);
    fprintf(f, ", \"bitrate_kbps\": ");
    if (kbps > 0) put_number(f, kbps);
    else fputs("null", f);

    fprintf(f, ", \"settings\": [");
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

    fprintf(f, "], \"models\": [");
    unsigned models = 0;
    for (unsigned k = 0; k < keys; k++) {
        const char *name = quale_results_key_name(r, k);
        if (!is_model(in, name)) continue;
        fprintf(f, "%s", models++ ? ", " : "");
        put_string(f, name);
    }

    fprintf(f, "], \"keys\": [");
    const bool full = (uint64_t)count * keys <= FULL_VALUES_LIMIT;
    for (unsigned k = 0; k < keys; k++) {
        const char *name = quale_results_key_name(r, k);
        const bool model = is_model(in, name);
        fprintf(f, "%s{\"name\": ", k ? ", " : "");
        put_string(f, name);
        fprintf(f, ", \"model\": %s, \"pooled\": {", model ? "true" : "false");
        bool first_pool = true;
        for (unsigned m = 0; m < sizeof(report_pools) / sizeof(report_pools[0]); m++) {
            double v;
            if (quale_results_pooled_by(r, name, report_pools[m], &v)) continue;
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

    /* every frame of the models and their bands; the rest as envelopes
     * when the run is long */
    fprintf(f, "], \"values\": {");
    bool first_value = true;
    for (unsigned k = 0; k < keys; k++) {
        const char *name = quale_results_key_name(r, k);
        if (!full && !drawn_whole(in, name)) continue;
        fprintf(f, "%s", first_value ? "" : ", ");
        put_string(f, name);
        fputs(": ", f);
        put_values(f, r, name, first, count, step);
        first_value = false;
    }
    fprintf(f, "}, \"envelopes\": {");
    bool first_envelope = true;
    for (unsigned k = 0; k < keys && !full; k++) {
        const char *name = quale_results_key_name(r, k);
        if (drawn_whole(in, name)) continue;
        fprintf(f, "%s", first_envelope ? "" : ", ");
        put_string(f, name);
        fputs(": ", f);
        put_envelope(f, r, name, first, count, step);
        first_envelope = false;
    }
    fprintf(f, "}, \"worst\": [");
    for (unsigned i = 0; i < scored && i < WORST_FRAMES; i++) {
        fprintf(f, "%s{\"frame\": %u, \"score\": ", i ? ", " : "", worst[i].frame);
        put_number(f, worst[i].score);
        fputc('}', f);
    }
    fputs("]}", f);
    free(worst);
    return 0;
}

/* ---- the page ------------------------------------------------------------- */

typedef struct Page {
    const ReportInput *inputs;
    unsigned count;
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
    fwrite(tpl, 1, (size_t)(at - tpl), f);
    fprintf(f, "{\"generator\": ");
    char generator[64];
    snprintf(generator, sizeof(generator), "quale %s", quale_version());
    put_string(f, generator);
    fprintf(f, ", \"results\": [");
    for (unsigned i = 0; i < page->count; i++) {
        char error[512] = "";
        if (i) fputs(", ", f);
        if (put_result(f, &page->inputs[i], error, sizeof(error))) {
            fprintf(stderr, "quale: error: %s\n", error);
            return -EINVAL;
        }
    }
    fputs("]}", f);
    const size_t rest = report_template_size - (size_t)(at - tpl) - (sizeof(marker) - 1);
    fwrite(at + sizeof(marker) - 1, 1, rest, f);
    return ferror(f) ? -EIO : 0;
}

int report_write(const ReportInput *inputs, unsigned count, const char *path)
{
    const Page page = { inputs, count };
    return output_file_write(path, format_page, (void *)&page);
}

/* ---- quale report ------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: quale report RESULT.json [RESULT.json ...] -o REPORT.html\n"
        "\n"
        "Writes one HTML file, which any browser opens offline: per-frame curves of\n"
        "the models and every feature (zoom by dragging), the pooled mean, harmonic\n"
        "mean, minimum, 1st and 5th percentiles, the worst frames, the bootstrap\n"
        "band, several results overlaid (an encoding ladder, with a bitrate-VMAF\n"
        "plot when the files give bitrates) and each run's settings.  RESULT files\n"
        "are quale's or libvmaf's JSON output (docs/report.md).\n"
        "\n"
        "  -o, --output PATH      the page (required)\n"
        "      --frame-rate R     the videos' frames per second, for time codes\n"
        "                         (compressed inputs note theirs in the results)\n");
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
        case ARG_HELP: usage(stdout); return 0;
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
    if (!count || !output) {
        fprintf(stderr, "quale report: %s\nTry 'quale report --help'.\n",
                count ? "give the page's path with -o REPORT.html" : "no results given");
        return EXIT_USAGE;
    }
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
    if (!report_write(inputs, count, output)) status = 0;
out:
    for (unsigned i = 0; i < count; i++) quale_results_close((QualeResults **)&inputs[i].results);
    free(inputs);
    return status;
}
