/*
 * Raw planar yuv: the payload of every frame, for raw .yuv files and for
 * y4m (after its FRAME line).  Planes are stored one after the other, rows
 * packed, samples above 8 bits as 2 bytes little-endian.
 *
 * Speed: each wanted plane is read with one fread() straight into the
 * picture's memory, rows packed, and then spread out to the picture's
 * stride in place (last row first, so no row is overwritten before it has
 * moved).  When the stride equals the row size, which it does for the usual
 * widths (multiples of 64 bytes), there is no copy at all.  The only other
 * pass is for 9 to 15 bits, a read-only OR over the samples to look for
 * out-of-range values; 8 and 16 bits on little-endian hosts need none.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common.h"
#include "input/reader.h"

/* Skipped bytes of a pipe are read in pieces of this size. */
#define SCRATCH_SIZE (256u * 1024u)

/* Seeks are made in steps that fit a 32-bit off_t. */
#define MAX_SEEK_STEP (1u << 30)

int yuv_open(struct QualeVideoReader *r, const QualeVideoFormat *format)
{
    return video_reader_set_layout(r, format, 0);
}

/* Folded to a constant by the compiler; unlike byte order macros it needs
 * no per-compiler detection, and both branches stay compiled and checked. */
static inline int host_is_big_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 0;
}

static int read_error(struct QualeVideoReader *r)
{
    const int e = errno ? errno : EIO;
    return video_reader_fail(r, -EIO, "read error in frame %llu: %s",
                             (unsigned long long)r->frame, strerror(e));
}

static int truncated(struct QualeVideoReader *r, uint64_t got)
{
    return video_reader_fail(r, -EPROTO, "frame %llu is truncated: %llu of %llu bytes",
                             (unsigned long long)r->frame, (unsigned long long)got,
                             (unsigned long long)r->frame_bytes);
}

/* Skips n bytes; *done says how many were there before the end of the
 * file.  Returns 0, or a negative errno for an I/O error. */
static int skip_bytes(struct QualeVideoReader *r, uint64_t n, uint64_t *done)
{
    *done = 0;
    if (r->seekable) {
        /* fseek() past the end "succeeds", so bound the skip by the file
         * size, read again each time: the file may be growing, or cut
         * short under us (one fstat() per skipped plane costs nothing
         * beside the frame). */
        struct stat st;
        if (fstat(fileno(r->file), &st) == 0) r->file_size = (uint64_t)st.st_size;
        const uint64_t left = r->file_size > r->position ? r->file_size - r->position : 0;
        uint64_t todo = QUALE_MIN(n, left);
        while (todo) {
            const uint64_t step = QUALE_MIN(todo, (uint64_t)MAX_SEEK_STEP);
            errno = 0;
            if (fseeko(r->file, (off_t)step, SEEK_CUR) != 0) return read_error(r);
            r->position += step;
            *done += step;
            todo -= step;
        }
        return 0;
    }

    if (!r->scratch) {
        r->scratch = malloc(SCRATCH_SIZE);
        if (!r->scratch)
            return video_reader_fail(r, -ENOMEM, "out of memory");
        r->scratch_size = SCRATCH_SIZE;
    }
    while (*done < n) {
        const size_t want = (size_t)QUALE_MIN(n - *done, (uint64_t)r->scratch_size);
        errno = 0;
        const size_t got = reader_read(r, r->scratch, want);
        r->position += got;
        *done += got;
        if (got < want) return ferror(r->file) ? read_error(r) : 0;
    }
    return 0;
}

/* Clamps n samples to max (which is 2^bitdepth - 1) and returns how many
 * were above it.  Since max is all ones, "above" is "has a bit outside
 * max": the first loop is a plain OR that vectorizes, and the second runs
 * only for a row that really has such samples. */
static uint64_t clamp_samples(uint16_t *s, size_t n, uint16_t max)
{
    uint16_t any = 0;
    for (size_t i = 0; i < n; i++) any |= s[i];
    if (!(any & (uint16_t)~max)) return 0;
    uint64_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] > max) {
            s[i] = max;
            count++;
        }
    }
    return count;
}

static void swap_samples(uint16_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) s[i] = (uint16_t)(s[i] >> 8 | s[i] << 8);
}

/* Samples from the file to samples in memory, in place: byte order,
 * clamped to the file's depth, shifted to the pictures' depth. */
static void convert_samples(struct QualeVideoReader *r, uint16_t *s, size_t n,
                            int swap)
{
    if (swap) swap_samples(s, n);
    if (r->file_bitdepth < 16)
        r->clamped += clamp_samples(s, n, (uint16_t)((1u << r->file_bitdepth) - 1));
    if (r->shift)
        for (size_t i = 0; i < n; i++) s[i] = (uint16_t)(s[i] << r->shift);
}

/* 8-bit samples of a file delivered deeper: the plane's rows, packed from
 * its start, widened to 16 bits at the picture's stride and shifted.  From
 * the last sample back, each target lies at or after its source, past
 * every source not read yet. */
static void widen_plane(struct QualeVideoReader *r, QualePicture *pic, unsigned p)
{
    const uint8_t *src = pic->data[p];
    uint8_t *base = pic->data[p];
    const size_t width = r->plane_width[p], stride = (size_t)pic->stride[p];
    for (size_t y = r->plane_height[p]; y-- > 0;) {
        uint16_t *out = (uint16_t *)(void *)(base + y * stride);
        const uint8_t *in = src + y * width;
        for (size_t x = width; x-- > 0;) out[x] = (uint16_t)(in[x] << r->shift);
    }
}

/* The plane holds its rows packed from its start: spread them to the
 * picture's stride, then convert the samples. */
static void finish_plane(struct QualeVideoReader *r, QualePicture *pic, unsigned p)
{
    uint8_t *base = pic->data[p];
    const size_t row = r->row_bytes[p];
    const size_t stride = (size_t)pic->stride[p];
    const unsigned height = r->plane_height[p];
    if (r->bytes_per_sample == 1 && r->shift) {
        widen_plane(r, pic, p);
        return;
    }

    /* Row y moves from y * row to y * stride >= y * row.  Going from the
     * last row up, its target only overlaps rows already moved (or itself,
     * which memmove handles). */
    if (stride != row) {
        for (unsigned y = height - 1; y > 0; y--)
            memmove(base + (size_t)y * stride, base + (size_t)y * row, row);
    }

    if (r->bytes_per_sample == 1) return;
    const int swap = host_is_big_endian();
    if (!swap && r->file_bitdepth == 16) return;
    const size_t width = r->plane_width[p];
    if (stride == row) {
        convert_samples(r, (uint16_t *)(void *)base, width * height, swap);
    } else {
        for (unsigned y = 0; y < height; y++)
            convert_samples(r, (uint16_t *)(void *)(base + (size_t)y * stride), width, swap);
    }
}

int yuv_read_payload(struct QualeVideoReader *r, QualePicture *pic, int at_frame_start)
{
    uint64_t got = 0; /* bytes of this frame found in the file */
    for (unsigned p = 0; p < r->file_planes; p++) {
        const uint64_t bytes = r->plane_bytes[p];
        const int wanted = pic && p < r->plane_count && (r->plane_mask >> p & 1);
        if (wanted) {
            errno = 0;
            /* set_layout made sure a plane's size fits size_t. */
            const size_t n = reader_read(r, pic->data[p], (size_t)bytes);
            r->position += n;
            got += n;
            if (n < bytes) {
                if (ferror(r->file)) return read_error(r);
                goto short_frame;
            }
            finish_plane(r, pic, p);
        } else {
            uint64_t done;
            const int err = skip_bytes(r, bytes, &done);
            got += done;
            if (err) return err;
            if (done < bytes) goto short_frame;
        }
    }
    return 1;

short_frame:
    /* Nothing of a raw frame at all is the end of the file; anything else
     * is a file cut short, which must not pass as a (partial) frame. */
    if (got == 0 && at_frame_start) return 0;
    return truncated(r, got);
}
