/*
 * checkasm for SpEED's kernels (src/metrics/speed.h): the covariance sums,
 * bit for bit against the C reference (libvmaf's AVX-512 order with
 * fma()), and the matrix products and vertical filter rows of
 * speed_tmpl.c.
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
#include "metrics/speed/speed.h"

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

/* The solver's products: 25 x 25 by 25 x 25 and 25 x blocks (1 to 400
 * columns: every vector remainder), entries of the matrices SpEED
 * multiplies (reflections, covariances, samples). */
static void check_matrix_mul(const CheckasmLevel *level, const SpeedDsp *c, const SpeedDsp *d)
{
    if ((d->matrix_mul == c->matrix_mul && level->flags) ||
        !checkasm_begin("speed_matrix_mul", level))
        return;
    enum { N = SPEED_ELEMENTS, MAX_C = 400 };
    float *A = checkasm_alloc(sizeof(float) * N * N), *B = checkasm_alloc(sizeof(float) * N * MAX_C);
    float *want = checkasm_alloc(sizeof(float) * N * MAX_C), *got = checkasm_alloc(sizeof(float) * N * MAX_C);
    static const int cols[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 25, 31, 32, 33, 72, 312, MAX_C };
    for (unsigned ci = 0; ci < QUALE_ARRAY_SIZE(cols); ci++) {
        for (unsigned fill = 0; fill < 4; fill++) {
            const int n = cols[ci];
            for (int i = 0; i < N * N; i++) A[i] = value(fill) * 0.25f;
            for (int i = 0; i < N * n; i++) B[i] = value(fill);
            memset(got, 0x5c, sizeof(float) * N * MAX_C);
            c->matrix_mul(want, A, B, N, N, n);
            d->matrix_mul(got, A, B, N, N, n);
            char what[64];
            snprintf(what, sizeof(what), "25 x 25 by 25 x %d, fill %u", n, fill);
            checkasm_check_equal(got, want, sizeof(float) * N * n, what);
        }
    }
    CHECKASM_BENCH(d->matrix_mul(got, A, B, N, N, N));
    checkasm_free(A);
    checkasm_free(B);
    checkasm_free(want);
    checkasm_free(got);
    checkasm_end();
}

/* The blur's vertical pass: 3 to 37 taps (speed_kernelscale 1/2.25 to 4),
 * rows of every width to a 4K chroma plane's. */
static void check_vertical_row(const CheckasmLevel *level, const SpeedDsp *c, const SpeedDsp *d)
{
    if ((d->vertical_row == c->vertical_row && level->flags) ||
        !checkasm_begin("speed_vertical_row", level))
        return;
    enum { ROW_W = 1920, MAX_TAPS = 37 };
    float *src = checkasm_alloc(sizeof(float) * ROW_W * MAX_TAPS);
    float *want = checkasm_alloc(sizeof(float) * ROW_W), *got = checkasm_alloc(sizeof(float) * ROW_W);
    float f[MAX_TAPS];
    const float *rows[MAX_TAPS];
    static const int widths[] = { 1, 2, 5, 7, 8, 15, 16, 17, 33, 63, 64, 65, 959, ROW_W };
    static const int taps[] = { 3, 5, 9, 11, 37 };
    for (unsigned ti = 0; ti < QUALE_ARRAY_SIZE(taps); ti++) {
        float sum = 0;
        for (int k = 0; k < taps[ti]; k++) sum += f[k] = 1.0f + (float)checkasm_rand_below(1000);
        for (int k = 0; k < taps[ti]; k++) f[k] /= sum;
        for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
            for (unsigned fill = 0; fill < 4; fill++) {
                for (int i = 0; i < ROW_W * MAX_TAPS; i++) src[i] = value(fill);
                /* rows in any order, a row twice (the mirror) */
                for (int k = 0; k < taps[ti]; k++)
                    rows[k] = src + (size_t)checkasm_rand_below(MAX_TAPS) * ROW_W;
                memset(got, 0x5c, sizeof(float) * ROW_W);
                c->vertical_row(f, taps[ti], rows, widths[wi], want);
                d->vertical_row(f, taps[ti], rows, widths[wi], got);
                char what[64];
                snprintf(what, sizeof(what), "%d taps, width %d, fill %u", taps[ti], widths[wi],
                         fill);
                checkasm_check_equal(got, want, sizeof(float) * widths[wi], what);
            }
        }
    }
    for (int k = 0; k < 9; k++) rows[k] = src + (size_t)k * ROW_W;
    CHECKASM_BENCH(d->vertical_row(f, 9, rows, 960, got));
    checkasm_free(src);
    checkasm_free(want);
    checkasm_free(got);
    checkasm_end();
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
    for (unsigned l = 0; l < levels; l++) {
        SpeedDsp d;
        speed_dsp_init(&d, level[l].flags);
        check_matrix_mul(&level[l], &c, &d);
        check_vertical_row(&level[l], &c, &d);
    }
    checkasm_free(pic);
}
