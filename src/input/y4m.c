/*
 * YUV4MPEG2 (.y4m): the stream header and the FRAME lines.  The frame
 * payload that follows each FRAME line is plain planar yuv and is read by
 * yuv.c.
 *
 * Header: "YUV4MPEG2" then space-separated tags, each a letter and a value,
 * ended by '\n'.  We use W (width), H (height) and C (chroma and bit depth),
 * and the X-field XYSCSS= only when C is absent; F (frame rate) and I
 * (interlacing: for a filter graph) are kept.  A (aspect ratio), other X-
 * fields and letters the spec may add later do not change how samples are
 * stored, so they are skipped without being checked: a writer's odd value
 * there must not stop a run.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "input/reader.h"

#define Y4M_SIGNATURE "YUV4MPEG2"
#define Y4M_SIGNATURE_LEN 9

/* What a C tag (or XYSCSS value) says about the samples. */
typedef struct Y4mChroma {
    enum QualeChroma chroma;
    unsigned bitdepth;
    unsigned alpha; /* a luma-sized alpha plane follows V in every frame */
} Y4mChroma;

/* The 8-bit names.  The 4:2:0 variants differ only in where the chroma
 * samples sit, which matters for resampling, not for reading them. */
static const struct {
    const char *name;
    Y4mChroma value;
} y4m_names[] = {
    { "420jpeg",  { QUALE_CHROMA_420, 8, 0 } },
    { "420mpeg2", { QUALE_CHROMA_420, 8, 0 } },
    { "420paldv", { QUALE_CHROMA_420, 8, 0 } },
    { "420",      { QUALE_CHROMA_420, 8, 0 } },
    { "422",      { QUALE_CHROMA_422, 8, 0 } },
    { "444",      { QUALE_CHROMA_444, 8, 0 } },
    { "444alpha", { QUALE_CHROMA_444, 8, 1 } },
    { "mono",     { QUALE_CHROMA_400, 8, 0 } },
    /* libavif writes XYSCSS=400 for monochrome. */
    { "400",      { QUALE_CHROMA_400, 8, 0 } },
};

/* "9".."16" with no sign, leading zero or trailing bytes. */
static int parse_depth(const char *s, unsigned *depth)
{
    const size_t len = strlen(s);
    if (len < 1 || len > 2 || s[0] < '1' || s[0] > '9') return -1;
    if (len == 2 && (s[1] < '0' || s[1] > '9')) return -1;
    const unsigned d = len == 1 ? (unsigned)(s[0] - '0')
                                : (unsigned)(s[0] - '0') * 10 + (unsigned)(s[1] - '0');
    if (d < 9 || d > 16) return -1;
    *depth = d;
    return 0;
}

/* Parses a chroma name: the 8-bit names above, and the high bit depth
 * forms FFmpeg, libaom, libvpx and libavif write: "420p10", "422p12",
 * "444p16", "mono10" (any depth 9 to 16).  Case is ignored so that the
 * upper-case XYSCSS spelling ("420P10", "420JPEG") parses too. */
static int parse_chroma(const char *s, size_t len, Y4mChroma *out)
{
    char name[16];
    if (len == 0 || len >= sizeof(name)) return -1;
    for (size_t i = 0; i < len; i++) {
        const char c = s[i];
        name[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    name[len] = '\0';

    for (size_t i = 0; i < QUALE_ARRAY_SIZE(y4m_names); i++) {
        if (!strcmp(name, y4m_names[i].name)) {
            *out = y4m_names[i].value;
            return 0;
        }
    }
    static const struct {
        const char *prefix;
        enum QualeChroma chroma;
    } deep[] = {
        { "420p", QUALE_CHROMA_420 },
        { "422p", QUALE_CHROMA_422 },
        { "444p", QUALE_CHROMA_444 },
        { "mono", QUALE_CHROMA_400 },
    };
    for (size_t i = 0; i < QUALE_ARRAY_SIZE(deep); i++) {
        const size_t n = strlen(deep[i].prefix);
        unsigned depth;
        if (!strncmp(name, deep[i].prefix, n) && !parse_depth(name + n, &depth)) {
            out->chroma = deep[i].chroma;
            out->bitdepth = depth;
            out->alpha = 0;
            return 0;
        }
    }
    return -1;
}

/* A W or H value: decimal digits only, 1 to QUALE_MAX_DIMENSION.  The
 * accumulator stops growing past the limit, so no length of digits can
 * overflow it. */
static int parse_dimension(struct QualeVideoReader *r, const char *what,
                           const char *s, size_t len, unsigned *value)
{
    char quoted[40];
    video_reader_quote(quoted, sizeof(quoted), s, len);
    if (len == 0)
        return video_reader_fail(r, -EPROTO, "empty %s in the YUV4MPEG2 header", what);
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return video_reader_fail(r, -EPROTO, "invalid %s '%s' in the YUV4MPEG2 header",
                                     what, quoted);
        if (v <= QUALE_MAX_DIMENSION) v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v == 0 || v > QUALE_MAX_DIMENSION)
        return video_reader_fail(r, -EPROTO, "%s %s is out of range (1 to %u)",
                                 what, quoted, QUALE_MAX_DIMENSION);
    *value = (unsigned)v;
    return 0;
}

static int read_error(struct QualeVideoReader *r, const char *where)
{
    const int e = errno ? errno : EIO;
    return video_reader_fail(r, -EIO, "read error in %s: %s", where, strerror(e));
}

/* The stream header's line into line (its signature checked, NUL
 * bytes refused, a CR before the LF dropped), terminated: 0, or the
 * error said. */
static int read_header_line(struct QualeVideoReader *r, char line[Y4M_MAX_LINE + 1])
{
    errno = 0;
    size_t len = reader_read(r, line, Y4M_SIGNATURE_LEN + 1);
    if (len < Y4M_SIGNATURE_LEN + 1 && ferror(r->file))
        return read_error(r, "the YUV4MPEG2 header");
    if (len == 0)
        return video_reader_fail(r, -EPROTO, "empty file, not a YUV4MPEG2 file "
                                 "(no '" Y4M_SIGNATURE " ' signature)");
    /* "YUV4MPEG2\n" is accepted here so that its error is the more useful
     * "missing W" rather than "no signature". */
    if (len < Y4M_SIGNATURE_LEN + 1 ||
        memcmp(line, Y4M_SIGNATURE, Y4M_SIGNATURE_LEN) != 0 ||
        (line[Y4M_SIGNATURE_LEN] != ' ' && line[Y4M_SIGNATURE_LEN] != '\n'))
        return video_reader_fail(r, -EPROTO, "not a YUV4MPEG2 file (no '"
                                 Y4M_SIGNATURE " ' signature)");

    if (line[Y4M_SIGNATURE_LEN] == '\n') {
        len = Y4M_SIGNATURE_LEN;
    } else {
        /* The rest of the line, byte by byte: the payload starts right
         * after the '\n', so we must not read past it.  It is one short
         * line per file, so getc()'s cost does not matter. */
        int c;
        while ((c = reader_getc(r)) != EOF && c != '\n') {
            if (len >= Y4M_MAX_LINE)
                return video_reader_fail(r, -EPROTO,
                                         "YUV4MPEG2 header is longer than %d bytes "
                                         "(damaged file?)", Y4M_MAX_LINE);
            line[len++] = (char)c;
        }
        if (c == EOF) {
            if (ferror(r->file)) return read_error(r, "the YUV4MPEG2 header");
            return video_reader_fail(r, -EPROTO,
                                     "YUV4MPEG2 header is truncated (the file ends before "
                                     "its end of line)");
        }
    }
    /* The tags are parsed as C strings below. */
    if (memchr(line, '\0', len))
        return video_reader_fail(r, -EPROTO, "YUV4MPEG2 header contains a NUL byte");
    /* Tolerate a header written with CRLF; the payload is binary anyway. */
    if (len > Y4M_SIGNATURE_LEN && line[len - 1] == '\r') len--;
    line[len] = '\0';

    return 0;
}

typedef struct Y4mTags {
    unsigned width, height;
    const char *chroma; /* the C tag, else XYSCSS=, else NULL */
    size_t chroma_len;
    size_t chroma_skip; /* of "C" or "XYSCSS=" */
} Y4mTags;

/* The header's tags: the size, the chroma tag and the frame rate, which
 * goes into the reader.  0, or the error said. */
static int parse_tags(struct QualeVideoReader *r, const char *line, Y4mTags *out)
{
    unsigned width = 0, height = 0;
    const char *chroma_tag = NULL, *xyscss = NULL;
    size_t chroma_len = 0, xyscss_len = 0;
    const char *p = line + Y4M_SIGNATURE_LEN;
    for (;;) {
        while (*p == ' ') p++;
        if (!*p) break;
        const char *tag = p;
        while (*p && *p != ' ') p++;
        const size_t tag_len = (size_t)(p - tag);
        int err = 0;
        switch (tag[0]) {
        case 'W':
            err = parse_dimension(r, "width", tag + 1, tag_len - 1, &width);
            break;
        case 'H':
            err = parse_dimension(r, "height", tag + 1, tag_len - 1, &height);
            break;
        case 'C':
            chroma_tag = tag;
            chroma_len = tag_len;
            break;
        case 'F': {
            /* The frame rate, for the caller to compare (never an error:
             * a damaged F tag does not change how samples are stored). */
            unsigned long long num = 0, den = 0;
            char tail;
            char text[48];
            if (tag_len - 1 < sizeof(text)) {
                memcpy(text, tag + 1, tag_len - 1);
                text[tag_len - 1] = '\0';
                if (sscanf(text, "%llu:%llu%c", &num, &den, &tail) == 2 && num && den &&
                    num <= UINT32_MAX && den <= UINT32_MAX) {
                    r->rate_num = (unsigned)num;
                    r->rate_den = (unsigned)den;
                }
            }
            break;
        }
        case 'X':
            if (tag_len >= 7 && !memcmp(tag, "XYSCSS=", 7)) {
                xyscss = tag;
                xyscss_len = tag_len;
            }
            break;
        case 'I':
            /* Which field comes first, for a filter graph's deinterlacer
             * (as FFmpeg's y4m reader tells it); anything else: none. */
            r->field_order = tag_len == 2 && tag[1] == 't' ? READER_FIELDS_TOP_FIRST
                             : tag_len == 2 && tag[1] == 'b' ? READER_FIELDS_BOTTOM_FIRST
                             : READER_PROGRESSIVE;
            break;
        default:
            /* A and unknown tags: see the top of the file. */
            break;
        }
        if (err) return err;
    }
    *out = (Y4mTags){ width, height, chroma_tag ? chroma_tag : xyscss,
                      chroma_tag ? chroma_len : xyscss_len, chroma_tag ? 1 : 7 };
    return 0;
}

int y4m_open(struct QualeVideoReader *r)
{
    char line[Y4M_MAX_LINE + 1];
    Y4mTags t;
    int err = read_header_line(r, line);
    if (!err) err = parse_tags(r, line, &t);
    if (err) return err;
    const unsigned width = t.width, height = t.height;
    if (!width)
        return video_reader_fail(r, -EPROTO, "YUV4MPEG2 header has no width (W tag)");
    if (!height)
        return video_reader_fail(r, -EPROTO, "YUV4MPEG2 header has no height (H tag)");

    /* C wins over XYSCSS; with neither, the spec's default is 420jpeg. */
    Y4mChroma chroma = { QUALE_CHROMA_420, 8, 0 };
    const char *source = t.chroma;
    const size_t source_len = t.chroma_len, skip = t.chroma_skip;
    if (source && parse_chroma(source + skip, source_len - skip, &chroma)) {
        char quoted[48];
        video_reader_quote(quoted, sizeof(quoted), source, source_len);
        return video_reader_fail(r, -ENOTSUP,
                                 "unsupported chroma format '%s' (supported: 420jpeg, "
                                 "420mpeg2, 420paldv, 420, 422, 444, 444alpha, mono, "
                                 "and 420pN, 422pN, 444pN, monoN for N = 9 to 16)",
                                 quoted);
    }

    const QualeVideoFormat format = {
        .chroma = chroma.chroma,
        .bitdepth = chroma.bitdepth,
        .width = width,
        .height = height,
    };
    return video_reader_set_layout(r, &format, chroma.alpha);
}

int y4m_read_frame_header(struct QualeVideoReader *r)
{
    static const char marker[] = "FRAME";
    const size_t marker_len = sizeof(marker) - 1;
    char head[6];

    /* One fread for "FRAME" and the byte after it; in the usual
     * "FRAME\n" that is the whole line. */
    errno = 0;
    const size_t n = reader_read(r, head, sizeof(head));
    r->position += n;
    if (n < sizeof(head) && ferror(r->file)) {
        char where[64];
        snprintf(where, sizeof(where), "frame %llu", (unsigned long long)r->frame);
        return read_error(r, where);
    }
    if (n == 0) return 0; /* clean end: nothing after the last frame */

    const size_t cmp = QUALE_MIN(n, marker_len);
    if (memcmp(head, marker, cmp) != 0 ||
        (n == sizeof(head) && head[marker_len] != '\n' && head[marker_len] != ' ')) {
        char quoted[8];
        video_reader_quote(quoted, sizeof(quoted), head, n);
        return video_reader_fail(r, -EPROTO,
                                 "frame %llu does not start with a FRAME marker "
                                 "(found '%s'; damaged file or wrong frame size?)",
                                 (unsigned long long)r->frame, quoted);
    }
    if (n < sizeof(head))
        return video_reader_fail(r, -EPROTO,
                                 "frame %llu is truncated: the file ends inside its "
                                 "FRAME marker", (unsigned long long)r->frame);
    if (head[marker_len] == '\n') return 1;

    /* Frame parameters (" Ixx Xyyy=zzz"): nothing in them changes the
     * payload's layout, so they are skipped up to the '\n', within the same
     * bound as the stream header. */
    size_t len = sizeof(head);
    int c;
    while ((c = reader_getc(r)) != EOF && c != '\n') {
        if (++len > Y4M_MAX_LINE)
            return video_reader_fail(r, -EPROTO,
                                     "frame %llu: FRAME line is longer than %d bytes "
                                     "(damaged file?)", (unsigned long long)r->frame,
                                     Y4M_MAX_LINE);
    }
    r->position += len - sizeof(head) + (c == '\n');
    if (c == EOF) {
        if (ferror(r->file)) {
            char where[64];
            snprintf(where, sizeof(where), "frame %llu", (unsigned long long)r->frame);
            return read_error(r, where);
        }
        return video_reader_fail(r, -EPROTO,
                                 "frame %llu is truncated: the file ends inside its "
                                 "FRAME line", (unsigned long long)r->frame);
    }
    return 1;
}
