/*
 * ssimulacra2's pieces:
 *  - its YUV to RGB conversion against swscale itself (the libswscale this
 *    build links), set up as FFmpeg 7.1's scale filter sets it for an
 *    untagged frame going to rgb24 with accurate_rnd+bitexact: centre-sited
 *    input chroma, no position for the output, the matrix and range given; every
 *    byte of random pictures of 4:2:0, 4:2:2 and 4:4:4, 8 to 12 bits, even
 *    and odd sizes, each matrix, both ranges;
 *  - the score: 100 for identical pictures, below for different ones,
 *    symmetric in neither, the same on a second run, and an error (not a
 *    crash) under 8x8.
 * With an argument list (FILE W H CHROMA BITDEPTH FRAME OUT [MATRIX]) it
 * writes one frame of a raw YUV file as our rgb24 bytes to OUT instead:
 * the golden script compares it with FFmpeg's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/pixfmt.h>
#include <libswscale/swscale.h>

#include "metrics/ssimulacra2/ssimulacra2.h"
#include "test.h"

static uint32_t rng_state = 12345;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static enum AVPixelFormat pix_fmt(enum QualeChroma chroma, unsigned depth)
{
    static const enum AVPixelFormat f[3][6] = {
        { AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P9LE, AV_PIX_FMT_YUV420P10LE,
          AV_PIX_FMT_YUV420P12LE, AV_PIX_FMT_YUV420P14LE, AV_PIX_FMT_YUV420P16LE },
        { AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV422P9LE, AV_PIX_FMT_YUV422P10LE,
          AV_PIX_FMT_YUV422P12LE, AV_PIX_FMT_YUV422P14LE, AV_PIX_FMT_YUV422P16LE },
        { AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P9LE, AV_PIX_FMT_YUV444P10LE,
          AV_PIX_FMT_YUV444P12LE, AV_PIX_FMT_YUV444P14LE, AV_PIX_FMT_YUV444P16LE },
    };
    const int c = chroma == QUALE_CHROMA_420 ? 0 : chroma == QUALE_CHROMA_422 ? 1 : 2;
    const int d = depth == 8 ? 0 : depth == 9 ? 1 : depth == 10 ? 2 : depth == 12 ? 3
                : depth == 14 ? 4 : 5;
    return f[c][d];
}

static const int sws_matrix[] = { SWS_CS_ITU709, SWS_CS_ITU601, SWS_CS_BT2020, SWS_CS_FCC,
                                  SWS_CS_SMPTE240M };

/* swscale's rgb24 of the picture, set up as FFmpeg 7.1's scale filter does. */
static int swscale_rgb(const QualePicture *pic, enum Ssim2Matrix matrix, bool full_range,
                       uint8_t *out)
{
    const QualeVideoFormat *f = &pic->format;
    struct SwsContext *s = sws_alloc_context();
    if (!s) return -ENOMEM;
    const int ssx = f->chroma != QUALE_CHROMA_444, ssy = f->chroma == QUALE_CHROMA_420;
    av_opt_set_int(s, "srcw", f->width, 0);
    av_opt_set_int(s, "srch", f->height, 0);
    av_opt_set_int(s, "src_format", pix_fmt(f->chroma, f->bitdepth), 0);
    av_opt_set_int(s, "dstw", f->width, 0);
    av_opt_set_int(s, "dsth", f->height, 0);
    av_opt_set_int(s, "dst_format", AV_PIX_FMT_RGB24, 0);
    av_opt_set(s, "sws_flags", "accurate_rnd+bitexact", 0);
    av_opt_set_int(s, "src_range", full_range, 0);
    /* centre siting as the filter's calc_chroma_pos() gives it: -513 for
     * an axis without subsampling (the output's both) */
    av_opt_set_int(s, "src_h_chr_pos", ssx ? 128 : -513, 0);
    av_opt_set_int(s, "src_v_chr_pos", ssy ? 128 : -513, 0);
    av_opt_set_int(s, "dst_h_chr_pos", -513, 0);
    av_opt_set_int(s, "dst_v_chr_pos", -513, 0);
    int ret = sws_init_context(s, NULL, NULL);
    if (ret >= 0) {
        const int *inv = sws_getCoefficients(sws_matrix[matrix]);
        ret = sws_setColorspaceDetails(s, inv, full_range, inv, 1, 0, 1 << 16, 1 << 16);
    }
    if (ret >= 0) {
        const uint8_t *src[4] = { pic->data[0], pic->data[1], pic->data[2], NULL };
        const int stride[4] = { (int)pic->stride[0], (int)pic->stride[1], (int)pic->stride[2], 0 };
        uint8_t *dst[4] = { out, NULL, NULL, NULL };
        const int dst_stride[4] = { (int)f->width * 3, 0, 0, 0 };
        ret = sws_scale(s, src, stride, 0, (int)f->height, dst, dst_stride) == (int)f->height
            ? 0 : -EINVAL;
    }
    sws_freeContext(s);
    return ret;
}

static void fill_random(QualePicture *pic)
{
    for (unsigned p = 0; p < 3; p++) {
        for (unsigned y = 0; y < pic->plane_height[p]; y++) {
            uint8_t *row = (uint8_t *)pic->data[p] + (ptrdiff_t)y * pic->stride[p];
            for (unsigned x = 0; x < pic->plane_width[p]; x++) {
                /* smooth areas and random detail both: the bicubic filter
                 * overshoots at edges, the tables clip there */
                const uint32_t r = rng();
                const unsigned v = (r & 3) ? (x * 7 + y * 3 + p * 50) : (r >> 8);
                if (pic->format.bitdepth > 8)
                    ((uint16_t *)row)[x] = (uint16_t)(v % (1u << pic->format.bitdepth));
                else
                    row[x] = (uint8_t)v;
            }
        }
    }
}

static void check_conversion(enum QualeChroma chroma, unsigned depth, unsigned w, unsigned h,
                             enum Ssim2Matrix matrix, bool full_range)
{
    const QualeVideoFormat f = { chroma, depth, w, h };
    QualePicture pic;
    Ssim2Rgb c;
    if (quale_picture_alloc(&pic, &f) || ssim2_rgb_init(&c, &f, matrix, full_range)) {
        CHECK(!"allocation");
        return;
    }
    fill_random(&pic);
    uint8_t *ours = malloc((size_t)w * h * 3), *theirs = malloc((size_t)w * h * 3);
    int16_t *scratch = malloc(ssim2_rgb_scratch_samples(&c) * sizeof(int16_t));
    if (ours && theirs && scratch) {
        ssim2_rgb_convert(&c, &pic, ours, scratch);
        const int ret = swscale_rgb(&pic, matrix, full_range, theirs);
        CHECK(ret == 0);
        size_t diff = 0, first = 0;
        for (size_t i = (size_t)w * h * 3; i-- > 0;)
            if (ours[i] != theirs[i]) {
                diff++;
                first = i;
            }
        if (diff)
            fprintf(stderr, "%s %u-bit %ux%u matrix %d range %d: %zu bytes differ, first at "
                    "pixel (%zu, %zu) channel %zu: ours %u, swscale %u\n",
                    quale_chroma_name(chroma), depth, w, h, (int)matrix, (int)full_range, diff,
                    first / 3 % w, first / 3 / w, first % 3, ours[first], theirs[first]);
        CHECK(ret == 0 && diff == 0);
    } else {
        CHECK(!"allocation");
    }
    free(ours);
    free(theirs);
    free(scratch);
    ssim2_rgb_free(&c);
    quale_picture_unref(&pic);
}

static void check_score(void)
{
    const unsigned w = 64, h = 48;
    uint8_t *a = malloc(w * h * 3), *b = malloc(w * h * 3);
    if (!a || !b) {
        CHECK(!"allocation");
        free(a);
        free(b);
        return;
    }
    for (size_t i = 0; i < (size_t)w * h * 3; i++) {
        a[i] = (uint8_t)((i * 37 / 3) ^ (i / 192));
        b[i] = (uint8_t)(a[i] + ((rng() & 7) == 0 ? 9 : 0));
    }
    double same = 0, diff = 0, again = 0;
    CHECK(ssim2_score_rgb_c(a, a, w, h, &same) == 0);
    CHECK(same == 100.0);
    CHECK(ssim2_score_rgb_c(a, b, w, h, &diff) == 0);
    /* scores go below zero for heavy damage: one sample in eight off */
    CHECK(diff < 100.0);
    CHECK(ssim2_score_rgb_c(a, b, w, h, &again) == 0);
    CHECK(diff == again);
    CHECK(ssim2_score_rgb_c(a, b, 7, 8, &again) == -EINVAL);
    /* small pictures have fewer scales: 8x8 has 2, still a score */
    CHECK(ssim2_score_rgb_c(a, b, 8, 8, &again) == 0 && again < 100.0);
    free(a);
    free(b);
}

static int dump(char **argv, int argc)
{
    const unsigned w = (unsigned)atoi(argv[2]), h = (unsigned)atoi(argv[3]);
    const unsigned depth = (unsigned)atoi(argv[5]), frame = (unsigned)atoi(argv[6]);
    const enum QualeChroma chroma = !strcmp(argv[4], "444") ? QUALE_CHROMA_444
                                  : !strcmp(argv[4], "422") ? QUALE_CHROMA_422
                                                            : QUALE_CHROMA_420;
    const enum Ssim2Matrix matrix = argc > 8 ? (enum Ssim2Matrix)atoi(argv[8]) : SSIM2_MATRIX_BT709;
    const QualeVideoFormat f = { chroma, depth, w, h };
    QualePicture pic;
    Ssim2Rgb c;
    if (quale_picture_alloc(&pic, &f) || ssim2_rgb_init(&c, &f, matrix, false)) return 1;
    FILE *in = fopen(argv[1], "rb");
    const size_t bps = depth > 8 ? 2 : 1;
    size_t frame_bytes = 0;
    for (unsigned p = 0; p < 3; p++) frame_bytes += (size_t)pic.plane_width[p] * pic.plane_height[p] * bps;
    int ok = in && fseek(in, (long)(frame_bytes * frame), SEEK_SET) == 0;
    for (unsigned p = 0; p < 3 && ok; p++)
        for (unsigned y = 0; y < pic.plane_height[p] && ok; y++)
            ok = fread((uint8_t *)pic.data[p] + (ptrdiff_t)y * pic.stride[p], bps,
                       pic.plane_width[p], in) == pic.plane_width[p];
    if (in) fclose(in);
    uint8_t *rgb = malloc((size_t)w * h * 3);
    int16_t *scratch = malloc(ssim2_rgb_scratch_samples(&c) * sizeof(int16_t));
    FILE *out = ok && rgb && scratch ? fopen(argv[7], "wb") : NULL;
    if (out) {
        ssim2_rgb_convert(&c, &pic, rgb, scratch);
        ok = fwrite(rgb, 3, (size_t)w * h, out) == (size_t)w * h;
        ok = !fclose(out) && ok;
    }
    free(rgb);
    free(scratch);
    ssim2_rgb_free(&c);
    quale_picture_unref(&pic);
    return out && ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 8) return dump(argv, argc);
    av_log_set_level(AV_LOG_ERROR); /* swscale's notes on its 2-tap path */
    static const enum QualeChroma chromas[] = { QUALE_CHROMA_420, QUALE_CHROMA_422,
                                                QUALE_CHROMA_444 };
    /* small heights: 4:2:0 chroma of 3 and 4 rows gets swscale's 1- and
     * 2-tap vertical filters */
    static const unsigned sizes[][2] = { { 64, 48 }, { 37, 21 }, { 8, 8 }, { 176, 99 },
                                         { 10, 9 }, { 12, 7 }, { 12, 6 }, { 13, 5 } };
    for (size_t c = 0; c < 3; c++)
        for (unsigned depth = 8; depth <= 12; depth += 2)
            for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
                check_conversion(chromas[c], depth, sizes[s][0], sizes[s][1],
                                 (enum Ssim2Matrix)((c + s) % 5), (s & 1) != 0);
    /* the other depths swscale reads: 9, 14 and 16 bits */
    static const unsigned more_depths[] = { 9, 14, 16 };
    for (size_t c = 0; c < 3; c++)
        for (size_t d = 0; d < 3; d++)
            check_conversion(chromas[c], more_depths[d], d == 1 ? 39 : 36, 22, SSIM2_MATRIX_BT709,
                             d == 1);
    /* a 1080p-wide picture of every matrix, limited range */
    for (int m = 0; m < 5; m++) check_conversion(QUALE_CHROMA_420, 8, 1920, 16, (enum Ssim2Matrix)m, false);
    check_score();
    return test_summary();
}
