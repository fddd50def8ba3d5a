/*
 * One scoring run of the tool, whole or a part of a --gpu run (gpus.c).
 */
#ifndef QUALE_TOOLS_QUALE_RUN_H
#define QUALE_TOOLS_QUALE_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "messages.h"
#include "quale/quale.h"

/* The frame count the parts of a --gpu run share: the first part to need
 * it finds it (counting a Matroska file's packets reads the whole file),
 * the others take it. */
typedef struct SharedCount {
    pthread_mutex_t lock;
    bool known;
    int64_t total;
} SharedCount;

/* One part of a run spread over GPUs, handed to run() by its caller: its
 * results go to memory, as JSON for the merge, with the models' names for
 * the summary. */
typedef struct RunPart {
    const CliSettings *settings;
    SharedCount *count;
    unsigned part, parts;  /* part `part` (from 1) of `parts` */
    int gpu;               /* the device it runs on */
    char *json;            /* the part's results (free()) */
    size_t json_size;
    double seconds;        /* its time scoring */
    QualeModelInfo models[CLI_MAX_ENTRIES]; /* names and labels strdup()ed */
    unsigned model_count;
    int status;
    bool idle;             /* no frame of its own: fewer frames than GPUs */
} RunPart;

/* A context kept between the runs of quale batch: a run whose settings
 * and scoring format make the same key takes it (reset after the last run)
 * instead of opening one, and leaves it there, reset, when it succeeds. */
typedef struct ContextReuse {
    QualeContext *ctx;
    char key[4096];
    Voice voice; /* what the context's log speaks with, for every run */
    unsigned reused; /* runs that found it */
} ContextReuse;

/* Scores the pair s names (part: one part of a --gpu run, else NULL);
 * the exit status. */
int run(const CliSettings *s, RunPart *part);

#endif /* QUALE_TOOLS_QUALE_RUN_H */
