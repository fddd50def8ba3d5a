/*
 * checkasm for CAMBI (src/metrics/cambi.h): every row kernel, byte for
 * byte against the C kernels.
 *
 * Samples are 10-bit (CAMBI works at 10 bits) or drawn from a few values,
 * so that neighbours are often equal (flat samples, ties of the mode
 * filter, masked runs); masks are dense, sparse or empty; the histograms
 * hold counts as a window leaves them; widths around the vector lengths
 * and a 1080p row's.  The c-values run with libvmaf's tables, 1 to 32
 * contrast steps, thresholds that leave some steps out, and samples
 * masked out or off the band.
 */
#include <stdio.h>
#include <string.h>

#include "checkasm.h"
#include "common.h"
#include "metrics/cambi.h"

enum { MAX_W = 1920 };

static const unsigned widths[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 961,
                                   MAX_W };

/* Samples: `few` picks from 3 values near `base` (equal neighbours),
 * else any 10-bit value. */
static void fill_samples(uint16_t *p, unsigned n, bool few, unsigned base)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint16_t)(few ? base + checkasm_rand_below(3) : checkasm_rand_below(1024));
}

/* Mask bytes 0/1 with 1 in `ones` of 8 */
static void fill_mask(uint8_t *m, unsigned n, unsigned ones)
{
    for (unsigned i = 0; i < n; i++) m[i] = checkasm_rand_below(8) < ones;
}

static void check_anti_dither(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_anti_dither_row", level)) return;
    uint16_t *a = checkasm_alloc(MAX_W * 2), *b = checkasm_alloc(MAX_W * 2);
    uint16_t *want = checkasm_alloc(MAX_W * 2), *b_copy = checkasm_alloc(MAX_W * 2);
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned kind = 0; kind < 3; kind++) {
            const unsigned w = widths[wi];
            fill_samples(a, w, kind == 1, 512);
            fill_samples(b, w, kind == 1, 512);
            if (kind == 2)
                for (unsigned i = 0; i < w; i++) a[i] = b[i] = 1023;
            memcpy(b_copy, b, w * 2);
            uint16_t *got = checkasm_alloc(w * 2);
            for (unsigned last = 0; last < 2; last++) {
                memcpy(want, a, w * 2);
                memcpy(got, a, w * 2);
                c->anti_dither_row(want, last ? NULL : b, w);
                d->anti_dither_row(got, last ? NULL : b, w);
                checkasm_check_equal(got, want, w * 2, last ? "last row" : "row");
                checkasm_check_equal(b, b_copy, w * 2, "lower row");
            }
            checkasm_free(got);
        }
    }
    fill_samples(a, MAX_W, false, 0);
    fill_samples(b, MAX_W, false, 0);
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
    uint8_t *want = checkasm_alloc(MAX_W);
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned few = 0; few < 2; few++) {
            for (unsigned last = 0; last < 2; last++) {
                const unsigned w = widths[wi];
                fill_samples(a, w, few, 100);
                fill_samples(b, w, few, 100);
                uint8_t *got = checkasm_alloc(w);
                c->flat_row(a, last ? NULL : b, want, w);
                d->flat_row(a, last ? NULL : b, got, w);
                checkasm_check_equal(got, want, w, last ? "flat, last row" : "flat");
                checkasm_free(got);
            }
        }
    }
    fill_samples(a, MAX_W, true, 100);
    fill_samples(b, MAX_W, true, 100);
    CHECKASM_BENCH(d->flat_row(a, b, want, MAX_W));
    checkasm_free(a);
    checkasm_free(b);
    checkasm_free(want);
    checkasm_end();
}

static void check_mask_row(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_mask_row", level)) return;
    const unsigned pad = CAMBI_MASK_PAD;
    uint8_t *count_c = checkasm_alloc(MAX_W + 2 * pad), *count_d = checkasm_alloc(MAX_W + 2 * pad);
    uint8_t *add = checkasm_alloc(MAX_W), *sub = checkasm_alloc(MAX_W);
    uint8_t *want = checkasm_alloc(MAX_W);
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned variant = 0; variant < 4; variant++) {
            const unsigned w = widths[wi];
            /* counts of 7 rows of flags, one row entering and one leaving */
            memset(count_c, 0, w + 2 * pad);
            for (unsigned j = 0; j < w; j++) {
                sub[j] = (uint8_t)checkasm_rand_below(2);
                add[j] = (uint8_t)checkasm_rand_below(2);
                count_c[pad + j] = (uint8_t)(sub[j] + checkasm_rand_below(7 - sub[j]));
                if (variant == 3) count_c[pad + j] = sub[j] = add[j] = 1 + 6 * (j % 2 == 0);
            }
            memcpy(count_d, count_c, w + 2 * pad);
            const unsigned mask_index = variant == 3 ? 24 : 10 + checkasm_rand_below(30);
            uint8_t *got = checkasm_alloc(w);
            const uint8_t *a = variant & 1 ? add : NULL, *s = variant & 2 ? sub : NULL;
            c->mask_row(count_c + pad, a, s, want, w, mask_index);
            d->mask_row(count_d + pad, a, s, got, w, mask_index);
            checkasm_check_equal(got, want, w, "mask");
            checkasm_check_equal(count_d, count_c, w + 2 * pad, "counts");
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
    checkasm_free(want);
    checkasm_end();
}

static void check_decimate(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_decimate_row", level)) return;
    uint16_t *in16 = checkasm_alloc(MAX_W * 2), *want16 = checkasm_alloc(MAX_W);
    uint8_t *in8 = checkasm_alloc(MAX_W), *want8 = checkasm_alloc(MAX_W / 2);
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        const unsigned w = widths[wi], dw = (w + 1) / 2;
        fill_samples(in16, w, false, 0);
        fill_mask(in8, w, 4);
        uint16_t *got16 = checkasm_alloc(dw * 2);
        uint8_t *got8 = checkasm_alloc(dw);
        c->decimate_row16(in16, want16, dw);
        d->decimate_row16(in16, got16, dw);
        c->decimate_row8(in8, want8, dw);
        d->decimate_row8(in8, got8, dw);
        checkasm_check_equal(got16, want16, dw * 2, "samples");
        checkasm_check_equal(got8, want8, dw, "mask");
        checkasm_free(got16);
        checkasm_free(got8);
    }
    CHECKASM_BENCH(d->decimate_row16(in16, want16, MAX_W / 2);
                   d->decimate_row8(in8, want8, MAX_W / 2));
    checkasm_free(in16);
    checkasm_free(want16);
    checkasm_free(in8);
    checkasm_free(want8);
    checkasm_end();
}

static void check_mode(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_mode_filter", level)) return;
    uint16_t *r[3], *want = checkasm_alloc(MAX_W * 2);
    for (int k = 0; k < 3; k++) r[k] = checkasm_alloc(MAX_W * 2);
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned few = 0; few < 2; few++) {
            const unsigned w = widths[wi];
            for (int k = 0; k < 3; k++) fill_samples(r[k], w, few, 700);
            uint16_t *got = checkasm_alloc(w * 2);
            c->mode_row(r[0], want, w);
            d->mode_row(r[0], got, w);
            checkasm_check_equal(got, want, w * 2, "horizontal mode");
            c->mode_column(r[0], r[1], r[2], want, w);
            d->mode_column(r[0], r[1], r[2], got, w);
            checkasm_check_equal(got, want, w * 2, "vertical mode");
            checkasm_free(got);
        }
    }
    for (int k = 0; k < 3; k++) fill_samples(r[k], MAX_W, true, 700);
    CHECKASM_BENCH(d->mode_row(r[0], want, MAX_W); d->mode_column(r[0], r[1], r[2], want, MAX_W));
    for (int k = 0; k < 3; k++) checkasm_free(r[k]);
    checkasm_free(want);
    checkasm_end();
}

/* Parameters of the c-values: libvmaf's tables, num_diffs steps, the band
 * of values 100 .. 100 + band - 1, thresholds that leave some steps out. */
static CambiCValueParams c_value_params(int num_diffs, int band)
{
    CambiCValueParams p;
    cambi_c_value_tables(&p, NULL);
    p.num_diffs = num_diffs;
    p.band_base = 100;
    p.band_size = band;
    p.vlt_luma = checkasm_rand_below(2) ? 0 : 100 + 3 * num_diffs;
    for (int d = 0; d < num_diffs; d++)
        p.tvi[d] = 100 + num_diffs + (int)checkasm_rand_below((uint32_t)band - 2 * num_diffs);
    return p;
}

/* Samples of a row whose values lie in and around the band (so that
 * counts of every step exist) */
static void fill_band_samples(uint16_t *p, unsigned n, const CambiCValueParams *cv)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint16_t)(cv->band_base - 4 +
                          (int)checkasm_rand_below((uint32_t)cv->band_size + 8));
}

static void check_slide(const CheckasmLevel *level, const CambiDsp *c, const CambiDsp *d)
{
    if (!checkasm_begin("cambi_slide_row", level)) return;
    enum { BAND = 40 };
    const size_t hist_bytes = (size_t)BAND * MAX_W * 2 + CAMBI_HISTOGRAM_SLACK;
    uint16_t *hc = checkasm_alloc(hist_bytes), *hd = checkasm_alloc(hist_bytes);
    uint16_t *leave = checkasm_alloc(MAX_W * 2), *enter = checkasm_alloc(MAX_W * 2);
    uint8_t *leave_mask = checkasm_alloc(MAX_W), *enter_mask = checkasm_alloc(MAX_W);
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned variant = 0; variant < 6; variant++) {
            const unsigned w = widths[wi];
            const unsigned pad = 1 + checkasm_rand_below(32);
            const CambiCValueParams p = c_value_params(4, BAND);
            for (size_t i = 0; i < (size_t)BAND * w; i++)
                hc[i] = (uint16_t)(100 + checkasm_rand_below(1000));
            memcpy(hd, hc, (size_t)BAND * w * 2);
            fill_band_samples(leave, w, &p);
            fill_band_samples(enter, w, &p);
            fill_mask(leave_mask, w, variant % 3 * 4); /* none, half, all */
            fill_mask(enter_mask, w, (variant + 1) % 3 * 4);
            const bool has_leave = variant != 4, has_enter = variant != 5;
            c->slide_row(hc, &p, has_leave ? leave : NULL, has_leave ? leave_mask : NULL,
                         has_enter ? enter : NULL, has_enter ? enter_mask : NULL, w, pad);
            d->slide_row(hd, &p, has_leave ? leave : NULL, has_leave ? leave_mask : NULL,
                         has_enter ? enter : NULL, has_enter ? enter_mask : NULL, w, pad);
            char what[64];
            snprintf(what, sizeof(what), "histograms, width %u, pad %u", w, pad);
            checkasm_check_equal(hd, hc, (size_t)BAND * w * 2, what);
        }
    }
    /* a banded area: masked runs of one value, stepping every 64 samples */
    const CambiCValueParams p = c_value_params(4, BAND);
    fill_band_samples(leave, MAX_W, &p);
    fill_band_samples(enter, MAX_W, &p);
    for (unsigned j = 0; j < MAX_W; j++) {
        leave[j] = leave[j / 64 * 64];
        enter[j] = enter[j / 64 * 64 + 32 < MAX_W ? j / 64 * 64 + 32 : j];
        leave_mask[j] = (j / 96) % 3 != 0;
        enter_mask[j] = (j / 80) % 3 != 1;
    }
    memset(hd, 0, (size_t)BAND * MAX_W * 2);
    /* one row in, the other out, then back: the counts stay bounded */
    CHECKASM_BENCH(d->slide_row(hd, &p, leave, leave_mask, enter, enter_mask, MAX_W, 16);
                   d->slide_row(hd, &p, enter, enter_mask, leave, leave_mask, MAX_W, 16));
    checkasm_free(hc);
    checkasm_free(hd);
    checkasm_free(leave);
    checkasm_free(enter);
    checkasm_free(leave_mask);
    checkasm_free(enter_mask);
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
    unsigned recip_size;
    CambiCValueParams tables;
    cambi_c_value_tables(&tables, &recip_size);
    const size_t hist_bytes = (size_t)BAND * MAX_W * 2 + CAMBI_HISTOGRAM_SLACK;
    uint16_t *hist = checkasm_alloc(hist_bytes), *hist_copy = checkasm_alloc(hist_bytes);
    uint16_t *image = checkasm_alloc(MAX_W * 2);
    uint8_t *mask = checkasm_alloc(MAX_W);
    float *want = checkasm_alloc(MAX_W * sizeof(float));
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned si = 0; si < QUALE_ARRAY_SIZE(steps); si++) {
            const unsigned w = widths[wi];
            const CambiCValueParams p = c_value_params(steps[si], BAND);
            /* counts of a window: two counts of a column add up to at most
             * the window's area (the reciprocal table's end) */
            const uint32_t most = (recip_size - 1) / 2;
            for (size_t i = 0; i < (size_t)BAND * w; i++)
                hist[i] = (uint16_t)(checkasm_rand_below(4) ? checkasm_rand_below(most + 1) : 0);
            memcpy(hist_copy, hist, (size_t)BAND * w * 2);
            fill_band_samples(image, w, &p);
            fill_mask(mask, w, 1 + si % 8);
            if (wi % 2) flatten(image, w);
            float *got = checkasm_alloc(w * sizeof(float));
            c->c_values_row(&p, hist, image, mask, want, w);
            d->c_values_row(&p, hist, image, mask, got, w);
            char what[64];
            snprintf(what, sizeof(what), "c-values, width %u, %d steps", w, steps[si]);
            checkasm_check_equal(got, want, w * sizeof(float), what);
            checkasm_check_equal(hist, hist_copy, (size_t)BAND * w * 2, "histograms");
            checkasm_free(got);
        }
    }
    const CambiCValueParams p = c_value_params(4, BAND);
    /* a banded area: masked runs of one value, a step every 64 samples */
    fill_band_samples(image, MAX_W, &p);
    for (unsigned j = 0; j < MAX_W; j++) image[j] = image[j / 64 * 64];
    fill_mask(mask, MAX_W, 8);
    CHECKASM_BENCH(d->c_values_row(&p, hist, image, mask, want, MAX_W));
    checkasm_free(hist);
    checkasm_free(hist_copy);
    checkasm_free(image);
    checkasm_free(mask);
    checkasm_free(want);
    checkasm_end();
}

void checkasm_check_cambi(void)
{
    typedef void (*Check)(const CheckasmLevel *, const CambiDsp *, const CambiDsp *);
    static const Check checks[] = { check_anti_dither, check_flat_row, check_mask_row,
                                    check_decimate,    check_mode,     check_slide,
                                    check_c_values };
    unsigned count;
    const CheckasmLevel *levels = checkasm_levels(&count);
    CambiDsp c;
    cambi_dsp_init(&c, levels[0].flags);
    for (unsigned k = 0; k < QUALE_ARRAY_SIZE(checks); k++) {
        for (unsigned i = 0; i < count; i++) {
            CambiDsp d;
            cambi_dsp_init(&d, levels[i].flags);
            if (i > 0 && !memcmp(&d, &c, sizeof(d))) continue;
            checks[k](&levels[i], &c, &d);
        }
    }
}
