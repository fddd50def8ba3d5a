/*
 * The per-worker scratch of the CPU metrics: a calloc'ed struct that holds
 * buffers from quale_aligned_alloc().  Freeing one and ending its
 * scratch_alloc() are the same few steps in every metric.
 */
#ifndef QUALE_SRC_METRICS_COMMON_SCRATCH_H
#define QUALE_SRC_METRICS_COMMON_SCRATCH_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "common.h"

/* Frees count buffers from quale_aligned_alloc() (NULL ones included), then
 * the scratch struct that held them. */
static inline void scratch_free_aligned(void *scratch, void *const *buffers, size_t count)
{
    for (size_t i = 0; i < count; i++) quale_aligned_free(buffers[i]);
    free(scratch);
}

/* scratch_free_aligned() of a scratch t (nothing when t is NULL) and the
 * aligned buffers listed after it, e.g. SCRATCH_FREE(t, t->ref, t->dist). */
#define SCRATCH_FREE(t, ...)                                                               \
    do {                                                                                   \
        if (t)                                                                             \
            scratch_free_aligned((t), (void *const[]){ __VA_ARGS__ },                      \
                                 sizeof((void *const[]){ __VA_ARGS__ }) / sizeof(void *)); \
    } while (0)

/* The end of a scratch_alloc(): t in *scratch when every buffer came (ok),
 * else t freed with free_fn and -ENOMEM. */
static inline int scratch_hand_over(void **scratch, void *t, bool ok, void (*free_fn)(void *))
{
    if (!ok) {
        free_fn(t);
        return -ENOMEM;
    }
    *scratch = t;
    return 0;
}

#endif /* QUALE_SRC_METRICS_COMMON_SCRATCH_H */
