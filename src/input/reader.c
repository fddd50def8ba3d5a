/*
 * What the readers share (video.c, y4m.c, yuv.c, decode.c): error
 * messages, the frame layout of a format, and reading a stream through the
 * bytes sniffed at open.  It calls none of them, so that they all stand on
 * it and not on each other.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "input/reader.h"
#include "quale/quale.h"

int video_reader_fail(struct QualeVideoReader *r, int err, const char *fmt, ...)
{
    int n = snprintf(r->error, sizeof(r->error), "%s: ", r->name);
    if (n >= 0 && (size_t)n < sizeof(r->error)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->error + n, sizeof(r->error) - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return err;
}

void video_reader_quote(char *out, size_t out_size, const char *s, size_t len)
{
    if (!out_size) return;
    size_t n = 0;
    for (; n < len && n + 1 < out_size && s[n]; n++) {
        const unsigned char c = (unsigned char)s[n];
        out[n] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[n] = '\0';
}

int video_reader_set_layout(struct QualeVideoReader *r,
                            const QualeVideoFormat *format,
                            unsigned extra_planes)
{
    char why[128];
    if (quale_video_format_check(format, why, sizeof(why)))
        return video_reader_fail(r, -EINVAL, "%s", why);

    r->format = *format;
    r->file_bitdepth = format->bitdepth;
    r->shift = 0;
    r->plane_count = format->chroma == QUALE_CHROMA_400 ? 1 : 3;
    r->file_planes = r->plane_count + extra_planes;
    if (r->file_planes > READER_MAX_FILE_PLANES)
        return video_reader_fail(r, -EINVAL, "too many planes per frame");
    r->bytes_per_sample = format->bitdepth > 8 ? 2 : 1;

    const unsigned ss_x = format->chroma == QUALE_CHROMA_420 ||
                          format->chroma == QUALE_CHROMA_422;
    const unsigned ss_y = format->chroma == QUALE_CHROMA_420;
    uint64_t frame_bytes = 0;
    for (unsigned p = 0; p < r->file_planes; p++) {
        /* Planes 1 and 2 are chroma; anything after them (alpha) is luma
         * sized, as is plane 0. */
        const int chroma = p == 1 || p == 2;
        r->plane_width[p] = chroma ? (format->width + ss_x) >> ss_x : format->width;
        r->plane_height[p] = chroma ? (format->height + ss_y) >> ss_y : format->height;

        /* format_check bounds each side to 32768, so a row is at most
         * 64 KiB and a plane 2 GiB; the checks keep that true on any
         * size_t should the limit ever grow. */
        const uint64_t row = (uint64_t)r->plane_width[p] * r->bytes_per_sample;
        if (row > SIZE_MAX || (r->plane_height[p] && row > UINT64_MAX / r->plane_height[p]))
            return video_reader_fail(r, -EOVERFLOW, "frame size overflows");
        const uint64_t plane = row * r->plane_height[p];
        if (plane > SIZE_MAX || plane > UINT64_MAX - frame_bytes)
            return video_reader_fail(r, -EOVERFLOW, "frame size overflows");
        r->row_bytes[p] = (size_t)row;
        r->plane_bytes[p] = plane;
        frame_bytes += plane;
    }
    r->frame_bytes = frame_bytes;
    r->plane_mask = (1u << r->plane_count) - 1;
    return 0;
}

size_t reader_read(struct QualeVideoReader *r, void *dst, size_t n)
{
    size_t from_prefix = 0;
    if (r->prefix_pos < r->prefix_len) {
        from_prefix = QUALE_MIN(n, r->prefix_len - r->prefix_pos);
        memcpy(dst, r->prefix + r->prefix_pos, from_prefix);
        r->prefix_pos += from_prefix;
        if (from_prefix == n) return n;
    }
    return from_prefix + fread((unsigned char *)dst + from_prefix, 1, n - from_prefix, r->file);
}

int reader_getc(struct QualeVideoReader *r)
{
    if (r->prefix_pos < r->prefix_len) return r->prefix[r->prefix_pos++];
    return getc(r->file);
}
