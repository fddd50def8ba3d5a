/*
 * quale merge: the parts of a run split in segments (quale --segment K/N,
 * or the parts of a --gpu run) joined into the file one run gives.
 */
#ifndef QUALE_TOOLS_MERGE_H
#define QUALE_TOOLS_MERGE_H

#include <stdio.h>

#include "quale/quale.h"

/* `quale merge ARGS`: argv[0] is "merge".  Returns the exit status. */
int merge_main(int argc, char *argv[]);

/* Reads a results file ("-": standard input) whole (quale_results_read());
 * prints why not and returns -1 when it cannot. */
int results_load(const char *path, QualeResults **results);

/* Merges parts and writes the merged results to path ("-": standard
 * output) in format at precision (< -1: the precision the run asked for),
 * with the pooled values of pool_methods beyond libvmaf's.
 * On success *merged holds them (for a summary).  Prints why on failure
 * and returns -1. */
int merge_write(const QualeResults *const *parts, unsigned count, const char *path,
                enum QualeOutputFormat format, int precision, const char *const *pool_methods,
                unsigned pool_method_count, QualeResults **merged);

#endif /* QUALE_TOOLS_MERGE_H */
