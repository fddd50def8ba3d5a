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

/* out (r x c) = A (r x m) B (m x c), libvmaf's matrix_mul(): each entry a
 * float sum over m in order from 0 (the loop over an output row's entries
 * is the vector one). */
void SPEED_FN(matrix_mul)(float *out, const float *A, const float *B, int r, int m, int c)
{
    for (int i = 0; i < r; i++) {
        float *restrict o = out + (size_t)i * c;
        for (int j = 0; j < c; j++) o[j] = 0;
        for (int k = 0; k < m; k++) {
            const float a = A[(size_t)i * m + k];
            const float *restrict b = B + (size_t)k * c;
            for (int j = 0; j < c; j++) o[j] += a * b[j];
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
