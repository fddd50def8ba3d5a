/*
 * SSIMULACRA2, as libjxl's ssimulacra2 tool computes it, on 8-bit RGB
 * pictures made from each YUV frame the way FFmpeg's swscale makes rgb24
 * with the flags accurate_rnd+bitexact (ssimulacra2_rgb.c).  The state and
 * the steps are shared with the unit tests (and later twins).
 */
#ifndef QUALE_SRC_METRICS_SSIMULACRA2_H
#define QUALE_SRC_METRICS_SSIMULACRA2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

/* The YUV matrices swscale knows, in the order of the option's choices. */
enum Ssim2Matrix {
    SSIM2_MATRIX_BT709,
    SSIM2_MATRIX_BT601,
    SSIM2_MATRIX_BT2020,
    SSIM2_MATRIX_FCC,
    SSIM2_MATRIX_SMPTE240M,
};

/* One of swscale's scaling filters, as its initFilter() leaves it: for
 * each output sample, `size` taps from input position pos[i]. */
typedef struct Ssim2Filter {
    unsigned count;   /* output samples */
    unsigned size;    /* taps per output sample */
    int32_t *pos;     /* count entries */
    int16_t *coeff;   /* count * size entries */
} Ssim2Filter;

/* The conversion of one picture format to rgb24, as swscale sets it up. */
typedef struct Ssim2Rgb {
    unsigned width, height, bitdepth;
    enum QualeChroma chroma;
    unsigned chroma_width, chroma_height; /* the input's chroma planes */
    /* swscale's "full chroma interpolation" output (4:4:4 and odd widths):
     * arithmetic per pixel; else a chroma pair per two pixels, by tables */
    bool full_chroma;
    Ssim2Filter hchr; /* chroma, horizontal: 14-bit coefficients */
    Ssim2Filter vchr; /* chroma, vertical: 12-bit coefficients */
    unsigned in_shift; /* input sample * 2^14 >> in_shift: swscale's 15-bit rows */
    /* the table path (yuv2rgb.c's tables, as offsets into ytab) */
    uint8_t ytab[2048];
    int yoffs;
    int64_t crv, cbu, cgu, cgv;
    /* the arithmetic path */
    int y_offset, y_coeff, v2r, v2g, u2g, u2b;
} Ssim2Rgb;

int ssim2_rgb_init(Ssim2Rgb *c, const QualeVideoFormat *f, enum Ssim2Matrix matrix,
                   bool full_range);
void ssim2_rgb_free(Ssim2Rgb *c);
/* Scratch (int16_t samples) that ssim2_rgb_convert() needs. */
size_t ssim2_rgb_scratch_samples(const Ssim2Rgb *c);
/* The picture as packed R, G, B bytes, width * 3 a row. */
void ssim2_rgb_convert(const Ssim2Rgb *c, const QualePicture *pic, uint8_t *rgb,
                       int16_t *scratch);

/* The score of a pair of packed 8-bit sRGB pictures, w x h (at least 8x8);
 * -ENOMEM when memory runs out.  ssimulacra2_score.c compiled as C, and
 * again for AVX2 with FMA (x86/ssimulacra2_avx2.c), where each fmaf is one
 * instruction instead of a call into libm and the loops are vectorised:
 * the same operations, so the same bits (checkasm holds them to it). */
typedef int (*Ssim2ScoreFn)(const uint8_t *ref, const uint8_t *dist, unsigned w, unsigned h,
                            double *score);
int ssim2_score_rgb_c(const uint8_t *ref, const uint8_t *dist, unsigned w, unsigned h,
                      double *score);
int ssim2_score_rgb_avx2(const uint8_t *ref, const uint8_t *dist, unsigned w, unsigned h,
                         double *score);
/* The fastest of them this CPU runs (QUALE_CPU_* flags). */
Ssim2ScoreFn ssim2_score_pick(unsigned cpu_flags);

typedef struct Ssimulacra2State {
    /* options */
    int matrix;        /* enum Ssim2Matrix */
    bool full_range;

    /* set by init */
    Ssim2Rgb rgb;
    Ssim2ScoreFn score;
    unsigned key;
} Ssimulacra2State;

extern const Metric metric_ssimulacra2;

#endif /* QUALE_SRC_METRICS_SSIMULACRA2_H */
