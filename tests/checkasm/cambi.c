/*
 * checkasm for CAMBI's row kernels (src/metrics/cambi.h's CambiDsp), byte
 * for byte against the C kernels.
 *
 * The load takes 8, 9, 10, 12 and 16-bit samples (and samples above their
 * depth), read in place or through resampling positions; every other
 * kernel works on the samples it makes: random 10-bit ones, all zero, all
 * 0xffff and random 16-bit ones (from samples above the depth), or drawn
 * from a few values
 * so that neighbours are often equal (flat samples, ties of the mode
 * filter, runs of one value).  Masks are dense, sparse or empty; the
 * histograms hold counts as a window leaves them; widths from 1 to a
 * 1080p row, around the vector lengths.  The c-values run with libvmaf's
 * tables, 1 to 32 contrast steps, thresholds that leave some steps out,
 * and samples masked out or off the band.  Every kernel's inputs must be
 * left as they were.
 */
#include <stdio.h>
#include <string.h>

#include "checkasm.h"
#include "common.h"
#include "metrics/cambi/cambi.h"
#include "metrics/cambi/cambi_tables.h"

enum { MAX_W = 1920 };

static const unsigned widths[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 961,
                                   MAX_W };

/* An output buffer of a kernel under test, filled with a byte no output
 * has (0x5c), so that an output the kernel leaves unwritten differs from
 * C's. */
static void *alloc_output(size_t size)
{
    void *p = checkasm_alloc(size);
    memset(p, 0x5c, size);
    return p;
}

/* The fills of the samples the kernels after the load take: random at 10
 * bits (0 .. 1024: cambi_to_10bit rounds deeper samples up to 1024), all
 * zero, all 0xffff and random 16-bit values (a picture's samples may
 * exceed its bit depth, and the kernels must then still give C's
 * results), and a few values around 512 (equal neighbours). */
enum { FILL_FEW = CHECKASM_FILL_COUNT, FILL_WIDE, FILL_KINDS };

static const char *fill_name(unsigned fill)
{
    return fill == FILL_FEW    ? "few values"
           : fill == FILL_WIDE ? "16-bit values"
                               : checkasm_fill_names[fill];
}

static void fill_samples(uint16_t *p, unsigned n, unsigned fill)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned v = checkasm_rand_below(1025);
        if (fill == FILL_FEW) v = 511 + checkasm_rand_below(3);
        if (fill == FILL_WIDE) v = checkasm_rand_below(65536);
        if (fill == CHECKASM_FILL_ZERO) v = 0;
        if (fill == CHECKASM_FILL_MAX) v = 0xffff;
        p[i] = (uint16_t)v;
    }
}

/* Mask bytes 0/1 with 1 in `ones` of 8 */
static void fill_mask(uint8_t *m, unsigned n, unsigned ones)
{
    for (unsigned i = 0; i < n; i++) m[i] = checkasm_rand_below(8) < ones;
}

static void check_load(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_load_row", level)) return;
    static const unsigned depths[] = { 8, 9, 10, 12, 16 };
    enum { MAX_IN = 2 * MAX_W + 3 };
    uint8_t *in = checkasm_alloc(MAX_IN * 2), *copy = checkasm_alloc(MAX_IN * 2);
    uint32_t *src_x = checkasm_alloc(MAX_W * sizeof(uint32_t));
    uint16_t *want = checkasm_alloc(MAX_W * 2);
    for (unsigned b = 0; b < QUALE_ARRAY_SIZE(depths); b++) {
        const unsigned bits = depths[b], bytes = bits > 8 ? 2 : 1;
        for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
            /* checkasm's fills, and (past 8 bits) 16-bit samples above the
             * depth */
            for (unsigned f = 0; f < CHECKASM_FILL_COUNT + (bits > 8); f++) {
                for (unsigned resample = 0; resample < 2; resample++) {
                    const unsigned w = widths[wi];
                    /* a resampling reads a row of up to twice the width */
                    const unsigned in_w = resample ? w + checkasm_rand_below(w + 4) : w;
                    if (f < CHECKASM_FILL_COUNT)
                        checkasm_fill_samples(in, in_w, bits, (enum CheckasmFill)f);
                    else
                        checkasm_fill_samples(in, in_w, 16, CHECKASM_FILL_RANDOM);
                    memcpy(copy, in, (size_t)in_w * bytes);
                    if (resample) cambi_source_positions(src_x, in_w, w);
                    uint16_t *got = alloc_output(w * 2);
                    const uint32_t *pos = resample ? src_x : NULL;
                    c->load_row(in, bits, pos, want, w);
                    d->load_row(in, bits, pos, got, w);
                    char what[80];
                    const char *fill =
                        f < CHECKASM_FILL_COUNT ? checkasm_fill_names[f] : "above the depth";
                    snprintf(what, sizeof(what), "%u bits, width %u of %u, %s", bits, w, in_w,
                             fill);
                    checkasm_check_equal(got, want, w * 2, what);
                    checkasm_check_equal(in, copy, (size_t)in_w * bytes, "input row");
                    checkasm_free(got);
                }
            }
        }
    }
    checkasm_fill_samples(in, MAX_W, 8, CHECKASM_FILL_RANDOM);
    CHECKASM_BENCH(d->load_row(in, 8, NULL, want, MAX_W));
    checkasm_free(in);
    checkasm_free(copy);
    checkasm_free(src_x);
    checkasm_free(want);
    checkasm_end();
}

/* libvmaf's anti-dithering of a row, in int: the C kernel must give it
 * for any 16-bit samples (the CUDA twin computes the same). */
static void anti_dither_row_reference(uint16_t *a, const uint16_t *b, unsigned w)
{
    for (unsigned j = 0; j + 1 < w; j++) {
        const int sum = b ? a[j] + a[j + 1] + b[j] + b[j + 1] : 2 * (a[j] + a[j + 1]);
        a[j] = (uint16_t)(sum / 4);
    }
    if (b) a[w - 1] = (uint16_t)((a[w - 1] + b[w - 1]) / 2);
}

static void check_anti_dither(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_anti_dither_row", level)) return;
    uint16_t *a = checkasm_alloc(MAX_W * 2), *b = checkasm_alloc(MAX_W * 2);
    uint16_t *want = checkasm_alloc(MAX_W * 2), *b_copy = checkasm_alloc(MAX_W * 2);
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned f = 0; f < FILL_KINDS; f++) {
            const unsigned w = widths[wi];
            fill_samples(a, w, f);
            fill_samples(b, w, f);
            memcpy(b_copy, b, w * 2);
            uint16_t *got = checkasm_alloc(w * 2);
            for (unsigned last = 0; last < 2; last++) {
                memcpy(want, a, w * 2);
                memcpy(got, a, w * 2);
                c->anti_dither_row(want, last ? NULL : b, w);
                d->anti_dither_row(got, last ? NULL : b, w);
                char what[80];
                snprintf(what, sizeof(what), "%s, width %u, %s", last ? "last row" : "row", w,
                         fill_name(f));
                checkasm_check_equal(got, want, w * 2, what);
                checkasm_check_equal(b, b_copy, w * 2, "lower row");
                memcpy(got, a, w * 2);
                anti_dither_row_reference(got, last ? NULL : b, w);
                checkasm_check_equal(want, got, w * 2, "C kernel against libvmaf's formula");
            }
            checkasm_free(got);
        }
    }
    fill_samples(a, MAX_W, CHECKASM_FILL_RANDOM);
    fill_samples(b, MAX_W, CHECKASM_FILL_RANDOM);
    CHECKASM_BENCH(d->anti_dither_row(a, b, MAX_W));
    checkasm_free(a);
    checkasm_free(b);
    checkasm_free(want);
    checkasm_free(b_copy);
    checkasm_end();
}

static void check_flat_row(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_flat_row", level)) return;
    uint16_t *a = checkasm_alloc(MAX_W * 2), *b = checkasm_alloc(MAX_W * 2);
    uint16_t *a_copy = checkasm_alloc(MAX_W * 2), *b_copy = checkasm_alloc(MAX_W * 2);
    uint8_t *want = checkasm_alloc(MAX_W);
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned f = 0; f < FILL_KINDS; f++) {
            for (unsigned last = 0; last < 2; last++) {
                const unsigned w = widths[wi];
                fill_samples(a, w, f);
                fill_samples(b, w, f);
                memcpy(a_copy, a, w * 2);
                memcpy(b_copy, b, w * 2);
                uint8_t *got = alloc_output(w);
                c->flat_row(a, last ? NULL : b, want, w);
                d->flat_row(a, last ? NULL : b, got, w);
                char what[80];
                snprintf(what, sizeof(what), "flat%s, width %u, %s", last ? ", last row" : "", w,
                         fill_name(f));
                checkasm_check_equal(got, want, w, what);
                checkasm_check_equal(a, a_copy, w * 2, "row");
                checkasm_check_equal(b, b_copy, w * 2, "lower row");
                checkasm_free(got);
            }
        }
    }
    fill_samples(a, MAX_W, FILL_FEW);
    fill_samples(b, MAX_W, FILL_FEW);
    CHECKASM_BENCH(d->flat_row(a, b, want, MAX_W));
    checkasm_free(a);
    checkasm_free(b);
    checkasm_free(a_copy);
    checkasm_free(b_copy);
    checkasm_free(want);
    checkasm_end();
}

static void check_mask_row(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_mask_row", level)) return;
    const unsigned pad = CAMBI_MASK_PAD;
    uint8_t *count_c = checkasm_alloc(MAX_W + 2 * pad), *count_d = checkasm_alloc(MAX_W + 2 * pad);
    uint8_t *add = checkasm_alloc(MAX_W), *sub = checkasm_alloc(MAX_W);
    uint8_t *add_copy = checkasm_alloc(MAX_W), *sub_copy = checkasm_alloc(MAX_W);
    uint8_t *want = checkasm_alloc(MAX_W);
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        /* variants: which of add and sub there are (bits 0, 1); from 4 on
         * both, with all-zero and all-full counts */
        for (unsigned variant = 0; variant < 6; variant++) {
            const unsigned w = widths[wi];
            /* counts of 7 rows of flags, one row entering and one leaving */
            memset(count_c, 0, w + 2 * pad);
            for (unsigned j = 0; j < w; j++) {
                sub[j] = (uint8_t)checkasm_rand_below(2);
                add[j] = (uint8_t)checkasm_rand_below(2);
                count_c[pad + j] = (uint8_t)(sub[j] + checkasm_rand_below(7 - sub[j]));
                if (variant == 4) count_c[pad + j] = sub[j] = add[j] = 0;
                if (variant == 5) {
                    count_c[pad + j] = 7;
                    sub[j] = add[j] = 1;
                }
            }
            memcpy(count_d, count_c, w + 2 * pad);
            memcpy(add_copy, add, w);
            memcpy(sub_copy, sub, w);
            /* mask_index: libvmaf's range (7 .. 27 and a little beyond),
             * and the ends that make the mask all 1 and all 0 */
            unsigned mask_index = 7 + checkasm_rand_below(24);
            if (variant == 4) mask_index = 0;
            if (variant == 5) mask_index = 48;
            uint8_t *got = alloc_output(w);
            const uint8_t *a = variant & 1 || variant >= 4 ? add : NULL;
            const uint8_t *s = variant & 2 || variant >= 4 ? sub : NULL;
            c->mask_row(count_c + pad, a, s, want, w, mask_index);
            d->mask_row(count_d + pad, a, s, got, w, mask_index);
            char what[80];
            snprintf(what, sizeof(what), "mask, width %u, variant %u", w, variant);
            checkasm_check_equal(got, want, w, what);
            checkasm_check_equal(count_d, count_c, w + 2 * pad, "counts");
            checkasm_check_equal(add, add_copy, w, "entering flags");
            checkasm_check_equal(sub, sub_copy, w, "leaving flags");
            checkasm_free(got);
        }
    }
    memset(count_c, 0, MAX_W + 2 * pad);
    fill_mask(add, MAX_W, 4);
    CHECKASM_BENCH(d->mask_row(count_c + pad, add, add, want, MAX_W, 24));
    checkasm_free(count_c);
    checkasm_free(count_d);
    checkasm_free(add);
    checkasm_free(sub);
    checkasm_free(add_copy);
    checkasm_free(sub_copy);
    checkasm_free(want);
    checkasm_end();
}

static void check_decimate(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_decimate_row", level)) return;
    uint16_t *in16 = checkasm_alloc(MAX_W * 2), *copy16 = checkasm_alloc(MAX_W * 2);
    uint16_t *want16 = checkasm_alloc(MAX_W);
    uint8_t *in8 = checkasm_alloc(MAX_W), *copy8 = checkasm_alloc(MAX_W);
    uint8_t *want8 = checkasm_alloc(MAX_W / 2);
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned f = 0; f < FILL_KINDS; f++) {
            const unsigned w = widths[wi], dw = (w + 1) / 2;
            fill_samples(in16, w, f);
            fill_mask(in8, w, f == CHECKASM_FILL_ZERO ? 0 : f == CHECKASM_FILL_MAX ? 8 : 4);
            memcpy(copy16, in16, w * 2);
            memcpy(copy8, in8, w);
            uint16_t *got16 = alloc_output(dw * 2);
            uint8_t *got8 = alloc_output(dw);
            c->decimate_row16(in16, want16, dw);
            d->decimate_row16(in16, got16, dw);
            c->decimate_row8(in8, want8, dw);
            d->decimate_row8(in8, got8, dw);
            checkasm_check_equal(got16, want16, dw * 2, "samples");
            checkasm_check_equal(got8, want8, dw, "mask");
            checkasm_check_equal(in16, copy16, w * 2, "input samples");
            checkasm_check_equal(in8, copy8, w, "input mask");
            checkasm_free(got16);
            checkasm_free(got8);
        }
    }
    CHECKASM_BENCH(d->decimate_row16(in16, want16, MAX_W / 2);
                   d->decimate_row8(in8, want8, MAX_W / 2));
    checkasm_free(in16);
    checkasm_free(copy16);
    checkasm_free(want16);
    checkasm_free(in8);
    checkasm_free(copy8);
    checkasm_free(want8);
    checkasm_end();
}

static void check_mode(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_mode_filter", level)) return;
    uint16_t *r[3], *copy[3], *want = checkasm_alloc(MAX_W * 2);
    for (int k = 0; k < 3; k++) {
        r[k] = checkasm_alloc(MAX_W * 2);
        copy[k] = checkasm_alloc(MAX_W * 2);
    }
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned f = 0; f < FILL_KINDS; f++) {
            const unsigned w = widths[wi];
            for (int k = 0; k < 3; k++) {
                fill_samples(r[k], w, f);
                memcpy(copy[k], r[k], w * 2);
            }
            uint16_t *got = alloc_output(w * 2);
            char what[80];
            c->mode_row(r[0], want, w);
            d->mode_row(r[0], got, w);
            snprintf(what, sizeof(what), "horizontal mode, width %u, %s", w, fill_name(f));
            checkasm_check_equal(got, want, w * 2, what);
            c->mode_column(r[0], r[1], r[2], want, w);
            d->mode_column(r[0], r[1], r[2], got, w);
            snprintf(what, sizeof(what), "vertical mode, width %u, %s", w, fill_name(f));
            checkasm_check_equal(got, want, w * 2, what);
            for (int k = 0; k < 3; k++) checkasm_check_equal(r[k], copy[k], w * 2, "input rows");
            checkasm_free(got);
        }
    }
    for (int k = 0; k < 3; k++) fill_samples(r[k], MAX_W, FILL_FEW);
    CHECKASM_BENCH(d->mode_row(r[0], want, MAX_W); d->mode_column(r[0], r[1], r[2], want, MAX_W));
    for (int k = 0; k < 3; k++) {
        checkasm_free(r[k]);
        checkasm_free(copy[k]);
    }
    checkasm_free(want);
    checkasm_end();
}

/* What a c-value reads besides the counts: num_diffs steps, the band of
 * values 100 .. 100 + band - 1, thresholds that leave some steps out and
 * keep every count a step reads inside the band (as init's band does). */
static CambiContrast contrast(int num_diffs, int band)
{
    CambiContrast k = { 0 };
    k.num_diffs = num_diffs;
    k.band_base = 100;
    k.band_size = band;
    k.vlt_luma = checkasm_rand_below(2) ? 0 : 100 + 3 * num_diffs;
    for (int i = 0; i < num_diffs; i++)
        k.tvi[i] = 100 + num_diffs + (int)checkasm_rand_below((uint32_t)(band - 2 * num_diffs));
    return k;
}

/* Samples of a row whose values lie in and around the band (so that
 * counts of every step exist), one in 32 any 16-bit value */
static void fill_band_samples(uint16_t *p, unsigned n, const CambiContrast *k)
{
    for (unsigned i = 0; i < n; i++) {
        p[i] = (uint16_t)(k->band_base - 4 + (int)checkasm_rand_below((uint32_t)k->band_size + 8));
        if (!checkasm_rand_below(32)) p[i] = (uint16_t)checkasm_rand_below(65536);
    }
}

/* The band row of a sample (-1: none) */
static int band_row(const CambiContrast *k, const uint16_t *row, const uint8_t *mask, unsigned j)
{
    if (!mask || !mask[j]) return -1;
    const int v = (int)row[j] - k->band_base;
    return v >= 0 && v < k->band_size ? v : -1;
}

/* slide_row as libvmaf writes it, sample by sample: the C kernel takes
 * runs of samples at once, and must give the same counters. */
static void slide_row_by_sample(uint16_t *histograms, const CambiContrast *k,
                                const uint16_t *leave, const uint8_t *leave_mask,
                                const uint16_t *enter, const uint8_t *enter_mask, unsigned w,
                                unsigned pad)
{
    for (unsigned j = 0; j < w; j++) {
        const int out = band_row(k, leave, leave_mask, j), in = band_row(k, enter, enter_mask, j);
        if (out == in) continue;
        for (unsigned x = j > pad ? j - pad : 0; x < w && x <= j + pad; x++) {
            if (out >= 0) histograms[(size_t)out * w + x]--;
            if (in >= 0) histograms[(size_t)in * w + x]++;
        }
    }
}

static void check_slide(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_slide_row", level)) return;
    enum { BAND = 40 };
    const size_t hist_bytes = (size_t)BAND * MAX_W * 2 + CAMBI_HISTOGRAM_SLACK;
    uint16_t *hc = checkasm_alloc(hist_bytes), *hd = checkasm_alloc(hist_bytes);
    uint16_t *hs = checkasm_alloc(hist_bytes);
    uint16_t *leave = checkasm_alloc(MAX_W * 2), *enter = checkasm_alloc(MAX_W * 2);
    uint8_t *leave_mask = checkasm_alloc(MAX_W), *enter_mask = checkasm_alloc(MAX_W);
    uint16_t *copy = checkasm_alloc(2 * MAX_W * 2);
    uint8_t *mask_copy = checkasm_alloc(2 * MAX_W);
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned variant = 0; variant < 8; variant++) {
            const unsigned w = widths[wi];
            const unsigned pad = 1 + checkasm_rand_below(32);
            const CambiContrast k = contrast(4, BAND);
            /* counters of any value, wrapping (variant 7: all 0 or all
             * 0xffff, where a step wraps) */
            for (size_t i = 0; i < (size_t)BAND * w; i++)
                hc[i] = (uint16_t)(variant == 7 ? (wi % 2 ? 0xffff : 0) : checkasm_rand());
            memcpy(hd, hc, (size_t)BAND * w * 2);
            memcpy(hs, hc, (size_t)BAND * w * 2);
            fill_band_samples(leave, w, &k);
            fill_band_samples(enter, w, &k);
            if (variant == 6) {
                /* runs of one value, as banded areas have */
                for (unsigned j = 0; j < w; j++) {
                    leave[j] = leave[j / 13 * 13];
                    enter[j] = enter[j / 21 * 21];
                }
            }
            fill_mask(leave_mask, w, variant % 3 * 4); /* none, half, all */
            fill_mask(enter_mask, w, (variant + 1) % 3 * 4);
            memcpy(copy, leave, w * 2);
            memcpy(copy + MAX_W, enter, w * 2);
            memcpy(mask_copy, leave_mask, w);
            memcpy(mask_copy + MAX_W, enter_mask, w);
            const bool has_leave = variant != 4, has_enter = variant != 5;
            c->slide_row(hc, &k, has_leave ? leave : NULL, has_leave ? leave_mask : NULL,
                         has_enter ? enter : NULL, has_enter ? enter_mask : NULL, w, pad);
            d->slide_row(hd, &k, has_leave ? leave : NULL, has_leave ? leave_mask : NULL,
                         has_enter ? enter : NULL, has_enter ? enter_mask : NULL, w, pad);
            char what[80];
            snprintf(what, sizeof(what), "histograms, width %u, pad %u, variant %u", w, pad,
                     variant);
            checkasm_check_equal(hd, hc, (size_t)BAND * w * 2, what);
            slide_row_by_sample(hs, &k, has_leave ? leave : NULL, has_leave ? leave_mask : NULL,
                                has_enter ? enter : NULL, has_enter ? enter_mask : NULL, w, pad);
            snprintf(what, sizeof(what), "C histograms against sample by sample, width %u, pad %u",
                     w, pad);
            checkasm_check_equal(hc, hs, (size_t)BAND * w * 2, what);
            checkasm_check_equal(leave, copy, w * 2, "leaving samples");
            checkasm_check_equal(enter, copy + MAX_W, w * 2, "entering samples");
            checkasm_check_equal(leave_mask, mask_copy, w, "leaving mask");
            checkasm_check_equal(enter_mask, mask_copy + MAX_W, w, "entering mask");
        }
    }
    /* a banded area: masked runs of one value, stepping every 64 samples */
    const CambiContrast k = contrast(4, BAND);
    fill_band_samples(leave, MAX_W, &k);
    fill_band_samples(enter, MAX_W, &k);
    for (unsigned j = 0; j < MAX_W; j++) {
        leave[j] = leave[j / 64 * 64];
        enter[j] = enter[j / 64 * 64 + 32 < MAX_W ? j / 64 * 64 + 32 : j];
        leave_mask[j] = (j / 96) % 3 != 0;
        enter_mask[j] = (j / 80) % 3 != 1;
    }
    memset(hd, 0, (size_t)BAND * MAX_W * 2);
    /* one row in, the other out, then back: the counts stay bounded */
    CHECKASM_BENCH(d->slide_row(hd, &k, leave, leave_mask, enter, enter_mask, MAX_W, 16);
                   d->slide_row(hd, &k, enter, enter_mask, leave, leave_mask, MAX_W, 16));
    checkasm_free(hc);
    checkasm_free(hd);
    checkasm_free(hs);
    checkasm_free(leave);
    checkasm_free(enter);
    checkasm_free(leave_mask);
    checkasm_free(enter_mask);
    checkasm_free(copy);
    checkasm_free(mask_copy);
    checkasm_end();
}

/* Runs of a few samples with one value, as banded areas have (every
 * other run of 8 keeps its mixed values). */
static void flatten(uint16_t *image, unsigned w)
{
    for (unsigned j0 = 0; j0 < w; j0 += 8) {
        if ((j0 / 8) % 2) continue;
        const unsigned end = j0 + 8 + checkasm_rand_below(12);
        for (unsigned j = j0 + 1; j < QUALE_MIN(end, w); j++) image[j] = image[j0];
    }
}

static void check_c_values(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_c_values_row", level)) return;
    enum { BAND = 80 };
    static const int steps[] = { 1, 2, 4, 8, 16, 32 };
    const size_t hist_bytes = (size_t)BAND * MAX_W * 2 + CAMBI_HISTOGRAM_SLACK;
    uint16_t *hist = checkasm_alloc(hist_bytes), *hist_copy = checkasm_alloc(hist_bytes);
    uint16_t *image = checkasm_alloc(MAX_W * 2), *image_copy = checkasm_alloc(MAX_W * 2);
    uint8_t *mask = checkasm_alloc(MAX_W), *mask_copy = checkasm_alloc(MAX_W);
    float *want = checkasm_alloc(MAX_W * sizeof(float));
    /* two counts of a column add up to at most the window's area (the
     * reciprocal table's end) */
    const uint32_t most = (CAMBI_RECIPROCAL_SIZE - 1) / 2;
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned si = 0; si < QUALE_ARRAY_SIZE(steps); si++) {
            for (unsigned f = 0; f < CHECKASM_FILL_COUNT; f++) {
                const unsigned w = widths[wi];
                const CambiContrast k = contrast(steps[si], BAND);
                for (size_t i = 0; i < (size_t)BAND * w; i++) {
                    hist[i] = (uint16_t)(f == CHECKASM_FILL_ZERO  ? 0
                                         : f == CHECKASM_FILL_MAX ? most
                                         : checkasm_rand_below(4) ? checkasm_rand_below(most + 1)
                                                                  : 0);
                }
                memcpy(hist_copy, hist, (size_t)BAND * w * 2);
                fill_band_samples(image, w, &k);
                fill_mask(mask, w, 1 + si % 8);
                if (wi % 2) flatten(image, w);
                memcpy(image_copy, image, w * 2);
                memcpy(mask_copy, mask, w);
                float *got = alloc_output(w * sizeof(float));
                const float *recip = cambi_reciprocal;
                const bool any_c = c->c_values_row(&k, recip, hist, image, mask, want, w);
                const bool any_d = d->c_values_row(&k, recip, hist, image, mask, got, w);
                char what[80];
                snprintf(what, sizeof(what), "c-values, width %u, %d steps, counts %s", w,
                         steps[si], checkasm_fill_names[f]);
                checkasm_check_equal(got, want, w * sizeof(float), what);
                /* the return value: whether a c-value is above 0 */
                bool positive = false;
                for (unsigned j = 0; j < w; j++) positive |= want[j] > 0.0f;
                if (any_c != positive || any_d != positive)
                    checkasm_fail("%s: returns %d (C %d), a c-value above 0: %d", what, any_d,
                                  any_c, positive);
                checkasm_check_equal(hist, hist_copy, (size_t)BAND * w * 2, "histograms");
                checkasm_check_equal(image, image_copy, w * 2, "samples");
                checkasm_check_equal(mask, mask_copy, w, "mask");
                checkasm_free(got);
            }
        }
    }
    const CambiContrast k = contrast(4, BAND);
    /* a banded area: masked runs of one value, a step every 64 samples */
    fill_band_samples(image, MAX_W, &k);
    for (unsigned j = 0; j < MAX_W; j++) image[j] = image[j / 64 * 64];
    fill_mask(mask, MAX_W, 8);
    CHECKASM_BENCH(d->c_values_row(&k, cambi_reciprocal, hist, image, mask, want, MAX_W));
    checkasm_free(hist);
    checkasm_free(hist_copy);
    checkasm_free(image);
    checkasm_free(image_copy);
    checkasm_free(mask);
    checkasm_free(mask_copy);
    checkasm_free(want);
    checkasm_end();
}

void checkasm_check_cambi(void)
{
    typedef void (*Check)(const CheckasmLevel *, const CambiDsp *, const CambiDsp *);
    static const Check checks[] = { check_load,     check_anti_dither, check_flat_row,
                                    check_mask_row, check_decimate,    check_mode,
                                    check_slide,    check_c_values };
    unsigned count;
    const CheckasmLevel *levels = checkasm_levels(&count);
    CambiDsp c;
    cambi_dsp_init(&c, levels[0].flags);
    for (unsigned k = 0; k < QUALE_ARRAY_SIZE(checks); k++) {
        for (unsigned i = 0; i < count; i++) {
            CambiDsp d;
            cambi_dsp_init(&d, levels[i].flags);
            /* every kernel changes with the level: C once, each SIMD level
             * where its table differs from C's */
            if (i > 0 && !memcmp(&d, &c, sizeof(d))) continue;
            checks[k](&levels[i], &c, &d);
        }
    }
}
