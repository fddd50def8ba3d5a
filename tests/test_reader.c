/*
 * Tests of the y4m and raw yuv readers (src/input/).
 *
 * Every test writes its input itself (files under $TMPDIR or /tmp, pipes,
 * memory streams) from a sample pattern that depends on frame, plane, x and
 * y, and checks the pictures read back sample by sample, so a reader that
 * reads the wrong bytes, rounds chroma sizes the wrong way, or loses its
 * place between frames fails.  Output: one line per failed check, then
 * "N passed, M failed"; the exit status is non-zero if any check failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "input/av1_header.h"
#include "quale/quale.h"

static unsigned passed, failed;

static void check_impl(int ok, const char *file, int line, const char *expr,
                       const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "%s:%d: check failed: %s: ", file, line, expr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

#define CHECK(cond, ...) check_impl(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)

/* ---------------------------------------------------------------------- */
/* Byte buffers and temporary files                                        */

typedef struct Buf {
    unsigned char *p;
    size_t n, cap;
} Buf;

static void buf_put(Buf *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void buf_str(Buf *b, const char *s)
{
    buf_put(b, s, strlen(s));
}

static void buf_printf(Buf *b, const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(line)) {
        fprintf(stderr, "buf_printf: line too long\n");
        exit(2);
    }
    buf_put(b, line, (size_t)n);
}

static void buf_free(Buf *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

#define MAX_TEMP_FILES 1024
static char *temp_files[MAX_TEMP_FILES];
static unsigned temp_count;

static void remove_temp_files(void)
{
    for (unsigned i = 0; i < temp_count; i++) {
        unlink(temp_files[i]);
        free(temp_files[i]);
    }
    temp_count = 0;
}

/* Writes data to a new temporary file and returns its path. */
static const char *temp_write(const void *data, size_t n)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    char *path = malloc(strlen(dir) + 32);
    if (!path || temp_count == MAX_TEMP_FILES) {
        fprintf(stderr, "temp_write: out of memory or files\n");
        exit(2);
    }
    sprintf(path, "%s/quale_reader_XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        exit(2);
    }
    const unsigned char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) {
            perror("write");
            exit(2);
        }
        p += w;
        n -= (size_t)w;
    }
    close(fd);
    temp_files[temp_count++] = path;
    return path;
}

/* ---------------------------------------------------------------------- */
/* Sample patterns                                                         */

/* A value that differs between neighbouring samples, planes and frames. */
static unsigned pattern(unsigned frame, unsigned plane, unsigned x, unsigned y,
                        unsigned depth)
{
    uint32_t v = frame * 97u + plane * 1031u + x * 7u + y * 131u + (x ^ y) * 13u;
    v ^= v >> 5;
    v *= 2654435761u;
    v ^= v >> 15;
    return v & ((1u << depth) - 1);
}

/* Plane sizes computed here independently of the library. */
static void plane_dims(const QualeVideoFormat *f, unsigned p, unsigned *w, unsigned *h)
{
    *w = f->width;
    *h = f->height;
    if (p == 1 || p == 2) {
        if (f->chroma == QUALE_CHROMA_420 || f->chroma == QUALE_CHROMA_422)
            *w = (f->width + 1) / 2;
        if (f->chroma == QUALE_CHROMA_420)
            *h = (f->height + 1) / 2;
    }
}

static unsigned picture_planes(const QualeVideoFormat *f)
{
    return f->chroma == QUALE_CHROMA_400 ? 1 : 3;
}

static void put_sample(Buf *b, unsigned v, unsigned depth)
{
    unsigned char s[2] = { (unsigned char)(v & 0xff), (unsigned char)(v >> 8) };
    buf_put(b, s, depth > 8 ? 2 : 1);
}

/* Appends one frame's payload: the picture's planes plus `extra` alpha
 * planes (luma sized, plane index 3). */
static void put_frame(Buf *b, const QualeVideoFormat *f, unsigned frame, unsigned extra)
{
    const unsigned planes = picture_planes(f) + extra;
    for (unsigned p = 0; p < planes; p++) {
        unsigned w, h;
        plane_dims(f, p, &w, &h);
        for (unsigned y = 0; y < h; y++)
            for (unsigned x = 0; x < w; x++)
                put_sample(b, pattern(frame, p, x, y, f->bitdepth), f->bitdepth);
    }
}

static unsigned pic_sample(const QualePicture *pic, unsigned p, unsigned x, unsigned y)
{
    const uint8_t *row = (const uint8_t *)pic->data[p] + (size_t)y * (size_t)pic->stride[p];
    if (pic->format.bitdepth > 8) {
        uint16_t v;
        memcpy(&v, row + 2 * (size_t)x, 2);
        return v;
    }
    return row[x];
}

/* Fills every plane (padding included) with one byte. */
static void fill_picture(QualePicture *pic, unsigned char byte)
{
    for (unsigned p = 0; p < pic->plane_count; p++)
        memset(pic->data[p], byte, (size_t)pic->stride[p] * pic->plane_height[p]);
}

/* Counts the samples of the planes in mask that differ from the pattern of
 * `frame`, and those of the other planes that are not `sentinel` (a byte
 * repeated). */
static unsigned verify_picture(const QualePicture *pic, unsigned frame, unsigned mask,
                               unsigned char sentinel)
{
    const QualeVideoFormat *f = &pic->format;
    const unsigned sentinel_value = f->bitdepth > 8 ? sentinel * 0x101u : sentinel;
    unsigned bad = 0;
    for (unsigned p = 0; p < pic->plane_count; p++) {
        unsigned w, h;
        plane_dims(f, p, &w, &h);
        for (unsigned y = 0; y < h; y++) {
            for (unsigned x = 0; x < w; x++) {
                const unsigned want = (mask >> p & 1) ? pattern(frame, p, x, y, f->bitdepth)
                                                      : sentinel_value;
                const unsigned got = pic_sample(pic, p, x, y);
                if (got != want) {
                    if (!bad)
                        fprintf(stderr, "  frame %u plane %u (%u,%u): got %u, want %u\n",
                                frame, p, x, y, got, want);
                    bad++;
                }
            }
        }
    }
    return bad;
}

static void y4m_header(Buf *b, const QualeVideoFormat *f, const char *ctag)
{
    buf_printf(b, "YUV4MPEG2 W%u H%u F25:1 Ip A1:1 C%s\n", f->width, f->height, ctag);
}

/* A y4m file of `frames` frames with the pattern. */
static void make_y4m(Buf *b, const QualeVideoFormat *f, const char *ctag,
                     unsigned frames, unsigned extra)
{
    y4m_header(b, f, ctag);
    for (unsigned i = 0; i < frames; i++) {
        buf_str(b, "FRAME\n");
        put_frame(b, f, i, extra);
    }
}

static void make_yuv(Buf *b, const QualeVideoFormat *f, unsigned frames)
{
    for (unsigned i = 0; i < frames; i++) put_frame(b, f, i, 0);
}

static size_t frame_size(const QualeVideoFormat *f, unsigned extra)
{
    size_t n = 0;
    for (unsigned p = 0; p < picture_planes(f) + extra; p++) {
        unsigned w, h;
        plane_dims(f, p, &w, &h);
        n += (size_t)w * h * (f->bitdepth > 8 ? 2 : 1);
    }
    return n;
}

static int same_format(const QualeVideoFormat *a, const QualeVideoFormat *b)
{
    return a->chroma == b->chroma && a->bitdepth == b->bitdepth &&
           a->width == b->width && a->height == b->height;
}

/* Reads every frame of r and checks them against the pattern: `frames`
 * pictures, then the clean end (twice, the end must stay the end). */
static void read_all(QualeVideoReader *r, const QualeVideoFormat *f, unsigned frames,
                     const char *what)
{
    QualePicture pic;
    int rc = quale_picture_alloc(&pic, f);
    CHECK(rc == 0, "%s: picture_alloc: %d", what, rc);
    if (rc) return;
    for (unsigned i = 0; i < frames; i++) {
        fill_picture(&pic, 0xA5);
        rc = quale_video_read(r, &pic);
        CHECK(rc == 1, "%s: frame %u: read returned %d (%s)", what, i, rc,
              quale_video_error(r));
        if (rc != 1) break;
        CHECK(verify_picture(&pic, i, 0xf, 0) == 0, "%s: frame %u samples differ", what, i);
    }
    rc = quale_video_read(r, &pic);
    CHECK(rc == 0, "%s: read after the last frame returned %d (%s)", what, rc,
          quale_video_error(r));
    rc = quale_video_read(r, &pic);
    CHECK(rc == 0, "%s: second read after the end returned %d", what, rc);
    CHECK(quale_video_clamped_samples(r) == 0, "%s: %llu samples clamped", what,
          (unsigned long long)quale_video_clamped_samples(r));
    quale_picture_unref(&pic);
}

static void expect_open_error(const void *data, size_t n, const QualeVideoFormat *raw,
                              int want_rc, const char *expect);

static QualeVideoReader *open_file(const char *path, const QualeVideoFormat *raw,
                                   const char *what)
{
    QualeVideoReader *r = (QualeVideoReader *)1; /* must be cleared */
    char err[512] = "untouched";
    int rc = quale_video_open(&r, path, raw, err, sizeof(err));
    CHECK(rc == 0 && r, "%s: open returned %d: %s", what, rc, err);
    if (rc) return NULL;
    CHECK(err[0] == '\0', "%s: error buffer not cleared on success: %s", what, err);
    return r;
}

/* ---------------------------------------------------------------------- */
/* y4m chroma tags                                                          */

static const struct {
    const char *tag;
    enum QualeChroma chroma;
    unsigned depth, alpha;
} y4m_tags[] = {
    { "420jpeg", QUALE_CHROMA_420, 8, 0 },  { "420mpeg2", QUALE_CHROMA_420, 8, 0 },
    { "420paldv", QUALE_CHROMA_420, 8, 0 }, { "420", QUALE_CHROMA_420, 8, 0 },
    { "422", QUALE_CHROMA_422, 8, 0 },      { "444", QUALE_CHROMA_444, 8, 0 },
    { "mono", QUALE_CHROMA_400, 8, 0 },     { "444alpha", QUALE_CHROMA_444, 8, 1 },
    { "420p9", QUALE_CHROMA_420, 9, 0 },    { "422p9", QUALE_CHROMA_422, 9, 0 },
    { "444p9", QUALE_CHROMA_444, 9, 0 },
    { "420p10", QUALE_CHROMA_420, 10, 0 },  { "422p10", QUALE_CHROMA_422, 10, 0 },
    { "444p10", QUALE_CHROMA_444, 10, 0 },  { "420p12", QUALE_CHROMA_420, 12, 0 },
    { "422p12", QUALE_CHROMA_422, 12, 0 },  { "444p12", QUALE_CHROMA_444, 12, 0 },
    { "420p14", QUALE_CHROMA_420, 14, 0 },  { "422p14", QUALE_CHROMA_422, 14, 0 },
    { "444p14", QUALE_CHROMA_444, 14, 0 },  { "420p16", QUALE_CHROMA_420, 16, 0 },
    { "422p16", QUALE_CHROMA_422, 16, 0 },  { "444p16", QUALE_CHROMA_444, 16, 0 },
    { "mono9", QUALE_CHROMA_400, 9, 0 },    { "mono10", QUALE_CHROMA_400, 10, 0 },
    { "mono12", QUALE_CHROMA_400, 12, 0 },  { "mono16", QUALE_CHROMA_400, 16, 0 },
};

/* Odd sizes check the chroma rounding; 64 and 96 wide give rows whose
 * size equals the picture's stride (the copy-free path) for some planes
 * and not for others. */
static const unsigned sizes[][2] = {
    { 17, 9 }, { 1, 1 }, { 33, 65 }, { 64, 3 }, { 96, 2 }, { 2, 1 },
};

static void test_y4m_tags(void)
{
    for (size_t t = 0; t < sizeof(y4m_tags) / sizeof(y4m_tags[0]); t++) {
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            const QualeVideoFormat f = { y4m_tags[t].chroma, y4m_tags[t].depth,
                                         sizes[s][0], sizes[s][1] };
            char what[64];
            snprintf(what, sizeof(what), "y4m C%s %ux%u", y4m_tags[t].tag, f.width, f.height);
            Buf b = { 0 };
            make_y4m(&b, &f, y4m_tags[t].tag, 3, y4m_tags[t].alpha);
            const char *path = temp_write(b.p, b.n);
            buf_free(&b);
            QualeVideoReader *r = open_file(path, NULL, what);
            if (!r) continue;
            QualeVideoFormat got;
            quale_video_get_format(r, &got);
            CHECK(same_format(&got, &f), "%s: format %d %u %ux%u", what, (int)got.chroma,
                  got.bitdepth, got.width, got.height);
            read_all(r, &f, 3, what);
            quale_video_close(&r);
            CHECK(r == NULL, "%s: close did not clear the pointer", what);
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Raw yuv                                                                  */

static void test_raw_formats(void)
{
    static const unsigned depths[] = { 8, 10, 12, 16 };
    static const enum QualeChroma chromas[] = { QUALE_CHROMA_400, QUALE_CHROMA_420,
                                                QUALE_CHROMA_422, QUALE_CHROMA_444 };
    for (size_t d = 0; d < 4; d++) {
        for (size_t c = 0; c < 4; c++) {
            for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
                const QualeVideoFormat f = { chromas[c], depths[d], sizes[s][0], sizes[s][1] };
                char what[64];
                snprintf(what, sizeof(what), "raw chroma %d %u-bit %ux%u", (int)f.chroma,
                         f.bitdepth, f.width, f.height);
                Buf b = { 0 };
                make_yuv(&b, &f, 3);
                CHECK(b.n == 3 * frame_size(&f, 0), "%s: test file size", what);
                const char *path = temp_write(b.p, b.n);
                buf_free(&b);
                QualeVideoReader *r = open_file(path, &f, what);
                if (!r) continue;
                QualeVideoFormat got;
                quale_video_get_format(r, &got);
                CHECK(same_format(&got, &f), "%s: format differs", what);
                read_all(r, &f, 3, what);
                quale_video_close(&r);
            }
        }
    }

    /* Exact sizes of the chroma rounding, checked on the file size the
     * reader expects: 17x9 4:2:0 8-bit is 153 + 2 * 9 * 5 = 243 bytes, so
     * 243 bytes are one frame and 242 a truncated one. */
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 17, 9 };
    unsigned char data[243];
    memset(data, 16, sizeof(data));
    const char *path = temp_write(data, 243);
    QualeVideoReader *r = open_file(path, &f, "raw 243 bytes");
    if (r) {
        CHECK(quale_video_skip(r, 1) == 1, "243 bytes are one 17x9 frame");
        CHECK(quale_video_skip(r, 1) == 0, "and nothing more");
        quale_video_close(&r);
    }
    /* 242 bytes are no whole number of frames: the format given is not
     * the file's, and that is said before any frame is read. */
    expect_open_error(data, 242, &f, -EBADMSG,
                      "242 bytes are not a whole number of 17x9 4:2:0 8-bit frames of 243 bytes "
                      "(0 frames and 242 bytes over)");
}

/* ---------------------------------------------------------------------- */
/* y4m header and frame line variants                                       */

static void test_y4m_variants(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 17, 9 };

    /* Parameters after FRAME, a long one among them; F, I, A and X fields,
     * unknown tags and doubled spaces in the header. */
    {
        Buf b = { 0 };
        buf_str(&b, "YUV4MPEG2  W17 H9 F30000:1001 It A128:117 XCOLORRANGE=FULL Zfuture "
                    "C420jpeg X=odd Ixyz\n");
        buf_str(&b, "FRAME Ip XFOO=bar\n");
        put_frame(&b, &f, 0, 0);
        buf_str(&b, "FRAME ");
        for (int i = 0; i < 300; i++) buf_str(&b, "Xlong=1234 ");
        buf_str(&b, "\n");
        put_frame(&b, &f, 1, 0);
        buf_str(&b, "FRAME\n");
        put_frame(&b, &f, 2, 0);
        const char *path = temp_write(b.p, b.n);
        buf_free(&b);
        QualeVideoReader *r = open_file(path, NULL, "y4m tags and frame params");
        if (r) {
            read_all(r, &f, 3, "y4m tags and frame params");
            quale_video_close(&r);
        }
    }

    /* No C tag: 4:2:0 8-bit. */
    {
        Buf b = { 0 };
        buf_str(&b, "YUV4MPEG2 W17 H9 F25:1\n");
        for (unsigned i = 0; i < 2; i++) {
            buf_str(&b, "FRAME\n");
            put_frame(&b, &f, i, 0);
        }
        const char *path = temp_write(b.p, b.n);
        buf_free(&b);
        QualeVideoReader *r = open_file(path, NULL, "y4m without C");
        if (r) {
            QualeVideoFormat got;
            quale_video_get_format(r, &got);
            CHECK(same_format(&got, &f), "no C tag: chroma %d depth %u", (int)got.chroma,
                  got.bitdepth);
            read_all(r, &f, 2, "y4m without C");
            quale_video_close(&r);
        }
    }

    /* XYSCSS without C; C wins over XYSCSS when both are there; a CRLF
     * header. */
    static const struct {
        const char *tags;
        QualeVideoFormat format;
    } xy[] = {
        { "XYSCSS=420P10", { QUALE_CHROMA_420, 10, 17, 9 } },
        { "XYSCSS=444P12", { QUALE_CHROMA_444, 12, 17, 9 } },
        { "XYSCSS=420JPEG", { QUALE_CHROMA_420, 8, 17, 9 } },
        { "XYSCSS=400", { QUALE_CHROMA_400, 8, 17, 9 } },
        { "C422 XYSCSS=420P10", { QUALE_CHROMA_422, 8, 17, 9 } },
        { "Cmono10 XYSCSS=400", { QUALE_CHROMA_400, 10, 17, 9 } },
        { "C444p16\r", { QUALE_CHROMA_444, 16, 17, 9 } },
    };
    for (size_t i = 0; i < sizeof(xy) / sizeof(xy[0]); i++) {
        Buf b = { 0 };
        buf_printf(&b, "YUV4MPEG2 W17 H9 F25:1 %s\n", xy[i].tags);
        for (unsigned k = 0; k < 2; k++) {
            buf_str(&b, "FRAME\n");
            put_frame(&b, &xy[i].format, k, 0);
        }
        const char *path = temp_write(b.p, b.n);
        buf_free(&b);
        QualeVideoReader *r = open_file(path, NULL, xy[i].tags);
        if (!r) continue;
        QualeVideoFormat got;
        quale_video_get_format(r, &got);
        CHECK(same_format(&got, &xy[i].format), "'%s': chroma %d depth %u", xy[i].tags,
              (int)got.chroma, got.bitdepth);
        if (same_format(&got, &xy[i].format)) read_all(r, &xy[i].format, 2, xy[i].tags);
        quale_video_close(&r);
    }

    /* The largest side is accepted. */
    {
        const char *path = temp_write("YUV4MPEG2 W32768 H1 C444p16\n", 28);
        QualeVideoReader *r = open_file(path, NULL, "W32768");
        if (r) {
            QualeVideoFormat got;
            quale_video_get_format(r, &got);
            CHECK(got.width == 32768 && got.height == 1, "W32768: %ux%u", got.width,
                  got.height);
            CHECK(quale_video_skip(r, 1) == 0, "W32768: no frames");
            quale_video_close(&r);
        }
    }
}

/* ---------------------------------------------------------------------- */
/* End of file and damage                                                   */

/* Reads frames [0, good) which must succeed, then expects an error whose
 * message contains `expect` (and the path), twice (errors stick). */
static void expect_read_error(QualeVideoReader *r, const QualeVideoFormat *f,
                              unsigned good, unsigned mask, const char *path,
                              const char *expect, const char *what)
{
    QualePicture pic;
    if (quale_picture_alloc(&pic, f)) {
        CHECK(0, "%s: picture_alloc failed", what);
        return;
    }
    quale_video_set_planes(r, mask);
    for (unsigned i = 0; i < good; i++) {
        fill_picture(&pic, 0x77);
        const int rc = quale_video_read(r, &pic);
        CHECK(rc == 1, "%s: frame %u: %d (%s)", what, i, rc, quale_video_error(r));
        if (rc == 1)
            CHECK(verify_picture(&pic, i, mask, 0x77) == 0, "%s: frame %u", what, i);
    }
    const int rc = quale_video_read(r, &pic);
    CHECK(rc < 0, "%s: read returned %d, expected an error", what, rc);
    const char *msg = quale_video_error(r);
    CHECK(strstr(msg, expect) != NULL, "%s: message '%s' lacks '%s'", what, msg, expect);
    CHECK(!path || strncmp(msg, path, strlen(path)) == 0,
          "%s: message '%s' does not start with the path", what, msg);
    const int again = quale_video_read(r, &pic);
    CHECK(again == rc, "%s: second read returned %d, first %d", what, again, rc);
    quale_picture_unref(&pic);
}

static void test_empty_raw(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 17, 9 };
    /* Empty raw file: clean end at once. */
    {
        const char *path = temp_write("", 0);
        QualeVideoReader *r = open_file(path, &f, "empty raw");
        if (r) {
            read_all(r, &f, 0, "empty raw");
            quale_video_close(&r);
        }
    }
}

static void test_empty_y4m(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 17, 9 };
    /* y4m header without frames: clean end at once. */
    {
        Buf b = { 0 };
        y4m_header(&b, &f, "420jpeg");
        const char *path = temp_write(b.p, b.n);
        buf_free(&b);
        QualeVideoReader *r = open_file(path, NULL, "y4m header only");
        if (r) {
            read_all(r, &f, 0, "y4m header only");
            quale_video_close(&r);
        }
    }
}

static void test_raw_truncated(void)
{
    const QualeVideoFormat f10 = { QUALE_CHROMA_420, 10, 33, 65 };
    char expect[128];
    /* Raw: two frames and 1000 bytes of a third.  A regular file like that
     * is refused when opened (its size is no whole number of frames); one
     * that shrinks while it is read (truncated under us) is caught at the
     * frame it cuts, whether that frame is read, seeked past or skipped. */
    {
        Buf b = { 0 };
        make_yuv(&b, &f10, 3);
        const size_t fs = frame_size(&f10, 0);
        char open_expect[160];
        snprintf(open_expect, sizeof(open_expect), "%zu bytes are not a whole number of 33x65 "
                 "4:2:0 10-bit frames of %zu bytes (2 frames and 1000 bytes over)",
                 2 * fs + 1000, fs);
        expect_open_error(b.p, 2 * fs + 1000, &f10, -EBADMSG, open_expect);
        snprintf(expect, sizeof(expect), "frame 2 is truncated: 1000 of %zu bytes", fs);
        for (int how = 0; how < 3; how++) {
            static const char *const whats[] = { "raw truncated", "raw truncated luma only",
                                                 "raw truncated skip" };
            const char *path = temp_write(b.p, 3 * fs);
            QualeVideoReader *r = open_file(path, &f10, whats[how]);
            if (!r) continue;
            CHECK(truncate(path, (off_t)(2 * fs + 1000)) == 0, "truncate: %s", strerror(errno));
            if (how == 0) {
                expect_read_error(r, &f10, 2, 0xf, path, expect, whats[how]);
            } else if (how == 1) {
                /* Chroma skipped: the seek must not run past the end unnoticed. */
                quale_video_set_planes(r, 1);
                QualePicture pic;
                quale_picture_alloc(&pic, &f10);
                CHECK(quale_video_read(r, &pic) == 1, "luma only frame 0");
                CHECK(quale_video_read(r, &pic) == 1, "luma only frame 1");
                CHECK(quale_video_read(r, &pic) < 0, "luma only frame 2 must fail");
                CHECK(strstr(quale_video_error(r), expect) != NULL, "luma only: '%s'",
                      quale_video_error(r));
                quale_picture_unref(&pic);
            } else {
                /* skip(): the whole frame is seeked over. */
                const int rc = quale_video_skip(r, 5);
                CHECK(rc < 0, "skip over a truncated frame returned %d", rc);
                CHECK(strstr(quale_video_error(r), expect) != NULL, "skip: '%s'",
                      quale_video_error(r));
            }
            quale_video_close(&r);
        }
        buf_free(&b);
        /* A file shorter than the luma plane of its first frame. */
        snprintf(open_expect, sizeof(open_expect), "3 bytes are not a whole number of 33x65 "
                 "4:2:0 10-bit frames of %zu bytes (0 frames and 3 bytes over)", fs);
        expect_open_error("\x01\x02\x03", 3, &f10, -EBADMSG, open_expect);
    }
}

static void test_y4m_truncated(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 17, 9 };
    char expect[128];
    /* y4m: truncated inside the payload, inside the marker, inside the
     * FRAME line, and right after the marker. */
    {
        Buf b = { 0 };
        make_y4m(&b, &f, "420jpeg", 2, 0);
        const size_t full = b.n;
        buf_str(&b, "FRAME\n");
        put_frame(&b, &f, 2, 0);
        const char *path = temp_write(b.p, full + 6 + 10);
        snprintf(expect, sizeof(expect), "frame 2 is truncated: 10 of %zu bytes",
                 frame_size(&f, 0));
        QualeVideoReader *r = open_file(path, NULL, "y4m truncated payload");
        if (r) {
            expect_read_error(r, &f, 2, 0xf, path, expect, "y4m truncated payload");
            quale_video_close(&r);
        }
        path = temp_write(b.p, full + 6);
        snprintf(expect, sizeof(expect), "frame 2 is truncated: 0 of %zu bytes",
                 frame_size(&f, 0));
        r = open_file(path, NULL, "y4m no payload");
        if (r) {
            expect_read_error(r, &f, 2, 0xf, path, expect, "y4m no payload");
            quale_video_close(&r);
        }
        path = temp_write(b.p, full + 3);
        r = open_file(path, NULL, "y4m truncated marker");
        if (r) {
            expect_read_error(r, &f, 2, 0xf, path, "frame 2 is truncated", "y4m truncated marker");
            quale_video_close(&r);
        }
        buf_free(&b);

        Buf c = { 0 };
        make_y4m(&c, &f, "420jpeg", 1, 0);
        buf_str(&c, "FRAME Ixx");
        path = temp_write(c.p, c.n);
        r = open_file(path, NULL, "y4m truncated frame line");
        if (r) {
            expect_read_error(r, &f, 1, 0xf, path, "frame 1 is truncated", "y4m truncated line");
            quale_video_close(&r);
        }
        buf_free(&c);
    }
}

static void test_y4m_missing_marker(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 17, 9 };
    /* y4m: the second frame's marker is missing (the first frame is one
     * byte longer than the header says), or misspelt, or runs on. */
    {
        static const char *const bad_markers[] = { "XFRAME\n", "FRAMX\n", "FRAMEX\n",
                                                   "frame\n" };
        for (size_t i = 0; i < 4; i++) {
            Buf b = { 0 };
            make_y4m(&b, &f, "420jpeg", 1, 0);
            buf_str(&b, bad_markers[i]);
            put_frame(&b, &f, 1, 0);
            const char *path = temp_write(b.p, b.n);
            buf_free(&b);
            QualeVideoReader *r = open_file(path, NULL, "y4m bad marker");
            if (r) {
                expect_read_error(r, &f, 1, 0xf, path, "frame 1 does not start with a FRAME marker",
                                  bad_markers[i]);
                quale_video_close(&r);
            }
        }
        /* An over-long FRAME line. */
        Buf b = { 0 };
        make_y4m(&b, &f, "420jpeg", 1, 0);
        buf_str(&b, "FRAME ");
        for (int i = 0; i < 600; i++) buf_str(&b, "Xabcdefgh");
        buf_str(&b, "\n");
        put_frame(&b, &f, 1, 0);
        const char *path = temp_write(b.p, b.n);
        buf_free(&b);
        QualeVideoReader *r = open_file(path, NULL, "y4m long frame line");
        if (r) {
            expect_read_error(r, &f, 1, 0xf, path, "frame 1: FRAME line is longer than",
                              "long frame line");
            quale_video_close(&r);
        }
    }
}

static void test_end_and_truncation(void)
{
    test_empty_raw();
    test_empty_y4m();
    test_raw_truncated();
    test_y4m_truncated();
    test_y4m_missing_marker();
}

/* ---------------------------------------------------------------------- */
/* Bad headers and bad arguments                                            */

static void expect_open_error(const void *data, size_t n, const QualeVideoFormat *raw,
                              int want_rc, const char *expect)
{
    const char *path = temp_write(data, n);
    QualeVideoReader *r = (QualeVideoReader *)1;
    char err[512] = "";
    const int rc = quale_video_open(&r, path, raw, err, sizeof(err));
    CHECK(rc < 0, "'%s': open returned %d", expect, rc);
    CHECK(!want_rc || rc == want_rc, "'%s': open returned %d, want %d", expect, rc, want_rc);
    CHECK(r == NULL, "'%s': reader not NULL after a failed open", expect);
    CHECK(strstr(err, expect) != NULL, "message '%s' lacks '%s'", err, expect);
    CHECK(strncmp(err, path, strlen(path)) == 0 && err[strlen(path)] == ':',
          "message '%s' does not start with '<path>:'", err);
    if (rc == 0) quale_video_close(&r);
}

static void test_bad_headers(void)
{
    static const struct {
        const char *text;
        const char *expect;
    } cases[] = {
        { "", "empty file" },
        { "P5 17 9 255\n", "not a YUV4MPEG2 file (no 'YUV4MPEG2 ' signature)" },
        { "YUV4MPEG", "not a YUV4MPEG2 file" },
        { "YUV4MPEG2X W17 H9\n", "not a YUV4MPEG2 file" },
        { "YUV4MPEG2 W0 H9\n", "width 0 is out of range" },
        { "YUV4MPEG2 W-5 H9\n", "invalid width '-5'" },
        { "YUV4MPEG2 W+5 H9\n", "invalid width '+5'" },
        { "YUV4MPEG2 W99999999999 H9\n", "width 99999999999 is out of range" },
        { "YUV4MPEG2 W999999999999999999999999999999 H9\n", "is out of range" },
        { "YUV4MPEG2 W32769 H9\n", "width 32769 is out of range" },
        { "YUV4MPEG2 W17 H99999\n", "height 99999 is out of range" },
        { "YUV4MPEG2 W17\n", "no height" },
        { "YUV4MPEG2 H9\n", "no width" },
        { "YUV4MPEG2\n", "no width" },
        { "YUV4MPEG2 Wabc H9\n", "invalid width 'abc'" },
        { "YUV4MPEG2 W17x H9\n", "invalid width '17x'" },
        { "YUV4MPEG2 W H9\n", "empty width" },
        { "YUV4MPEG2 W17 H9 C411\n", "unsupported chroma format 'C411'" },
        { "YUV4MPEG2 W17 H9 Cfoo\n", "unsupported chroma format 'Cfoo'" },
        { "YUV4MPEG2 W17 H9 C\n", "unsupported chroma format 'C'" },
        { "YUV4MPEG2 W17 H9 C420p8\n", "unsupported chroma format 'C420p8'" },
        { "YUV4MPEG2 W17 H9 C420p17\n", "unsupported chroma format 'C420p17'" },
        { "YUV4MPEG2 W17 H9 C420p010\n", "unsupported chroma format" },
        { "YUV4MPEG2 W17 H9 C420jpegx\n", "unsupported chroma format" },
        { "YUV4MPEG2 W17 H9 XYSCSS=411\n", "unsupported chroma format 'XYSCSS=411'" },
        { "YUV4MPEG2 W17 H9 C420jpeg", "header is truncated" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_open_error(cases[i].text, strlen(cases[i].text), NULL, 0, cases[i].expect);

    /* A NUL inside the header. */
    expect_open_error("YUV4MPEG2 W17\0 H9\n", 19, NULL, 0, "NUL byte");

    /* Over-long headers, with and without a newline at the end. */
    Buf b = { 0 };
    buf_str(&b, "YUV4MPEG2 W17 H9 ");
    for (int i = 0; i < 1000; i++) buf_str(&b, "XAB=1 ");
    expect_open_error(b.p, b.n, NULL, -EPROTO, "header is longer than 4096 bytes");
    buf_str(&b, "\n");
    expect_open_error(b.p, b.n, NULL, -EPROTO, "header is longer than 4096 bytes");
    buf_free(&b);

    /* Garbage: random bytes, and random bytes after a valid signature. */
    uint32_t seed = 12345;
    for (int round = 0; round < 2; round++) {
        Buf g = { 0 };
        if (round) buf_str(&g, "YUV4MPEG2 ");
        for (int i = 0; i < 20000; i++) {
            seed = seed * 1664525u + 1013904223u;
            const unsigned char c = (unsigned char)(seed >> 24);
            buf_put(&g, &c, 1);
        }
        expect_open_error(g.p, g.n, NULL, 0, round ? "YUV4MPEG2 header" : "not a YUV4MPEG2");
        buf_free(&g);
    }

    /* Raw formats the library cannot take. */
    const QualeVideoFormat bad_depth = { QUALE_CHROMA_420, 7, 16, 16 };
    expect_open_error("", 0, &bad_depth, -EINVAL, "invalid video format: bit depth");
    const QualeVideoFormat bad_chroma = { QUALE_CHROMA_UNKNOWN, 8, 16, 16 };
    expect_open_error("", 0, &bad_chroma, -EINVAL, "unknown chroma");
    const QualeVideoFormat zero = { QUALE_CHROMA_420, 8, 0, 16 };
    expect_open_error("", 0, &zero, -EINVAL, "invalid video format");

    /* Files that cannot be opened. */
    QualeVideoReader *r = (QualeVideoReader *)1;
    char err[512] = "";
    int rc = quale_video_open(&r, "/nonexistent/dir/x.yuv", &bad_depth, err, sizeof(err));
    CHECK(rc == -ENOENT && r == NULL, "missing file: %d", rc);
    CHECK(!strcmp(err, "cannot open '/nonexistent/dir/x.yuv': No such file or directory"),
          "missing file message: %s", err);
    r = (QualeVideoReader *)1;
    rc = quale_video_open(&r, "/", NULL, err, sizeof(err));
    CHECK(rc == -EISDIR && r == NULL, "directory: %d", rc);
    CHECK(strstr(err, "cannot open '/'") != NULL, "directory message: %s", err);

    /* NULL arguments: errors, no crash.  A tiny error buffer is cut, not
     * overrun. */
    rc = quale_video_open(NULL, "x", NULL, err, sizeof(err));
    CHECK(rc == -EINVAL, "NULL reader: %d", rc);
    rc = quale_video_open(&r, NULL, NULL, NULL, 0);
    CHECK(rc == -EINVAL && r == NULL, "NULL path: %d", rc);
    rc = quale_video_open_stream(&r, NULL, "x", NULL, err, sizeof(err));
    CHECK(rc == -EINVAL && r == NULL, "NULL stream: %d", rc);
    char tiny[4] = "abc";
    rc = quale_video_open(&r, "/nonexistent", NULL, tiny, 3);
    CHECK(rc < 0 && tiny[2] == '\0' && tiny[3] == '\0', "tiny error buffer");
    CHECK(quale_video_read(NULL, NULL) == -EINVAL, "read(NULL)");
    CHECK(quale_video_skip(NULL, 1) == -EINVAL, "skip(NULL)");
    CHECK(!strcmp(quale_video_error(NULL), ""), "error(NULL)");
    CHECK(quale_video_clamped_samples(NULL) == 0, "clamped(NULL)");
    quale_video_set_planes(NULL, 1);
    quale_video_close(NULL);
    r = NULL;
    quale_video_close(&r);
}

/* A picture of the wrong format is refused without harming the reader. */
static void test_wrong_picture(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 17, 9 };
    const QualeVideoFormat g = { QUALE_CHROMA_422, 8, 17, 9 };
    Buf b = { 0 };
    make_yuv(&b, &f, 2);
    const char *path = temp_write(b.p, b.n);
    buf_free(&b);
    QualeVideoReader *r = open_file(path, &f, "wrong picture");
    if (!r) return;
    QualePicture wrong, right;
    quale_picture_alloc(&wrong, &g);
    quale_picture_alloc(&right, &f);
    int rc = quale_video_read(r, &wrong);
    CHECK(rc == -EINVAL, "wrong picture: %d", rc);
    CHECK(strstr(quale_video_error(r), "the video is 17x9 4:2:0 8-bit") != NULL, "message: %s",
          quale_video_error(r));
    rc = quale_video_read(r, NULL);
    CHECK(rc == -EINVAL, "NULL picture: %d", rc);
    rc = quale_video_read(r, &right);
    CHECK(rc == 1 && verify_picture(&right, 0, 0xf, 0) == 0, "read after a refused picture");
    quale_picture_unref(&wrong);
    quale_picture_unref(&right);
    quale_video_close(&r);
}

/* ---------------------------------------------------------------------- */
/* Clamping                                                                 */

/* Writes frames whose samples at a few places are out of range, and checks
 * they come back clamped and counted, the others untouched. */
static void check_clamp(const QualeVideoFormat *f, int y4m, const char *ctag)
{
    static const unsigned hot[][3] = { /* plane, x, y */
        { 0, 0, 0 }, { 0, 16, 8 }, { 0, 5, 3 }, { 1, 8, 4 }, { 2, 0, 4 }, { 1, 3, 0 },
    };
    const unsigned max = (1u << f->bitdepth) - 1;
    const unsigned values[] = { 0xFFFF, max + 1, 0x8000, max, 0x7FFF, max + 2 };
    char what[64];
    snprintf(what, sizeof(what), "clamp %u-bit %ux%u %s", f->bitdepth, f->width, f->height,
             y4m ? "y4m" : "raw");

    Buf b = { 0 };
    if (y4m) y4m_header(&b, f, ctag);
    uint64_t expect_clamped = 0;
    for (unsigned frame = 0; frame < 2; frame++) {
        if (y4m) buf_str(&b, "FRAME\n");
        const size_t start = b.n;
        put_frame(&b, f, frame, 0);
        for (size_t i = 0; i < sizeof(hot) / sizeof(hot[0]); i++) {
            unsigned w, h;
            plane_dims(f, hot[i][0], &w, &h);
            size_t off = 0;
            for (unsigned p = 0; p < hot[i][0]; p++) {
                unsigned pw, ph;
                plane_dims(f, p, &pw, &ph);
                off += (size_t)pw * ph * 2;
            }
            off += ((size_t)hot[i][2] * w + hot[i][1]) * 2;
            const unsigned v = values[(i + frame) % 6] & 0xFFFF;
            b.p[start + off] = (unsigned char)(v & 0xff);
            b.p[start + off + 1] = (unsigned char)(v >> 8);
            if (v > max) expect_clamped++;
        }
    }
    const char *path = temp_write(b.p, b.n);
    buf_free(&b);
    QualeVideoReader *r = open_file(path, y4m ? NULL : f, what);
    if (!r) return;
    QualePicture pic;
    quale_picture_alloc(&pic, f);
    for (unsigned frame = 0; frame < 2; frame++) {
        CHECK(quale_video_read(r, &pic) == 1, "%s: read %u: %s", what, frame,
              quale_video_error(r));
        unsigned bad = 0;
        for (unsigned p = 0; p < 3; p++) {
            unsigned w, h;
            plane_dims(f, p, &w, &h);
            for (unsigned y = 0; y < h; y++) {
                for (unsigned x = 0; x < w; x++) {
                    unsigned want = pattern(frame, p, x, y, f->bitdepth);
                    for (size_t i = 0; i < sizeof(hot) / sizeof(hot[0]); i++) {
                        if (hot[i][0] == p && hot[i][1] == x && hot[i][2] == y) {
                            want = values[(i + frame) % 6] & 0xFFFF;
                            if (want > max) want = max;
                        }
                    }
                    bad += pic_sample(&pic, p, x, y) != want;
                }
            }
        }
        CHECK(bad == 0, "%s: frame %u: %u samples differ", what, frame, bad);
    }
    CHECK(quale_video_clamped_samples(r) == expect_clamped, "%s: clamped %llu, want %llu",
          what, (unsigned long long)quale_video_clamped_samples(r),
          (unsigned long long)expect_clamped);
    quale_picture_unref(&pic);
    quale_video_close(&r);
}

static void test_clamping(void)
{
    const QualeVideoFormat f10 = { QUALE_CHROMA_420, 10, 17, 9 };
    const QualeVideoFormat f10w = { QUALE_CHROMA_420, 10, 64, 9 }; /* stride == row */
    const QualeVideoFormat f12 = { QUALE_CHROMA_420, 12, 17, 9 };
    const QualeVideoFormat f16 = { QUALE_CHROMA_420, 16, 17, 9 };
    check_clamp(&f10, 0, NULL);
    check_clamp(&f10w, 0, NULL);
    check_clamp(&f10, 1, "420p10");
    check_clamp(&f12, 1, "420p12");
    check_clamp(&f16, 0, NULL); /* nothing is out of range at 16 bits */

    /* The plain case from the spec: 0xFFFF in a 10-bit file reads 1023. */
    const QualeVideoFormat one = { QUALE_CHROMA_400, 10, 1, 1 };
    const char *path = temp_write("\xff\xff", 2);
    QualeVideoReader *r = open_file(path, &one, "0xFFFF");
    if (r) {
        QualePicture pic;
        quale_picture_alloc(&pic, &one);
        CHECK(quale_video_read(r, &pic) == 1, "0xFFFF: read");
        CHECK(pic_sample(&pic, 0, 0, 0) == 1023, "0xFFFF read as %u", pic_sample(&pic, 0, 0, 0));
        CHECK(quale_video_clamped_samples(r) == 1, "0xFFFF: clamped %llu",
              (unsigned long long)quale_video_clamped_samples(r));
        quale_picture_unref(&pic);
        quale_video_close(&r);
    }
}

/* ---------------------------------------------------------------------- */
/* Deeper pictures than the file (quale_video_set_bitdepth)                 */

static void check_deeper(const QualeVideoFormat *file, unsigned depth, int y4m)
{
    char what[96];
    snprintf(what, sizeof(what), "%ux%u %s %u-bit %s at %u bits", file->width, file->height,
             quale_chroma_name(file->chroma), file->bitdepth, y4m ? "y4m" : "yuv", depth);
    Buf b = { 0 };
    const char *tags[] = { [QUALE_CHROMA_400] = "mono", [QUALE_CHROMA_420] = "420",
                           [QUALE_CHROMA_422] = "422", [QUALE_CHROMA_444] = "444" };
    char tag[16];
    snprintf(tag, sizeof(tag), "%s%s", tags[file->chroma],
             file->bitdepth == 8 ? "" : file->chroma == QUALE_CHROMA_400 ? "10" : "p10");
    if (y4m) make_y4m(&b, file, tag, 3, 0);
    else make_yuv(&b, file, 3);
    const char *path = temp_write(b.p, b.n);
    buf_free(&b);
    QualeVideoReader *r = open_file(path, y4m ? NULL : file, what);
    if (!r) return;
    CHECK(quale_video_set_bitdepth(r, file->bitdepth - 1) == -EINVAL, "%s: shallower", what);
    CHECK(quale_video_set_bitdepth(r, 17) == -EINVAL, "%s: 17 bits", what);
    CHECK(quale_video_set_bitdepth(r, depth) == 0, "%s: set: %s", what, quale_video_error(r));
    QualeVideoFormat got;
    quale_video_get_format(r, &got);
    QualeVideoFormat deep = *file;
    deep.bitdepth = depth;
    CHECK(same_format(&got, &deep), "%s: the format is the deeper one", what);
    QualePicture pic;
    quale_picture_alloc(&pic, &deep);
    for (unsigned i = 0; i < 3; i++) {
        fill_picture(&pic, 0xA5);
        const int rc = quale_video_read(r, &pic);
        CHECK(rc == 1, "%s: frame %u: %d (%s)", what, i, rc, quale_video_error(r));
        unsigned bad = 0;
        for (unsigned p = 0; p < pic.plane_count; p++) {
            unsigned w, h;
            plane_dims(file, p, &w, &h);
            for (unsigned y = 0; y < h; y++)
                for (unsigned x = 0; x < w; x++)
                    bad += pic_sample(&pic, p, x, y) !=
                           pattern(i, p, x, y, file->bitdepth) << (depth - file->bitdepth);
        }
        CHECK(bad == 0, "%s: frame %u: %u samples are not the file's shifted", what, i, bad);
        if (i == 0)
            CHECK(quale_video_set_bitdepth(r, depth) == -EBUSY, "%s: set after a read", what);
    }
    CHECK(quale_video_read(r, &pic) == 0, "%s: the end", what);
    quale_picture_unref(&pic);
    quale_video_close(&r);
}

static void test_deeper(void)
{
    for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (enum QualeChroma c = QUALE_CHROMA_400; c <= QUALE_CHROMA_444; c++) {
            const QualeVideoFormat f8 = { c, 8, sizes[i][0], sizes[i][1] };
            const QualeVideoFormat f10 = { c, 10, sizes[i][0], sizes[i][1] };
            check_deeper(&f8, 10, 1);
            check_deeper(&f8, 10, 0);
            check_deeper(&f8, 16, 0);
            check_deeper(&f8, 8, 0); /* the same depth: nothing changes */
            check_deeper(&f10, 12, 1);
            check_deeper(&f10, 16, 0);
        }
    }
    /* Samples above the file's depth are clamped to it, then shifted. */
    const QualeVideoFormat one = { QUALE_CHROMA_400, 10, 1, 1 };
    const char *path = temp_write("\xff\xff", 2);
    QualeVideoReader *r = open_file(path, &one, "0xFFFF at 12 bits");
    if (r) {
        QualeVideoFormat deep = one;
        deep.bitdepth = 12;
        CHECK(quale_video_set_bitdepth(r, 12) == 0, "0xFFFF: set 12");
        QualePicture pic;
        quale_picture_alloc(&pic, &deep);
        CHECK(quale_video_read(r, &pic) == 1, "0xFFFF at 12 bits: read");
        CHECK(pic_sample(&pic, 0, 0, 0) == 1023u << 2, "0xFFFF at 12 bits read as %u",
              pic_sample(&pic, 0, 0, 0));
        CHECK(quale_video_clamped_samples(r) == 1, "0xFFFF at 12 bits: clamped once");
        quale_picture_unref(&pic);
        quale_video_close(&r);
    }
}

/* ---------------------------------------------------------------------- */
/* Plane masks and skipping                                                 */

/* Reads `frames` frames from r with a mask per frame (masks[i]), checking
 * the planes read and that the others keep their sentinel. */
static void read_masked(QualeVideoReader *r, const QualeVideoFormat *f, unsigned frames,
                        const unsigned *masks, const char *what)
{
    QualePicture pic;
    quale_picture_alloc(&pic, f);
    for (unsigned i = 0; i < frames; i++) {
        quale_video_set_planes(r, masks[i]);
        fill_picture(&pic, 0x5A);
        const int rc = quale_video_read(r, &pic);
        CHECK(rc == 1, "%s: frame %u mask %u: %d (%s)", what, i, masks[i], rc,
              quale_video_error(r));
        CHECK(verify_picture(&pic, i, masks[i], 0x5A) == 0, "%s: frame %u mask %u", what, i,
              masks[i]);
    }
    CHECK(quale_video_read(r, &pic) == 0, "%s: end after %u frames: %s", what, frames,
          quale_video_error(r));
    quale_picture_unref(&pic);
}

static const unsigned mask_sequence[] = { 1, 1, 7, 0, 6, 2, 1, 4, 7 };
#define MASK_FRAMES 9

static void test_planes(void)
{
    static const struct {
        QualeVideoFormat f;
        const char *ctag;
        unsigned alpha;
    } cases[] = {
        { { QUALE_CHROMA_420, 8, 17, 9 }, "420jpeg", 0 },
        { { QUALE_CHROMA_420, 10, 33, 65 }, "420p10", 0 },
        { { QUALE_CHROMA_422, 12, 64, 4 }, "422p12", 0 },
        { { QUALE_CHROMA_444, 8, 17, 9 }, "444alpha", 1 },
        { { QUALE_CHROMA_400, 16, 17, 9 }, "mono16", 0 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const QualeVideoFormat *f = &cases[c].f;
        for (int y4m = 0; y4m < 2; y4m++) {
            if (!y4m && cases[c].alpha) continue;
            char what[64];
            snprintf(what, sizeof(what), "planes %s %s", cases[c].ctag, y4m ? "y4m" : "raw");
            Buf b = { 0 };
            if (y4m)
                make_y4m(&b, f, cases[c].ctag, MASK_FRAMES, cases[c].alpha);
            else
                make_yuv(&b, f, MASK_FRAMES);
            const char *path = temp_write(b.p, b.n);
            buf_free(&b);
            QualeVideoReader *r = open_file(path, y4m ? NULL : f, what);
            if (!r) continue;
            read_masked(r, f, MASK_FRAMES, mask_sequence, what);
            quale_video_close(&r);
        }
    }
}

static void test_skip(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 10, 17, 9 };
    for (int y4m = 0; y4m < 2; y4m++) {
        const char *what = y4m ? "skip y4m" : "skip raw";
        Buf b = { 0 };
        if (y4m)
            make_y4m(&b, &f, "420p10", 6, 0);
        else
            make_yuv(&b, &f, 6);
        const char *path = temp_write(b.p, b.n);
        buf_free(&b);
        QualeVideoReader *r = open_file(path, y4m ? NULL : &f, what);
        if (!r) continue;
        QualePicture pic;
        quale_picture_alloc(&pic, &f);
        CHECK(quale_video_skip(r, 0) == 1, "%s: skip(0)", what);
        CHECK(quale_video_skip(r, 2) == 1, "%s: skip(2)", what);
        CHECK(quale_video_read(r, &pic) == 1 && verify_picture(&pic, 2, 0xf, 0) == 0,
              "%s: frame 2 after skip(2)", what);
        CHECK(quale_video_skip(r, 1) == 1, "%s: skip(1)", what);
        CHECK(quale_video_read(r, &pic) == 1 && verify_picture(&pic, 4, 0xf, 0) == 0,
              "%s: frame 4 after skip(1)", what);
        CHECK(quale_video_skip(r, 5) == 0, "%s: skip(5) runs into the end", what);
        CHECK(quale_video_read(r, &pic) == 0, "%s: read after the end", what);
        CHECK(quale_video_skip(r, 1) == 0, "%s: skip after the end", what);
        quale_picture_unref(&pic);
        quale_video_close(&r);
    }

    /* A huge frame: 32768x32768 4:4:4 16-bit is 6 GiB; the size must not
     * overflow, and a 1000-byte file is no whole frame of it. */
    const QualeVideoFormat huge = { QUALE_CHROMA_444, 16, 32768, 32768 };
    unsigned char k[1000];
    memset(k, 1, sizeof(k));
    expect_open_error(k, sizeof(k), &huge, -EBADMSG,
                      "1000 bytes are not a whole number of 32768x32768 4:4:4 16-bit frames of "
                      "6442450944 bytes (0 frames and 1000 bytes over)");
}

/* ---------------------------------------------------------------------- */
/* Streams that cannot seek                                                 */

/* Starts a child that writes data into a pipe and exits; returns the read
 * end as a FILE (the caller fcloses it and reaps the child). */
static FILE *pipe_from_child(const void *data, size_t n, pid_t *child)
{
    int fds[2];
    if (pipe(fds)) {
        perror("pipe");
        exit(2);
    }
    fflush(NULL);
    const pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        close(fds[0]);
        const unsigned char *p = data;
        while (n) {
            const ssize_t w = write(fds[1], p, n);
            if (w <= 0) _exit(1); /* the reader stopped early: fine */
            p += w;
            n -= (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    *child = pid;
    FILE *f = fdopen(fds[0], "rb");
    if (!f) {
        perror("fdopen");
        exit(2);
    }
    return f;
}

static void end_child(FILE *f, pid_t child)
{
    fclose(f);
    int status;
    waitpid(child, &status, 0);
}

static void test_pipes(void)
{
    /* Large enough to fill the pipe buffer many times over. */
    const QualeVideoFormat f = { QUALE_CHROMA_420, 10, 321, 241 };
    for (int y4m = 0; y4m < 2; y4m++) {
        char what[64];
        snprintf(what, sizeof(what), "pipe %s", y4m ? "y4m" : "raw");
        Buf b = { 0 };
        if (y4m)
            make_y4m(&b, &f, "420p10", MASK_FRAMES + 3, 0);
        else
            make_yuv(&b, &f, MASK_FRAMES + 3);

        /* Masks, then skip(), then a full read. */
        pid_t child;
        FILE *in = pipe_from_child(b.p, b.n, &child);
        QualeVideoReader *r = NULL;
        char err[512];
        int rc = quale_video_open_stream(&r, in, "pipe", y4m ? NULL : &f, err, sizeof(err));
        CHECK(rc == 0, "%s: open: %s", what, err);
        if (r) {
            QualePicture pic;
            quale_picture_alloc(&pic, &f);
            for (unsigned i = 0; i < MASK_FRAMES; i++) {
                quale_video_set_planes(r, mask_sequence[i]);
                fill_picture(&pic, 0x5A);
                rc = quale_video_read(r, &pic);
                CHECK(rc == 1, "%s: frame %u: %d %s", what, i, rc, quale_video_error(r));
                CHECK(verify_picture(&pic, i, mask_sequence[i], 0x5A) == 0, "%s: frame %u",
                      what, i);
            }
            CHECK(quale_video_skip(r, 2) == 1, "%s: skip(2)", what);
            quale_video_set_planes(r, 7);
            CHECK(quale_video_read(r, &pic) == 1 &&
                  verify_picture(&pic, MASK_FRAMES + 2, 0xf, 0) == 0, "%s: last frame", what);
            CHECK(quale_video_read(r, &pic) == 0, "%s: end", what);
            quale_picture_unref(&pic);
            quale_video_close(&r);
        }
        end_child(in, child);

        /* Truncated through a pipe, with chroma skipped by reading. */
        const size_t cut = b.n - 777;
        const size_t fs = frame_size(&f, 0);
        in = pipe_from_child(b.p, cut, &child);
        rc = quale_video_open_stream(&r, in, "pipe", y4m ? NULL : &f, err, sizeof(err));
        CHECK(rc == 0, "%s: open: %s", what, err);
        if (r) {
            char expect[128];
            snprintf(expect, sizeof(expect), "pipe: frame %u is truncated: %zu of %zu bytes",
                     MASK_FRAMES + 2, fs - 777, fs);
            expect_read_error(r, &f, MASK_FRAMES + 2, 1, NULL, expect, what);
            quale_video_close(&r);
        }
        end_child(in, child);
        buf_free(&b);
    }

    /* A memory stream has no file descriptor at all: skipped planes
     * (alpha included) are read and dropped. */
    for (int alpha = 0; alpha < 2; alpha++) {
        const QualeVideoFormat g = { alpha ? QUALE_CHROMA_444 : QUALE_CHROMA_422, 8, 17, 9 };
        Buf b = { 0 };
        make_y4m(&b, &g, alpha ? "444alpha" : "422", MASK_FRAMES, (unsigned)alpha);
        FILE *mem = fmemopen(b.p, b.n, "rb");
        CHECK(mem != NULL, "fmemopen");
        if (mem) {
            QualeVideoReader *r = NULL;
            char err[512];
            const int rc = quale_video_open_stream(&r, mem, NULL, NULL, err, sizeof(err));
            CHECK(rc == 0, "memory stream: %s", err);
            if (r) {
                read_masked(r, &g, MASK_FRAMES, mask_sequence, "memory stream");
                quale_video_close(&r);
            }
            fclose(mem);
        }
        buf_free(&b);
    }
}

/* "-" reads stdin: checked in a child whose stdin is a file, then a pipe. */
static void test_stdin(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 33, 65 };
    Buf b = { 0 };
    make_y4m(&b, &f, "420mpeg2", 4, 0);
    const char *path = temp_write(b.p, b.n);
    for (int use_pipe = 0; use_pipe < 2; use_pipe++) {
        pid_t writer = 0;
        FILE *in = NULL;
        int fd;
        if (use_pipe) {
            in = pipe_from_child(b.p, b.n, &writer);
            fd = fileno(in);
        } else {
            fd = open(path, O_RDONLY);
        }
        fflush(NULL);
        const pid_t pid = fork();
        if (pid == 0) {
            dup2(fd, 0);
            passed = failed = 0;
            QualeVideoReader *r = NULL;
            char err[512];
            const int rc = quale_video_open(&r, "-", NULL, err, sizeof(err));
            CHECK(rc == 0, "stdin: %s", err);
            if (r) {
                quale_video_set_planes(r, 1);
                CHECK(quale_video_skip(r, 1) == 1, "stdin: skip");
                QualePicture pic;
                quale_picture_alloc(&pic, &f);
                for (unsigned i = 1; i < 4; i++) {
                    fill_picture(&pic, 0x11);
                    CHECK(quale_video_read(r, &pic) == 1, "stdin: frame %u", i);
                    CHECK(verify_picture(&pic, i, 1, 0x11) == 0, "stdin: frame %u", i);
                }
                CHECK(quale_video_read(r, &pic) == 0, "stdin: end");
                quale_picture_unref(&pic);
                quale_video_close(&r);
            }
            /* stdin must still be usable: it was not closed. */
            CHECK(fcntl(0, F_GETFD) != -1, "stdin closed by quale_video_close");
            _exit(failed ? 1 : 0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "stdin child (%s) failed: %d",
              use_pipe ? "pipe" : "file", status);
        if (use_pipe)
            end_child(in, writer);
        else
            close(fd);
    }
    buf_free(&b);
}


/* ---------------------------------------------------------------------- */
/* What a file's first bytes say it is                                      */

static void test_sniffing(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 17, 9 };
    const QualeVideoFormat wrong = { QUALE_CHROMA_444, 10, 64, 48 };

    /* A YUV4MPEG2 file opened as raw (a .y4m named .yuv) is read as
     * YUV4MPEG2: its header's format, its frames. */
    Buf b = { 0 };
    make_y4m(&b, &f, "420jpeg", 3, 0);
    const char *path = temp_write(b.p, b.n);
    QualeVideoReader *r = open_file(path, &wrong, "y4m opened as raw");
    if (r) {
        QualeVideoFormat got;
        quale_video_get_format(r, &got);
        CHECK(quale_video_is_y4m(r) == 1, "y4m opened as raw: read as y4m");
        CHECK(got.width == 17 && got.height == 9 && got.bitdepth == 8 &&
              got.chroma == QUALE_CHROMA_420, "y4m opened as raw: the header's format");
        read_all(r, &f, 3, "y4m opened as raw");
        quale_video_close(&r);
    }
    /* The same through a pipe: the bytes read to tell are read again. */
    pid_t child;
    FILE *in = pipe_from_child(b.p, b.n, &child);
    char err[512];
    int rc = quale_video_open_stream(&r, in, "pipe", &wrong, err, sizeof(err));
    CHECK(rc == 0 && r, "y4m pipe opened as raw: %s", err);
    if (r) {
        CHECK(quale_video_is_y4m(r) == 1, "y4m pipe opened as raw: read as y4m");
        read_all(r, &f, 3, "y4m pipe opened as raw");
        quale_video_close(&r);
    }
    end_child(in, child);
    buf_free(&b);

    /* Raw stays raw, even when its samples look like a transport
     * stream's sync bytes everywhere. */
    unsigned char sync[243 * 4];
    memset(sync, 0x47, sizeof(sync));
    path = temp_write(sync, sizeof(sync));
    r = open_file(path, &f, "raw of 0x47");
    if (r) {
        CHECK(quale_video_is_y4m(r) == 0, "raw of 0x47: read as raw");
        CHECK(quale_video_skip(r, 4) == 1 && quale_video_skip(r, 1) == 0,
              "raw of 0x47: four frames");
        quale_video_close(&r);
    }
    CHECK(quale_video_is_y4m(NULL) == 0, "is_y4m(NULL)");

    /* Compressed files are refused with what they are, as raw or not. */
    static const struct {
        const char *what;
        unsigned char head[16];
        size_t head_len;
    } containers[] = {
        { "an MP4/MOV file", { 0, 0, 0, 0x20, 'f', 't', 'y', 'p', 'i', 's', 'o', 'm' }, 12 },
        { "a Matroska/WebM file", { 0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81 }, 8 },
        { "an IVF file", { 'D', 'K', 'I', 'F', 0, 0, 32, 0, 'A', 'V', '0', '1' }, 12 },
        { "an AVI file", { 'R', 'I', 'F', 'F', 1, 2, 3, 4, 'A', 'V', 'I', ' ' }, 12 },
        { "an MPEG transport stream", { 0x47, 0x40, 0x00, 0x10 }, 4 },
    };
    for (size_t i = 0; i < sizeof(containers) / sizeof(containers[0]); i++) {
        unsigned char data[243 * 4];
        for (size_t j = 0; j < sizeof(data); j++) data[j] = (unsigned char)(j * 7);
        memcpy(data, containers[i].head, containers[i].head_len);
        if (i == 4) {
            for (size_t at = 188; at + 4 <= sizeof(data); at += 188)
                memcpy(data + at, containers[i].head, 4);
        }
        /* With a decoder, FFmpeg finds no video in these few bytes (-EPROTO);
         * without one, the file is refused as compressed (-EPROTONOSUPPORT).
         * Either way the message says what the file is. */
        char expect[128];
        snprintf(expect, sizeof(expect), "%s (compressed video)", containers[i].what);
        expect_open_error(data, sizeof(data), &f, 0, expect);
        expect_open_error(data, sizeof(data), NULL, 0, expect);
        in = pipe_from_child(data, sizeof(data), &child);
        rc = quale_video_open_stream(&r, in, "pipe", &f, err, sizeof(err));
        CHECK((rc == -EPROTONOSUPPORT || rc == -EPROTO) && !r && strstr(err, expect),
              "pipe of %s: %d %s", containers[i].what, rc, err);
        end_child(in, child);
    }

    /* A pipe with nothing in it, where YUV4MPEG2 was expected. */
    in = pipe_from_child("", 0, &child);
    rc = quale_video_open_stream(&r, in, "pipe", NULL, err, sizeof(err));
    CHECK(rc == -ENODATA && !r && strstr(err, "pipe: no data: the stream ended before its first "
                                              "byte"), "empty pipe: %d %s", rc, err);
    end_child(in, child);
}

/* Decoding on the GPU (quale_video_decode_on_gpu()) is refused with a
 * reason where it cannot be: a raw video, a context without the CUDA
 * backend; arguments missing.  (The GPU path itself runs on a GPU machine:
 * docs/benchmarks.md, "NVDEC".) */
static void test_decode_on_gpu_refusals(void)
{
    const QualeVideoFormat f = { .chroma = QUALE_CHROMA_420, .bitdepth = 8, .width = 16,
                                 .height = 16 };
    Buf b = { 0 };
    make_y4m(&b, &f, "420", 2, 0);
    const char *path = temp_write(b.p, b.n);
    free(b.p);
    QualeVideoReader *r = open_file(path, NULL, "y4m for the GPU refusals");
    if (!r) return;
    QualeSettings settings;
    quale_settings_default(&settings);
    settings.backend = QUALE_BACKEND_CPU;
    QualeContext *ctx = NULL;
    int rc = quale_open(&ctx, &settings);
    CHECK(rc == 0 && ctx, "quale_open: %d", rc);
    if (ctx) {
        rc = quale_video_decode_on_gpu(r, ctx);
        CHECK(rc == 0, "a raw video on the GPU: %d", rc);
        CHECK(strstr(quale_video_error(r), "not a compressed video") != NULL,
              "the reason for a raw video: %s", quale_video_error(r));
        CHECK(quale_video_decode_on_gpu(NULL, ctx) == -EINVAL, "no reader");
        CHECK(quale_video_decode_on_gpu(r, NULL) == -EINVAL, "no context");
        /* the reader still reads on the CPU */
        read_all(r, &f, 2, "y4m after the refusal");
        quale_close(&ctx);
    }
    quale_video_close(&r);
}

/* AV1 sequence headers, as MP4 and Matroska store them (av1C) or as
 * OBUs, from encodes made for this test (libaom and SVT-AV1 through
 * FFmpeg); whether each has film grain is what FFmpeg's trace_headers
 * printed for film_grain_params_present. */
static void test_av1_film_grain(void)
{
    static const struct {
        const char *what;
        unsigned char bytes[40];
        size_t size;
        int grain;
    } cases[] = {
        { "4:2:0 8-bit, grain (av1C)",
          { 0x81, 0x01, 0x0c, 0x00, 0x0a, 0x0b, 0, 0, 0, 0x0c, 0xc4, 0x7f, 0x43, 0x36, 0xbe,
            0x40, 0x30 }, 17, 1 },
        { "4:2:0 8-bit, no grain (av1C)",
          { 0x81, 0x01, 0x0c, 0x00, 0x0a, 0x0b, 0, 0, 0, 0x0c, 0xc4, 0x7f, 0x43, 0x36, 0xbe,
            0x40, 0x10 }, 17, 0 },
        { "no grain (OBUs, as from IVF)",
          { 0x0a, 0x0b, 0, 0, 0, 0x0c, 0xc4, 0x7f, 0x43, 0x36, 0xbe, 0x40, 0x10 }, 13, 0 },
        { "4:2:0 10-bit SVT-AV1, grain",
          { 0x81, 0x01, 0x4d, 0x00, 0x0a, 0x0b, 0, 0, 0, 0x0c, 0xc4, 0x7f, 0x43, 0x00, 0xbe,
            0x10, 0xb0 }, 17, 1 },
        { "timing info, grain",
          { 0x81, 0x01, 0x0c, 0x00, 0x0a, 0x14, 0x04, 0, 0, 0, 0x04, 0, 0, 0, 0x63, 0x40, 0x00,
            0x01, 0xbc, 0xc4, 0x7f, 0x43, 0x36, 0xbe, 0x40, 0x30 }, 26, 1 },
        { "4:4:4 with a decoder model, no grain",
          { 0x81, 0x21, 0x00, 0x00, 0x0a, 0x1e, 0x24, 0, 0, 0, 0x04, 0, 0, 0, 0x61, 0x78, 0, 0,
            0, 0x0a, 0x53, 0, 0, 0x07, 0x5f, 0x91, 0x5f, 0x90, 0xbc, 0xc4, 0xff, 0x67, 0x36,
            0xbe, 0x40, 0x80 }, 36, 0 },
        { "monochrome, no grain",
          { 0x81, 0x01, 0x1c, 0x00, 0x0a, 0x0b, 0, 0, 0, 0x0c, 0xc4, 0x7f, 0x43, 0x36, 0xbe,
            0x4a, 0x80 }, 17, 0 },
        { "4:2:2 12-bit (profile 2), grain",
          { 0x81, 0x41, 0x68, 0x00, 0x0a, 0x0b, 0x40, 0, 0, 0x0c, 0xc4, 0xff, 0x67, 0x36, 0xbe,
            0x58, 0x98 }, 17, 1 },
        { "cut before its last field", { 0x0a, 0x0b, 0, 0, 0, 0x0c, 0xc4, 0x7f }, 8, -1 },
        { "no sequence header (a temporal delimiter)", { 0x12, 0x00 }, 2, -1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const int got = av1_film_grain_present(cases[i].bytes, cases[i].size);
        CHECK(got == cases[i].grain, "AV1 %s: film grain %d, not %d", cases[i].what, got,
              cases[i].grain);
    }
    CHECK(av1_film_grain_present(NULL, 0) == -1, "AV1: no configuration");
}

/* Where compressed files decode with --backend cuda: the stream's reasons
 * come before the machine's, so a CPU context shows them.  The files in
 * tests/data are 3 frames of 64x48 made for this test. */
static void test_gpu_decoding_policy(void)
{
    QualeSettings settings;
    quale_settings_default(&settings);
    settings.backend = QUALE_BACKEND_CPU;
    QualeContext *ctx = NULL;
    int rc = quale_open(&ctx, &settings);
    CHECK(rc == 0 && ctx, "quale_open: %d", rc);
    if (!ctx) return;
    static const struct {
        const char *file;
        const char *reason; /* a piece of the note; NULL: the machine's reason */
    } cases[] = {
        /* MPEG-2's IDCT is exact only within IEEE 1180's tolerance */
        { "tiny_mpeg2.mkv", "does not define its decoded pictures to the bit" },
        { "tiny_av1_grain.ivf", "film grain" },
        { "tiny_av1.ivf", NULL },
        { "tiny_h264.mp4", NULL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[4096], error[512];
        snprintf(path, sizeof(path), "%s/data/%s", QUALE_TEST_DIR, cases[i].file);
        QualeVideoReader *r = NULL;
        rc = quale_video_open(&r, path, NULL, error, sizeof(error));
        CHECK(rc == 0 && r, "%s: open: %s", cases[i].file, error);
        if (!r) continue;
        rc = quale_video_decode_on_gpu(r, ctx);
        const char *why = quale_video_error(r);
        CHECK(rc == 0, "%s on a CPU context: %d (%s)", cases[i].file, rc, why);
        if (cases[i].reason)
            CHECK(strstr(why, cases[i].reason) != NULL, "%s: the reason '%s' lacks '%s'",
                  cases[i].file, why, cases[i].reason);
        else
            /* past the stream's checks: the reason is the context's (AV1
             * through FFmpeg's own decoder where libdav1d has no NVDEC) */
            CHECK(strstr(why, "does not define") == NULL && strstr(why, "film grain") == NULL &&
                  strstr(why, "libdav1d") == NULL && strstr(why, "NVDEC lacks") == NULL &&
                  why[0] != '\0', "%s: stopped at the stream, not the machine: '%s'",
                  cases[i].file, why);
        /* and it reads on the CPU: three frames */
        QualeVideoFormat f;
        quale_video_get_format(r, &f);
        QualePicture pic;
        unsigned frames = 0;
        if (quale_picture_alloc(&pic, &f) == 0) {
            while (quale_video_read(r, &pic) == 1) frames++;
            quale_picture_unref(&pic);
        }
        CHECK(frames == 3, "%s: %u frames read after the refusal (%s)", cases[i].file, frames,
              quale_video_error(r));
        quale_video_close(&r);
    }
    quale_close(&ctx);
}

/* ---------------------------------------------------------------------- */
/* Filter graphs (quale_video_filter())                                    */

/* Counts the samples of a crop of `frame`'s pattern, at (x0, y0) of the
 * picture read, that differ. */
static unsigned verify_crop(const QualePicture *pic, unsigned frame, const QualeVideoFormat *file,
                            unsigned x0, unsigned y0)
{
    unsigned bad = 0;
    for (unsigned p = 0; p < pic->plane_count; p++) {
        const unsigned sx = p && file->chroma != QUALE_CHROMA_444 ? 1 : 0;
        const unsigned sy = p && file->chroma == QUALE_CHROMA_420 ? 1 : 0;
        for (unsigned y = 0; y < pic->plane_height[p]; y++)
            for (unsigned x = 0; x < pic->plane_width[p]; x++)
                bad += pic_sample(pic, p, x, y) !=
                       pattern(frame, p, x + (x0 >> sx), y + (y0 >> sy), file->bitdepth);
    }
    return bad;
}

static void test_filter(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_422, 10, 40, 24 };
    Buf b = { 0 };
    make_y4m(&b, &f, "422p10", 4, 0);
    const char *path = temp_write(b.p, b.n);
    buf_free(&b);
    char error[1024];
    QualeVideoReader *r = open_file(path, NULL, "filter");
    if (!r) return;
    int rc = quale_video_filter(&r, "cropp=8:8", error, sizeof(error));
    if (rc == -EPROTONOSUPPORT) {
        /* a build or machine without libavfilter says so, and nothing more */
        CHECK(strstr(error, "libavfilter") != NULL, "no libavfilter: %s", error);
        quale_video_close(&r);
        return;
    }
    /* a graph FFmpeg refuses leaves the video as it was, still readable */
    CHECK(rc == -EINVAL && strstr(error, "No such filter: 'cropp'"), "bad graph: %d: %s", rc,
          error);
    read_all(r, &f, 4, "after a refused graph");
    quale_video_close(&r);

    /* the null filter changes nothing; a crop gives the crop of each frame */
    r = open_file(path, NULL, "filter null");
    rc = r ? quale_video_filter(&r, "null", error, sizeof(error)) : -1;
    CHECK(rc == 0, "null: %d: %s", rc, error);
    if (!rc) read_all(r, &f, 4, "null filter");
    quale_video_close(&r);
    r = open_file(path, NULL, "filter crop");
    rc = r ? quale_video_filter(&r, "crop=20:10:6:4,fps=50", error, sizeof(error)) : -1;
    CHECK(rc == 0, "crop: %d: %s", rc, error);
    if (!rc) {
        QualeVideoFormat got;
        quale_video_get_format(r, &got);
        const QualeVideoFormat want = { QUALE_CHROMA_422, 10, 20, 10 };
        CHECK(same_format(&got, &want), "crop: %ux%u %u-bit", got.width, got.height,
              got.bitdepth);
        unsigned num = 0, den = 0;
        CHECK(quale_video_frame_rate(r, &num, &den) == 0 && num == 50 && den == 1,
              "fps=50: %u/%u", num, den);
        CHECK(quale_video_count_frames(r) == -1 && quale_video_frames_in_file(r) == -1,
              "a filtered video's frames are not known before they are read");
        QualePicture pic;
        if (quale_picture_alloc(&pic, &want) == 0) {
            /* 4 frames at 25 fps are 8 at 50: each twice */
            for (unsigned i = 0; i < 8; i++) {
                rc = quale_video_read(r, &pic);
                CHECK(rc == 1 && verify_crop(&pic, i / 2, &f, 6, 4) == 0,
                      "crop, fps: frame %u: %d %s", i, rc, quale_video_error(r));
            }
            CHECK(quale_video_read(r, &pic) == 0, "crop, fps: the end");
            quale_picture_unref(&pic);
        }
    }
    quale_video_close(&r);

    /* too late: after a read; no reader, no graph */
    r = open_file(path, NULL, "filter late");
    QualePicture pic;
    if (r && quale_picture_alloc(&pic, &f) == 0) {
        CHECK(quale_video_read(r, &pic) == 1, "late: first read");
        QualeVideoReader *before = r;
        CHECK(quale_video_filter(&r, "null", error, sizeof(error)) == -EBUSY && r == before,
              "a graph after a read: %s", error);
        quale_picture_unref(&pic);
    }
    CHECK(quale_video_filter(NULL, "null", error, sizeof(error)) == -EINVAL, "no reader");
    CHECK(quale_video_filter(&r, NULL, error, sizeof(error)) == -EINVAL, "no graph");
    quale_video_close(&r);
}

int main(void)
{
    atexit(remove_temp_files);
    test_av1_film_grain();
    test_gpu_decoding_policy();
    test_y4m_tags();
    test_raw_formats();
    test_y4m_variants();
    test_end_and_truncation();
    test_bad_headers();
    test_wrong_picture();
    test_clamping();
    test_deeper();
    test_planes();
    test_skip();
    test_pipes();
    test_stdin();
    test_sniffing();
    test_decode_on_gpu_refusals();
    test_filter();
    remove_temp_files();
    printf("%u passed, %u failed\n", passed, failed);
    return failed ? 1 : 0;
}
