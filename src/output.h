/*
 * The writers of libvmaf's layouts (src/output.c), for a context's results
 * and for results read back from a file (src/results.c).
 */
#ifndef QUALE_SRC_OUTPUT_H
#define QUALE_SRC_OUTPUT_H

#include <stdio.h>

#include "collector.h"
#include "log.h"
#include "quale/quale.h"

typedef struct OutputSource {
    const LogSink *log;          /* takes the writer's errors; NULL: to error */
    const Collector *collector;
    unsigned width, height;      /* the pictures' (XML's params) */
    unsigned subsample;          /* frames not a multiple of it are not listed */
    unsigned first, end;         /* the collector's frames written and pooled */
    unsigned offset;             /* added to the frame numbers written */
    double fps;
    const QualeOutputNote *notes;
    unsigned note_count;
    const QualeSegment *segment; /* a part of a split run: JSON, full precision */
    const char *const *pool_methods; /* pooled values beyond libvmaf's four */
    unsigned pool_method_count;
    const QualeProvenanceRecord *provenance; /* what produced them (JSON, XML) */
    unsigned provenance_count;
} OutputSource;

/* Writes src in a layout; on failure the reason goes to src's log, or to
 * error without one. */
int output_write(const OutputSource *src, FILE *stream, enum QualeOutputFormat format,
                 int precision, char *error, size_t error_size);

#endif /* QUALE_SRC_OUTPUT_H */
