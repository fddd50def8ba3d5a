/* Reference-counted planar pictures. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <pthread.h>

#include "common.h"
#include "picture_pool.h"
#include "quale/quale.h"

struct QualePictureBuffer {
    atomic_uint refcount;
    void *memory;
    size_t size;
    PicturePool *pool; /* NULL: plain aligned allocation */
    struct QualePictureBuffer *next_free;
    bool device; /* device memory: the host never reads it */
};

struct PicturePool {
    pthread_mutex_t lock;
    PictureAllocator allocator;
    struct QualePictureBuffer *free_list;
    unsigned free_count, keep;
    unsigned users; /* the owner (until closed) + buffers handed out */
    bool closed;
};

static void pool_release(PicturePool *pool);

/* Buffers of a few MiB (pictures, a metric's planes) come in huge pages
 * where the system gives them on request (Linux's transparent huge pages
 * in "madvise" mode): first touching a 4K picture's 12 MiB then costs 6
 * page faults instead of 3000, which matters most where page faults are
 * slow (virtual machines). */
#define HUGE_PAGE ((size_t)2 << 20)

void *quale_aligned_alloc(size_t size)
{
    if (size == 0) size = 1;
    if (size > SIZE_MAX - HUGE_PAGE) return NULL;
    void *p = NULL;
#if defined(MADV_HUGEPAGE)
    if (size >= HUGE_PAGE) {
        const size_t rounded = quale_align(size, HUGE_PAGE);
        if (posix_memalign(&p, HUGE_PAGE, rounded)) return NULL;
        madvise(p, rounded, MADV_HUGEPAGE); /* advice: its failure changes nothing */
        return p;
    }
#endif
    if (posix_memalign(&p, QUALE_ALIGNMENT, quale_align(size, QUALE_ALIGNMENT)))
        return NULL;
    return p;
}

void quale_aligned_free(void *p)
{
    free(p);
}

const char *quale_chroma_name(enum QualeChroma chroma)
{
    switch (chroma) {
    case QUALE_CHROMA_400: return "4:0:0";
    case QUALE_CHROMA_420: return "4:2:0";
    case QUALE_CHROMA_422: return "4:2:2";
    case QUALE_CHROMA_444: return "4:4:4";
    default: return "unknown chroma";
    }
}

int quale_video_format_check(const QualeVideoFormat *format, char *error,
                             size_t error_size)
{
    const char *why = NULL;
    if (!format)
        why = "no format given";
    else if (format->chroma < QUALE_CHROMA_400 || format->chroma > QUALE_CHROMA_444)
        why = "unknown chroma format";
    else if (format->bitdepth < 8 || format->bitdepth > 16)
        why = "bit depth must be 8 to 16";
    else if (format->width == 0 || format->height == 0)
        why = "width and height must be at least 1";
    else if (format->width > QUALE_MAX_DIMENSION || format->height > QUALE_MAX_DIMENSION)
        why = "width and height must be at most 32768";
    if (!why) return 0;
    if (error && error_size)
        snprintf(error, error_size, "invalid video format: %s", why);
    return -EINVAL;
}

static void plane_sizes(const QualeVideoFormat *f, unsigned w[3], unsigned h[3])
{
    const unsigned ss_x = f->chroma == QUALE_CHROMA_420 || f->chroma == QUALE_CHROMA_422;
    const unsigned ss_y = f->chroma == QUALE_CHROMA_420;
    w[0] = f->width;
    h[0] = f->height;
    for (int p = 1; p < 3; p++) {
        if (f->chroma == QUALE_CHROMA_400) {
            w[p] = h[p] = 0;
            continue;
        }
        w[p] = (f->width + ss_x) >> ss_x;
        h[p] = (f->height + ss_y) >> ss_y;
    }
}

/* Fills the plane layout of pic for format; returns the bytes it needs. */
static size_t picture_layout(QualePicture *pic, const QualeVideoFormat *format, size_t offset[3])
{
    pic->format = *format;
    pic->plane_count = format->chroma == QUALE_CHROMA_400 ? 1 : 3;
    plane_sizes(format, pic->plane_width, pic->plane_height);

    const size_t bytes_per_sample = format->bitdepth > 8 ? 2 : 1;
    size_t total = 0;
    for (unsigned p = 0; p < pic->plane_count; p++) {
        pic->stride[p] = (ptrdiff_t)quale_align(pic->plane_width[p] * bytes_per_sample,
                                                QUALE_ALIGNMENT);
        offset[p] = total;
        total += (size_t)pic->stride[p] * pic->plane_height[p];
    }
    return total;
}

static void attach(QualePicture *pic, struct QualePictureBuffer *buffer, const size_t offset[3])
{
    atomic_init(&buffer->refcount, 1);
    pic->buffer = buffer;
    for (unsigned p = 0; p < pic->plane_count; p++)
        pic->data[p] = (uint8_t *)buffer->memory + offset[p];
}

int quale_picture_alloc(QualePicture *pic, const QualeVideoFormat *format)
{
    if (!pic) return -EINVAL;
    memset(pic, 0, sizeof(*pic));
    int err = quale_video_format_check(format, NULL, 0);
    if (err) return err;
    size_t offset[3];
    const size_t total = picture_layout(pic, format, offset);

    struct QualePictureBuffer *buffer = calloc(1, sizeof(*buffer));
    if (!buffer) return -ENOMEM;
    buffer->memory = quale_aligned_alloc(total);
    if (!buffer->memory) {
        free(buffer);
        memset(pic, 0, sizeof(*pic));
        return -ENOMEM;
    }
    buffer->size = total;
    attach(pic, buffer, offset);
    return 0;
}

int quale_picture_ref(QualePicture *dst, const QualePicture *src)
{
    if (!dst || !src) return -EINVAL;
    if (src->buffer)
        atomic_fetch_add_explicit(&src->buffer->refcount, 1, memory_order_relaxed);
    *dst = *src;
    return 0;
}

void quale_picture_unref(QualePicture *pic)
{
    if (!pic) return;
    struct QualePictureBuffer *buffer = pic->buffer;
    if (buffer &&
        atomic_fetch_sub_explicit(&buffer->refcount, 1, memory_order_acq_rel) == 1) {
        if (buffer->pool) {
            PicturePool *pool = buffer->pool;
            pthread_mutex_lock(&pool->lock);
            const bool keep = !pool->closed && pool->free_count < pool->keep;
            if (keep) {
                buffer->next_free = pool->free_list;
                pool->free_list = buffer;
                pool->free_count++;
            }
            pthread_mutex_unlock(&pool->lock);
            if (!keep) {
                if (pool->allocator.free) pool->allocator.free(pool->allocator.opaque, buffer->memory);
                else quale_aligned_free(buffer->memory);
                free(buffer);
            }
            pool_release(pool);
        } else {
            quale_aligned_free(buffer->memory);
            free(buffer);
        }
    }
    memset(pic, 0, sizeof(*pic));
}

/* ---- pictures handed to a context ---------------------------------------- */

int picture_check(const QualePicture *pic, char *error, size_t error_size)
{
    if (!pic) {
        snprintf(error, error_size, "no picture (NULL)");
        return -EINVAL;
    }
    char why[128];
    if (quale_video_format_check(&pic->format, why, sizeof(why))) {
        snprintf(error, error_size, "%s", why);
        return -EINVAL;
    }
    const QualeVideoFormat *f = &pic->format;
    unsigned w[3], h[3];
    plane_sizes(f, w, h);
    const unsigned planes = f->chroma == QUALE_CHROMA_400 ? 1 : 3;
    if (pic->plane_count != planes) {
        snprintf(error, error_size, "plane_count is %u, but a %s picture has %u", pic->plane_count,
                 quale_chroma_name(f->chroma), planes);
        return -EINVAL;
    }
    const size_t bytes_per_sample = f->bitdepth > 8 ? 2 : 1;
    for (unsigned p = 0; p < planes; p++) {
        if (!pic->data[p]) {
            snprintf(error, error_size, "plane %u has no data (data[%u] is NULL)", p, p);
            return -EINVAL;
        }
        if (pic->plane_width[p] != w[p] || pic->plane_height[p] != h[p]) {
            snprintf(error, error_size, "plane %u is %ux%u, but plane %u of a %ux%u %s picture "
                     "is %ux%u", p, pic->plane_width[p], pic->plane_height[p], p, f->width,
                     f->height, quale_chroma_name(f->chroma), w[p], h[p]);
            return -EINVAL;
        }
        /* The bytes the plane spans: rows of `row` bytes, `stride` apart,
         * upwards in memory for a negative stride (a bottom-up picture). */
        const size_t row = w[p] * bytes_per_sample;
        const ptrdiff_t stride = pic->stride[p];
        const size_t step = stride < 0 ? (size_t)0 - (size_t)stride : (size_t)stride;
        if (step < row) {
            snprintf(error, error_size, "plane %u's stride is %td bytes, less than its rows "
                     "of %zu bytes", p, stride, row);
            return -EINVAL;
        }
        /* No picture's row is longer than 16 MiB (32768 samples of 2 bytes,
         * even interleaved): a larger stride is a mistake, and with it the
         * rows of borrowed memory could reach anywhere. */
        if (step > QUALE_MAX_STRIDE) {
            snprintf(error, error_size, "plane %u's stride of %td bytes is larger than any "
                     "picture's row (at most %d bytes)", p, stride, QUALE_MAX_STRIDE);
            return -EINVAL;
        }
        const uintptr_t start = (uintptr_t)pic->data[p];
        const size_t rows = h[p] - 1;
        const size_t span = rows * step + row;
        const uintptr_t low = stride < 0 ? start - rows * step : start;
        if ((stride < 0 && start < rows * step) || low > UINTPTR_MAX - span) {
            snprintf(error, error_size, "plane %u's rows (stride %td bytes) run past the end "
                     "of the address space", p, stride);
            return -EINVAL;
        }
        const struct QualePictureBuffer *b = pic->buffer;
        if (b) {
            /* The picture owns its memory: every row must lie inside it. */
            const uintptr_t mem = (uintptr_t)b->memory;
            if (low < mem || low - mem > b->size || span > b->size - (low - mem)) {
                snprintf(error, error_size, "plane %u (%zu bytes from data[%u], stride %td) "
                         "lies outside the picture's buffer of %zu bytes", p, span, p, stride,
                         b->size);
                return -EINVAL;
            }
        }
    }
    return 0;
}

bool picture_is_standard(const QualePicture *pic)
{
    if (!pic->buffer) return false;
    QualePicture layout;
    size_t offset[3];
    const size_t total = picture_layout(&layout, &pic->format, offset);
    if (total > pic->buffer->size) return false;
    for (unsigned p = 0; p < layout.plane_count; p++) {
        if (pic->data[p] != (uint8_t *)pic->buffer->memory + offset[p] ||
            pic->stride[p] != layout.stride[p])
            return false;
    }
    return true;
}

void picture_copy_samples(QualePicture *dst, const QualePicture *src)
{
    const size_t bytes_per_sample = src->format.bitdepth > 8 ? 2 : 1;
    for (unsigned p = 0; p < src->plane_count; p++) {
        const size_t row = src->plane_width[p] * bytes_per_sample;
        for (unsigned y = 0; y < src->plane_height[p]; y++)
            memcpy((uint8_t *)dst->data[p] + (ptrdiff_t)y * dst->stride[p],
                   (const uint8_t *)src->data[p] + (ptrdiff_t)y * src->stride[p], row);
    }
}

/* ---- pools -------------------------------------------------------------- */

static void free_buffer_memory(PicturePool *pool, struct QualePictureBuffer *b)
{
    if (pool->allocator.free) pool->allocator.free(pool->allocator.opaque, b->memory);
    else quale_aligned_free(b->memory);
    free(b);
}

int picture_pool_open(PicturePool **out, const PictureAllocator *allocator, unsigned keep)
{
    PicturePool *pool = calloc(1, sizeof(*pool));
    if (!pool) return -ENOMEM;
    if (pthread_mutex_init(&pool->lock, NULL)) {
        free(pool);
        return -ENOMEM;
    }
    if (allocator) pool->allocator = *allocator;
    pool->keep = keep;
    pool->users = 1;
    *out = pool;
    return 0;
}

/* Drops one user; the last one frees the pool and what it kept. */
static void pool_release(PicturePool *pool)
{
    pthread_mutex_lock(&pool->lock);
    const bool last = --pool->users == 0;
    pthread_mutex_unlock(&pool->lock);
    if (!last) return;
    while (pool->free_list) {
        struct QualePictureBuffer *b = pool->free_list;
        pool->free_list = b->next_free;
        free_buffer_memory(pool, b);
    }
    if (pool->allocator.release) pool->allocator.release(pool->allocator.opaque);
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

void picture_pool_close(PicturePool **pool)
{
    if (!pool || !*pool) return;
    PicturePool *p = *pool;
    *pool = NULL;
    /* Free what is kept now: nothing returns to a closed pool. */
    pthread_mutex_lock(&p->lock);
    p->closed = true;
    struct QualePictureBuffer *list = p->free_list;
    p->free_list = NULL;
    p->free_count = 0;
    pthread_mutex_unlock(&p->lock);
    while (list) {
        struct QualePictureBuffer *b = list;
        list = b->next_free;
        free_buffer_memory(p, b);
    }
    pool_release(p);
}

int picture_pool_get(PicturePool *pool, QualePicture *pic, const QualeVideoFormat *format)
{
    if (!pool || !pic) return -EINVAL;
    memset(pic, 0, sizeof(*pic));
    int err = quale_video_format_check(format, NULL, 0);
    if (err) return err;
    size_t offset[3];
    const size_t total = picture_layout(pic, format, offset);

    struct QualePictureBuffer *buffer = NULL, *stale = NULL;
    pthread_mutex_lock(&pool->lock);
    while (pool->free_list && !buffer) {
        struct QualePictureBuffer *b = pool->free_list;
        pool->free_list = b->next_free;
        pool->free_count--;
        if (b->size == total) {
            buffer = b;
        } else {
            b->next_free = stale; /* the format changed: free it below */
            stale = b;
        }
    }
    pool->users++;
    pthread_mutex_unlock(&pool->lock);
    while (stale) {
        struct QualePictureBuffer *b = stale;
        stale = b->next_free;
        free_buffer_memory(pool, b);
    }

    if (!buffer) {
        buffer = calloc(1, sizeof(*buffer));
        if (buffer) {
            buffer->memory = pool->allocator.alloc ? pool->allocator.alloc(pool->allocator.opaque, total)
                                                   : quale_aligned_alloc(total);
            if (!buffer->memory) {
                free(buffer);
                buffer = NULL;
            }
        }
        if (!buffer) {
            pool_release(pool);
            memset(pic, 0, sizeof(*pic));
            return -ENOMEM;
        }
        buffer->size = total;
        buffer->pool = pool;
        buffer->device = pool->allocator.device_memory;
    }
    attach(pic, buffer, offset);
    return 0;
}

bool picture_on_device(const QualePicture *pic)
{
    return pic && pic->buffer && pic->buffer->device;
}

bool picture_from_pool(const QualePicture *pic, const PicturePool *pool)
{
    return pic && pic->buffer && pic->buffer->pool == pool;
}
