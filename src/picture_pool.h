/*
 * Recycled picture memory.  A context hands out pictures from its pool so
 * that the reader loop allocates nothing per frame, and so that a GPU
 * backend can supply host memory it uploads from without a staging copy
 * (pinned memory for CUDA).  The pool lives until the context is closed and
 * the last of its pictures is released, whichever comes last.
 */
#ifndef QUALE_SRC_PICTURE_POOL_H
#define QUALE_SRC_PICTURE_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "quale/quale.h"

/* Where the pool's memory comes from; NULL functions mean aligned malloc. */
typedef struct HostAllocator {
    void *(*alloc)(void *opaque, size_t size);
    void (*free)(void *opaque, void *memory);
    /* Called once the pool is gone and nothing it allocated is left: lets a
     * device outlive its context for as long as pictures still use it. */
    void (*release)(void *opaque);
    void *opaque;
} HostAllocator;

typedef struct PicturePool PicturePool;

/* keep: how many free buffers the pool holds on to. */
int picture_pool_open(PicturePool **pool, const HostAllocator *allocator, unsigned keep);

/* Drops the owner's reference: the pool goes once its pictures are back. */
void picture_pool_close(PicturePool **pool);

/* Allocates a picture from the pool (the format may change between calls;
 * buffers of another size are freed). */
int picture_pool_get(PicturePool *pool, QualePicture *pic, const QualeVideoFormat *format);

/* Whether a picture's memory came from this pool. */
bool picture_from_pool(const QualePicture *pic, const PicturePool *pool);

#endif /* QUALE_SRC_PICTURE_POOL_H */
