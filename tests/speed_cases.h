/*
 * SpEED's cases for the tests of its GPU twins (test_speed_cuda_host.cpp,
 * test_speed_vulkan.c), C and C++: the option sets (the v1 models' among
 * them, prescales of both methods the twins have, kernel scales, every
 * weighting mode, speed_use_ref_diff), the formats (4:2:0, 4:2:2, 4:4:4,
 * 8 to 16 bits, sizes from near the smallest SpEED takes to 640 x 360),
 * and the pictures: textured (blocks, ramps and noise), or flat, whose
 * covariance is singular (the chroma correction's case).
 */
#ifndef QUALE_TESTS_SPEED_CASES_H
#define QUALE_TESTS_SPEED_CASES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "quale/quale.h"
#include "samples.h"

#define SPEED_V1_SPEC                                                     \
    "speed_chroma=speed_max_val=45:speed_nn_floor=0.1:speed_sigma_nn=0.19:" \
    "speed_weight_var_mode=5"

static const char *const speed_chroma_specs[] = {
    "speed_chroma",
    SPEED_V1_SPEC,
    SPEED_V1_SPEC ":speed_prescale=0.6:speed_prescale_method=bilinear",
    "speed_chroma=speed_prescale=0.5:speed_prescale_method=bilinear:speed_weight_var_mode=3",
    "speed_chroma=speed_prescale=0.75:speed_weight_var_mode=1",
    "speed_chroma=speed_kernelscale=0.6666666666666666:speed_weight_var_mode=2",
    "speed_chroma=speed_kernelscale=1.5:speed_weight_var_mode=4",
    "speed_chroma=speed_weight_var_mode=6:speed_max_val=1.5",
};

static const char *const speed_temporal_specs[] = {
    "speed_temporal",
    "speed_temporal=speed_use_ref_diff=true:speed_sigma_nn=0.5",
    "speed_temporal=speed_prescale=0.5:speed_prescale_method=bilinear",
    "speed_temporal=speed_prescale=0.8:speed_kernelscale=0.6666666666666666",
};

static const QualeVideoFormat speed_formats[] = {
    { QUALE_CHROMA_420, 8, 352, 288 },  { QUALE_CHROMA_420, 10, 640, 360 },
    { QUALE_CHROMA_422, 8, 226, 180 },  { QUALE_CHROMA_444, 16, 176, 160 },
    { QUALE_CHROMA_420, 12, 321, 271 },
};

/* Whether spec runs on format f: the prescales need planes that stay at
 * least 80 a side. */
static inline bool speed_case_runs(const char *spec, const QualeVideoFormat *f)
{
    if (!strncmp(spec, "speed_temporal", 14))
        return !(strstr(spec, "prescale=0.5") && f->height < 288);
    if ((strstr(spec, "prescale=0.5") || strstr(spec, "prescale=0.6")) && f->width < 640)
        return false;
    return !(strstr(spec, "prescale=0.75") && f->chroma == QUALE_CHROMA_420 && f->width < 640);
}

/* A hash of a cell of the picture, for its coarse random texture. */
static inline uint32_t speed_cell_hash(uint32_t x, uint32_t y, uint32_t salt)
{
    uint32_t h = x * 0x9e3779b1u ^ y * 0x85ebca77u ^ salt * 0xc2b2ae3du;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h;
}

/* Frame `frame` of a picture: textured (seed apart), or flat.  The
 * texture is random at the scale SpEED sees (cells of about 12 samples:
 * its operating picture is 1/16 of the size, so that the covariance of its
 * neighbourhoods is regular), over ramps and noise. */
static inline void speed_fill(QualePicture *p, unsigned frame, bool flat, unsigned seed,
                              uint32_t (*random)(void))
{
    const unsigned max = (1u << p->format.bitdepth) - 1;
    for (unsigned plane = 0; plane < p->plane_count; plane++) {
        for (unsigned y = 0; y < p->plane_height[plane]; y++) {
            for (unsigned x = 0; x < p->plane_width[plane]; x++) {
                unsigned v;
                if (flat) {
                    v = max / 3;
                } else {
                    const unsigned cell =
                        speed_cell_hash(x / 11 + frame, y / 13, seed + 7 * plane) % (max / 2 + 1);
                    const unsigned ramp = (x * (max / 97 + 1) + y * (max / 131 + 1)) % (max / 4 + 1);
                    v = (cell + ramp + (random() % (max / 16 + 1))) % (max + 1);
                }
                put(p, plane, x, y, v);
            }
        }
    }
}

#endif /* QUALE_TESTS_SPEED_CASES_H */
