/*
 * Command-line settings of the quale tool.  The flags are libvmaf's `vmaf`
 * tool's, plus quale's own (--backend, --precision, --list-features, ...).
 */
#ifndef QUALE_TOOLS_CLI_H
#define QUALE_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "quale/quale.h"

#define CLI_MAX_ENTRIES 64

#define CLI_MAX_GPUS 64
#define CLI_MAX_POOLS 8

typedef struct CliSettings {
    const char *reference;
    const char *distorted;
    QualeVideoFormat raw;          /* from -w -h -p -b */
    bool raw_given;                /* any of -w -h -p -b was given */
    const char *output;            /* -o ("-": standard output); NULL: none */
    enum QualeOutputFormat output_format; /* from the flag, else -o's extension */
    const char *format_flag;       /* "--json", ... as given; NULL: none */
    const char *models[CLI_MAX_ENTRIES];
    unsigned model_count;
    const char *features[CLI_MAX_ENTRIES];
    unsigned feature_count;
    unsigned threads;              /* 0: all cores */
    bool threads_given;
    unsigned subsample;
    unsigned cpumask;
    unsigned gpumask;
    unsigned frame_count;          /* 0: all */
    unsigned frame_skip_ref;
    unsigned frame_skip_dist;
    const char *scaler;            /* --scaler: for a distorted video of another size */
    bool align_auto;               /* --align auto: find the offset, then skip */
    unsigned align_window;         /* frames tried each way (--align-window) */
    char align_note[160];          /* what --align auto found, for the output */
    bool no_prediction;
    bool force;                    /* --force: score a raw video that looks misread */
    bool quiet;
    bool version;
    bool help;
    bool list_features;
    bool list_models;
    bool list_devices;
    bool list_json;
    enum QualeBackend backend;
    bool backend_given;
    int gpu_device;
    int precision;                 /* -1: full */
    unsigned score_bitdepth;       /* 0: the files'; else both videos at that depth */
    unsigned segment_part;         /* --segment K/N: K (from 1); 0: whole */
    unsigned segment_parts;        /* N */
    bool frames_given;             /* --frames FIRST:END */
    unsigned frames_first;
    unsigned frames_end;           /* 0: to the last frame */
    bool gpu_all;                  /* --gpu all */
    unsigned gpus[CLI_MAX_GPUS];   /* --gpu 0,1,3 */
    unsigned gpu_count;
    const char *pools[CLI_MAX_POOLS]; /* --pool: the summary's, and more pooled values */
    unsigned pool_count;
    char pool_text[256];           /* pools point into it */
    const char *html;              /* --html: the report's page */
    const char *vf;                /* --vf: both videos' filter graph */
    const char *ref_vf, *dist_vf;  /* each video's graph (--vf's, or its own); NULL: none */
    /* Not options: the command line parsed (argv as given, for the
     * output's provenance); quale batch's context kept from one pair to
     * the next (run.h, NULL for a single run) and the pair's name, which
     * its messages start with (NULL: none). */
    int command_argc;
    char *const *command_argv;
    struct ContextReuse *reuse;
    const char *label;
} CliSettings;

/* The output format an -o path's extension names (.xml, .json, .csv,
 * .sub, any case), with *extension pointing at it; -1: none. */
int cli_format_of_extension(const char *path, const char **extension);

/* Splits "p1,mean,low5" into text (a copy) and checks every method
 * (quale_pool_method_check()). */
int cli_parse_pools(const char *arg, char *text, size_t text_size, const char **pools,
                    unsigned *count, char *error, size_t error_size);

/*
 * Parses argv.  Returns 0 on success, or a non-zero value with a message in
 * error (the tool prints it with the usage hint and exits with status 2).
 * The strings in settings point into argv.  The output format is the flag's
 * (--xml, --json, --csv, --sub), else -o's extension's (.xml, .json, .csv,
 * .sub; .srt is refused: SubRip is not the subtitle layout), else XML; a flag that -o's extension contradicts, or two
 * different flags, are refused.  A format flag without -o writes to
 * standard output.
 */
int cli_parse(int argc, char *const argv[], CliSettings *settings,
              char *error, size_t error_size);

/*
 * The options of one task of a split run (scripts/slurm/catalog.py, through
 * quale check-options), read with the option table cli_parse() reads: for
 * each of argv[1..argc-1], kinds[i] is 'f' for an output layout flag and
 * 'm' for --precision and its value, which belong to the merge (in any
 * spelling getopt takes: --js, --precision=6, --prec 6), and 't' where it
 * belongs to the task.
 * Refuses (non-zero, the reason in error) the flags a task sets itself or
 * that make no part, in every spelling (-rX, --ref=X, --dist X, -qdX):
 * -r, -d, -o, --segment, --html, --gpu, and the listings.
 */
int cli_classify_task_options(int argc, char *const argv[], char *kinds, char *error,
                              size_t error_size);

/* --gpu's value ("all", or devices "0,1,3", one named twice runs two
 * parts on it) into s->gpu_all, s->gpus and s->gpu_count; -EINVAL when it
 * is neither. */
int cli_parse_gpus(CliSettings *s, const char *arg);

/* The --help text. */
void cli_print_usage(FILE *f);

#endif /* QUALE_TOOLS_CLI_H */
