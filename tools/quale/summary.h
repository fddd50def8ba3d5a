/*
 * The summary a run prints: libvmaf's lines for the models, then the
 * pooled value of every feature asked for; a compact table on a terminal.
 */
#ifndef QUALE_TOOLS_QUALE_SUMMARY_H
#define QUALE_TOOLS_QUALE_SUMMARY_H

#include <stdio.h>

#include "cli.h"
#include "quale/quale.h"

/* Where the summary's pooled values come from: a run's context, or the
 * results of a part of it or of its merged parts. */
typedef struct SummarySource {
    const QualeContext *ctx;
    const QualeResults *results;
    const QualeModelInfo *models;
    unsigned model_count;
    const QualeSegment *segment; /* a part of a split run: said first */
} SummarySource;

/* libvmaf's summary (every model's pooled mean, a bootstrap model with its
 * interval; with --pool each method), then every key of the metrics asked
 * for with --feature.  Without models: every key. */
void print_summary(FILE *f, const CliSettings *s, const SummarySource *src);

/* The pooled values of every key of merged results (quale merge): with
 * pool methods (NULL: the mean) each of them. */
void print_pooled_keys(FILE *f, const QualeResults *results, const char *const *pools,
                       unsigned pool_count);

#endif /* QUALE_TOOLS_QUALE_SUMMARY_H */
