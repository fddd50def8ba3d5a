/*
 * checkasm for SpEED's covariance sums (src/metrics/speed.h), bit for bit
 * against the C reference (libvmaf's AVX-512 order with fma()).
 *
 * Inputs are operating pictures as SpEED makes them: blurred, decimated
 * and mean-subtracted samples of the 8-bit scale (values of a few units
 * either side of 0), all zero, a constant, and large values (the
 * difference pictures of speed_temporal reach +-255); every width from 1
 * to 40 (each path of the 16, 8 and scalar steps and their mixes), the
 * corpus's sub-picture widths (11, 16, 31, 36, 56, 76, 116) and heights
 * from 1 to 61, means that are and are not the samples' means, and
 * offsets between the two pictures (K's off-diagonal entries).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "checkasm.h"
#include "common.h"
#include "cpu.h"
#include "metrics/speed.h"

enum { MAX_W = 128, MAX_H = 64, STRIDE = MAX_W + 8 };

static float value(unsigned fill)
{
    switch (fill) {
    case 0: return ((float)checkasm_rand_below(1u << 20) / (1 << 20) - 0.5f) * 8.0f;
    case 1: return 0.0f;
    case 2: return 3.25f;
    default: return ((float)checkasm_rand_below(511) - 255.0f) * 1.00390625f;
    }
}

void checkasm_check_speed(void)
{
    unsigned levels;
    const CheckasmLevel *level = checkasm_levels(&levels);
    SpeedDsp c;
    speed_dsp_init(&c, 0);
    static const int wide[] = { 11, 16, 31, 36, 56, 76, 116, MAX_W - 4 };
    static const int tall[] = { 1, 2, 6, 16, 26, 61 };
    float *pic = checkasm_alloc(sizeof(float) * STRIDE * (MAX_H + 4));
    for (unsigned l = 0; l < levels; l++) {
        SpeedDsp d;
        speed_dsp_init(&d, level[l].flags);
        /* C itself is timed, for the speed-ups. */
        if ((l > 0 && d.cov_sum == c.cov_sum) || !checkasm_begin("speed_cov_sum", &level[l]))
            continue;
        for (unsigned fill = 0; fill < 4; fill++) {
            for (int wi = 1; wi <= 40 + (int)QUALE_ARRAY_SIZE(wide); wi++) {
                const int w = wi <= 40 ? wi : wide[wi - 41];
                for (unsigned hi = 0; hi < QUALE_ARRAY_SIZE(tall); hi++) {
                    const int h = tall[hi];
                    for (size_t i = 0; i < (size_t)STRIDE * (MAX_H + 4); i++) pic[i] = value(fill);
                    /* The second picture: another neighbourhood offset. */
                    const float *x = pic, *y = pic + (checkasm_rand_below(5) * STRIDE +
                                                      checkasm_rand_below(5));
                    double mx = 0, my = 0;
                    for (int i = 0; i < h; i++)
                        for (int j = 0; j < w; j++) {
                            mx += x[i * STRIDE + j];
                            my += y[i * STRIDE + j];
                        }
                    mx /= (double)w * h;
                    my /= (double)w * h;
                    if (checkasm_rand_below(4) == 0) mx += 0.125; /* not the mean */
                    const double want = c.cov_sum(x, y, STRIDE, w, h, mx, my);
                    const double got = d.cov_sum(x, y, STRIDE, w, h, mx, my);
                    char what[96];
                    snprintf(what, sizeof(what), "%dx%d, fill %u", w, h, fill);
                    checkasm_check_equal(&got, &want, sizeof(got), what);
                }
            }
        }
        /* One corpus-sized sum: a 1080p chroma plane's 56 x 26. */
        for (size_t i = 0; i < (size_t)STRIDE * (MAX_H + 4); i++) pic[i] = value(0);
        double sink = 0;
        CHECKASM_BENCH(sink += d.cov_sum(pic, pic + STRIDE + 1, STRIDE, 56, 26, 0.01, -0.02));
        (void)sink;
        checkasm_end();
    }
    checkasm_free(pic);
}
