/*
 * What a run leaves: its results file, its summary, its report page, and
 * what it says of its inputs in them.
 */
#ifndef QUALE_TOOLS_QUALE_OUTCOME_H
#define QUALE_TOOLS_QUALE_OUTCOME_H

#include <stddef.h>

#include "cli.h"
#include "messages.h"
#include "summary.h"
#include "quale/quale.h"

typedef struct ResultsOutput {
    const QualeContext *ctx;
    enum QualeOutputFormat format;
    QualeOutputOptions options;
} ResultsOutput;

/* What was done to the inputs, for the output file (QualeOutputNote). */
typedef struct InputNotes {
    QualeOutputNote note[12];
    char text[12][192];
    unsigned count;
} InputNotes;

void note_add(InputNotes *n, const char *name, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Writes the results to -o (output_file.h: whole or not at all, an
 * existing file keeping its mode, owner and links); the exit status. */
int write_results(const CliSettings *s, const ResultsOutput *out);

/* The results formatted into memory (*text malloc'ed); 0, or -1 after
 * saying why. */
int format_to_memory(const Voice *voice, const ResultsOutput *out, char **text, size_t *size);

/* --html: the report of a run's results, with what the run knows that
 * the results file does not say (the models, the frame rate, the
 * bitrate, the backend); the exit status. */
int write_html(const CliSettings *s, const QualeResults *results, const QualeModelInfo *models,
               unsigned model_count, const QualeVideoReader *distorted,
               enum QualeBackend backend, unsigned gpus);

#endif /* QUALE_TOOLS_QUALE_OUTCOME_H */
