/*
 * quale merge PART.json... : joins the parts of a split run.  The parts
 * are read whole (quale_results_read()), merged (quale_results_merge(),
 * which refuses a missing, doubled or overlapping part, or parts of other
 * runs, naming them) and written through output_file.h, so that the
 * merged file appears whole or not at all.
 */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "merge.h"
#include "output_file.h"
#include "summary.h"

enum { EXIT_RUN_FAILED = 1, EXIT_USAGE = 2 };

/* Results are text at full precision: 10,000 frames of the full metric
 * set take some 30 MB; a 2-hour title at 60 fps ten times that. */
#define MAX_PART_BYTES ((size_t)4 << 30)

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: quale merge [-o OUT] [--json|--xml|--csv|--sub] [--precision N] PART...\n"
        "\n"
        "Joins the parts of a run split with --segment K/N into the file the whole\n"
        "run writes: every frame's values, pooled again over every frame.  The\n"
        "parts may come in any order; every part of the run must be there, once.\n"
        "\n"
        "  -o, --output PATH   the merged file (default: standard output)\n"
        "      --json, --xml, --csv, --sub\n"
        "                      its layout (default: OUT's extension, else XML, as\n"
        "                      a run without a layout flag writes)\n"
        "      --precision N   digits after the point, or 'max' (default: what the\n"
        "                      parts' run asked for with --precision)\n"
        "      --pool M[,M..]  more pooled values: pN (percentile), lowN (mean of\n"
        "                      the lowest N%%), as quale --pool\n"
        "  -q, --quiet         no summary (with -o: what was merged and the pooled\n"
        "                      values, on standard error)\n");
}

static int read_file(const char *path, char **text, size_t *length)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "quale: error: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t size = 0, capacity = 1 << 16;
    char *buf = malloc(capacity + 1);
    while (buf) {
        if (size == capacity) {
            if (capacity >= MAX_PART_BYTES) {
                fprintf(stderr, "quale: error: %s: larger than %zu GiB, too large for results\n",
                        path, MAX_PART_BYTES >> 30);
                free(buf);
                buf = NULL;
                break;
            }
            char *grown = realloc(buf, capacity * 2 + 1);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            capacity *= 2;
        }
        const size_t got = fread(buf + size, 1, capacity - size, f);
        size += got;
        if (got == 0) break;
    }
    const int failed = !buf || ferror(f);
    if (failed && buf) fprintf(stderr, "quale: error: %s: %s\n", path, strerror(errno));
    else if (!buf && errno == ENOMEM) fprintf(stderr, "quale: error: %s: out of memory\n", path);
    if (f != stdin) fclose(f);
    if (failed) {
        free(buf);
        return -1;
    }
    buf[size] = '\0';
    *text = buf;
    *length = size;
    return 0;
}

int results_load(const char *path, QualeResults **results)
{
    char *text = NULL, error[1024] = "";
    size_t length = 0;
    *results = NULL;
    if (read_file(path, &text, &length)) return -1;
    const int err = quale_results_read(results, text, length, path, error, sizeof(error));
    free(text);
    if (err) fprintf(stderr, "quale: error: %s\n", err == -ENOMEM ? "out of memory" : error);
    return err ? -1 : 0;
}

typedef struct MergedOutput {
    const QualeResults *results;
    enum QualeOutputFormat format;
    int precision;
    const char *const *pool_methods;
    unsigned pool_method_count;
} MergedOutput;

static int format_merged(void *cookie, FILE *f)
{
    const MergedOutput *m = cookie;
    char error[1024] = "";
    const QualeOutputOptions options = { .precision = m->precision,
                                         .pool_methods = m->pool_methods,
                                         .pool_method_count = m->pool_method_count };
    const int err = quale_results_write(m->results, f, m->format, &options, error,
                                        sizeof(error));
    if (err) fprintf(stderr, "quale: error: %s\n", error);
    return err;
}

int merge_write(const QualeResults *const *parts, unsigned count, const char *path,
                enum QualeOutputFormat format, int precision, const char *const *pool_methods,
                unsigned pool_method_count, QualeResults **merged)
{
    char error[1024] = "";
    *merged = NULL;
    const int err = quale_results_merge(merged, parts, count, error, sizeof(error));
    if (err) {
        fprintf(stderr, "quale: error: %s\n", err == -ENOMEM ? "out of memory" : error);
        return -1;
    }
    MergedOutput out = { *merged, format,
                         precision < -1 ? quale_results_precision(*merged) : precision,
                         pool_methods, pool_method_count };
    if (!path) return 0;
    return output_file_write(path, format_merged, &out);
}

/* quale merge's flags. */
typedef struct MergeOptions {
    const char *output;
    int format, precision; /* -1: from -o's name; -2: the parts' */
    bool quiet, help;
    char pool_text[256];
    const char *pools[CLI_MAX_POOLS];
    unsigned pool_count;
} MergeOptions;

enum { ARG_JSON = 256, ARG_XML, ARG_CSV, ARG_SUB, ARG_PRECISION, ARG_HELP, ARG_POOL };

/* One flag's value into o: 0, or an exit status after saying why. */
static int merge_flag(MergeOptions *o, int c, const char *arg)
{
    switch (c) {
    case 'o': o->output = arg; return 0;
    case 'q': o->quiet = true; return 0;
    case ARG_HELP: o->help = true; return 0;
    case ARG_JSON:
    case ARG_XML:
    case ARG_CSV:
    case ARG_SUB: {
        const int f = c == ARG_JSON ? QUALE_OUTPUT_JSON : c == ARG_XML ? QUALE_OUTPUT_XML
                    : c == ARG_CSV ? QUALE_OUTPUT_CSV : QUALE_OUTPUT_SUB;
        if (o->format >= 0 && o->format != f) {
            fprintf(stderr, "quale merge: give one layout flag\n");
            return EXIT_USAGE;
        }
        o->format = f;
        return 0;
    }
    case ARG_PRECISION: {
        char *end;
        const long v = strtol(arg, &end, 10);
        if (!strcmp(arg, "max") || !strcmp(arg, "full")) {
            o->precision = -1;
        } else if (*arg && !*end && v >= 0 && v <= 17) {
            o->precision = (int)v;
        } else {
            fprintf(stderr, "quale merge: --precision takes 0 to 17 or 'max', not '%s'\n", arg);
            return EXIT_USAGE;
        }
        return 0;
    }
    case ARG_POOL: {
        char error[256];
        if (cli_parse_pools(arg, o->pool_text, sizeof(o->pool_text), o->pools, &o->pool_count,
                            error, sizeof(error))) {
            fprintf(stderr, "quale merge: %s\n", error);
            return EXIT_USAGE;
        }
        return 0;
    }
    default: return EXIT_USAGE;
    }
}

/* The flags, then the parts from argv[*first]: 0, or an exit status. */
static int merge_parse(int argc, char *argv[], MergeOptions *o, int *first)
{
    static const struct option options[] = {
        { "output", required_argument, NULL, 'o' },
        { "json", no_argument, NULL, ARG_JSON },
        { "xml", no_argument, NULL, ARG_XML },
        { "csv", no_argument, NULL, ARG_CSV },
        { "sub", no_argument, NULL, ARG_SUB },
        { "precision", required_argument, NULL, ARG_PRECISION },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, ARG_HELP },
        { "pool", required_argument, NULL, ARG_POOL },
        { NULL, 0, NULL, 0 },
    };
    *o = (MergeOptions){ .format = -1, .precision = -2 };
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:q", options, NULL)) != -1) {
        if (c == ':') {
            fprintf(stderr, "quale merge: option '%s' needs a value\n", argv[optind - 1]);
            return EXIT_USAGE;
        }
        if (c == '?') {
            fprintf(stderr, "quale merge: unknown option '%s'\nTry 'quale merge --help'.\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
        const int status = merge_flag(o, c, optarg);
        if (status || o->help) return status;
    }
    *first = optind;
    if (argc - optind == 0) {
        fprintf(stderr, "quale merge: no parts given\nTry 'quale merge --help'.\n");
        return EXIT_USAGE;
    }
    const char *extension;
    const int by_name = o->output ? cli_format_of_extension(o->output, &extension) : -1;
    if (o->format < 0) o->format = by_name >= 0 ? by_name : QUALE_OUTPUT_XML;
    else if (by_name >= 0 && by_name != o->format) {
        fprintf(stderr, "quale merge: -o '%s' names another layout than the flag asks for\n",
                o->output);
        return EXIT_USAGE;
    }
    return 0;
}

/* -o, before anything is read: never one of the parts, and writable. */
static int merge_check_output(const char *output, char *const *parts, unsigned count)
{
    if (!output) return 0;
    NamedFile *inputs = calloc(count, sizeof(*inputs));
    if (!inputs) {
        fprintf(stderr, "quale: error: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    for (unsigned i = 0; i < count; i++) inputs[i] = (NamedFile){ parts[i], "a part" };
    const NamedFile out = { output, "-o" };
    const int distinct = output_file_distinct(&out, 1, inputs, count);
    free(inputs);
    if (distinct) return EXIT_USAGE;
    if (strcmp(output, "-") && output_file_check(output)) return EXIT_RUN_FAILED;
    return 0;
}

int merge_main(int argc, char *argv[])
{
    MergeOptions o;
    int first = 0;
    int status = merge_parse(argc, argv, &o, &first);
    if (status) return status;
    if (o.help) {
        usage(stdout);
        /* asked for, it must arrive: a full disk is said, not an exit 0 */
        if (fflush(stdout) || ferror(stdout)) {
            fprintf(stderr, "quale: error: cannot write the help to standard output: %s\n",
                    strerror(errno ? errno : EIO));
            return EXIT_RUN_FAILED;
        }
        return 0;
    }
    const unsigned count = (unsigned)(argc - first);
    if ((status = merge_check_output(o.output, argv + first, count))) return status;

    QualeResults **parts = calloc(count, sizeof(*parts));
    QualeResults *merged = NULL;
    status = EXIT_RUN_FAILED;
    if (!parts) {
        fprintf(stderr, "quale: error: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    for (unsigned i = 0; i < count; i++)
        if (results_load(argv[first + i], &parts[i])) goto out;
    if (merge_write((const QualeResults *const *)parts, count, o.output ? o.output : "-",
                    (enum QualeOutputFormat)o.format, o.precision, o.pools, o.pool_count,
                    &merged))
        goto out;
    status = 0;
    if (!o.quiet && o.output && strcmp(o.output, "-")) {
        fprintf(stderr, "quale: merged %u parts, %u frames, into %s\n", count,
                quale_results_frame_count(merged), o.output);
        /* the merged run's pooled values, where a run with -o says its
         * summary */
        print_pooled_keys(stderr, merged, o.pools, o.pool_count);
    }
out:
    for (unsigned i = 0; i < count; i++) quale_results_close(&parts[i]);
    free(parts);
    quale_results_close(&merged);
    return status;
}
