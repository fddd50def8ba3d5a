/*
 * XPSNR's state and the steps from a picture's block sums to its keys,
 * shared by the C reference and (later) its SIMD and GPU twins.
 */
#ifndef QUALE_SRC_METRICS_XPSNR_H
#define QUALE_SRC_METRICS_XPSNR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

/* The sums of a frame (xpsnr_tmpl.c), at the instruction set the CPU has. */
typedef struct XpsnrDsp {
    uint64_t (*highpass)(const int16_t *o, ptrdiff_t w, int xa, int ya, int wa, int ha);
    uint64_t (*temporal)(const int16_t *o0, const int16_t *o1, const int16_t *o2, ptrdiff_t w,
                         unsigned bw, unsigned bh, bool second_order);
    uint64_t (*highpass_2x2)(const int16_t *o, ptrdiff_t w, int xa, int ya, int wa, int ha);
    uint64_t (*temporal_2x2)(const int16_t *o0, const int16_t *o1, const int16_t *o2,
                             ptrdiff_t w, unsigned bw, unsigned bh, bool second_order);
    uint64_t (*sse_8)(const uint8_t *a, const uint8_t *b, unsigned n);
    uint64_t (*sse_16)(const uint16_t *a, const uint16_t *b, unsigned n);
} XpsnrDsp;

void xpsnr_dsp_init(XpsnrDsp *dsp, unsigned cpu_flags);

#define XPSNR_DSP_DECLARE(isa)                                                                \
    uint64_t xpsnr_highpass_##isa(const int16_t *o, ptrdiff_t w, int xa, int ya, int wa,     \
                                  int ha);                                                   \
    uint64_t xpsnr_temporal_##isa(const int16_t *o0, const int16_t *o1, const int16_t *o2,   \
                                  ptrdiff_t w, unsigned bw, unsigned bh, bool second_order); \
    uint64_t xpsnr_highpass_2x2_##isa(const int16_t *o, ptrdiff_t w, int xa, int ya, int wa, \
                                      int ha);                                               \
    uint64_t xpsnr_temporal_2x2_##isa(const int16_t *o0, const int16_t *o1,                  \
                                      const int16_t *o2, ptrdiff_t w, unsigned bw,           \
                                      unsigned bh, bool second_order);                       \
    uint64_t xpsnr_sse_8_##isa(const uint8_t *a, const uint8_t *b, unsigned n);              \
    uint64_t xpsnr_sse_16_##isa(const uint16_t *a, const uint16_t *b, unsigned n);
XPSNR_DSP_DECLARE(c)
XPSNR_DSP_DECLARE(avx2)
XPSNR_DSP_DECLARE(avx512)

typedef struct XpsnrState {
    /* options */
    double fps;
    bool enable_axpsnr;

    /* set by init */
    unsigned width, height, bitdepth;
    unsigned planes; /* 1 for 4:0:0, else 3 */
    unsigned plane_width[3], plane_height[3];
    unsigned block;            /* luma block size; below 4 the planes are unweighted */
    unsigned blocks_x, blocks_y;
    unsigned step;             /* 2: high-pass and temporal terms on 2x2 sums (above 2048x1152) */
    bool smoothing;            /* the weights' min-smoothing (up to 640x480) */
    bool second_order;         /* the temporal term from two previous frames (32 fps and up) */
    double avg_act;            /* the square root of the picture's mean activity */
    double floor_act;          /* the activity's lower limit */
    double peak_area[3];       /* plane samples times the squared peak, as a double */
    unsigned key[3], wsse_key[3];
    XpsnrDsp dsp;
} XpsnrState;

/* A frame's value of a plane from its weighted SSE (FFmpeg's rounded
 * integer): 10 log10(samples * peak^2 / wsse), +inf for 0. */
double xpsnr_plane_value(const XpsnrState *s, unsigned plane, uint64_t wsse);

/* The weighted SSE of a plane from its blocks' sum of SSE times weight. */
uint64_t xpsnr_round_wsse(const XpsnrState *s, double weighted);

/* A luma block's weight from its activities: spatial sum over `spatial_count`
 * samples, temporal sum over `block_samples`. */
double xpsnr_block_weight(const XpsnrState *s, uint64_t spatial, double spatial_count,
                          uint64_t temporal, double block_samples);

/* The min-smoothing of the weights of small pictures, applied in place
 * to the block just computed (index idx at block position x, y), as the
 * weights are made in raster order. */
void xpsnr_smooth_weight(const XpsnrState *s, double *weights, unsigned idx, unsigned x,
                         unsigned y);

/* A frame's integer sums, from which its values are made (xpsnr_finish):
 * per luma block, in raster order, its SSE, high-pass sum and temporal sum
 * (of |the first or second difference|, not yet times the gamma), and per
 * chroma block of planes 1 and 2 (xpsnr_chroma_blocks), in raster order,
 * its SSE.  The CPU reference and the GPU twins make them; one finish. */
typedef struct XpsnrSums {
    const uint64_t *sse, *spatial, *temporal;
    const uint64_t *chroma_sse[2];
} XpsnrSums;

/* The high-pass bounds of the luma block at (x0, y0), bw x bh, relative
 * to it: [bounds[0], bounds[2]) x [bounds[1], bounds[3]) (the picture's
 * outer ring, of `step` samples, left out); false where that is empty (too
 * small to filter: the block's weight is 1). */
bool xpsnr_filter_bounds(const XpsnrState *s, unsigned x0, unsigned y0, unsigned bw,
                         unsigned bh, int bounds[4]);

/* Plane p's blocks: bx x by samples (the luma blocks' share of the
 * plane), nx x ny of them. */
void xpsnr_chroma_blocks(const XpsnrState *s, unsigned p, unsigned *bx, unsigned *by,
                         unsigned *nx, unsigned *ny);

/* The frame's values from its sums; weights: blocks_x * blocks_y doubles
 * of scratch. */
int xpsnr_finish(const XpsnrState *s, const XpsnrSums *sums, double *weights, unsigned index,
                 FeatureSink *sink);

/* For the GPU twins, whose sums lie in one array: the SSEs, high-pass and
 * temporal sums of the luma blocks, then the SSEs of the chroma blocks of
 * plane 1 and of plane 2.  How many sums that is, */
size_t xpsnr_sum_count(const XpsnrState *s);
/* whether a twin makes them exactly as the C (weighted blocks, SSEs that
 * cannot wrap: FFmpeg's 16-bit SSE kernel wraps above 14 bits; at step 2
 * even sizes, FFmpeg reading past an odd picture's planes there; chroma
 * blocks no more than the luma blocks, which the C refuses), */
bool xpsnr_twin_supports(const XpsnrState *s);
/* and the frame's values from them. */
int xpsnr_finish_array(const XpsnrState *s, const uint64_t *sums, unsigned index,
                       FeatureSink *sink);

extern const Metric metric_xpsnr;

#endif /* QUALE_SRC_METRICS_XPSNR_H */
