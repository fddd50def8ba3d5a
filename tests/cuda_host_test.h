/*
 * What the CPU tests of the CUDA twins (tests/test_*_cuda_host.cpp) share:
 * a seeded random generator, sample access, and the log messages the
 * library sends.  Each test defines QUALE_HOST_TEST_SEED (its own random
 * stream) before including this.
 */
#ifndef QUALE_TESTS_CUDA_HOST_TEST_H
#define QUALE_TESTS_CUDA_HOST_TEST_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "quale/quale.h"

/* xorshift64: the same stream on every platform. */
static uint64_t rng_state = QUALE_HOST_TEST_SEED;

static inline uint32_t rng()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static inline unsigned get(const QualePicture *p, unsigned plane, unsigned x, unsigned y)
{
    const uint8_t *row = (const uint8_t *)p->data[plane] + (ptrdiff_t)y * p->stride[plane];
    return p->format.bitdepth > 8 ? ((const uint16_t *)row)[x] : row[x];
}

/* A luma sample. */
static inline unsigned get(const QualePicture *p, unsigned x, unsigned y)
{
    return get(p, 0, x, y);
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

/* The errors the library logged since messages was last cleared. */
inline std::vector<std::string> messages;

static inline void keep_messages(void *, QualeLogLevel level, const char *message)
{
    if (level == QUALE_LOG_ERROR) messages.push_back(message);
}

#endif /* QUALE_TESTS_CUDA_HOST_TEST_H */
