/*
 * Reading ahead: one thread per input reads the next few pictures while the
 * caller scores the current ones, so the two files are read in parallel and
 * reading overlaps with the work.  A read error is queued like a picture
 * and reaches the caller only if it asks for that frame.
 */
#ifndef QUALE_TOOLS_PREFETCH_H
#define QUALE_TOOLS_PREFETCH_H

#include "quale/quale.h"

typedef struct Prefetcher Prefetcher;

/* Starts reading from reader (owned by the caller, who must not touch it
 * until prefetch_stop) into pictures from ctx's pool. */
int prefetch_start(Prefetcher **p, QualeVideoReader *reader, QualeContext *ctx,
                   const QualeVideoFormat *format, unsigned depth);

/* The next picture: 1 with *pic filled, 0 at the end, < 0 on an error
 * (quale_video_error() of the reader says what, after prefetch_stop). */
int prefetch_next(Prefetcher *p, QualePicture *pic);

/* Stops the thread and drops what it read ahead. */
void prefetch_stop(Prefetcher **p);

#endif /* QUALE_TOOLS_PREFETCH_H */
