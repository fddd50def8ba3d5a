/*
 * quale batch: a catalog's pairs scored one after another in one process
 * (batch.h).  Each pair is the run its command line would be,
 *
 *   quale -r REF -d DIST [-m MODEL] OPTIONS -o OUTPUT
 *
 * parsed by the tool's own parser and recorded as that command in the
 * output's provenance, so that its output is the one that command writes
 * (but the timing).  What one process saves over a process per pair: the
 * start of the process, of the GPU driver and of its context (kept by the
 * batch from its first GPU pair to its end), and, for a pair with the
 * settings and scoring format of the one before, the start of quale's
 * context: the run takes the last one, reset (quale_reset(), run.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "batch.h"
#include "catalog.h"
#include "listing.h"
#include "messages.h"
#include "provenance.h"
#include "run.h"
#include "quale/quale.h"

typedef struct BatchSettings {
    const char *catalog;
    bool force; /* score pairs whose output is there too */
    bool quiet;
    bool list;  /* print the pairs as read, score none */
    unsigned share, shares; /* --share K/N: pairs K-1, K-1+N, ... (else 0, 1) */
} BatchSettings;

typedef struct BatchTally {
    unsigned scored, skipped, failed;
    double seconds; /* scoring the pairs scored */
    QualeContext *keep; /* holds the GPU's context between pairs */
    ContextReuse *reuse; /* the last pair's context, for the next of its kind */
} BatchTally;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: quale batch [--force] [-q] [--share K/N] CATALOG\n"
               "       quale batch --list CATALOG   (the pairs as read, in JSON)\n"
               "Scores every pair of CATALOG (.json or .csv: ref, dist, output, model, "
               "options;\ndocs/scale-out.md) in one process. A pair whose output is there is "
               "skipped\n(--force scores it again); a pair that fails is reported and the others "
               "go on;\nthe exit status is 1 if any failed. --share K/N scores the K-th of N "
               "shares\n(pairs K, K+N, K+2N... of the catalog), one per task of a cluster "
               "job.\n");
}

static int parse_args(int argc, char *argv[], BatchSettings *b)
{
    *b = (BatchSettings){ .share = 1, .shares = 1 };
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--force")) b->force = true;
        else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) b->quiet = true;
        else if (!strcmp(argv[i], "--list")) b->list = true;
        else if (!strcmp(argv[i], "--share") && i + 1 < argc) {
            char end = 0;
            if (sscanf(argv[++i], "%u/%u%c", &b->share, &b->shares, &end) != 2 || !b->shares ||
                !b->share || b->share > b->shares) {
                fprintf(stderr, "quale batch: --share K/N: K from 1 to N, not '%s'\n", argv[i]);
                return -1;
            }
        }
        else if (!strcmp(argv[i], "--help")) return usage(stdout), 1;
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "quale batch: unknown option '%s'\n", argv[i]);
            return usage(stderr), -1;
        } else if (b->catalog) {
            fprintf(stderr, "quale batch: one catalog at a time ('%s' and '%s')\n", b->catalog,
                    argv[i]);
            return -1;
        } else {
            b->catalog = argv[i];
        }
    }
    if (!b->catalog) return usage(stderr), -1;
    return 0;
}

/* The pair's command line: quale -r REF -d DIST [-m MODEL] OPTIONS -o
 * OUTPUT, NULL-terminated (free() the array, not its words). */
static char **pair_argv(const CatalogPair *p, int *argc)
{
    char **argv = calloc(p->option_count + 10, sizeof(*argv));
    if (!argv) return NULL;
    int n = 0;
    argv[n++] = "quale";
    argv[n++] = "-r";
    argv[n++] = p->ref;
    argv[n++] = "-d";
    argv[n++] = p->dist;
    if (p->model) {
        argv[n++] = "-m";
        argv[n++] = p->model;
    }
    for (unsigned i = 0; i < p->option_count; i++) argv[n++] = p->options[i];
    argv[n++] = "-o";
    argv[n++] = p->output;
    *argc = n;
    return argv;
}

static void say_nothing(void *cookie, enum QualeLogLevel level, const char *message)
{
    (void)cookie;
    (void)level;
    (void)message;
}

/* Scores one pair: 0, or the run's exit status after saying why.  quiet:
 * the run says only its errors (as -q, which its command then does not
 * show). */
static int score_pair(const CatalogPair *p, bool quiet, BatchTally *t)
{
    char error[512];
    char *kinds = malloc(p->option_count + 2);
    char **task = calloc(p->option_count + 2, sizeof(*task));
    int status = kinds && task ? 0 : EXIT_RUN_FAILED;
    if (!status) {
        /* the flags the pair's fields set, in any spelling, are refused */
        task[0] = "quale";
        for (unsigned i = 0; i < p->option_count; i++) task[i + 1] = p->options[i];
        if (cli_classify_task_options((int)p->option_count + 1, task, kinds, error,
                                      sizeof(error))) {
            fprintf(stderr, "quale batch: %s: options: %s\n", p->where, error);
            status = EXIT_USAGE;
        }
    }
    free(kinds);
    free(task);
    int argc = 0;
    char **argv = status ? NULL : pair_argv(p, &argc);
    if (!status && !argv) status = EXIT_RUN_FAILED;
    CliSettings settings;
    if (!status && cli_parse(argc, argv, &settings, error, sizeof(error))) {
        fprintf(stderr, "quale batch: %s: %s\n", p->where, error);
        status = EXIT_USAGE;
    }
    if (!status) {
        settings.quiet |= quiet;
        settings.reuse = t->reuse;
        provenance_remember_command(argc, argv);
        status = score_with_settings(&settings);
        provenance_remember_command(0, NULL);
    }
    /* From the first pair on a GPU, its context stays open: the pairs after
     * it find the driver and the device's context started. */
    if (!status && !t->keep && settings.backend != QUALE_BACKEND_CPU) {
        QualeSettings keep;
        quale_settings_default(&keep);
        keep.backend = settings.backend;
        keep.gpu_device = settings.gpu_device;
        keep.log_level = QUALE_LOG_ERROR;
        keep.log = say_nothing; /* the pair said what there was to say */
        if (quale_open(&t->keep, &keep)) t->keep = NULL;
    }
    free(argv);
    return status;
}

/* The pairs as the batch reads them, a JSON list: what the Slurm scripts
 * (scripts/slurm/catalog.py) take, so that one parser reads catalogs. */
static int list_pairs(const Catalog *c)
{
    printf("[");
    for (unsigned i = 0; i < c->count; i++) {
        const CatalogPair *p = &c->pairs[i];
        printf("%s\n {\"where\": ", i ? "," : "");
        print_json_string(stdout, p->where);
        const char *names[] = { "ref", "dist", "output", "model" };
        const char *values[] = { p->ref, p->dist, p->output, p->model ? p->model : "" };
        for (unsigned k = 0; k < 4; k++) {
            printf(", \"%s\": ", names[k]);
            print_json_string(stdout, values[k]);
        }
        printf(", \"options\": [");
        for (unsigned k = 0; k < p->option_count; k++) {
            if (k) printf(", ");
            print_json_string(stdout, p->options[k]);
        }
        printf("]}");
    }
    printf("\n]\n");
    return stdout_written("the catalog's pairs");
}

/* The output's folder, made with its parents where missing (a catalog of
 * results/title/crf28.json needs no folders made first). */
static int output_folder(const CatalogPair *p)
{
    char *dir = strdup(p->output);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    int err = dir ? 0 : -1;
    for (char *c = dir && slash ? dir + 1 : NULL; c && c <= slash && !err; c++) {
        if (*c != '/') continue;
        *c = '\0';
        if (mkdir(dir, 0777) && errno != EEXIST) {
            fprintf(stderr, "quale batch: %s: cannot make the folder %s: %s\n", p->where, dir,
                    strerror(errno));
            err = -1;
        }
        *c = '/';
    }
    free(dir);
    return err;
}

static bool output_there(const char *path)
{
    struct stat st;
    return !stat(path, &st) && S_ISREG(st.st_mode);
}

static void progress(const BatchSettings *b, const BatchTally *t, unsigned done, unsigned total,
                     const CatalogPair *p, const char *what, double seconds)
{
    if (b->quiet) return;
    const unsigned left = total - done;
    char eta[48] = "";
    if (t->scored && left) {
        const double remaining = t->seconds / t->scored * left;
        snprintf(eta, sizeof(eta), ", about %.0f s left", remaining);
    }
    if (seconds >= 0)
        fprintf(stderr, "quale batch: [%u/%u] %s %s (%.2f s)%s\n", done, total, p->output, what,
                seconds, eta);
    else
        fprintf(stderr, "quale batch: [%u/%u] %s %s%s\n", done, total, p->output, what, eta);
}

int batch_main(int argc, char *argv[])
{
    BatchSettings b;
    const int parsed = parse_args(argc, argv, &b);
    if (parsed) return parsed > 0 ? 0 : EXIT_USAGE;
    Catalog catalog;
    char error[1024];
    if (catalog_load(b.catalog, &catalog, error, sizeof(error))) {
        fprintf(stderr, "quale batch: %s: %s\n", b.catalog, error);
        return EXIT_USAGE;
    }
    if (b.list) {
        const int status = list_pairs(&catalog);
        catalog_free(&catalog);
        return status;
    }
    BatchTally t = { .reuse = calloc(1, sizeof(ContextReuse)) };
    const double start = now();
    unsigned *failed = calloc(catalog.count, sizeof(*failed));
    const unsigned total = (catalog.count - (b.share - 1) + b.shares - 1) / b.shares;
    for (unsigned i = b.share - 1, done = 0; i < catalog.count; i += b.shares) {
        const CatalogPair *p = &catalog.pairs[i];
        done++;
        if (!b.force && output_there(p->output)) {
            t.skipped++;
            progress(&b, &t, done, total, p, "is there: skipped", -1);
            continue;
        }
        const double t0 = now();
        const int status = output_folder(p) ? EXIT_RUN_FAILED : score_pair(p, b.quiet, &t);
        const double seconds = now() - t0;
        if (status) {
            if (failed) failed[t.failed] = i;
            t.failed++;
            progress(&b, &t, done, total, p, "FAILED", seconds);
            continue;
        }
        t.scored++;
        t.seconds += seconds;
        progress(&b, &t, done, total, p, "scored", seconds);
    }
    fprintf(stderr, "quale batch: %u pair%s: %u scored, %u skipped (output there), %u failed; "
            "%.1f s\n", total, total == 1 ? "" : "s", t.scored, t.skipped, t.failed,
            now() - start);
    if (t.reuse && t.reuse->reused)
        fprintf(stderr, "quale batch: %u pair%s scored with the context of the pair before "
                "(reset, not made again)\n", t.reuse->reused, t.reuse->reused == 1 ? "" : "s");
    for (unsigned k = 0; failed && k < t.failed; k++)
        fprintf(stderr, "quale batch: failed: %s (%s)\n", catalog.pairs[failed[k]].where,
                catalog.pairs[failed[k]].output);
    free(failed);
    if (t.reuse) quale_close(&t.reuse->ctx);
    free(t.reuse);
    quale_close(&t.keep);
    catalog_free(&catalog);
    return t.failed ? EXIT_RUN_FAILED : 0;
}
