/*
 * SpEED's element-wise loops (speed.h's SpeedDsp), written once: speed.c
 * includes this file for the C reference and src/metrics/x86/speed_<isa>.c
 * include it to build the same loops for AVX2 and AVX-512.  Each loop runs
 * along a row with one value per element and no sum across elements, each
 * element's float operations in libvmaf's order, so the compiler
 * vectorises them without changing a bit (the project builds with
 * -ffp-contract=off and without fast-math); tests/checkasm/speed.c checks
 * them byte for byte.
 *
 * The includer defines SPEED_FN(name), the name of this file's functions.
 */
#include <stddef.h>

#include "speed.h"

/* Columns [j0, j0 + BLOCK) of output row o, their sums in registers over
 * the whole sum (BLOCK a constant). */
#define SPEED_MATRIX_BLOCK_SUMS(BLOCK)                                            \
    do {                                                                          \
        float sum[BLOCK] = { 0 };                                                 \
        for (int k = 0; k < m; k++) {                                             \
            const float *restrict b = B + (size_t)k * c + j0;                     \
            for (int t = 0; t < BLOCK; t++) sum[t] += a[k] * b[t];                \
        }                                                                         \
        for (int t = 0; t < BLOCK; t++) o[j0 + t] = sum[t];                       \
    } while (0)

/* out (r x c) = A (r x m) B (m x c), libvmaf's matrix_mul(): each entry a
 * float sum over m in order from 0; a block of 16, then of 8 entries of an
 * output row at a time is the vector loop, the rest one by one. */
void SPEED_FN(matrix_mul)(float *out, const float *A, const float *B, int r, int m, int c)
{
    for (int i = 0; i < r; i++) {
        float *restrict o = out + (size_t)i * c;
        const float *a = A + (size_t)i * m;
        int j0 = 0;
        for (; j0 + 16 <= c; j0 += 16) SPEED_MATRIX_BLOCK_SUMS(16);
        for (; j0 + 8 <= c; j0 += 8) SPEED_MATRIX_BLOCK_SUMS(8);
        for (int j = j0; j < c; j++) {
            float sum = 0;
            for (int k = 0; k < m; k++) sum += a[k] * B[(size_t)k * c + j];
            o[j] = sum;
        }
    }
}

/* The vertical pass of a filter at one output row: row[x] = sum over taps
 * k of f[k] * rows[k][x], a float sum in tap order from 0. */
void SPEED_FN(vertical_row)(const float *f, int taps, const float *const *rows, int w,
                            float *row)
{
    float *restrict out = row;
    for (int x = 0; x < w; x++) out[x] = 0.0f;
    for (int k = 0; k < taps; k++) {
        const float c = f[k];
        const float *restrict in = rows[k];
        for (int x = 0; x < w; x++) out[x] += c * in[x];
    }
}
