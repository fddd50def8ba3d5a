/*
 * Reading ahead: threads read the next pictures while the caller scores the
 * current ones, so the two videos are read in parallel and reading overlaps
 * with the work.  Several readers of one file (opened separately) can share
 * it: lane k reads frames k, k + N, k + 2N, ... and skips the others, which
 * multiplies what one thread's read() calls can bring in from the page
 * cache.  A read error is queued like a picture and reaches the caller only
 * if it asks for that frame.
 */
#ifndef QUALE_TOOLS_PREFETCH_H
#define QUALE_TOOLS_PREFETCH_H

#include <stdbool.h>

#include "quale/quale.h"

#define PREFETCH_MAX_LANES 4

typedef struct Prefetcher Prefetcher;

/* Starts one thread per reader (owned by the caller, who must not touch
 * them until prefetch_stop; each positioned at the first frame to score),
 * reading into pictures from ctx's pool (its device pool when the readers
 * decode on the GPU: on_device), up to `depth` pictures ahead each. */
int prefetch_start(Prefetcher **p, QualeVideoReader *const *readers, unsigned lanes,
                   QualeContext *ctx, const QualeVideoFormat *format, unsigned depth,
                   bool on_device);

/* The next picture: 1 with *pic filled, 0 at the end, < 0 on an error
 * (prefetch_error() says what). */
int prefetch_next(Prefetcher *p, QualePicture *pic);

/* The message of the reader that failed. */
const char *prefetch_error(const Prefetcher *p);

/* Stops the threads and drops what they read ahead. */
void prefetch_stop(Prefetcher **p);

#endif /* QUALE_TOOLS_PREFETCH_H */
