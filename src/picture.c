/* Reference-counted planar pictures. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "quale/quale.h"

struct QualePictureBuffer {
    atomic_uint refcount;
    void *memory;
};

void *quale_aligned_alloc(size_t size)
{
    if (size == 0) size = 1;
    if (size > SIZE_MAX - QUALE_ALIGNMENT) return NULL;
    void *p = NULL;
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

int quale_picture_alloc(QualePicture *pic, const QualeVideoFormat *format)
{
    if (!pic) return -EINVAL;
    memset(pic, 0, sizeof(*pic));
    int err = quale_video_format_check(format, NULL, 0);
    if (err) return err;

    pic->format = *format;
    pic->plane_count = format->chroma == QUALE_CHROMA_400 ? 1 : 3;
    plane_sizes(format, pic->plane_width, pic->plane_height);

    const size_t bytes_per_sample = format->bitdepth > 8 ? 2 : 1;
    size_t offset[3], total = 0;
    for (unsigned p = 0; p < pic->plane_count; p++) {
        pic->stride[p] = (ptrdiff_t)quale_align(pic->plane_width[p] * bytes_per_sample,
                                                QUALE_ALIGNMENT);
        offset[p] = total;
        total += (size_t)pic->stride[p] * pic->plane_height[p];
    }

    struct QualePictureBuffer *buffer = malloc(sizeof(*buffer));
    if (!buffer) return -ENOMEM;
    buffer->memory = quale_aligned_alloc(total);
    if (!buffer->memory) {
        free(buffer);
        return -ENOMEM;
    }
    atomic_init(&buffer->refcount, 1);
    pic->buffer = buffer;
    for (unsigned p = 0; p < pic->plane_count; p++)
        pic->data[p] = (uint8_t *)buffer->memory + offset[p];
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
        quale_aligned_free(buffer->memory);
        free(buffer);
    }
    memset(pic, 0, sizeof(*pic));
}
