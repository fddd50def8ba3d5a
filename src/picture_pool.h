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
typedef struct PictureAllocator {
    void *(*alloc)(void *opaque, size_t size);
    void (*free)(void *opaque, void *memory);
    /* Called once the pool is gone and nothing it allocated is left: lets a
     * device outlive its context for as long as pictures still use it. */
    void (*release)(void *opaque);
    void *opaque;
    /* The memory is the device's (a CUdeviceptr in a pointer): the host
     * must not touch the samples (picture_on_device()). */
    bool device_memory;
} PictureAllocator;

typedef struct PicturePool PicturePool;

/* keep: how many free buffers the pool holds on to. */
int picture_pool_open(PicturePool **pool, const PictureAllocator *allocator, unsigned keep);

/* Drops the owner's reference: the pool goes once its pictures are back. */
void picture_pool_close(PicturePool **pool);

/* Allocates a picture from the pool (the format may change between calls;
 * buffers of another size are freed). */
int picture_pool_get(PicturePool *pool, QualePicture *pic, const QualeVideoFormat *format);

/* Whether a picture's planes are device memory (from a pool whose
 * allocator says so): only the GPU backend reads them. */
bool picture_on_device(const QualePicture *pic);

/* Whether a picture's memory came from this pool. */
bool picture_from_pool(const QualePicture *pic, const PicturePool *pool);

/* ---- pictures handed to a context ---------------------------------------- */

/*
 * Checks that pic describes a picture of its own format: a valid format,
 * its plane count, every plane's size, a data pointer for every plane, a
 * stride (negative for a bottom-up plane) no shorter than a row, rows that
 * stay inside the address space and, for a picture that owns its memory
 * (buffer != NULL), inside that memory.  The size of borrowed memory
 * cannot be known: the caller vouches for it.  error gets one line.
 */
int picture_check(const QualePicture *pic, char *error, size_t error_size);

/* Whether pic has exactly the layout quale_picture_alloc() gives its
 * format, from the start of a buffer it owns: contiguous planes at
 * QUALE_ALIGNMENT-aligned strides (what the GPU uploads rely on). */
bool picture_is_standard(const QualePicture *pic);

/* Copies src's samples into dst, a picture of the same format. */
void picture_copy_samples(QualePicture *dst, const QualePicture *src);

#endif /* QUALE_SRC_PICTURE_POOL_H */
