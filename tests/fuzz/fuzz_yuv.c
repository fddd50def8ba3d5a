/*
 * Fuzz target: raw yuv sizing and reading.
 *
 * Input: an 8-byte header, then the file's bytes.
 *   [0] chroma: % 6 -> 0 unknown, 1 4:0:0, 2 4:2:0, 3 4:2:2, 4 4:4:4, 5 bogus
 *   [1] bit depth: % 20
 *   [2..3] width, [4..5] height: little-endian, 0 to 65535
 *   [6] planes to read (quale_video_set_planes), [7] unused
 * The format is checked against the documented rules (docs/input.md):
 * open fails with -EINVAL exactly when the format is invalid.  Otherwise
 * the file holds len / frame_size whole frames, each read back sample by
 * sample equal to the file's little-endian samples clamped to the bit
 * depth (and counted), then the clean end (0) or, when bytes are left
 * over, -EPROTO with "frame N is truncated: R of S bytes".  The same runs
 * on a memory stream (skips read) and on a regular file (skips seek) must
 * agree, except that a regular file whose size is no whole number of frames
 * is refused when opened (-EBADMSG), its size being known.  Bytes that
 * start like YUV4MPEG2 are read as that, and a container's signature
 * (MP4, Matroska, IVF, AVI, MPEG-TS) is refused: both as docs/input.md
 * says.  Frames above 4 MiB are only skipped.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "quale/quale.h"

#define FUZZ_MAX_PICTURE_BYTES ((uint64_t)4 << 20)
#define FUZZ_HEADER 8

typedef struct Layout {
    unsigned planes;
    unsigned width[3], height[3];
    uint64_t offset[3];
    uint64_t frame;
    unsigned bps;
} Layout;

/* docs/input.md, independently of src/input. */
static void layout_of(const QualeVideoFormat *f, Layout *l)
{
    memset(l, 0, sizeof(*l));
    l->planes = f->chroma == QUALE_CHROMA_400 ? 1 : 3;
    l->bps = f->bitdepth > 8 ? 2 : 1;
    const unsigned cw = f->chroma == QUALE_CHROMA_444 ? f->width : (f->width + 1) / 2;
    const unsigned ch = f->chroma == QUALE_CHROMA_420 ? (f->height + 1) / 2 : f->height;
    for (unsigned p = 0; p < l->planes; p++) {
        l->width[p] = p ? cw : f->width;
        l->height[p] = p ? ch : f->height;
        l->offset[p] = l->frame;
        l->frame += (uint64_t)l->width[p] * l->height[p] * l->bps;
    }
}

typedef struct Trace {
    int open;
    unsigned frames;
    int end;
    char error[512];
    uint64_t clamped;
} Trace;

/* Reads (or skips) every frame, checking each picture against the bytes. */
static void run(Trace *t, QualeVideoReader *r, const char *name, const QualeVideoFormat *f,
                const Layout *l, unsigned mask, const uint8_t *file, size_t len)
{
    QualeVideoFormat got;
    quale_video_get_format(r, &got);
    FUZZ_CHECK(!memcmp(&got, f, sizeof(got)));

    QualePicture pic;
    memset(&pic, 0, sizeof(pic));
    const bool read = l->frame <= FUZZ_MAX_PICTURE_BYTES && quale_picture_alloc(&pic, f) == 0;
    quale_video_set_planes(r, mask);
    const unsigned max = (1u << f->bitdepth) - 1;
    uint64_t clamped = 0;

    FUZZ_CHECK(quale_video_skip(r, 0) == 1);
    for (;;) {
        const int ret = read ? quale_video_read(r, &pic) : quale_video_skip(r, 1);
        if (ret != 1) {
            t->end = ret;
            break;
        }
        const uint64_t base = (uint64_t)t->frames * l->frame;
        t->frames++;
        FUZZ_CHECK(base + l->frame <= len);
        if (!read) continue;
        for (unsigned p = 0; p < l->planes; p++) {
            if (!(mask >> p & 1)) continue;
            for (unsigned y = 0; y < l->height[p]; y++) {
                const uint8_t *row = (const uint8_t *)pic.data[p] + (size_t)y * (size_t)pic.stride[p];
                const uint8_t *src = file + base + l->offset[p] + (uint64_t)y * l->width[p] * l->bps;
                for (unsigned x = 0; x < l->width[p]; x++) {
                    unsigned want = l->bps == 2 ? (unsigned)src[2 * x] | (unsigned)src[2 * x + 1] << 8
                                                : src[x];
                    if (want > max) {
                        want = max;
                        clamped++;
                    }
                    const unsigned have = l->bps == 2 ? ((const uint16_t *)(const void *)row)[x]
                                                      : row[x];
                    FUZZ_CHECK(have == want);
                }
            }
        }
    }
    quale_picture_unref(&pic);

    /* Whole frames, then the end or a truncation of the rest. */
    const uint64_t whole = len / l->frame, rest = len % l->frame;
    /* The planes of a truncated frame that were there whole have been
     * read (and clamped, and counted) before its end was found. */
    for (unsigned p = 0; read && rest && p < l->planes; p++) {
        const uint64_t plane = (uint64_t)l->width[p] * l->height[p] * l->bps;
        if (l->offset[p] + plane > rest) break;
        if (!(mask >> p & 1) || l->bps == 1) continue;
        const uint8_t *src = file + whole * l->frame + l->offset[p];
        for (uint64_t i = 0; i < plane; i += 2)
            clamped += ((unsigned)src[i] | (unsigned)src[i + 1] << 8) > max;
    }
    FUZZ_CHECK(t->frames == whole);
    if (rest == 0) {
        FUZZ_CHECK(t->end == 0);
    } else {
        FUZZ_CHECK(t->end == -EPROTO);
        char want[256];
        snprintf(want, sizeof(want), "%s: frame %u is truncated: %llu of %llu bytes", name,
                 t->frames, (unsigned long long)rest, (unsigned long long)l->frame);
        FUZZ_CHECK(!strcmp(quale_video_error(r), want));
        snprintf(t->error, sizeof(t->error), "%s", quale_video_error(r) + strlen(name));
    }
    /* The end and errors stick. */
    FUZZ_CHECK(quale_video_skip(r, 3) == t->end);
    t->clamped = quale_video_clamped_samples(r);
    if (read) FUZZ_CHECK(t->clamped == clamped);
}

typedef enum Kind { RAW, Y4M, COMPRESSED } Kind;

/* docs/input.md's signatures, independently of src/input. */
static Kind kind_of(const uint8_t *b, size_t n)
{
    if (n >= 10 && !memcmp(b, "YUV4MPEG2", 9) && (b[9] == ' ' || b[9] == '\n')) return Y4M;
    if (n >= 12 && !memcmp(b + 4, "ftyp", 4)) return COMPRESSED;
    if (n >= 4 && !memcmp(b, "\x1a\x45\xdf\xa3", 4)) return COMPRESSED;
    if (n >= 32 && !memcmp(b, "DKIF", 4)) return COMPRESSED;
    if (n >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "AVI ", 4)) return COMPRESSED;
    if (n >= 380 && b[0] == 0x47 && b[188] == 0x47 && b[376] == 0x47 &&
        (b[1] != 0x47 || b[2] != 0x47 || b[3] != 0x47))
        return COMPRESSED;
    return RAW;
}

int quale_fuzz_yuv(const uint8_t *data, size_t size)
{
    if (size < FUZZ_HEADER) return 0;
    static const enum QualeChroma chromas[6] = {
        QUALE_CHROMA_UNKNOWN, QUALE_CHROMA_400, QUALE_CHROMA_420,
        QUALE_CHROMA_422, QUALE_CHROMA_444, (enum QualeChroma)99,
    };
    const QualeVideoFormat f = {
        .chroma = chromas[data[0] % 6],
        .bitdepth = data[1] % 20u,
        .width = (unsigned)data[2] | (unsigned)data[3] << 8,
        .height = (unsigned)data[4] | (unsigned)data[5] << 8,
    };
    const unsigned mask = data[6];
    const uint8_t *file = data + FUZZ_HEADER;
    const size_t len = size - FUZZ_HEADER;
    const bool valid = f.chroma >= QUALE_CHROMA_400 && f.chroma <= QUALE_CHROMA_444 &&
                       f.bitdepth >= 8 && f.bitdepth <= 16 && f.width >= 1 &&
                       f.width <= 32768 && f.height >= 1 && f.height <= 32768;
    Layout l;
    if (valid) layout_of(&f, &l);
    const unsigned read_mask = valid ? mask & ((1u << l.planes) - 1) : 0;

    static char empty[1];
    char error[1024];
    Trace a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));

    const Kind kind = kind_of(file, len);
    FILE *s = fmemopen(len ? (void *)(uintptr_t)file : empty, len, "rb");
    if (!s) return 0;
    QualeVideoReader *r = NULL;
    a.open = quale_video_open_stream(&r, s, "fuzz", &f, error, sizeof(error));
    if (!valid) {
        FUZZ_CHECK(a.open == -EINVAL);
    } else if (kind == COMPRESSED) {
        FUZZ_CHECK(a.open == -EPROTONOSUPPORT && strstr(error, "decode it first"));
    } else if (kind == RAW) {
        FUZZ_CHECK(a.open == 0);
    }
    if (a.open) {
        FUZZ_CHECK(r == NULL && error[0] && fuzz_printable(error));
    } else if (kind == Y4M) {
        FUZZ_CHECK(quale_video_is_y4m(r) == 1);
    } else {
        FUZZ_CHECK(quale_video_is_y4m(r) == 0);
        run(&a, r, "fuzz", &f, &l, read_mask, file, len);
    }
    quale_video_close(&r);
    fclose(s);
    /* YUV4MPEG2 is fuzz_y4m's. */
    if (!valid || kind != RAW) return 0;

    char path[64];
    const int fd = fuzz_memfd(file, len, path, sizeof(path));
    if (fd < 0) return 0;
    b.open = quale_video_open(&r, path, &f, error, sizeof(error));
    if (len % l.frame) {
        char want[256];
        snprintf(want, sizeof(want), "%s: %llu bytes are not a whole number of ", path,
                 (unsigned long long)len);
        FUZZ_CHECK(b.open == -EBADMSG && r == NULL && !strncmp(error, want, strlen(want)));
        close(fd);
        return 0;
    }
    FUZZ_CHECK(b.open == 0);
    run(&b, r, path, &f, &l, read_mask, file, len);
    quale_video_close(&r);
    close(fd);

    FUZZ_CHECK(a.frames == b.frames && a.end == b.end && a.clamped == b.clamped);
    FUZZ_CHECK(!strcmp(a.error, b.error));
    return 0;
}

FUZZ_TARGET(quale_fuzz_yuv)
