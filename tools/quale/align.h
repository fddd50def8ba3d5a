/*
 * --align auto: the frame offset between two videos (tools/align.c).
 */
#ifndef QUALE_TOOLS_ALIGN_H
#define QUALE_TOOLS_ALIGN_H

#include <stddef.h>

#include "quale/quale.h"

typedef struct AlignResult {
    int offset;            /* > 0: the distorted video has that many frames more
                            * at its start; < 0: the reference has */
    double psnr;           /* mean luma PSNR at the offset (dB) */
    double psnr_unshifted; /* ... and at offset 0 */
    unsigned compared;     /* offsets tried */
} AlignResult;

/* A video as the tool opens it: its raw format (NULL: none), its filter
 * graph (NULL: none), the frames skipped. */
typedef struct AlignVideo {
    const char *path;
    const QualeVideoFormat *raw;
    const char *graph;
    unsigned skip;
} AlignVideo;

/* Reads the first frames of both videos (after their graphs and skips), a
 * distorted video of another size scaled to the reference's with scaler
 * as the run scores it, and finds the offset in [-window, window] with the
 * highest mean luma PSNR.  0, or a negative errno with the reason in
 * error: -EINVAL or -ENOTSUP a filter graph FFmpeg refuses or quale cannot
 * score (the user's to fix). */
int align_find(const AlignVideo *ref, const AlignVideo *dist, unsigned window,
               const char *scaler, AlignResult *result, char *error, size_t error_size);

#endif /* QUALE_TOOLS_ALIGN_H */
