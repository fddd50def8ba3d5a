/*
 * quale batch CATALOG: every pair of a catalog (catalog.h) scored in one
 * process, each output written whole or not at all, pairs whose output is
 * there skipped, a bad pair reported and the others scored.
 */
#ifndef QUALE_TOOLS_QUALE_BATCH_H
#define QUALE_TOOLS_QUALE_BATCH_H

#include "cli.h"

/* quale batch [options] CATALOG (argv[0] is "batch"); the exit status. */
int batch_main(int argc, char *argv[]);

/* A scoring run of parsed settings, as the tool's command line starts one
 * (main.c): outputs checked against inputs, --align auto, --gpu. */
int score_with_settings(CliSettings *s);

#endif
