/*
 * CAMBI's row kernels (cambi.h's CambiDsp), written once: cambi.c includes
 * this file for the C reference and src/metrics/x86/cambi_<isa>.c include
 * it to build the same loops for AVX2 and AVX-512 (integer arithmetic, one
 * value per element: the compiler vectorises them without changing a
 * bit), with their own c-values (CAMBI_OWN_C_VALUES).  The per-sample
 * steps the CUDA twin shares (cambi_to_10bit, cambi_mode3, cambi_c_value)
 * come from cambi.h.
 *
 * The includer defines CAMBI_FN(name), the name of this file's functions.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common.h"
#include "cambi.h"

void CAMBI_FN(load_row)(const uint8_t *in, unsigned bitdepth, const uint32_t *src_x,
                        uint16_t *out, unsigned w)
{
    uint16_t *restrict o = out;
    if (bitdepth == 8) {
        const uint8_t *restrict i8 = in;
        if (src_x)
            for (size_t j = 0; j < w; j++) o[j] = cambi_to_10bit(i8[src_x[j]], 8);
        else
            for (size_t j = 0; j < w; j++) o[j] = cambi_to_10bit(i8[j], 8);
        return;
    }
    const uint16_t *restrict i16 = (const uint16_t *)(const void *)in;
    if (src_x) {
        for (size_t j = 0; j < w; j++) o[j] = cambi_to_10bit(i16[src_x[j]], bitdepth);
    } else if (bitdepth == 10) {
        memcpy(o, i16, w * sizeof(uint16_t));
    } else {
        for (size_t j = 0; j < w; j++) o[j] = cambi_to_10bit(i16[j], bitdepth);
    }
}

void CAMBI_FN(anti_dither_row)(uint16_t *a, const uint16_t *b, unsigned w)
{
    /* a[j] is written after a[j] and a[j + 1] are read: in place, in
     * order (no restrict on a; the compiler vectorises the loads ahead of
     * the stores, which every element allows).  The sums are in int:
     * samples are any 16-bit value (a picture's may exceed its depth). */
    if (b) {
        for (size_t j = 0; j + 1 < w; j++)
            a[j] = (uint16_t)((a[j] + a[j + 1] + b[j] + b[j + 1]) >> 2);
        a[w - 1] = (uint16_t)((a[w - 1] + b[w - 1]) >> 1);
    } else {
        for (size_t j = 0; j + 1 < w; j++) a[j] = (uint16_t)((a[j] + a[j + 1]) >> 1);
    }
}

void CAMBI_FN(flat_row)(const uint16_t *a, const uint16_t *b, uint8_t *flat, unsigned w)
{
    const uint16_t *restrict pa = a;
    uint8_t *restrict f = flat;
    if (b) {
        const uint16_t *restrict pb = b;
        for (size_t j = 0; j + 1 < w; j++)
            f[j] = (uint8_t)((pa[j] == pa[j + 1]) & (pa[j] == pb[j]));
        f[w - 1] = (uint8_t)(pa[w - 1] == pb[w - 1]);
    } else {
        for (size_t j = 0; j + 1 < w; j++) f[j] = (uint8_t)(pa[j] == pa[j + 1]);
        f[w - 1] = 1;
    }
}

void CAMBI_FN(mask_row)(uint8_t *count, const uint8_t *add, const uint8_t *sub, uint8_t *mask,
                        unsigned w, unsigned mask_index)
{
    if (add) {
        uint8_t *restrict c = count;
        const uint8_t *restrict in = add;
        for (size_t j = 0; j < w; j++) c[j] = (uint8_t)(c[j] + in[j]);
    }
    if (sub) {
        uint8_t *restrict c = count;
        const uint8_t *restrict out = sub;
        for (size_t j = 0; j < w; j++) c[j] = (uint8_t)(c[j] - out[j]);
    }
    /* a sum of 7 counts of at most 7 fits a byte: byte arithmetic, which
     * vectorises 4 times wider than int */
    const uint8_t *restrict window = count - CAMBI_MASK_PAD;
    const uint8_t threshold = (uint8_t)QUALE_MIN(mask_index, 255u);
    uint8_t *restrict m = mask;
    for (size_t j = 0; j < w; j++) {
        const uint8_t sum = (uint8_t)(window[j] + window[j + 1] + window[j + 2] + window[j + 3] +
                                      window[j + 4] + window[j + 5] + window[j + 6]);
        m[j] = sum > threshold;
    }
}

void CAMBI_FN(decimate_row16)(const uint16_t *in, uint16_t *out, unsigned dw)
{
    const uint16_t *restrict i16 = in;
    uint16_t *restrict o16 = out;
    for (size_t j = 0; j < dw; j++) o16[j] = i16[2 * j];
}

void CAMBI_FN(decimate_row8)(const uint8_t *in, uint8_t *out, unsigned dw)
{
    const uint8_t *restrict i8 = in;
    uint8_t *restrict o8 = out;
    for (size_t j = 0; j < dw; j++) o8[j] = i8[2 * j];
}

void CAMBI_FN(mode_row)(const uint16_t *in, uint16_t *out, unsigned w)
{
    const uint16_t *restrict i16 = in;
    uint16_t *restrict o16 = out;
    o16[0] = i16[0];
    for (size_t j = 1; j + 1 < w; j++) o16[j] = cambi_mode3(i16[j - 1], i16[j], i16[j + 1]);
    o16[w - 1] = i16[w - 1];
}

void CAMBI_FN(mode_column)(const uint16_t *r0, const uint16_t *r1, const uint16_t *r2,
                           uint16_t *out, unsigned w)
{
    const uint16_t *restrict a = r0, *restrict b = r1, *restrict c = r2;
    uint16_t *restrict o16 = out;
    for (size_t j = 0; j < w; j++) o16[j] = cambi_mode3(a[j], b[j], c[j]);
}

/* Whether any of the mask bytes m[0 .. n) is set (none without a row), 8
 * bytes at a time. */
static inline bool CAMBI_FN(any_masked)(const uint8_t *m, unsigned n)
{
    if (!m) return false;
    uint64_t any = 0;
    unsigned j = 0;
    for (; j + 8 <= n; j += 8) {
        uint64_t word;
        memcpy(&word, m + j, sizeof(word));
        any |= word;
    }
    for (; j < n; j++) any |= m[j];
    return any != 0;
}

/*
 * What a run of samples j0 .. j1 of one band row adds to (sign 1) or takes
 * from (sign 0xffff, -1) the row's counters: each sample one over the
 * columns j - pad .. j + pad inside the picture, so column k gets the
 * number of the run's samples within pad of it,
 *   min(j1, k + pad) - max(j0, k - pad) + 1,
 * in one pass instead of one pass per sample.  Counters wrap modulo 2^16
 * as sample by sample; the sum does not depend on the order.
 */
static inline void CAMBI_FN(run_add)(uint16_t *counters, unsigned j0, unsigned j1, unsigned pad,
                                     unsigned w, uint16_t sign)
{
    /* columns and the window fit 32 bits (a row is at most 7680 samples,
     * pad at most 32): 32-bit lanes, twice as many a vector as size_t */
    const uint32_t lo = j0 > pad ? j0 - pad : 0;
    const uint32_t hi = QUALE_MIN(j1 + pad + 1, w);
    uint16_t *restrict c = counters;
    for (uint32_t k = lo; k < hi; k++) {
        const uint32_t first = k > j0 + pad ? k - pad : j0;
        const uint32_t last = k + pad < j1 ? k + pad : j1;
        c[k] = (uint16_t)(c[k] + sign * (uint16_t)(last - first + 1));
    }
}

/* The band rows of n samples (-1 masked out or off the band; all -1
 * without a row). */
static inline void CAMBI_FN(band_rows)(const CambiContrast *k, const uint16_t *image,
                                       const uint8_t *mask, unsigned n, int16_t *rows)
{
    int16_t *restrict r = rows;
    if (!mask) {
        for (unsigned j = 0; j < n; j++) r[j] = -1;
        return;
    }
    const uint16_t *restrict v = image;
    const uint8_t *restrict m = mask;
    const int base = k->band_base, size = k->band_size;
    for (unsigned j = 0; j < n; j++) {
        const int row = (int)v[j] - base;
        r[j] = (int16_t)(m[j] && (unsigned)row < (unsigned)size ? row : -1);
    }
}

/* Columns a pass of slide_row takes at a time. */
#define CAMBI_SLIDE_CHUNK 256

void CAMBI_FN(slide_row)(uint16_t *histograms, const CambiContrast *k, const uint16_t *leave,
                         const uint8_t *leave_mask, const uint16_t *enter,
                         const uint8_t *enter_mask, unsigned w, unsigned pad)
{
    int16_t out[CAMBI_SLIDE_CHUNK], in[CAMBI_SLIDE_CHUNK];
    for (unsigned c0 = 0; c0 < w; c0 += CAMBI_SLIDE_CHUNK) {
        const unsigned n = QUALE_MIN(w - c0, CAMBI_SLIDE_CHUNK);
        /* masks are mostly 0 */
        const uint8_t *lm = leave_mask ? leave_mask + c0 : NULL;
        const uint8_t *em = enter_mask ? enter_mask + c0 : NULL;
        if (!CAMBI_FN(any_masked)(lm, n) && !CAMBI_FN(any_masked)(em, n)) continue;
        CAMBI_FN(band_rows)(k, lm ? leave + c0 : NULL, lm, n, out);
        CAMBI_FN(band_rows)(k, em ? enter + c0 : NULL, em, n, in);
        /* runs of samples leaving and entering with the same band rows (a
         * banded area is long runs of one value) */
        for (unsigned j = 0; j < n;) {
            unsigned last = j;
            while (last + 1 < n && out[last + 1] == out[j] && in[last + 1] == in[j]) last++;
            if (out[j] != in[j]) {
                if (out[j] >= 0)
                    CAMBI_FN(run_add)(histograms + (size_t)out[j] * w, c0 + j, c0 + last, pad, w,
                                      0xffff);
                if (in[j] >= 0)
                    CAMBI_FN(run_add)(histograms + (size_t)in[j] * w, c0 + j, c0 + last, pad, w, 1);
            }
            j = last + 1;
        }
    }
}

/* The c-values of samples j0 .. j1 - 1 of a row (0 where masked out or
 * off the band), one by one; whether one is above 0. */
static inline bool CAMBI_FN(c_values_span)(const CambiContrast *k, const float *reciprocal,
                                           const uint16_t *histograms, const uint16_t *image,
                                           const uint8_t *mask, float *c_values, unsigned j0,
                                           unsigned j1, unsigned w)
{
    bool any = false;
    for (unsigned j = j0; j < j1; j++) {
        c_values[j] = 0.0f;
        if (!mask[j]) continue;
        const int v = (int)image[j] - k->band_base;
        if ((unsigned)v >= (unsigned)k->band_size) continue;
        c_values[j] = cambi_c_value(k, reciprocal, histograms + j, w, v);
        any |= c_values[j] > 0.0f;
    }
    return any;
}

#ifndef CAMBI_OWN_C_VALUES
bool CAMBI_FN(c_values_row)(const CambiContrast *k, const float *reciprocal,
                            const uint16_t *histograms, const uint16_t *image,
                            const uint8_t *mask, float *c_values, unsigned w)
{
    bool any = false;
    /* runs of 16 samples masked out are skipped at once */
    for (unsigned j0 = 0; j0 < w; j0 += 16) {
        const unsigned n = QUALE_MIN(16u, w - j0);
        if (!CAMBI_FN(any_masked)(mask + j0, n)) {
            memset(c_values + j0, 0, sizeof(float) * n);
            continue;
        }
        any |= CAMBI_FN(c_values_span)(k, reciprocal, histograms, image, mask, c_values, j0,
                                       j0 + n, w);
    }
    return any;
}
#endif
