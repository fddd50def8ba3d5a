/*
 * CAMBI's row kernels (cambi.h's CambiDsp), written once: cambi.c includes
 * this file for the C reference and src/metrics/x86/cambi_<isa>.c include
 * it to build the same loops for AVX2 and AVX-512 (integer arithmetic, one
 * value per element: the compiler vectorises them without changing a
 * bit), with their own c-values (CAMBI_OWN_C_VALUES).
 *
 * The includer defines CAMBI_FN(name), the name of this file's functions.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common.h"
#include "metrics/cambi.h"

void CAMBI_FN(anti_dither_row)(uint16_t *a, const uint16_t *b, unsigned w)
{
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

/* The value two of three share, else the smallest; in selects, which
 * vectorise. */
static inline uint16_t CAMBI_FN(mode3)(uint16_t a, uint16_t b, uint16_t c)
{
    const uint16_t ab = a < b ? a : b;
    const uint16_t smallest = ab < c ? ab : c;
    const uint16_t bc = b == c ? b : smallest;
    return a == b || a == c ? a : bc;
}

void CAMBI_FN(mode_row)(const uint16_t *in, uint16_t *out, unsigned w)
{
    const uint16_t *restrict i16 = in;
    uint16_t *restrict o16 = out;
    o16[0] = i16[0];
    for (size_t j = 1; j + 1 < w; j++) o16[j] = CAMBI_FN(mode3)(i16[j - 1], i16[j], i16[j + 1]);
    o16[w - 1] = i16[w - 1];
}

void CAMBI_FN(mode_column)(const uint16_t *r0, const uint16_t *r1, const uint16_t *r2,
                           uint16_t *out, unsigned w)
{
    const uint16_t *restrict a = r0, *restrict b = r1, *restrict c = r2;
    uint16_t *restrict o16 = out;
    for (size_t j = 0; j < w; j++) o16[j] = CAMBI_FN(mode3)(a[j], b[j], c[j]);
}

/* Whether any of the mask bytes m[j0 .. j1) is set (none without a row),
 * 8 bytes at a time. */
static inline bool CAMBI_FN(any_masked)(const uint8_t *m, unsigned j0, unsigned j1)
{
    if (!m) return false;
    uint64_t any = 0;
    unsigned j = j0;
    for (; j + 8 <= j1; j += 8) {
        uint64_t word;
        memcpy(&word, m + j, sizeof(word));
        any |= word;
    }
    for (; j < j1; j++) any |= m[j];
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
    const size_t lo = j0 > pad ? j0 - pad : 0;
    const size_t hi = QUALE_MIN((size_t)j1 + pad + 1, (size_t)w);
    uint16_t *restrict c = counters;
    for (size_t k = lo; k < hi; k++) {
        const size_t first = k > (size_t)j0 + pad ? k - pad : j0;
        const size_t last = k + pad < j1 ? k + pad : j1;
        c[k] = (uint16_t)(c[k] + sign * (uint16_t)(last - first + 1));
    }
}

/* The band rows of n samples (-1 masked out or off the band; all -1
 * without a row). */
static inline void CAMBI_FN(band_rows)(const CambiCValueParams *p, const uint16_t *image,
                                       const uint8_t *mask, unsigned n, int16_t *rows)
{
    int16_t *restrict r = rows;
    if (!mask) {
        for (unsigned j = 0; j < n; j++) r[j] = -1;
        return;
    }
    const uint16_t *restrict v = image;
    const uint8_t *restrict m = mask;
    const int base = p->band_base, size = p->band_size;
    for (unsigned j = 0; j < n; j++) {
        const int row = (int)v[j] - base;
        r[j] = (int16_t)(m[j] && (unsigned)row < (unsigned)size ? row : -1);
    }
}

/* Columns a pass of slide_row takes at a time. */
#define CAMBI_SLIDE_CHUNK 256

void CAMBI_FN(slide_row)(uint16_t *histograms, const CambiCValueParams *p, const uint16_t *leave,
                         const uint8_t *leave_mask, const uint16_t *enter,
                         const uint8_t *enter_mask, unsigned w, unsigned pad)
{
    int16_t out[CAMBI_SLIDE_CHUNK], in[CAMBI_SLIDE_CHUNK];
    for (unsigned c0 = 0; c0 < w; c0 += CAMBI_SLIDE_CHUNK) {
        const unsigned n = QUALE_MIN(w - c0, CAMBI_SLIDE_CHUNK);
        /* masks are mostly 0 */
        if (!CAMBI_FN(any_masked)(leave_mask ? leave_mask + c0 : NULL, 0, n) &&
            !CAMBI_FN(any_masked)(enter_mask ? enter_mask + c0 : NULL, 0, n))
            continue;
        CAMBI_FN(band_rows)(p, leave ? leave + c0 : NULL, leave_mask ? leave_mask + c0 : NULL, n,
                            out);
        CAMBI_FN(band_rows)(p, enter ? enter + c0 : NULL, enter_mask ? enter_mask + c0 : NULL, n,
                            in);
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

/* The c-value of a masked sample of band row v, from the counters of its
 * column (col[r * w] counts band row r). */
static inline __attribute__((unused)) float CAMBI_FN(c_value)(const CambiCValueParams *p,
                                                               const uint16_t *col, size_t w,
                                                               int v)
{
    const int nd = p->num_diffs;
    const int value = v + p->band_base + nd;
    const int p0 = col[(size_t)v * w];
    float c = 0.0f;
    for (int d = 0; d < nd; d++) {
        if (value > p->tvi[d] || value + d + 1 <= p->vlt_luma) continue;
        const int p1 = col[(size_t)(v + d + 1) * w];
        const int p2 = v - d - 1 >= 0 ? col[(size_t)(v - d - 1) * w] : 0;
        const int pm = p1 > p2 ? p1 : p2;
        const float val = (float)(p->weight[d] * p0 * pm) * p->reciprocal[pm + p0];
        if (val > c) c = val;
    }
    return c;
}

#ifndef CAMBI_OWN_C_VALUES
void CAMBI_FN(c_values_row)(const CambiCValueParams *p, const uint16_t *histograms,
                            const uint16_t *image, const uint8_t *mask, float *c_values,
                            unsigned w)
{
    memset(c_values, 0, sizeof(float) * w);
    for (unsigned j0 = 0; j0 < w; j0 += 16) {
        const unsigned j1 = QUALE_MIN(j0 + 16, w);
        if (!CAMBI_FN(any_masked)(mask, j0, j1)) continue;
        for (unsigned j = j0; j < j1; j++) {
            if (!mask[j]) continue;
            const int v = (int)image[j] - p->band_base;
            if ((unsigned)v >= (unsigned)p->band_size) continue;
            c_values[j] = CAMBI_FN(c_value)(p, histograms + j, w, v);
        }
    }
}
#endif
