/*
 * quale batch: a catalog's pairs scored in one process (batch.h).  Each
 * pair is the run its command line would be,
 *
 *   quale -r REF -d DIST [-m MODEL] OPTIONS -o OUTPUT
 *
 * parsed by the tool's own parser and recorded as that command in the
 * output's provenance, so that its output is the one that command writes
 * (but the timing).  What one process saves over a process per pair: the
 * start of the process, of the GPU driver and of its context (kept by each
 * worker from its first GPU pair to its end), and, for a pair with the
 * settings and scoring format of the one before, the start of quale's
 * context: the run takes the last one, reset (quale_reset(), run.c).
 *
 * Workers score pairs side by side, each taking the next pair of the
 * catalog as it frees up: on a GPU two by default, so that one pair's
 * start and end (opening files, the first frames, the flush, writing)
 * overlap the other's frames; with --gpu, that many on each device.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "batch.h"
#include "catalog.h"
#include "gpus.h"
#include "listing.h"
#include "messages.h"
#include "run.h"
#include "quale/quale.h"

typedef struct BatchSettings {
    const char *catalog;
    bool force; /* score pairs whose output is there too */
    bool quiet;
    bool list;  /* print the pairs as read, score none */
    unsigned share, shares; /* --share K/N: pairs K-1, K-1+N, ... (else 0, 1) */
    unsigned jobs;          /* --jobs: pairs at once on each device; 0: chosen */
    const char *gpus;       /* --gpu: the devices the pairs go to; NULL: their own */
} BatchSettings;

/* What the workers share, under the lock. */
typedef struct Batch {
    const BatchSettings *b;
    const Catalog *catalog;
    pthread_mutex_t lock;
    unsigned workers;
    unsigned next; /* the catalog index the next free worker takes */
    unsigned done, total;
    unsigned scored, skipped, failed, reused;
    unsigned *failures; /* the catalog indices of the pairs that failed */
    double start;
} Batch;

/* One worker: pairs one after another, on its device. */
typedef struct Worker {
    Batch *batch;
    int gpu; /* the device its pairs score on; -1: the pair's own */
    QualeContext *keep;  /* holds the GPU's context between pairs */
    ContextReuse reuse;  /* the last pair's context, for the next of its kind */
    pthread_t thread;
    bool started;
} Worker;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: quale batch [--force] [-q] [--share K/N] [--jobs N] [--gpu all|LIST] CATALOG\n"
               "       quale batch --list CATALOG   (the pairs as read, in JSON)\n"
               "Scores every pair of CATALOG (.json or .csv: ref, dist, output, model, "
               "options;\ndocs/scale-out.md) in one process. A pair whose output is there is "
               "skipped\n(--force scores it again); a pair that fails is reported and the others "
               "go on;\nthe exit status is 1 if any failed. --share K/N scores the K-th of N "
               "shares\n(pairs K, K+N, K+2N... of the catalog), one per task of a cluster "
               "job.\n--jobs N scores N pairs at once on each device (on a GPU 2, else 1); "
               "--gpu all or\n--gpu 0,1 hands the pairs to those GPUs as they free up.\n");
}

/* A value of N, 1 to most, with nothing after it. */
static bool count_option(const char *text, unsigned most, unsigned *value)
{
    char end = 0;
    return sscanf(text, "%u%c", value, &end) == 1 && *value >= 1 && *value <= most;
}

static int parse_args(int argc, char *argv[], BatchSettings *b)
{
    *b = (BatchSettings){ .share = 1, .shares = 1 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        char end = 0;
        if (!strcmp(a, "--force")) {
            b->force = true;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            b->quiet = true;
        } else if (!strcmp(a, "--list")) {
            b->list = true;
        } else if (!strcmp(a, "--share") && value) {
            i++;
            if (sscanf(value, "%u/%u%c", &b->share, &b->shares, &end) != 2 || !b->shares ||
                !b->share || b->share > b->shares) {
                fprintf(stderr, "quale batch: --share K/N: K from 1 to N, not '%s'\n", value);
                return -1;
            }
        } else if (!strcmp(a, "--jobs") && value) {
            i++;
            if (!count_option(value, 64, &b->jobs)) {
                fprintf(stderr, "quale batch: --jobs N: N from 1 to 64, not '%s'\n", value);
                return -1;
            }
        } else if (!strcmp(a, "--gpu") && value) {
            b->gpus = argv[++i];
        } else if (!strcmp(a, "--help")) {
            return usage(stdout), 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "quale batch: unknown option '%s'\n", a);
            return usage(stderr), -1;
        } else if (b->catalog) {
            fprintf(stderr, "quale batch: one catalog at a time ('%s' and '%s')\n", b->catalog, a);
            return -1;
        } else {
            b->catalog = a;
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

/* The pair's settings, from its command line (*argv: the settings point
 * into it; free() the array).  getopt's state is the process's, so the
 * workers parse in turn, under the batch's lock.  0, or an exit status
 * after saying why (when say_why). */
static int parse_pair(const CatalogPair *p, char ***argv, CliSettings *settings, bool say_why)
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
            if (say_why) fprintf(stderr, "quale batch: %s: options: %s\n", p->where, error);
            status = EXIT_USAGE;
        }
    }
    free(kinds);
    free(task);
    int argc = 0;
    *argv = status ? NULL : pair_argv(p, &argc);
    if (!status && !*argv) status = EXIT_RUN_FAILED;
    if (!status && cli_parse(argc, *argv, settings, error, sizeof(error))) {
        if (say_why) fprintf(stderr, "quale batch: %s: %s\n", p->where, error);
        status = EXIT_USAGE;
    }
    return status;
}

/* From a worker's first pair on a GPU, a context of its stays open: the
 * pairs after it find the driver and the device's context started, also
 * where they do not take the last pair's context (other settings). */
static void keep_gpu_open(Worker *w, const CliSettings *settings)
{
    if (w->keep || settings->backend == QUALE_BACKEND_CPU) return;
    QualeSettings keep;
    quale_settings_default(&keep);
    keep.backend = settings->backend;
    keep.gpu_device = settings->gpu_device;
    keep.log_level = QUALE_LOG_ERROR;
    keep.log = say_nothing; /* the pair said what there was to say */
    if (quale_open(&w->keep, &keep)) w->keep = NULL;
}

/* Scores one pair: 0, or the run's exit status after saying why.  With
 * workers side by side, the runs say only their errors (as -q, which the
 * pair's command then does not show), each message with the pair's name. */
static int score_pair(Worker *w, const CatalogPair *p, bool side_by_side)
{
    Batch *batch = w->batch;
    char **argv = NULL;
    CliSettings settings;
    pthread_mutex_lock(&batch->lock);
    int status = parse_pair(p, &argv, &settings, true);
    pthread_mutex_unlock(&batch->lock);
    if (!status) {
        settings.quiet |= batch->b->quiet || side_by_side;
        if (side_by_side) settings.label = p->where;
        settings.reuse = &w->reuse;
        if (w->gpu >= 0 && settings.backend != QUALE_BACKEND_CPU) settings.gpu_device = w->gpu;
        status = score_with_settings(&settings);
        if (!status) keep_gpu_open(w, &settings);
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

/* A pair's line: [done/total] OUTPUT WHAT (seconds), time left.  Under the
 * batch's lock. */
static void progress(Batch *batch, const CatalogPair *p, const char *what, double seconds)
{
    const unsigned done = ++batch->done, left = batch->total - done;
    /* the pairs that took time: skipped ones take none */
    const unsigned scored = batch->scored + batch->failed;
    if (batch->b->quiet) return;
    char eta[48] = "";
    if (scored && left) {
        const double remaining = (now() - batch->start) / scored * left;
        snprintf(eta, sizeof(eta), ", about %.0f s left", remaining);
    }
    if (seconds >= 0)
        fprintf(stderr, "quale batch: [%u/%u] %s %s (%.2f s)%s\n", done, batch->total, p->output,
                what, seconds, eta);
    else
        fprintf(stderr, "quale batch: [%u/%u] %s %s%s\n", done, batch->total, p->output, what,
                eta);
}

/* A worker: the next pair of the catalog (of the batch's share) until none
 * is left. */
static void *worker_main(void *arg)
{
    Worker *w = arg;
    Batch *batch = w->batch;
    const BatchSettings *b = batch->b;
    const bool side_by_side = batch->workers > 1;
    pthread_mutex_lock(&batch->lock);
    while (batch->next < batch->catalog->count) {
        const unsigned i = batch->next;
        const CatalogPair *p = &batch->catalog->pairs[i];
        batch->next += b->shares;
        if (!b->force && output_there(p->output)) {
            batch->skipped++;
            progress(batch, p, "is there: skipped", -1);
            continue;
        }
        pthread_mutex_unlock(&batch->lock);
        const double t0 = now();
        const int status = output_folder(p) ? EXIT_RUN_FAILED : score_pair(w, p, side_by_side);
        const double seconds = now() - t0;
        pthread_mutex_lock(&batch->lock);
        if (status) batch->failures[batch->failed++] = i;
        else batch->scored++;
        progress(batch, p, status ? "FAILED" : "scored", seconds);
    }
    pthread_mutex_unlock(&batch->lock);
    return NULL;
}

/* How many workers, on which devices: --jobs on each of --gpu's devices
 * (or on the pairs' own), 2 by default where the batch's first pair scores
 * on a GPU, else 1; never more than the pairs.  0, or an exit status. */
static int plan_workers(const BatchSettings *b, const Catalog *catalog, unsigned total,
                        Worker **workers, unsigned *count)
{
    CliSettings first;
    char **argv = NULL;
    const bool parsed = catalog->count >= b->share &&
                        !parse_pair(&catalog->pairs[b->share - 1], &argv, &first, false);
    /* (a pair that does not parse says why when it is scored) */
    const enum QualeBackend backend = parsed ? first.backend : QUALE_BACKEND_CPU;
    free(argv);
    unsigned gpus[CLI_MAX_GPUS], gpu_count = 0;
    if (b->gpus) {
        CliSettings chosen = { .backend = backend == QUALE_BACKEND_CPU ? QUALE_BACKEND_CUDA : backend };
        if (cli_parse_gpus(&chosen, b->gpus)) {
            fprintf(stderr, "quale batch: --gpu takes all or devices as 0,1,3, not '%s'\n",
                    b->gpus);
            return EXIT_USAGE;
        }
        const int status = gpus_choose(&chosen, gpus, &gpu_count);
        if (status) return status;
    }
    const unsigned jobs = b->jobs ? b->jobs : backend != QUALE_BACKEND_CPU || b->gpus ? 2 : 1;
    unsigned n = jobs * (gpu_count ? gpu_count : 1);
    if (n > total) n = total ? total : 1;
    *workers = calloc(n, sizeof(**workers));
    if (!*workers) {
        fprintf(stderr, "quale batch: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    /* worker k on device k mod N: each device's first workers start first */
    for (unsigned k = 0; k < n; k++) (*workers)[k].gpu = gpu_count ? (int)gpus[k % gpu_count] : -1;
    *count = n;
    return 0;
}

static int score_catalog(const BatchSettings *b, const Catalog *catalog)
{
    Batch batch = {
        .b = b, .catalog = catalog, .next = b->share - 1, .start = now(),
        .total = (catalog->count - (b->share - 1) + b->shares - 1) / b->shares,
        .failures = calloc(catalog->count + 1, sizeof(unsigned)),
    };
    Worker *workers = NULL;
    int status = batch.failures ? plan_workers(b, catalog, batch.total, &workers, &batch.workers)
                                : (fprintf(stderr, "quale batch: out of memory\n"), EXIT_RUN_FAILED);
    if (status) {
        free(batch.failures);
        return status;
    }
    pthread_mutex_init(&batch.lock, NULL);
    for (unsigned k = 0; k < batch.workers; k++) {
        workers[k].batch = &batch;
        /* the first in this thread; the others each in one of their own */
        workers[k].started = k > 0 && !pthread_create(&workers[k].thread, NULL, worker_main,
                                                      &workers[k]);
    }
    worker_main(&workers[0]);
    for (unsigned k = 1; k < batch.workers; k++)
        if (workers[k].started) pthread_join(workers[k].thread, NULL);
    fprintf(stderr, "quale batch: %u pair%s: %u scored, %u skipped (output there), %u failed; "
            "%.1f s\n", batch.total, batch.total == 1 ? "" : "s", batch.scored, batch.skipped,
            batch.failed, now() - batch.start);
    for (unsigned k = 0; k < batch.workers; k++) {
        batch.reused += workers[k].reuse.reused;
        quale_close(&workers[k].reuse.ctx);
        quale_close(&workers[k].keep);
    }
    if (batch.reused)
        fprintf(stderr, "quale batch: %u pair%s scored with the context of the pair before "
                "(reset, not made again)\n", batch.reused, batch.reused == 1 ? "" : "s");
    for (unsigned k = 0; k < batch.failed; k++)
        fprintf(stderr, "quale batch: failed: %s (%s)\n", catalog->pairs[batch.failures[k]].where,
                catalog->pairs[batch.failures[k]].output);
    pthread_mutex_destroy(&batch.lock);
    free(workers);
    free(batch.failures);
    return batch.failed ? EXIT_RUN_FAILED : 0;
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
    const int status = b.list ? list_pairs(&catalog) : score_catalog(&b, &catalog);
    catalog_free(&catalog);
    return status;
}
