/*
 * Resampling a picture to another size, with swscale's arithmetic: the
 * filters and rounding of FFmpeg's `scale=W:H:flags=NAME+accurate_rnd+
 * bitexact` (swscale's portable C path), so that a picture scaled here, or
 * on a GPU from these tables, equals the one swscale makes on the CPU, bit
 * for bit (tests/test_scale.c holds the two together).
 *
 * A scaler is separable.  Each output sample of a row is a weighted sum of
 * `taps` consecutive input samples from `first[x]` (weights of 14 bits, a
 * sum of 1 << 14), kept as a 15-bit intermediate; each output row is a
 * weighted sum of `taps` intermediate rows from `first[y]` (weights of 12
 * bits).  The horizontal pass runs first, as in swscale.
 *
 * Depths 8 to 14 bits, in and out the same; the chroma format stays.
 */
#ifndef QUALE_SRC_INPUT_SCALE_H
#define QUALE_SRC_INPUT_SCALE_H

#include <stddef.h>
#include <stdint.h>

#include "metrics/common/host_device.h"

/* The deepest samples the 15-bit intermediate holds (swscale scales 15- and
 * 16-bit video through 19-bit intermediates instead: not here). */
#define SCALE_MAX_BITDEPTH 14

/* One direction of one plane. */
typedef struct ScaleFilter {
    unsigned src_size, dst_size;
    unsigned taps;
    int32_t *first; /* [dst_size]: the first input sample of each output */
    int16_t *coeff; /* [dst_size * taps] */
} ScaleFilter;

/* Index 0: luma; 1: both chroma planes. */
typedef struct ScalePlan {
    unsigned bitdepth;
    unsigned planes; /* 1 (4:0:0) or 3 */
    unsigned src_width[2], src_height[2], dst_width[2], dst_height[2];
    ScaleFilter horizontal[2], vertical[2];
} ScalePlan;

struct QualeVideoFormat;
struct QualePicture;

/* The plan for `method` (bicubic, bilinear, lanczos, neighbor, area,
 * spline: the tool's --scaler names) from one format to another of the
 * same chroma format and depth.  0, or a negative errno with the reason in
 * why. */
int scale_plan_make(ScalePlan *plan, const struct QualeVideoFormat *from,
                    const struct QualeVideoFormat *to, const char *method, char *why,
                    size_t why_size);
void scale_plan_free(ScalePlan *plan);

/* The C reference: every plane of from into to (pictures of the plan's
 * formats).  0 or -ENOMEM. */
int scale_picture(const ScalePlan *plan, const struct QualePicture *from,
                  struct QualePicture *to);

/* The arithmetic both passes share with the GPU twins. */

/* A horizontal sum (samples times 14-bit weights) as the 15-bit
 * intermediate: swscale's hScale8To15 / hScale16To15 (no lower bound: a
 * negative lobe may leave a small negative value). */
HOST_DEVICE_INLINE int16_t scale_horizontal_finish(int32_t sum, unsigned bitdepth)
{
    const int32_t v = sum >> (bitdepth - 1);
    return (int16_t)(v < 32767 ? v : 32767);
}

/* A vertical sum (intermediates times 12-bit weights) starts at half the
 * last step and ends clipped to the depth: swscale's yuv2planeX for 8 bits
 * (its flat dither of 64 is this half) and for 9 to 14 bits. */
HOST_DEVICE_INLINE int32_t scale_vertical_start(unsigned bitdepth)
{
    return (int32_t)1 << (26 - bitdepth);
}

HOST_DEVICE_INLINE uint16_t scale_vertical_finish(int32_t sum, unsigned bitdepth)
{
    const int32_t v = sum >> (27 - bitdepth), max = ((int32_t)1 << bitdepth) - 1;
    return (uint16_t)(v < 0 ? 0 : v > max ? max : v);
}

#endif /* QUALE_SRC_INPUT_SCALE_H */
