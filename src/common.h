/* Small helpers shared by every source file of the library. */
#ifndef QUALE_SRC_COMMON_H
#define QUALE_SRC_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define QUALE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define QUALE_MAX(a, b) ((a) > (b) ? (a) : (b))
#define QUALE_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Row alignment of every picture and scratch buffer: one AVX-512 vector. */
#define QUALE_ALIGNMENT 64

/* The largest picture side the library accepts.  Keeps every
 * width * height * sample product inside 64-bit and every row size inside
 * 32-bit arithmetic, with room for the metrics' intermediate buffers. */
#define QUALE_MAX_DIMENSION 32768u
/* The largest stride a picture may have, in bytes (a plane's rows are
 * at most 64 KiB; crops and interleaved fields stay far below). */
#define QUALE_MAX_STRIDE (1 << 24)

static inline size_t quale_align(size_t n, size_t a)
{
    return (n + a - 1) & ~(a - 1);
}

/* Milliseconds of the monotonic clock, for the debug log's timings. */
double quale_monotonic_ms(void);

/* Aligned allocation that never aborts; NULL on failure or overflow. */
void *quale_aligned_alloc(size_t size);
void quale_aligned_free(void *p);

#endif /* QUALE_SRC_COMMON_H */
