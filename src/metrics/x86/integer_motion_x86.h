/*
 * What integer motion's SIMD kernels (integer_motion_avx2.c,
 * integer_motion_avx512.c) share: the layout of their row buffer, the rows
 * under the blur's taps, and the mirror of a filtered row.
 */
#ifndef QUALE_SRC_METRICS_X86_INTEGER_MOTION_X86_H
#define QUALE_SRC_METRICS_X86_INTEGER_MOTION_X86_H

#include <stddef.h>
#include <stdint.h>

#include "metrics/integer_motion.h"

/* 16-bit entries before (and, at least, after) each row of vh, vl: a step
 * of the horizontal pass reads up to 34 past the row. */
#define MOTION_ROW_PAD 48

/* The row buffer (MOTION_ROW_BUFFER_BYTES(w)): the vertical pass's row as
 * its high and low bytes, vh and vl (padded), and a ring of 5 rows of
 * differences of 8-bit pictures, row r in slot r % 5, so that each row is
 * widened and subtracted once rather than once per tap. */
typedef struct MotionRows {
    int16_t *vh, *vl, *ring;
    int ring_row[5];
} MotionRows;

static inline MotionRows motion_row_buffers(void *row_buffer, unsigned w)
{
    MotionRows m;
    m.vh = (int16_t *)row_buffer + MOTION_ROW_PAD;
    m.vl = m.vh + w + 2 * MOTION_ROW_PAD;
    m.ring = m.vl + w + MOTION_ROW_PAD;
    for (int k = 0; k < 5; k++) m.ring_row[k] = -1;
    return m;
}

/* The rows under the 5 taps at row y, through libvmaf's mirror. */
static inline void motion_rows(const void *data, ptrdiff_t stride, unsigned y, unsigned h,
                               const uint8_t *rows[5])
{
    for (int k = 0; k < 5; k++)
        rows[k] = (const uint8_t *)data + (ptrdiff_t)motion_mirror((int)y - 2 + k, h) * stride;
}

/* The rows of differences under the 5 taps at row y of 8-bit pictures a,
 * b (those of motion_rows()), each made once by difference(a, b, w, d). */
static inline void motion_difference_rows(MotionRows *m, const uint8_t *const a[5],
                                          const uint8_t *const b[5], unsigned y, unsigned h,
                                          unsigned w,
                                          void (*difference)(const uint8_t *, const uint8_t *,
                                                             unsigned, int16_t *),
                                          const int16_t *d[5])
{
    for (int k = 0; k < 5; k++) {
        const int r = (int)motion_mirror((int)y - 2 + k, h);
        int16_t *slot = m->ring + (size_t)(r % 5) * w;
        if (m->ring_row[r % 5] != r) {
            difference(a[k], b[k], w, slot);
            m->ring_row[r % 5] = r;
        }
        d[k] = slot;
    }
}

/* Mirrors a filtered row into its padding as the C code does (w >= 3). */
static inline void motion_mirror_row(int16_t *row, unsigned w)
{
    row[-1] = row[1];
    row[-2] = row[2];
    row[w] = row[w - 2];
    row[w + 1] = row[w - 3];
}

#endif /* QUALE_SRC_METRICS_X86_INTEGER_MOTION_X86_H */
