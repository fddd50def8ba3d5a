/*
 * checkasm for integer VIF's kernels (the VifDsp table, src/metrics/integer_vif.h).
 *
 * Vertical passes: the rows under every filter (17, 9, 5, 3 taps), 8-bit
 * samples and 9, 10, 12, 16-bit ones with the rounding of scale 0 and of the
 * scales after it.  Horizontal passes: planes made by the C vertical pass
 * from pictures that give every branch of the statistic (flat, faint
 * noise, full noise), and planes of raw random 16-bit words, which reach
 * the corners the filters never feed (negative variances, conversions out
 * of range); both gain limits.  Widths from 1 to 1920, odd ones included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkasm.h"
#include "metrics/integer_vif/integer_vif.h"

static const unsigned widths[] = { 1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 47, 64, 100, 257, 1920 };
static const unsigned filter_widths[] = { 17, 9, 5, 3 };

/* The rounding of the vertical pass at a scale (integer_vif.c). */
static VifShift shift_for(unsigned bitdepth, unsigned scale)
{
    VifShift sh = { 32768, 16, 32768, 16 };
    if (scale == 0) {
        sh.mu_round = 1u << (bitdepth - 1);
        sh.mu_shift = bitdepth;
        sh.sq_shift = 2 * (bitdepth - 8);
        sh.sq_round = bitdepth == 8 ? 0 : UINT64_C(1) << (sh.sq_shift - 1);
    }
    return sh;
}

/* fw rows of w samples of each picture, and the row pointers to them (a
 * random row order: the kernels must read each row through its pointer). */
typedef struct Rows {
    void *ref, *dis, *ref_copy, *dis_copy;
    const void *ref_rows[VIF_MAX_TAPS], *dis_rows[VIF_MAX_TAPS];
    size_t bytes;
} Rows;

enum Picture { PICTURE_FILL, PICTURE_FLAT, PICTURE_FAINT };

static void rows_make(Rows *r, unsigned fw, unsigned w, unsigned bits, enum CheckasmFill fill,
                      enum Picture picture)
{
    const size_t sample = bits > 8 ? 2 : 1;
    r->bytes = (size_t)fw * w * sample;
    r->ref = malloc(r->bytes);
    r->dis = malloc(r->bytes);
    r->ref_copy = malloc(r->bytes);
    r->dis_copy = malloc(r->bytes);
    if (!r->ref || !r->dis || !r->ref_copy || !r->dis_copy) {
        fprintf(stderr, "checkasm: out of memory\n");
        exit(1);
    }
    checkasm_fill_samples(r->ref, (size_t)fw * w, bits, fill);
    checkasm_fill_samples(r->dis, (size_t)fw * w, bits, fill);
    if (picture != PICTURE_FILL) {
        /* a level, with noise of a few steps on the distorted picture */
        const uint32_t max = (1u << bits) - 1, level = checkasm_rand_below(max - 3);
        for (size_t i = 0; i < (size_t)fw * w; i++) {
            const uint32_t a = level, b = level + (picture == PICTURE_FAINT ? checkasm_rand_below(4) : 0);
            if (sample == 1) {
                ((uint8_t *)r->ref)[i] = (uint8_t)a;
                ((uint8_t *)r->dis)[i] = (uint8_t)b;
            } else {
                ((uint16_t *)r->ref)[i] = (uint16_t)(a + checkasm_rand_below(2));
                ((uint16_t *)r->dis)[i] = (uint16_t)b;
            }
        }
    }
    memcpy(r->ref_copy, r->ref, r->bytes);
    memcpy(r->dis_copy, r->dis, r->bytes);
    for (unsigned k = 0; k < fw; k++) {
        const unsigned row = checkasm_rand_below(fw);
        r->ref_rows[k] = (const uint8_t *)r->ref + (size_t)row * w * sample;
        r->dis_rows[k] = (const uint8_t *)r->dis + (size_t)row * w * sample;
    }
}

static void rows_check_and_free(Rows *r)
{
    checkasm_check_equal(r->ref, r->ref_copy, r->bytes, "reference rows (input)");
    checkasm_check_equal(r->dis, r->dis_copy, r->bytes, "distorted rows (input)");
    free(r->ref);
    free(r->dis);
    free(r->ref_copy);
    free(r->dis_copy);
}

/* Padded planes as the metric keeps them: pointers to the first sample. */
typedef struct Planes {
    int16_t *p[VIF_PLANES];
    unsigned count, w;
} Planes;

static void planes_alloc(Planes *pl, unsigned count, unsigned w)
{
    pl->count = count;
    pl->w = w;
    for (unsigned i = 0; i < count; i++)
        pl->p[i] = (int16_t *)checkasm_alloc((VIF_PLANE_PAD_LEFT + w + VIF_PLANE_PAD_RIGHT) *
                                             sizeof(int16_t)) + VIF_PLANE_PAD_LEFT;
}

static void planes_free(Planes *pl)
{
    for (unsigned i = 0; i < pl->count; i++) checkasm_free(pl->p[i] - VIF_PLANE_PAD_LEFT);
}

static size_t planes_bytes(const Planes *pl)
{
    return (VIF_PLANE_PAD_LEFT + pl->w + VIF_PLANE_PAD_RIGHT) * sizeof(int16_t);
}

static bool planes_equal(const Planes *a, const Planes *b, unsigned n, const char *what)
{
    bool equal = true;
    for (unsigned i = 0; i < a->count && equal; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s plane %u", what, i);
        equal = checkasm_check_equal(a->p[i], b->p[i], n * sizeof(int16_t), name);
    }
    return equal;
}

/* Mirrors the planes into their padding as integer_vif.c does. */
static void planes_mirror(const Planes *pl, unsigned w, unsigned half)
{
    for (unsigned i = 0; i < pl->count; i++)
        for (unsigned f = 1; f <= half && f < w; f++) {
            pl->p[i][-(ptrdiff_t)f] = pl->p[i][f];
            pl->p[i][w - 1 + f] = pl->p[i][w - 1 - f];
        }
}

/* ---- vertical passes ------------------------------------------------------ */

static void check_vertical(const CheckasmLevel *level, const VifDsp *c, const VifDsp *simd)
{
    static const unsigned depths[2][4] = { { 8, 8, 8, 8 }, { 9, 10, 12, 16 } };
    for (unsigned wide = 0; wide < 2; wide++) {
        char name[64];
        snprintf(name, sizeof(name), "vif_vertical_stats_%u", wide ? 16 : 8);
        if (simd->vertical_stats[wide] != c->vertical_stats[wide] && checkasm_begin(name, level)) {
            for (unsigned d = 0; d < (wide ? 4u : 1u); d++)
                for (unsigned scale = 0; scale < (wide ? 4u : 1u); scale++)
                    for (unsigned f = 0; f < 4; f++)
                        for (unsigned wi = 0; wi < sizeof(widths) / sizeof(*widths); wi++)
                            for (unsigned fill = 0; fill < CHECKASM_FILL_COUNT; fill++) {
                                const unsigned fw = filter_widths[f], w = widths[wi];
                                const unsigned bits = scale > 0 ? 16 : depths[wide][d];
                                const VifShift sh = shift_for(depths[wide][d], scale);
                                Rows r;
                                rows_make(&r, fw, w, bits, fill, PICTURE_FILL);
                                Planes pc, ps;
                                planes_alloc(&pc, VIF_PLANES, w);
                                planes_alloc(&ps, VIF_PLANES, w);
                                c->vertical_stats[wide](r.ref_rows, r.dis_rows, fw, w, &sh, pc.p);
                                simd->vertical_stats[wide](r.ref_rows, r.dis_rows, fw, w, &sh, ps.p);
                                if (!planes_equal(&ps, &pc, w, "stats"))
                                    checkasm_fail("  at %u bits, scale %u, %u taps, width %u, %s",
                                                  bits, scale, fw, w, checkasm_fill_names[fill]);
                                rows_check_and_free(&r);
                                planes_free(&pc);
                                planes_free(&ps);
                            }
            checkasm_end();
        }

        snprintf(name, sizeof(name), "vif_vertical_lowpass_%u", wide ? 16 : 8);
        if (simd->vertical_lowpass[wide] != c->vertical_lowpass[wide] &&
            checkasm_begin(name, level)) {
            for (unsigned d = 0; d < (wide ? 4u : 1u); d++)
                for (unsigned scale = 1; scale < (wide ? 4u : 2u); scale++)
                    for (unsigned f = 1; f < 4; f++)
                        for (unsigned wi = 0; wi < sizeof(widths) / sizeof(*widths); wi++)
                            for (unsigned fill = 0; fill < CHECKASM_FILL_COUNT; fill++) {
                                const unsigned fw = filter_widths[f], w = widths[wi];
                                const unsigned bits = scale > 1 ? 16 : depths[wide][d];
                                const unsigned shift = scale > 1 ? 16 : bits;
                                Rows r;
                                rows_make(&r, fw, w, bits, fill, PICTURE_FILL);
                                Planes pc, ps;
                                planes_alloc(&pc, 2, w);
                                planes_alloc(&ps, 2, w);
                                c->vertical_lowpass[wide](r.ref_rows, r.dis_rows, fw, w, shift,
                                                          pc.p[0], pc.p[1]);
                                simd->vertical_lowpass[wide](r.ref_rows, r.dis_rows, fw, w, shift,
                                                             ps.p[0], ps.p[1]);
                                if (!planes_equal(&ps, &pc, w, "low-pass"))
                                    checkasm_fail("  at %u bits, shift %u, %u taps, width %u, %s",
                                                  bits, shift, fw, w, checkasm_fill_names[fill]);
                                rows_check_and_free(&r);
                                planes_free(&pc);
                                planes_free(&ps);
                            }
            checkasm_end();
        }
    }
}

/* ---- horizontal passes ---------------------------------------------------- */

enum PlaneSource { PLANES_FLAT, PLANES_FAINT, PLANES_NOISE, PLANES_WORDS, PLANES_EDGE, PLANE_SOURCES };
static const char *const plane_source_names[PLANE_SOURCES] = {
    "flat picture", "faint noise", "noise", "random words", "max words",
};

/* Planes of a row of width w, from a picture through the C vertical pass
 * (mirrored), or raw words over the whole padded buffer. */
static void planes_make(Planes *pl, const VifDsp *c, enum PlaneSource source, unsigned fw,
                        unsigned w, unsigned bits)
{
    for (unsigned i = 0; i < pl->count; i++)
        checkasm_fill_samples(pl->p[i] - VIF_PLANE_PAD_LEFT,
                              VIF_PLANE_PAD_LEFT + w + VIF_PLANE_PAD_RIGHT, 16,
                              source == PLANES_EDGE ? CHECKASM_FILL_MAX : CHECKASM_FILL_RANDOM);
    if (source == PLANES_WORDS || source == PLANES_EDGE) return;
    Rows r;
    rows_make(&r, fw, w, bits, CHECKASM_FILL_RANDOM,
              source == PLANES_FLAT ? PICTURE_FLAT : source == PLANES_FAINT ? PICTURE_FAINT
                                                                            : PICTURE_FILL);
    const VifShift sh = shift_for(bits, 0);
    c->vertical_stats[bits > 8](r.ref_rows, r.dis_rows, fw, w, &sh, pl->p);
    rows_check_and_free(&r);
    planes_mirror(pl, w, fw / 2);
}

static void check_horizontal(const CheckasmLevel *level, const VifDsp *c, const VifDsp *simd,
                             const uint16_t *table)
{
    static const double limits[] = { VIF_DEFAULT_GAIN_LIMIT, 1.0 };
    if (simd->horizontal_stats != c->horizontal_stats &&
        checkasm_begin("vif_horizontal_stats", level)) {
        for (unsigned src = 0; src < PLANE_SOURCES; src++)
            for (unsigned f = 0; f < 4; f++)
                for (unsigned wi = 0; wi < sizeof(widths) / sizeof(*widths); wi++)
                    for (unsigned g = 0; g < 2; g++) {
                        const unsigned fw = filter_widths[f], w = widths[wi];
                        if (src < PLANES_WORDS && w <= fw / 2) continue; /* no mirror */
                        Planes in, copy;
                        planes_alloc(&in, VIF_PLANES, w);
                        planes_alloc(&copy, VIF_PLANES, w);
                        planes_make(&in, c, (enum PlaneSource)src, fw, w, 8 + 2 * (wi % 3));
                        for (unsigned i = 0; i < VIF_PLANES; i++)
                            memcpy(copy.p[i] - VIF_PLANE_PAD_LEFT, in.p[i] - VIF_PLANE_PAD_LEFT,
                                   planes_bytes(&in));
                        VifSums sc = { 1, 2, 3, 4 }, ss = sc;
                        c->horizontal_stats((const int16_t *const *)in.p, w, fw, table, limits[g], &sc);
                        simd->horizontal_stats((const int16_t *const *)in.p, w, fw, table, limits[g], &ss);
                        if (!checkasm_check_equal(&ss, &sc, sizeof(sc), "sums"))
                            checkasm_fail("  %s, %u taps, width %u, gain limit %g: "
                                          "num_log %lld/%lld den_log %lld/%lld "
                                          "num_non_log %lld/%lld den_non_log %lld/%lld",
                                          plane_source_names[src], fw, w, limits[g],
                                          (long long)ss.num_log, (long long)sc.num_log,
                                          (long long)ss.den_log, (long long)sc.den_log,
                                          (long long)ss.num_non_log, (long long)sc.num_non_log,
                                          (long long)ss.den_non_log, (long long)sc.den_non_log);
                        for (unsigned i = 0; i < VIF_PLANES; i++)
                            checkasm_check_equal(in.p[i] - VIF_PLANE_PAD_LEFT,
                                                 copy.p[i] - VIF_PLANE_PAD_LEFT,
                                                 planes_bytes(&in), "planes (input)");
                        planes_free(&in);
                        planes_free(&copy);
                    }
        checkasm_end();
    }

    if (simd->horizontal_lowpass != c->horizontal_lowpass &&
        checkasm_begin("vif_horizontal_lowpass", level)) {
        for (unsigned src = 0; src < 3; src++)
            for (unsigned f = 1; f < 4; f++)
                for (unsigned wi = 0; wi < sizeof(widths) / sizeof(*widths); wi++)
                    for (unsigned odd = 0; odd < 2; odd++) {
                        const unsigned fw = filter_widths[f], n_out = widths[wi];
                        const unsigned w = 2 * n_out + odd;
                        Planes in, copy;
                        planes_alloc(&in, 2, w);
                        planes_alloc(&copy, 2, w);
                        for (unsigned i = 0; i < 2; i++)
                            checkasm_fill_samples(in.p[i] - VIF_PLANE_PAD_LEFT,
                                                  VIF_PLANE_PAD_LEFT + w + VIF_PLANE_PAD_RIGHT, 16,
                                                  (enum CheckasmFill)src);
                        planes_mirror(&in, w, fw / 2);
                        for (unsigned i = 0; i < 2; i++)
                            memcpy(copy.p[i] - VIF_PLANE_PAD_LEFT, in.p[i] - VIF_PLANE_PAD_LEFT,
                                   planes_bytes(&in));
                        uint16_t *oc[2], *os[2];
                        for (unsigned i = 0; i < 2; i++) {
                            oc[i] = checkasm_alloc(n_out * sizeof(uint16_t));
                            os[i] = checkasm_alloc(n_out * sizeof(uint16_t));
                        }
                        c->horizontal_lowpass(in.p[0], in.p[1], n_out, fw, oc[0], oc[1]);
                        simd->horizontal_lowpass(in.p[0], in.p[1], n_out, fw, os[0], os[1]);
                        for (unsigned i = 0; i < 2; i++)
                            if (!checkasm_check_equal(os[i], oc[i], n_out * sizeof(uint16_t),
                                                      i ? "distorted row" : "reference row"))
                                checkasm_fail("  %s, %u taps, %u outputs of %u",
                                              checkasm_fill_names[src], fw, n_out, w);
                        for (unsigned i = 0; i < 2; i++) {
                            checkasm_check_equal(in.p[i] - VIF_PLANE_PAD_LEFT,
                                                 copy.p[i] - VIF_PLANE_PAD_LEFT, planes_bytes(&in),
                                                 "planes (input)");
                            checkasm_free(oc[i]);
                            checkasm_free(os[i]);
                        }
                        planes_free(&in);
                        planes_free(&copy);
                    }
        checkasm_end();
    }
}

/* ---- --bench: one 1080p row of scale 0 (and of the first decimation) ------ */

enum BenchKernel {
    BENCH_VERTICAL_STATS_8,
    BENCH_VERTICAL_STATS_16,
    BENCH_HORIZONTAL_STATS_FAINT,
    BENCH_HORIZONTAL_STATS_NOISE,
    BENCH_VERTICAL_LOWPASS_8,
    BENCH_VERTICAL_LOWPASS_16,
    BENCH_HORIZONTAL_LOWPASS,
    BENCH_KERNELS,
};

static const char *const bench_names[BENCH_KERNELS] = {
    "vif_vertical_stats_8 1080p", "vif_vertical_stats_16 1080p",
    "vif_horizontal_stats faint", "vif_horizontal_stats noise",
    "vif_vertical_lowpass_8 1080p", "vif_vertical_lowpass_16 1080p",
    "vif_horizontal_lowpass 1080p",
};

/* Whether the kernel differs from C's at this dsp. */
static bool bench_differs(enum BenchKernel k, const VifDsp *dsp, const VifDsp *c)
{
    switch (k) {
    case BENCH_VERTICAL_STATS_8: return dsp->vertical_stats[0] != c->vertical_stats[0];
    case BENCH_VERTICAL_STATS_16: return dsp->vertical_stats[1] != c->vertical_stats[1];
    case BENCH_HORIZONTAL_STATS_FAINT:
    case BENCH_HORIZONTAL_STATS_NOISE: return dsp->horizontal_stats != c->horizontal_stats;
    case BENCH_VERTICAL_LOWPASS_8: return dsp->vertical_lowpass[0] != c->vertical_lowpass[0];
    case BENCH_VERTICAL_LOWPASS_16: return dsp->vertical_lowpass[1] != c->vertical_lowpass[1];
    default: return dsp->horizontal_lowpass != c->horizontal_lowpass;
    }
}

static void bench(const CheckasmLevel *levels, unsigned count, const VifDsp *c,
                  const uint16_t *table)
{
    enum { W = 1920 };
    Rows r8, r16;
    rows_make(&r8, 17, W, 8, CHECKASM_FILL_RANDOM, PICTURE_FILL);
    rows_make(&r16, 17, W, 10, CHECKASM_FILL_RANDOM, PICTURE_FILL);
    Planes faint, noise, scratch, low;
    planes_alloc(&faint, VIF_PLANES, W);
    planes_alloc(&noise, VIF_PLANES, W);
    planes_alloc(&scratch, VIF_PLANES, W);
    planes_alloc(&low, 2, W);
    planes_make(&faint, c, PLANES_FAINT, 17, W, 8);
    planes_make(&noise, c, PLANES_NOISE, 17, W, 8);
    planes_mirror(&low, W, 4);
    uint16_t *out[2] = { checkasm_alloc(W), checkasm_alloc(W) };
    const VifShift sh8 = shift_for(8, 0), sh10 = shift_for(10, 0);
    VifSums sums = { 0 };

    for (unsigned k = 0; k < BENCH_KERNELS; k++)
        for (unsigned l = 0; l < count; l++) {
            VifDsp dsp, below;
            vif_dsp_init(&dsp, levels[l].flags);
            vif_dsp_init(&below, l > 0 ? levels[l - 1].flags : 0);
            /* each kernel once: at C, and at the levels that bring it */
            if (l > 0 && (!bench_differs((enum BenchKernel)k, &dsp, c) ||
                          !bench_differs((enum BenchKernel)k, &dsp, &below)))
                continue;
            if (!checkasm_begin(bench_names[k], &levels[l])) continue;
            switch ((enum BenchKernel)k) {
            case BENCH_VERTICAL_STATS_8:
                CHECKASM_BENCH(dsp.vertical_stats[0](r8.ref_rows, r8.dis_rows, 17, W, &sh8, scratch.p));
                break;
            case BENCH_VERTICAL_STATS_16:
                CHECKASM_BENCH(dsp.vertical_stats[1](r16.ref_rows, r16.dis_rows, 17, W, &sh10, scratch.p));
                break;
            case BENCH_HORIZONTAL_STATS_FAINT:
                CHECKASM_BENCH(dsp.horizontal_stats((const int16_t *const *)faint.p, W, 17, table,
                                                    VIF_DEFAULT_GAIN_LIMIT, &sums));
                break;
            case BENCH_HORIZONTAL_STATS_NOISE:
                CHECKASM_BENCH(dsp.horizontal_stats((const int16_t *const *)noise.p, W, 17, table,
                                                    VIF_DEFAULT_GAIN_LIMIT, &sums));
                break;
            case BENCH_VERTICAL_LOWPASS_8:
                CHECKASM_BENCH(dsp.vertical_lowpass[0](r8.ref_rows, r8.dis_rows, 9, W, 8, low.p[0], low.p[1]));
                break;
            case BENCH_VERTICAL_LOWPASS_16:
                CHECKASM_BENCH(dsp.vertical_lowpass[1](r16.ref_rows, r16.dis_rows, 9, W, 10, low.p[0], low.p[1]));
                break;
            default:
                CHECKASM_BENCH(dsp.horizontal_lowpass(low.p[0], low.p[1], W / 2, 9, out[0], out[1]));
                break;
            }
            checkasm_end();
        }

    rows_check_and_free(&r8);
    rows_check_and_free(&r16);
    planes_free(&faint);
    planes_free(&noise);
    planes_free(&scratch);
    planes_free(&low);
    checkasm_free(out[0]);
    checkasm_free(out[1]);
}

void checkasm_check_integer_vif(void)
{
    static uint16_t table[VIF_LOG2_TABLE_SIZE + VIF_LOG2_TABLE_SLACK];
    vif_log2_table_fill(table);

    unsigned count;
    const CheckasmLevel *levels = checkasm_levels(&count);
    VifDsp c, previous;
    vif_dsp_init(&c, 0);
    previous = c;
    for (unsigned l = 1; l < count; l++) {
        VifDsp simd;
        vif_dsp_init(&simd, levels[l].flags);
        /* a level that adds no kernel of its own was checked as the one before */
        if (memcmp(&simd, &previous, sizeof(simd))) {
            check_vertical(&levels[l], &c, &simd);
            check_horizontal(&levels[l], &c, &simd, table);
        }
        previous = simd;
    }
    if (checkasm_bench_enabled()) bench(levels, count, &c, table);
}
