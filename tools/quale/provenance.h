/*
 * What the tool adds to a results file's provenance (the library adds its
 * build, backend, models and metrics): the inputs as given and as read,
 * how the pair was scored, and the command line.
 */
#ifndef QUALE_TOOLS_QUALE_PROVENANCE_H
#define QUALE_TOOLS_QUALE_PROVENANCE_H

#include "inputs.h"
#include "outcome.h"
#include "quale/quale.h"

#define TOOL_PROVENANCE_RECORDS 4
#define TOOL_PROVENANCE_FACTS 12

typedef struct ToolProvenance {
    QualeProvenanceRecord records[TOOL_PROVENANCE_RECORDS];
    unsigned count;
    QualeOutputNote facts[TOOL_PROVENANCE_RECORDS][TOOL_PROVENANCE_FACTS];
    char *owned[TOOL_PROVENANCE_RECORDS * TOOL_PROVENANCE_FACTS]; /* values malloc'ed */
    unsigned owned_count;
} ToolProvenance;

/* The records of the run: an "input" for each video (name as given, file
 * size, format as scored, frame rate, decoder and what the notes say of
 * it: scaling, depth), a "scoring" record of the notes on the pair
 * (alignment, --score-bitdepth) and a "command" with the command line s
 * was parsed from (names and words that are not UTF-8 written with U+FFFD
 * for each stray byte: the results are UTF-8 text).
 * 0, or -1 when out of memory (p then holds what it could). */
int provenance_gather(ToolProvenance *p, const CliSettings *s, const Input inputs[2],
                      const InputNotes *notes);

void provenance_release(ToolProvenance *p);

/* A word as a POSIX shell reads it back: as it is when it holds only
 * characters no shell treats specially, else in single quotes (a quote
 * as '\''). malloc'ed; NULL when out of memory. */
char *provenance_shell_quote(const char *word);

#endif /* QUALE_TOOLS_QUALE_PROVENANCE_H */
