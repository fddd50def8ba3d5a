/*
 * Fuzz target: the YUV4MPEG2 reader, on any bytes.
 *
 * The input is read twice, as a memory stream (fmemopen() through
 * quale_video_open_stream(): no file descriptor, so skips read and
 * discard) and as a regular file (a memfd through quale_video_open(): its
 * own stdio buffer, skips seek within the file size), with the same
 * sequence of reads and skips.  Both must give the same results, the same
 * pictures and the same messages.  And for any input:
 *  - open either succeeds with a valid format or fails with -EPROTO,
 *    -ENOTSUP, -EINVAL, -EOVERFLOW, -ENODATA (nothing at all: the messages
 *    differ, a file being "empty" where a stream "ended") or
 *    -EPROTONOSUPPORT (a container's signature) and a printable message
 *    naming the input;
 *  - a read returns 1, 0 or -EPROTO; after 0 it returns 0 again, after an
 *    error the same error again, with a printable message;
 *  - 9- to 15-bit samples read are never above the bit depth's maximum;
 *  - a NULL picture is refused without harming the reader.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "quale/quale.h"

/* Pictures up to this size are read; larger frames are only skipped. */
#define FUZZ_MAX_PICTURE_BYTES ((uint64_t)4 << 20)
#define FUZZ_OPS 12

typedef struct Trace {
    int open;
    char open_error[512];
    QualeVideoFormat format;
    unsigned ops;
    int ret[FUZZ_OPS];
    uint64_t hash[FUZZ_OPS];
    char error[512]; /* the last error, without the input's name */
    uint64_t clamped;
} Trace;

static uint64_t frame_bytes(const QualeVideoFormat *f)
{
    const unsigned bps = f->bitdepth > 8 ? 2 : 1;
    const uint64_t luma = (uint64_t)f->width * f->height;
    uint64_t chroma = 0;
    switch (f->chroma) {
    case QUALE_CHROMA_420: chroma = (uint64_t)((f->width + 1) / 2) * ((f->height + 1) / 2); break;
    case QUALE_CHROMA_422: chroma = (uint64_t)((f->width + 1) / 2) * f->height; break;
    case QUALE_CHROMA_444: chroma = luma; break;
    default: break;
    }
    return (luma + 2 * chroma) * bps;
}

/* FNV-1a over the rows of the planes in mask; checks the clamp. */
static uint64_t hash_picture(const QualePicture *pic, unsigned mask)
{
    uint64_t h = 1469598103934665603u;
    const unsigned depth = pic->format.bitdepth;
    const unsigned max = (1u << depth) - 1;
    for (unsigned p = 0; p < pic->plane_count; p++) {
        if (!(mask >> p & 1)) continue;
        const size_t row = (size_t)pic->plane_width[p] * (depth > 8 ? 2 : 1);
        for (unsigned y = 0; y < pic->plane_height[p]; y++) {
            const uint8_t *r = (const uint8_t *)pic->data[p] + (size_t)y * (size_t)pic->stride[p];
            for (size_t i = 0; i < row; i++) h = (h ^ r[i]) * 1099511628211u;
            if (depth > 8 && depth < 16) {
                const uint16_t *s = (const uint16_t *)(const void *)r;
                for (unsigned x = 0; x < pic->plane_width[p]; x++) FUZZ_CHECK(s[x] <= max);
            }
        }
    }
    return h;
}

/* The message without its "<name>: " prefix, checked for form. */
static const char *strip_name(const char *message, const char *name)
{
    FUZZ_CHECK(message[0] != '\0');
    FUZZ_CHECK(fuzz_printable(message));
    const size_t n = strlen(name);
    FUZZ_CHECK(!strncmp(message, name, n) && message[n] == ':' && message[n + 1] == ' ');
    return message + n + 2;
}

static void run(Trace *t, QualeVideoReader *r, const char *name, bool poke)
{
    quale_video_get_format(r, &t->format);
    FUZZ_CHECK(quale_video_format_check(&t->format, NULL, 0) == 0);

    QualePicture pic;
    memset(&pic, 0, sizeof(pic));
    const bool have_pic = frame_bytes(&t->format) <= FUZZ_MAX_PICTURE_BYTES &&
                          quale_picture_alloc(&pic, &t->format) == 0;
    if (have_pic) {
        for (unsigned p = 0; p < pic.plane_count; p++)
            memset(pic.data[p], 0, (size_t)pic.stride[p] * pic.plane_height[p]);
    }
    if (poke) {
        /* The caller's mistake: refused, the reader unharmed (the other
         * run, which does not poke, must see the same frames). */
        FUZZ_CHECK(quale_video_read(r, NULL) == -EINVAL);
    }

    for (t->ops = 0; t->ops < FUZZ_OPS;) {
        const unsigned op = t->ops % 4;
        const unsigned mask = op == 2 ? 1u : 7u;
        int ret;
        if ((op == 0 || op == 2) && have_pic) {
            quale_video_set_planes(r, mask);
            ret = quale_video_read(r, &pic);
            if (ret == 1) t->hash[t->ops] = hash_picture(&pic, mask);
        } else {
            ret = quale_video_skip(r, op == 3 ? 2 : 1);
        }
        t->ret[t->ops++] = ret;
        FUZZ_CHECK(ret == 1 || ret == 0 || ret == -EPROTO || ret == -ENOMEM);
        if (ret == 1) continue;
        /* The end and errors stick. */
        FUZZ_CHECK(quale_video_skip(r, 1) == ret);
        if (have_pic) FUZZ_CHECK(quale_video_read(r, &pic) == ret);
        if (ret < 0)
            snprintf(t->error, sizeof(t->error), "%s", strip_name(quale_video_error(r), name));
        break;
    }
    t->clamped = quale_video_clamped_samples(r);
    quale_picture_unref(&pic);
}

static void check_open_failure(int err, const char *error, const char *name, Trace *t)
{
    FUZZ_CHECK(err == -EPROTO || err == -ENOTSUP || err == -EINVAL || err == -EOVERFLOW ||
               err == -ENOMEM || err == -ENODATA || err == -EPROTONOSUPPORT);
    snprintf(t->open_error, sizeof(t->open_error), "%s", strip_name(error, name));
}

int quale_fuzz_y4m(const uint8_t *data, size_t size)
{
    static char empty[1];
    Trace a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    char error[1024];

    /* A: a memory stream, which has no descriptor. */
    FILE *f = fmemopen(size ? (void *)(uintptr_t)data : empty, size, "rb");
    if (!f) return 0;
    QualeVideoReader *r = NULL;
    a.open = quale_video_open_stream(&r, f, "fuzz", NULL, error, sizeof(error));
    if (a.open) {
        FUZZ_CHECK(r == NULL);
        check_open_failure(a.open, error, "fuzz", &a);
    } else {
        FUZZ_CHECK(r != NULL && error[0] == '\0');
        run(&a, r, "fuzz", true);
    }
    quale_video_close(&r);
    fclose(f);

    /* B: a regular file opened by path. */
    char path[64];
    const int fd = fuzz_memfd(data, size, path, sizeof(path));
    if (fd < 0) return 0;
    b.open = quale_video_open(&r, path, NULL, error, sizeof(error));
    if (b.open) {
        check_open_failure(b.open, error, path, &b);
    } else {
        run(&b, r, path, false);
    }
    quale_video_close(&r);
    close(fd);

    FUZZ_CHECK(a.open == b.open);
    FUZZ_CHECK(a.open == -ENODATA || !strcmp(a.open_error, b.open_error));
    FUZZ_CHECK(!memcmp(&a.format, &b.format, sizeof(a.format)));
    FUZZ_CHECK(a.ops == b.ops);
    for (unsigned i = 0; i < a.ops; i++) {
        FUZZ_CHECK(a.ret[i] == b.ret[i]);
        FUZZ_CHECK(a.hash[i] == b.hash[i]);
    }
    FUZZ_CHECK(!strcmp(a.error, b.error));
    FUZZ_CHECK(a.clamped == b.clamped);
    return 0;
}

FUZZ_TARGET(quale_fuzz_y4m)
