/*
 * The scaler's tables and C reference (src/input/scale.c) against swscale
 * itself with the flags the tool scales with (the method, accurate_rnd and
 * bitexact): every sample of every plane must be equal, for each method,
 * upscales and downscales, odd and tiny sizes, 4:0:0 to 4:4:4, 8 to 14
 * bits, on pictures with noise, edges and both extremes (for the clipping).
 * This is the CPU reference the GPU scalers are held to.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/pixfmt.h>
#include <libswscale/swscale.h>

#include "input/scale.h"
#include "quale/quale.h"

static int passed, failed;

static enum AVPixelFormat pixel_format(enum QualeChroma chroma, unsigned depth)
{
    static const enum AVPixelFormat table[4][4] = {
        /* 8, 10, 12, 14 bits */
        { AV_PIX_FMT_GRAY8, AV_PIX_FMT_GRAY10LE, AV_PIX_FMT_GRAY12LE, AV_PIX_FMT_GRAY14LE },
        { AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV420P12LE,
          AV_PIX_FMT_YUV420P14LE },
        { AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV422P10LE, AV_PIX_FMT_YUV422P12LE,
          AV_PIX_FMT_YUV422P14LE },
        { AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10LE, AV_PIX_FMT_YUV444P12LE,
          AV_PIX_FMT_YUV444P14LE },
    };
    return table[chroma - QUALE_CHROMA_400][(depth - 8) / 2];
}

static uint32_t next_random(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Noise, with blocks of the extremes and sharp edges: the lobes of the
 * filters then overshoot, and both clips are reached. */
static void fill(QualePicture *pic, uint32_t seed)
{
    const unsigned max = (1u << pic->format.bitdepth) - 1;
    for (unsigned p = 0; p < pic->plane_count; p++)
        for (unsigned y = 0; y < pic->plane_height[p]; y++) {
            uint8_t *row = (uint8_t *)pic->data[p] + (ptrdiff_t)y * pic->stride[p];
            for (unsigned x = 0; x < pic->plane_width[p]; x++) {
                unsigned v = next_random(&seed) & max;
                const unsigned block = ((x / 5) + (y / 3)) % 4;
                if (block == 1) v = (x / 5) % 2 ? max : 0;
                if (block == 2) v = (x * 37 + y * 11) % (max + 1);
                if (pic->format.bitdepth > 8)
                    ((uint16_t *)row)[x] = (uint16_t)v;
                else
                    row[x] = (uint8_t)v;
            }
        }
}

static unsigned sample(const QualePicture *pic, unsigned p, unsigned x, unsigned y)
{
    const uint8_t *row = (const uint8_t *)pic->data[p] + (ptrdiff_t)y * pic->stride[p];
    return pic->format.bitdepth > 8 ? ((const uint16_t *)row)[x] : row[x];
}

static const struct {
    const char *name;
    int flags;
} methods[] = {
    { "bicubic", SWS_BICUBIC }, { "bilinear", SWS_BILINEAR }, { "lanczos", SWS_LANCZOS },
    { "neighbor", SWS_POINT },  { "area", SWS_AREA },         { "spline", SWS_SPLINE },
};

static void one_case(const char *method, int flags, enum QualeChroma chroma, unsigned depth,
                     unsigned sw, unsigned sh, unsigned dw, unsigned dh)
{
    const QualeVideoFormat from = { chroma, depth, sw, sh }, to = { chroma, depth, dw, dh };
    QualePicture in = { 0 }, ours = { 0 }, theirs = { 0 };
    ScalePlan plan;
    char why[256] = "";
    char label[160];
    snprintf(label, sizeof(label), "%s %s %u-bit %ux%u -> %ux%u", method,
             quale_chroma_name(chroma), depth, sw, sh, dw, dh);
    if (quale_picture_alloc(&in, &from) || quale_picture_alloc(&ours, &to) ||
        quale_picture_alloc(&theirs, &to)) {
        printf("FAIL %s: out of memory\n", label);
        failed++;
        goto done;
    }
    fill(&in, 0x9e3779b9u ^ (sw * 131 + sh * 7 + depth));
    int err = scale_plan_make(&plan, &from, &to, method, why, sizeof(why));
    if (err) {
        printf("FAIL %s: no plan: %s\n", label, why);
        failed++;
        goto done;
    }
    err = scale_picture(&plan, &in, &ours);
    scale_plan_free(&plan);
    const enum AVPixelFormat fmt = pixel_format(chroma, depth);
    struct SwsContext *sws = sws_getContext((int)sw, (int)sh, fmt, (int)dw, (int)dh, fmt,
                                            flags | SWS_ACCURATE_RND | SWS_BITEXACT, NULL, NULL,
                                            NULL);
    if (err || !sws) {
        printf("FAIL %s: %s\n", label, err ? "scale_picture failed" : "no swscale context");
        failed++;
        sws_freeContext(sws);
        goto done;
    }
    const uint8_t *src[4] = { 0 };
    uint8_t *dst[4] = { 0 };
    int src_stride[4] = { 0 }, dst_stride[4] = { 0 };
    for (unsigned p = 0; p < in.plane_count; p++) {
        src[p] = in.data[p];
        src_stride[p] = (int)in.stride[p];
        dst[p] = theirs.data[p];
        dst_stride[p] = (int)theirs.stride[p];
    }
    sws_scale(sws, src, src_stride, 0, (int)sh, dst, dst_stride);
    sws_freeContext(sws);
    unsigned long differ = 0, total = 0;
    char first[128] = "";
    for (unsigned p = 0; p < ours.plane_count; p++)
        for (unsigned y = 0; y < ours.plane_height[p]; y++)
            for (unsigned x = 0; x < ours.plane_width[p]; x++) {
                total++;
                const unsigned a = sample(&ours, p, x, y), b = sample(&theirs, p, x, y);
                if (a != b && !differ++)
                    snprintf(first, sizeof(first), "plane %u (%u, %u): %u, swscale %u", p, x, y,
                             a, b);
            }
    if (differ) {
        printf("FAIL %s: %lu of %lu samples differ, first %s\n", label, differ, total, first);
        failed++;
    } else {
        passed++;
    }
done:
    quale_picture_unref(&in);
    quale_picture_unref(&ours);
    quale_picture_unref(&theirs);
}

int main(void)
{
    static const unsigned sizes[][4] = {
        { 288, 162, 576, 324 },   /* 2x up: the corpus's half-size encodes */
        { 576, 324, 288, 162 },   /* 2x down */
        { 1280, 720, 1920, 1080 }, /* 720p to 1080p */
        { 960, 540, 1920, 1080 },
        { 640, 360, 1920, 1080 }, /* 3x */
        { 1920, 1080, 1280, 720 },
        { 1920, 1080, 480, 270 }, /* 4x down */
        { 33, 17, 64, 31 },       /* odd sizes */
        { 101, 57, 37, 23 },
        { 7, 5, 3, 3 },           /* tiny: the filter cut to the picture */
        { 3, 3, 16, 9 },
        { 720, 480, 1024, 576 },  /* another aspect */
        { 512, 512, 512, 256 },   /* one direction only */
    };
    static const enum QualeChroma chromas[] = { QUALE_CHROMA_420, QUALE_CHROMA_422,
                                                QUALE_CHROMA_444, QUALE_CHROMA_400 };
    for (unsigned m = 0; m < sizeof(methods) / sizeof(methods[0]); m++)
        for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            const unsigned *z = sizes[s];
            const int large = z[2] * z[3] > 600000 || z[0] * z[1] > 600000;
            for (unsigned c = 0; c < 4; c++)
                for (unsigned depth = 8; depth <= 14; depth += 2) {
                    /* the large sizes in the common formats only, to keep
                     * the test short */
                    if (large && (c > 0 || (depth != 8 && depth != 10))) continue;
                    one_case(methods[m].name, methods[m].flags, chromas[c], depth, z[0], z[1],
                             z[2], z[3]);
                }
        }

    /* What the plan refuses. */
    ScalePlan plan;
    char why[256];
    const QualeVideoFormat a = { QUALE_CHROMA_420, 8, 64, 64 }, b = { QUALE_CHROMA_444, 8, 32, 32 };
    const QualeVideoFormat deep = { QUALE_CHROMA_420, 16, 64, 64 }, deep2 = { QUALE_CHROMA_420, 16, 32, 32 };
    const struct {
        const QualeVideoFormat *from, *to;
        const char *method;
        int err;
    } refusals[] = {
        { &a, &b, "bicubic", -ENOTSUP },     /* another chroma format */
        { &deep, &deep2, "bicubic", -ENOTSUP }, /* 16 bits */
        { &a, &a, "sharp", -EINVAL },        /* no such method */
    };
    for (unsigned i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
        why[0] = '\0';
        const int err = scale_plan_make(&plan, refusals[i].from, refusals[i].to,
                                        refusals[i].method, why, sizeof(why));
        if (err != refusals[i].err || !why[0]) {
            printf("FAIL refusal %u: %d (%s), expected %d\n", i, err, why, refusals[i].err);
            failed++;
            if (!err) scale_plan_free(&plan);
        } else {
            passed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
