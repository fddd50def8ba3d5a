/*
 * Fuzz target: quale_send_pictures() with any picture a caller can build.
 *
 * The input is a little program: a format, then up to three frames, each
 * two pictures described by bytes (owned or borrowed memory, plane count,
 * plane sizes, strides, where each plane starts, NULL planes, the same
 * picture as both inputs).  Owned pictures come from quale_picture_alloc()
 * (of the declared format or another) and have their fields changed after;
 * the library sees the buffer and must refuse any plane outside it (ASan
 * reports a read past it).  Borrowed pictures point into a buffer the
 * target sizes to the plane's claimed rows, with unreadable pages on both
 * sides: the library cannot know a borrowed size, so the target only
 * claims rows it has; what the library must still refuse there is a plane
 * that does not match the format, a stride shorter than a row, and rows
 * beyond the address space.
 *
 * Checks: every call returns 0 or a negative errno with an error logged;
 * the caller's pictures are cleared either way; a refused picture is never
 * read; the frames accepted are scored (psnr with chroma, and motion,
 * which keeps pictures for the next frame) and their results written.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "quale/quale.h"

typedef struct Reader {
    const uint8_t *data;
    size_t size, at;
} Reader;

static unsigned byte(Reader *r)
{
    return r->at < r->size ? r->data[r->at++] : 0;
}

static unsigned u16(Reader *r)
{
    const unsigned lo = byte(r);
    return lo | byte(r) << 8;
}

/* ---- guarded memory for borrowed planes ---------------------------------- */

typedef struct Guarded {
    uint8_t *map;
    size_t map_size;
} Guarded;

/* size bytes with an inaccessible page before and after; NULL if too big. */
static uint8_t *guarded_alloc(Guarded *g, size_t size)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t body = (size + page - 1) / page * page;
    g->map_size = body + 2 * page;
    g->map = mmap(NULL, g->map_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g->map == MAP_FAILED) {
        g->map = NULL;
        return NULL;
    }
    if (mprotect(g->map + page, body, PROT_READ | PROT_WRITE)) {
        munmap(g->map, g->map_size);
        g->map = NULL;
        return NULL;
    }
    /* The plane ends where the readable pages end: one byte more is a fault. */
    uint8_t *start = g->map + page + (body - size);
    memset(start, 0x41, size);
    return start;
}

static void guarded_free(Guarded *g)
{
    if (g->map) munmap(g->map, g->map_size);
    g->map = NULL;
}

/* ---- building pictures -------------------------------------------------- */

/* The library's limit on a stride (src/common.h's QUALE_MAX_STRIDE: the
 * public API documents it). */
#define QUALE_MAX_STRIDE_BYTES ((size_t)1 << 24)

static const enum QualeChroma chromas[] = {
    QUALE_CHROMA_420, QUALE_CHROMA_422, QUALE_CHROMA_444, QUALE_CHROMA_400,
    QUALE_CHROMA_UNKNOWN, (enum QualeChroma)7,
};

static void plane_size(const QualeVideoFormat *f, unsigned p, unsigned *w, unsigned *h)
{
    const bool sx = f->chroma == QUALE_CHROMA_420 || f->chroma == QUALE_CHROMA_422;
    const bool sy = f->chroma == QUALE_CHROMA_420;
    *w = p ? (f->width + sx) >> sx : f->width;
    *h = p ? (f->height + sy) >> sy : f->height;
}

typedef struct Built {
    QualePicture pic;
    Guarded guard[3];
    bool owned;
} Built;

/* A stride from a byte: the row itself, padded, odd, negative, zero, too
 * short, or huge. */
static ptrdiff_t pick_stride(Reader *r, size_t row, ptrdiff_t natural)
{
    const unsigned kind = byte(r) % 10;
    switch (kind) {
    case 0: return natural;
    case 1: return (ptrdiff_t)row;
    case 2: return (ptrdiff_t)row + (ptrdiff_t)(byte(r) % 64);
    case 3: return -(ptrdiff_t)row - (ptrdiff_t)(byte(r) % 8);
    case 4: return 0;
    case 5: return (ptrdiff_t)row - 1 - (ptrdiff_t)(byte(r) % 4);
    case 6: return PTRDIFF_MAX / (1 + byte(r));
    case 7: return PTRDIFF_MIN / (1 + byte(r));
    case 8: return (ptrdiff_t)u16(r) - 32768;
    default: return natural;
    }
}

static void build(Reader *r, const QualeVideoFormat *declared, Built *b)
{
    memset(b, 0, sizeof(*b));
    const unsigned how = byte(r);
    b->owned = how & 1;
    /* The format the memory is made for: the declared one, or another
     * (the planes then disagree with what the picture says). */
    QualeVideoFormat made = *declared;
    if (how & 2) {
        made.width = 1 + byte(r) % 80;
        made.height = 1 + byte(r) % 80;
        made.chroma = chromas[byte(r) % 4];
        made.bitdepth = 8 + byte(r) % 9;
    }
    if (quale_video_format_check(&made, NULL, 0)) made = (QualeVideoFormat){ QUALE_CHROMA_420, 8, 2, 2 };
    QualePicture *pic = &b->pic;
    if (b->owned) {
        if (quale_picture_alloc(pic, &made)) return;
    } else {
        pic->plane_count = made.chroma == QUALE_CHROMA_400 ? 1 : 3;
        const size_t bps = made.bitdepth > 8 ? 2 : 1;
        for (unsigned p = 0; p < pic->plane_count; p++) {
            plane_size(&made, p, &pic->plane_width[p], &pic->plane_height[p]);
            pic->stride[p] = (ptrdiff_t)(pic->plane_width[p] * bps);
        }
    }
    pic->format = *declared;

    /* Field by field, as a careless caller might set them. */
    for (unsigned p = 0; p < 3; p++) {
        const unsigned change = byte(r);
        const size_t bps = declared->bitdepth > 8 ? 2 : 1;
        if (change & 1) pic->plane_width[p] = change & 2 ? 5000 : u16(r) % 100;
        if (change & 4) pic->plane_height[p] = u16(r) % 100;
        const size_t row = (size_t)pic->plane_width[p] * bps;
        if (change & 8) pic->stride[p] = pick_stride(r, row, pic->stride[p]);
        if (b->owned) {
            /* Moved by an integer, not pointer arithmetic: it may leave the
             * buffer, and the library must see that without using it. */
            if ((change & 16) && pic->data[p])
                pic->data[p] = (void *)((uintptr_t)pic->data[p] + (uintptr_t)((intptr_t)u16(r) - 32768));
            if (change & 32) pic->data[p] = NULL;
        }
    }
    if (byte(r) & 1) pic->plane_count = byte(r) % 5;

    if (!b->owned) {
        /* Memory for the rows each plane claims, when it is plausible; a
         * plane whose rows reach past the address space keeps a pointer
         * that must never be read. */
        for (unsigned p = 0; p < 3 && p < pic->plane_count; p++) {
            const size_t bps = declared->bitdepth > 8 ? 2 : 1;
            const size_t row = (size_t)pic->plane_width[p] * bps;
            const ptrdiff_t stride = pic->stride[p];
            const size_t step = stride < 0 ? (size_t)0 - (size_t)stride : (size_t)stride;
            const size_t rows = pic->plane_height[p] ? pic->plane_height[p] - 1 : 0;
            if (byte(r) % 16 == 0) continue; /* NULL */
            if (step > QUALE_MAX_STRIDE_BYTES) {
                /* No picture has such a stride: the library must refuse
                 * it without reading, so a little memory is enough. */
                uint8_t *mem = guarded_alloc(&b->guard[p], 1);
                if (mem) pic->data[p] = mem;
                continue;
            }
            if (rows && step > ((size_t)1 << 24) / rows) {
                /* Plausible but too big to give memory to here. */
                pic->stride[p] = stride < 0 ? -(ptrdiff_t)row : (ptrdiff_t)row;
            }
            const size_t step2 = pic->stride[p] < 0 ? (size_t)0 - (size_t)pic->stride[p]
                                                     : (size_t)pic->stride[p];
            const size_t span = rows * step2 + (row ? row : 1);
            uint8_t *mem = guarded_alloc(&b->guard[p], span);
            if (!mem) continue;
            pic->data[p] = pic->stride[p] < 0 ? mem + rows * step2 : mem;
        }
    }
}

static void release(Built *b)
{
    if (b->owned) {
        /* A refused or sent picture was unreferenced by the library (the
         * struct is cleared); one never sent still holds its reference. */
        quale_picture_unref(&b->pic);
    }
    for (unsigned p = 0; p < 3; p++) guarded_free(&b->guard[p]);
}

/* ---- the target --------------------------------------------------------- */

typedef struct Log {
    unsigned errors;
} Log;

static void count_errors(void *cookie, enum QualeLogLevel level, const char *message)
{
    (void)message;
    if (level == QUALE_LOG_ERROR) ((Log *)cookie)->errors++;
}

int quale_fuzz_pictures(const uint8_t *data, size_t size)
{
    Reader r = { data, size, 0 };
    QualeVideoFormat format = {
        .chroma = chromas[byte(&r) % 6],
        .bitdepth = 6 + byte(&r) % 12,
        .width = u16(&r) % 72,
        .height = u16(&r) % 72,
    };
    if (byte(&r) == 0xff) format.width = 40000;

    Log log = { 0 };
    QualeSettings settings;
    quale_settings_default(&settings);
    settings.threads = 1 + byte(&r) % 3;
    settings.log = count_errors;
    settings.log_cookie = &log;
    QualeContext *ctx = NULL;
    FUZZ_CHECK(quale_open(&ctx, &settings) == 0);
    FUZZ_CHECK(quale_use_metric(ctx, "psnr=enable_chroma=true") == 0);
    FUZZ_CHECK(quale_use_metric(ctx, "motion") == 0);

    const unsigned frames = 1 + byte(&r) % 3;
    unsigned accepted = 0;
    for (unsigned i = 0; i < frames; i++) {
        Built ref, dist;
        build(&r, &format, &ref);
        const bool same = byte(&r) % 8 == 0;
        if (!same) build(&r, &format, &dist);
        const unsigned errors = log.errors;
        const int err = quale_send_pictures(ctx, &ref.pic, same ? &ref.pic : &dist.pic);
        FUZZ_CHECK(err == 0 || err == -EINVAL || err == -ENOMEM);
        if (err) FUZZ_CHECK(log.errors > errors);
        else accepted++;
        FUZZ_CHECK(ref.pic.data[0] == NULL && ref.pic.buffer == NULL);
        if (!same) FUZZ_CHECK(dist.pic.data[0] == NULL && dist.pic.buffer == NULL);
        release(&ref);
        if (!same) release(&dist);
        if (err && err != -EINVAL) break;
    }
    const int flushed = quale_flush(ctx);
    if (accepted) {
        /* Frames that were taken are scored (a metric may still refuse a
         * format it cannot score, with a message). */
        FUZZ_CHECK(flushed == 0 || log.errors > 0);
        if (flushed == 0) {
            FILE *out = fopen("/dev/null", "w");
            FUZZ_CHECK(out != NULL);
            FUZZ_CHECK(quale_write_output(ctx, out, QUALE_OUTPUT_JSON, NULL) == 0);
            fclose(out);
        }
    } else {
        FUZZ_CHECK(flushed != 0);
    }
    quale_close(&ctx);
    return 0;
}

FUZZ_TARGET(quale_fuzz_pictures)
