/*
 * quale-sample: writes a deterministic reference/distorted pair as .y4m (or
 * raw .yuv with --raw), made from the procedural scene of synth.c.
 *
 *   quale-sample [--width W] [--height H] [--frames N] [--chroma 420|422|444|400]
 *                [--bitdepth 8..16] [--strength 0..4] [--raw] OUTDIR
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "synth.h"

static const char *y4m_chroma_tag(const QualeVideoFormat *f)
{
    static char tag[16];
    const char *base = f->chroma == QUALE_CHROMA_400 ? "mono"
                     : f->chroma == QUALE_CHROMA_422 ? "422"
                     : f->chroma == QUALE_CHROMA_444 ? "444" : "420";
    if (f->bitdepth == 8)
        return f->chroma == QUALE_CHROMA_420 ? "420jpeg" : base;
    snprintf(tag, sizeof(tag), "%s%s%u", base, f->chroma == QUALE_CHROMA_400 ? "" : "p",
             f->bitdepth);
    return tag;
}

static int write_picture(FILE *f, const QualePicture *pic)
{
    const unsigned bytes = pic->format.bitdepth > 8 ? 2 : 1;
    unsigned char row[2 * 32768];
    for (unsigned p = 0; p < pic->plane_count; p++) {
        for (unsigned y = 0; y < pic->plane_height[p]; y++) {
            const uint8_t *src = (const uint8_t *)pic->data[p] + (ptrdiff_t)y * pic->stride[p];
            const unsigned w = pic->plane_width[p];
            if (bytes == 1) {
                memcpy(row, src, w);
            } else {
                /* Files hold little-endian samples whatever the host is. */
                const uint16_t *s16 = (const uint16_t *)src;
                for (unsigned x = 0; x < w; x++) {
                    row[2 * x] = (unsigned char)(s16[x] & 0xff);
                    row[2 * x + 1] = (unsigned char)(s16[x] >> 8);
                }
            }
            if (fwrite(row, bytes, w, f) != w) return -EIO;
        }
    }
    return 0;
}

static int parse_number(const char *text, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    const unsigned long v = strtoul(text, &end, 10);
    if (!*text || *end || v < lo || v > hi) return -1;
    *out = (unsigned)v;
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: quale-sample [--width W] [--height H] [--frames N] "
                    "[--chroma 420|422|444|400] [--bitdepth 8..16] [--strength 0..4] [--raw] OUTDIR\n");
}

int main(int argc, char *argv[])
{
    static const struct option options[] = {
        { "width", required_argument, NULL, 'w' },
        { "height", required_argument, NULL, 'h' },
        { "frames", required_argument, NULL, 'n' },
        { "chroma", required_argument, NULL, 'c' },
        { "bitdepth", required_argument, NULL, 'b' },
        { "strength", required_argument, NULL, 's' },
        { "raw", no_argument, NULL, 'r' },
        { NULL, 0, NULL, 0 },
    };
    QualeVideoFormat format = { QUALE_CHROMA_420, 8, 640, 360 };
    unsigned frames = 24, strength = 2, chroma = 420;
    int raw = 0, c;
    while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'w': bad = parse_number(optarg, 1, 32768, &format.width); break;
        case 'h': bad = parse_number(optarg, 1, 32768, &format.height); break;
        case 'n': bad = parse_number(optarg, 1, 1000000, &frames); break;
        case 'b': bad = parse_number(optarg, 8, 16, &format.bitdepth); break;
        case 's': bad = parse_number(optarg, 0, 4, &strength); break;
        case 'r': raw = 1; break;
        case 'c':
            bad = parse_number(optarg, 400, 444, &chroma);
            format.chroma = chroma == 420 ? QUALE_CHROMA_420 : chroma == 422 ? QUALE_CHROMA_422
                          : chroma == 444 ? QUALE_CHROMA_444 : chroma == 400 ? QUALE_CHROMA_400
                          : QUALE_CHROMA_UNKNOWN;
            bad |= format.chroma == QUALE_CHROMA_UNKNOWN;
            break;
        default: bad = 1;
        }
        if (bad) {
            usage();
            return 2;
        }
    }
    if (optind != argc - 1) {
        usage();
        return 2;
    }
    const char *dir = argv[optind];
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "quale-sample: cannot create '%s': %s\n", dir, strerror(errno));
        return 1;
    }

    char path[2][4096];
    FILE *out[2];
    const char *ext = raw ? "yuv" : "y4m";
    for (int i = 0; i < 2; i++) {
        snprintf(path[i], sizeof(path[i]), "%s/sample_%s.%s", dir, i ? "dist" : "ref", ext);
        out[i] = fopen(path[i], "wb");
        if (!out[i]) {
            fprintf(stderr, "quale-sample: cannot write '%s': %s\n", path[i], strerror(errno));
            return 1;
        }
        if (!raw)
            fprintf(out[i], "YUV4MPEG2 W%u H%u F25:1 Ip A1:1 C%s\n", format.width, format.height,
                    y4m_chroma_tag(&format));
    }

    QualePicture ref, dist;
    if (quale_picture_alloc(&ref, &format) || quale_picture_alloc(&dist, &format)) {
        fprintf(stderr, "quale-sample: out of memory\n");
        return 1;
    }
    int err = 0;
    for (unsigned n = 0; n < frames && !err; n++) {
        synth_reference(&ref, n);
        synth_distort(&ref, &dist, n, strength);
        for (int i = 0; i < 2 && !err; i++) {
            if (!raw && fputs("FRAME\n", out[i]) == EOF) err = -EIO;
            if (!err) err = write_picture(out[i], i ? &dist : &ref);
        }
    }
    for (int i = 0; i < 2; i++)
        if (fclose(out[i])) err = -EIO;
    quale_picture_unref(&ref);
    quale_picture_unref(&dist);
    if (err) {
        fprintf(stderr, "quale-sample: writing the sample failed\n");
        return 1;
    }
    printf("%s\n%s\n", path[0], path[1]);
    return 0;
}
