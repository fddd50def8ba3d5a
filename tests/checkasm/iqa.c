/*
 * checkasm for IQA's row kernels (src/metrics/iqa.h: the SSIM filters,
 * products and terms of float_ssim and float_ms_ssim, and the
 * decimation), bit for bit against the C kernels.
 *
 * Inputs are floats as the metrics make them: samples of 8 to 16 bits on
 * the 8-bit scale (integers, quarters, ... up to 255.99), their squares,
 * and the filtered quantities of pictures with flat regions (zero
 * variance, the sigma12 < 0 case libvmaf clamps) as well as random ones;
 * all-zero and all-maximum fills; widths around the vector lengths and
 * the 1080p ones.
 */
#include <stdio.h>
#include <string.h>

#include "checkasm.h"
#include "common.h"
#include "metrics/float_ms_ssim/float_ms_ssim.h"
#include "metrics/common/iqa.h"

enum { MAX_W = 1920, ROW_PAD = 16 };

static const int widths[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 957, 1910 };

/* A sample of `bits` bits on the 8-bit scale, as picture_float_row makes
 * it, by fill. */
static float sample(unsigned bits, enum CheckasmFill fill)
{
    const uint32_t max = (1u << bits) - 1;
    const uint32_t v = fill == CHECKASM_FILL_ZERO  ? 0
                       : fill == CHECKASM_FILL_MAX ? max
                                                   : checkasm_rand_below(max + 1);
    return (float)v / (float)(1u << (bits - 8));
}

static void fill_floats(float *p, int n, unsigned bits, enum CheckasmFill fill, bool square)
{
    for (int i = 0; i < n; i++) {
        const float v = sample(bits, fill);
        p[i] = square ? v * v : v;
    }
}

static const unsigned depths[] = { 8, 10, 16 };

static void check_filter_row(const CheckasmLevel *level, const IqaDsp *c, const IqaDsp *d)
{
    if (!checkasm_begin("iqa_filter_row", level)) return;
    const int len = MAX_W + IQA_GAUSSIAN_TAPS;
    float *src = checkasm_alloc(len * sizeof(float)), *copy = checkasm_alloc(len * sizeof(float));
    float *want = checkasm_alloc(MAX_W * sizeof(float));
    for (unsigned b = 0; b < QUALE_ARRAY_SIZE(depths); b++) {
        for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
            for (unsigned f = 0; f < CHECKASM_FILL_COUNT; f++) {
                for (int square = 0; square < 2; square++) {
                    const int w = widths[wi];
                    fill_floats(src, w + IQA_GAUSSIAN_TAPS - 1, depths[b], f, square);
                    memcpy(copy, src, len * sizeof(float));
                    float *got = checkasm_alloc(w * sizeof(float));
                    c->filter_row(src, want, w);
                    d->filter_row(src, got, w);
                    char what[80];
                    snprintf(what, sizeof(what), "filter_row, %u bits%s, width %d, %s",
                             depths[b], square ? " squared" : "", w, checkasm_fill_names[f]);
                    checkasm_check_equal(got, want, w * sizeof(float), what);
                    checkasm_check_equal(src, copy, len * sizeof(float), "source");
                    checkasm_free(got);
                }
            }
        }
    }
    fill_floats(src, len, 8, CHECKASM_FILL_RANDOM, false);
    CHECKASM_BENCH(d->filter_row(src, want, MAX_W - IQA_GAUSSIAN_TAPS + 1));
    checkasm_free(src);
    checkasm_free(copy);
    checkasm_free(want);
    checkasm_end();
}

static void check_filter_column(const CheckasmLevel *level, const IqaDsp *c, const IqaDsp *d)
{
    if (!checkasm_begin("iqa_filter_column", level)) return;
    float *rows[IQA_GAUSSIAN_TAPS], *copy[IQA_GAUSSIAN_TAPS];
    for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++) {
        rows[v] = checkasm_alloc(MAX_W * sizeof(float));
        copy[v] = checkasm_alloc(MAX_W * sizeof(float));
    }
    const float *const in[IQA_GAUSSIAN_TAPS] = { rows[0], rows[1], rows[2], rows[3],
                                                 rows[4], rows[5], rows[6], rows[7],
                                                 rows[8], rows[9], rows[10] };
    float *want = checkasm_alloc(MAX_W * sizeof(float));
    for (unsigned b = 0; b < QUALE_ARRAY_SIZE(depths); b++) {
        for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
            for (unsigned f = 0; f < CHECKASM_FILL_COUNT; f++) {
                for (int square = 0; square < 2; square++) {
                    const int w = widths[wi];
                    /* horizontally filtered rows are any floats in the
                     * samples' range: the samples themselves will do */
                    for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++) {
                        fill_floats(rows[v], w, depths[b], f, square);
                        memcpy(copy[v], rows[v], w * sizeof(float));
                    }
                    float *got = checkasm_alloc(w * sizeof(float));
                    c->filter_column(in, want, w);
                    d->filter_column(in, got, w);
                    char what[80];
                    snprintf(what, sizeof(what), "filter_column, %u bits%s, width %d, %s",
                             depths[b], square ? " squared" : "", w, checkasm_fill_names[f]);
                    checkasm_check_equal(got, want, w * sizeof(float), what);
                    for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++)
                        checkasm_check_equal(rows[v], copy[v], w * sizeof(float), "rows");
                    checkasm_free(got);
                }
            }
        }
    }
    for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++)
        fill_floats(rows[v], MAX_W, 8, CHECKASM_FILL_RANDOM, false);
    CHECKASM_BENCH(d->filter_column(in, want, MAX_W - IQA_GAUSSIAN_TAPS + 1));
    for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++) {
        checkasm_free(rows[v]);
        checkasm_free(copy[v]);
    }
    checkasm_free(want);
    checkasm_end();
}

static void check_products(const CheckasmLevel *level, const IqaDsp *c, const IqaDsp *d)
{
    if (!checkasm_begin("iqa_products", level)) return;
    float *a = checkasm_alloc(MAX_W * sizeof(float)), *b = checkasm_alloc(MAX_W * sizeof(float));
    float *want = checkasm_alloc(MAX_W * sizeof(float));
    for (unsigned bi = 0; bi < QUALE_ARRAY_SIZE(depths); bi++) {
        for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
            for (unsigned f = 0; f < CHECKASM_FILL_COUNT; f++) {
                const int w = widths[wi];
                fill_floats(a, w, depths[bi], f, false);
                fill_floats(b, w, depths[bi], f, false);
                float *got = checkasm_alloc(w * sizeof(float));
                c->products(a, b, want, w);
                d->products(a, b, got, w);
                checkasm_check_equal(got, want, w * sizeof(float), "products");
                checkasm_free(got);
            }
        }
    }
    CHECKASM_BENCH(d->products(a, b, want, MAX_W));
    checkasm_free(a);
    checkasm_free(b);
    checkasm_free(want);
    checkasm_end();
}

/* Filtered quantities of positions: random, flat (zero variance, equal or
 * not; rr a little below mu1^2 and rc a little below mu1 mu2, as rounding
 * leaves them), or fill's. */
static void fill_quantities(float *q[IQA_Q_COUNT], int n, enum CheckasmFill fill)
{
    for (int x = 0; x < n; x++) {
        const float mu1 = sample(16, fill), mu2 = sample(16, fill);
        const unsigned kind = fill == CHECKASM_FILL_RANDOM ? checkasm_rand_below(4) : 3;
        q[IQA_Q_MU1][x] = mu1;
        q[IQA_Q_MU2][x] = mu2;
        if (kind == 0) { /* flat and a hair below */
            q[IQA_Q_RR][x] = mu1 * mu1 * (1.f - 1e-7f * (float)checkasm_rand_below(3));
            q[IQA_Q_CC][x] = mu2 * mu2;
            q[IQA_Q_RC][x] = mu1 * mu2 * (1.f - 1e-7f * (float)checkasm_rand_below(3));
        } else if (kind == 1) { /* identical flat pictures */
            q[IQA_Q_MU2][x] = mu1;
            q[IQA_Q_RR][x] = q[IQA_Q_CC][x] = q[IQA_Q_RC][x] = mu1 * mu1;
        } else if (kind == 2) { /* any */
            q[IQA_Q_RR][x] = sample(16, fill) * 256.f;
            q[IQA_Q_CC][x] = sample(16, fill) * 256.f;
            q[IQA_Q_RC][x] = sample(16, fill) * 256.f - 32768.f;
        } else {
            const float v1 = sample(16, fill) * 4.f, v2 = sample(16, fill) * 4.f;
            q[IQA_Q_RR][x] = mu1 * mu1 + v1;
            q[IQA_Q_CC][x] = mu2 * mu2 + v2;
            q[IQA_Q_RC][x] = mu1 * mu2 + (sample(16, fill) - 128.f) * 0.03f * (v1 + v2);
        }
    }
}

static void check_ssim_terms(const CheckasmLevel *level, const IqaDsp *c, const IqaDsp *d)
{
    if (!checkasm_begin("iqa_ssim_terms", level)) return;
    float *q[IQA_Q_COUNT], *copy[IQA_Q_COUNT];
    for (int k = 0; k < IQA_Q_COUNT; k++) {
        q[k] = checkasm_alloc(MAX_W * sizeof(float));
        copy[k] = checkasm_alloc(MAX_W * sizeof(float));
    }
    const float *const in[IQA_Q_COUNT] = { q[0], q[1], q[2], q[3], q[4] };
    double *want[3];
    for (int k = 0; k < 3; k++) want[k] = checkasm_alloc(MAX_W * sizeof(double));
    for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
        for (unsigned f = 0; f < CHECKASM_FILL_COUNT; f++) {
            const int w = widths[wi];
            fill_quantities(q, w, f);
            for (int k = 0; k < IQA_Q_COUNT; k++) memcpy(copy[k], q[k], w * sizeof(float));
            double *got[3];
            for (int k = 0; k < 3; k++) got[k] = checkasm_alloc(w * sizeof(double));
            c->ssim_terms(in, want[0], want[1], want[2], w);
            d->ssim_terms(in, got[0], got[1], got[2], w);
            char what[64];
            for (int k = 0; k < 3; k++) {
                snprintf(what, sizeof(what), "ssim term %c, width %d, %s", "lcs"[k], w,
                         checkasm_fill_names[f]);
                checkasm_check_equal(got[k], want[k], w * sizeof(double), what);
                checkasm_free(got[k]);
            }
            for (int k = 0; k < IQA_Q_COUNT; k++)
                checkasm_check_equal(q[k], copy[k], w * sizeof(float), "quantities");
        }
    }
    fill_quantities(q, MAX_W, CHECKASM_FILL_RANDOM);
    CHECKASM_BENCH(d->ssim_terms(in, want[0], want[1], want[2], MAX_W));
    for (int k = 0; k < IQA_Q_COUNT; k++) {
        checkasm_free(q[k]);
        checkasm_free(copy[k]);
    }
    for (int k = 0; k < 3; k++) checkasm_free(want[k]);
    checkasm_end();
}

/* The decimations the metrics run: float_ms_ssim's 9-tap low-pass at every
 * other sample, float_ssim's box of 2 .. 10 at every scale-th. */
static void check_decimate_row(const CheckasmLevel *level, const IqaDsp *c, const IqaDsp *d)
{
    static const float lpf[MS_SSIM_LPF_TAPS * MS_SSIM_LPF_TAPS] = { MS_SSIM_LPF };
    if (!checkasm_begin("iqa_decimate_row", level)) return;
    const size_t row_len = (size_t)MAX_W * IQA_MAX_TAPS + 2 * IQA_MAX_TAPS + 2 * ROW_PAD;
    float *rows[IQA_MAX_TAPS], *copy[IQA_MAX_TAPS];
    const float *in[IQA_MAX_TAPS];
    for (int v = 0; v < IQA_MAX_TAPS; v++) {
        rows[v] = checkasm_alloc(row_len * sizeof(float));
        copy[v] = checkasm_alloc(row_len * sizeof(float));
        in[v] = rows[v] + IQA_MAX_TAPS + ROW_PAD;
    }
    float kernel[IQA_MAX_TAPS * IQA_MAX_TAPS];
    float *want = checkasm_alloc(MAX_W * sizeof(float));
    for (int taps = 2; taps <= IQA_MAX_TAPS; taps++) {
        const int factor = taps == 9 ? 2 : taps;
        for (int i = 0; i < taps * taps; i++)
            kernel[i] = taps == 9 ? lpf[i] : 1.0f / (taps * taps);
        for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
            const int w = widths[wi] < MAX_W / factor ? widths[wi] : MAX_W / factor;
            for (unsigned f = 0; f < CHECKASM_FILL_COUNT; f++) {
                const unsigned bits = depths[checkasm_rand_below(QUALE_ARRAY_SIZE(depths))];
                for (int v = 0; v < taps; v++) {
                    fill_floats(rows[v], (int)row_len, bits, f, false);
                    memcpy(copy[v], rows[v], row_len * sizeof(float));
                }
                void *work_c = checkasm_alloc(iqa_decimate_work_size(w, taps, factor));
                void *work_d = checkasm_alloc(iqa_decimate_work_size(w, taps, factor));
                float *got = checkasm_alloc(w * sizeof(float));
                c->decimate_row(in, kernel, taps, factor, w, want, work_c);
                d->decimate_row(in, kernel, taps, factor, w, got, work_d);
                char what[80];
                snprintf(what, sizeof(what), "decimate_row, %d taps by %d, width %d, %s", taps,
                         factor, w, checkasm_fill_names[f]);
                checkasm_check_equal(got, want, w * sizeof(float), what);
                for (int v = 0; v < taps; v++)
                    checkasm_check_equal(rows[v], copy[v], row_len * sizeof(float), "rows");
                checkasm_free(got);
                checkasm_free(work_c);
                checkasm_free(work_d);
            }
        }
    }
    /* float_ms_ssim's first decimation of a 1080p picture */
    memcpy(kernel, lpf, sizeof(lpf));
    for (int v = 0; v < 9; v++) fill_floats(rows[v], (int)row_len, 8, CHECKASM_FILL_RANDOM, false);
    void *work = checkasm_alloc(iqa_decimate_work_size(MAX_W / 2, 9, 2));
    CHECKASM_BENCH(d->decimate_row(in, kernel, 9, 2, MAX_W / 2, want, work));
    checkasm_free(work);
    for (int v = 0; v < IQA_MAX_TAPS; v++) {
        checkasm_free(rows[v]);
        checkasm_free(copy[v]);
    }
    checkasm_free(want);
    checkasm_end();
}

void checkasm_check_iqa(void)
{
    typedef void (*Check)(const CheckasmLevel *, const IqaDsp *, const IqaDsp *);
    static const Check checks[] = { check_filter_row, check_filter_column, check_products,
                                    check_ssim_terms, check_decimate_row };
    unsigned count;
    const CheckasmLevel *levels = checkasm_levels(&count);
    IqaDsp c;
    iqa_dsp_init(&c, levels[0].flags);
    for (unsigned k = 0; k < QUALE_ARRAY_SIZE(checks); k++) {
        for (unsigned i = 0; i < count; i++) {
            IqaDsp d;
            iqa_dsp_init(&d, levels[i].flags);
            /* every kernel changes with the level: C once, each SIMD level
             * where its table differs from C's */
            if (i > 0 && !memcmp(&d, &c, sizeof(d))) continue;
            checks[k](&levels[i], &c, &d);
        }
    }
}
