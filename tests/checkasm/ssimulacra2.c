/*
 * checkasm for SSIMULACRA2's score (src/metrics/ssimulacra2/ssimulacra2.h:
 * ssimulacra2_score.c compiled as C and for each instruction set), bit for
 * bit: the double score of packed 8-bit sRGB pairs, the distorted picture
 * the reference with noise of a few levels (the scores of real encodes),
 * random pairs, all-zero and all-max ones, at sizes from the smallest the
 * score takes (8x8) through odd ones to where all six scales run.
 */
#include <stdio.h>
#include <string.h>

#include "checkasm.h"
#include "common.h"
#include "metrics/ssimulacra2/ssimulacra2.h"

static const unsigned sizes[][2] = { { 8, 8 },   { 9, 8 },    { 8, 13 },  { 17, 9 },
                                     { 31, 33 }, { 64, 48 },  { 100, 37 }, { 257, 129 },
                                     { 333, 271 } };

/* A pair: the reference by `fill`, the distorted one the reference with
 * noise of up to +-spread levels (0: a picture of its own). */
static void fill_pair(uint8_t *ref, uint8_t *dist, size_t bytes, enum CheckasmFill fill,
                      unsigned spread)
{
    for (size_t i = 0; i < bytes; i++) {
        ref[i] = fill == CHECKASM_FILL_ZERO ? 0
                 : fill == CHECKASM_FILL_MAX ? 255
                                             : (uint8_t)checkasm_rand_below(256);
        if (spread) {
            const int v = ref[i] + (int)checkasm_rand_below(2 * spread + 1) - (int)spread;
            dist[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        } else {
            dist[i] = (uint8_t)checkasm_rand_below(256);
        }
    }
}

static void check_level(const CheckasmLevel *level, Ssim2ScoreFn simd)
{
    if (!checkasm_begin("ssimulacra2_score", level)) return;
    static const unsigned spreads[] = { 2, 12, 0 };
    for (size_t k = 0; k < QUALE_ARRAY_SIZE(sizes); k++) {
        const unsigned w = sizes[k][0], h = sizes[k][1];
        const size_t bytes = (size_t)w * h * 3;
        uint8_t *ref = checkasm_alloc(bytes), *dist = checkasm_alloc(bytes);
        for (unsigned f = 0; f < CHECKASM_FILL_COUNT; f++) {
            for (size_t sp = 0; sp < QUALE_ARRAY_SIZE(spreads); sp++) {
                fill_pair(ref, dist, bytes, (enum CheckasmFill)f, spreads[sp]);
                double c = -1, s = -2;
                const int rc = ssim2_score_rgb_c(ref, dist, w, h, &c);
                const int rs = simd(ref, dist, w, h, &s);
                char what[128];
                snprintf(what, sizeof(what), "score of %ux%u, %s, noise %u", w, h,
                         checkasm_fill_names[f], spreads[sp]);
                if (rc || rs) checkasm_fail("%s: returned %d and %d", what, rc, rs);
                checkasm_check_equal(&s, &c, sizeof(c), what);
            }
        }
        checkasm_free(ref);
        checkasm_free(dist);
    }
    const unsigned w = 256, h = 256;
    uint8_t *ref = checkasm_alloc((size_t)w * h * 3), *dist = checkasm_alloc((size_t)w * h * 3);
    fill_pair(ref, dist, (size_t)w * h * 3, CHECKASM_FILL_RANDOM, 12);
    double score;
    CHECKASM_BENCH(simd(ref, dist, w, h, &score));
    checkasm_free(ref);
    checkasm_free(dist);
    checkasm_end();
}

void checkasm_check_ssimulacra2(void)
{
    unsigned count;
    const CheckasmLevel *levels = checkasm_levels(&count);
    Ssim2ScoreFn previous = ssim2_score_pick(0);
    for (unsigned l = 1; l < count; l++) {
        const Ssim2ScoreFn simd = ssim2_score_pick(levels[l].flags);
        /* a level that brings no code of its own was checked as the one before */
        if (simd != previous) check_level(&levels[l], simd);
        previous = simd;
    }
}
