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

/* Reads the first frames of both videos (after the skips), opened as the
 * tool opens them (raw formats or NULL), a distorted video of another size
 * scaled to the reference's with scaler (NULL: bicubic) as the run scores
 * it, and finds the offset in [-window, window] with the highest mean luma
 * PSNR.  0, or a negative errno with the reason in error. */
int align_find(const char *ref, const char *dist, const QualeVideoFormat *ref_raw,
               const QualeVideoFormat *dist_raw, unsigned skip_ref, unsigned skip_dist,
               unsigned window, const char *scaler, AlignResult *result, char *error,
               size_t error_size);

#endif /* QUALE_TOOLS_ALIGN_H */
