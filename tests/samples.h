/*
 * Sample access for the tests, C and C++: a sample of any plane of an 8-
 * or 16-bit picture, and clipping to a range.
 */
#ifndef QUALE_TESTS_SAMPLES_H
#define QUALE_TESTS_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "quale/quale.h"

static inline unsigned get(const QualePicture *p, unsigned plane, unsigned x, unsigned y)
{
    const uint8_t *row = (const uint8_t *)p->data[plane] + (ptrdiff_t)y * p->stride[plane];
    return p->format.bitdepth > 8 ? ((const uint16_t *)row)[x] : row[x];
}

static inline void put(QualePicture *p, unsigned plane, unsigned x, unsigned y, unsigned v)
{
    uint8_t *row = (uint8_t *)p->data[plane] + (ptrdiff_t)y * p->stride[plane];
    if (p->format.bitdepth > 8)
        ((uint16_t *)row)[x] = (uint16_t)v;
    else
        row[x] = (uint8_t)v;
}

static inline unsigned clip(long v, unsigned max)
{
    return v < 0 ? 0u : v > (long)max ? max : (unsigned)v;
}

#endif /* QUALE_TESTS_SAMPLES_H */
