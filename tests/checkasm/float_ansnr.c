/*
 * checkasm for float_ansnr's row kernels (src/metrics/float_ansnr.h: the
 * 3x3 and 5x5 filters and the rows' sums), bit for bit against the C
 * kernels.
 *
 * Inputs are floats as the metric makes them: samples of 8, 10, 12 and 16
 * bits on the 8-bit scale less 128 (random, all zero, all maximum, and
 * 16-bit values above the depth), the rows of a filter with their
 * mirrored ends; the sums take filtered rows of such samples, equal
 * pictures (no noise) and random ones, partial batches of rows and full
 * ones (ANSNR_SUM_ROWS), widths from 1 to a 1080p row's.
 */
#include <stdio.h>
#include <string.h>

#include "checkasm.h"
#include "common.h"
#include "metrics/float_ansnr/float_ansnr.h"

enum { MAX_W = 1920, PAD = ANSNR_DIS_TAPS / 2 };

static const int widths[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 957, MAX_W };

static const unsigned depths[] = { 8, 10, 12, 16 };

/* An output buffer of a kernel under test, filled with a byte no output
 * has (0x5c), so that an output the kernel leaves unwritten differs from
 * C's. */
static void *alloc_output(size_t size)
{
    void *p = checkasm_alloc(size);
    memset(p, 0x5c, size);
    return p;
}

/* The fills: checkasm's, and any 16-bit value (a picture's samples may
 * exceed its bit depth). */
enum { FILL_ABOVE_DEPTH = CHECKASM_FILL_COUNT, FILL_KINDS };

static const char *fill_name(unsigned fill)
{
    return fill == FILL_ABOVE_DEPTH ? "above the depth" : checkasm_fill_names[fill];
}

/* A sample of a `bits`-bit picture as picture_float_row makes it for
 * ANSNR. */
static float sample(unsigned bits, unsigned fill)
{
    const uint32_t max = (1u << bits) - 1;
    uint32_t v = checkasm_rand_below(max + 1);
    if (fill == CHECKASM_FILL_ZERO) v = 0;
    if (fill == CHECKASM_FILL_MAX) v = max;
    if (fill == FILL_ABOVE_DEPTH) v = checkasm_rand_below(bits > 8 ? 65536 : 256);
    return (float)v / (float)(1u << (bits - 8)) + ANSNR_OFFSET;
}

/* A row of w samples with PAD more on each side (as the metric's ring
 * rows, whose ends hold the mirror). */
static void fill_row(float *padded, int w, unsigned bits, unsigned fill)
{
    for (int x = 0; x < w + 2 * PAD; x++) padded[x] = sample(bits, fill);
}

typedef void (*FilterRow)(const float *const *rows, float *out, int w);

static void check_filter(const CheckasmLevel *level, const char *name, int taps, FilterRow c,
                         FilterRow d)
{
    if (!checkasm_begin(name, level)) return;
    const size_t row_bytes = (MAX_W + 2 * PAD) * sizeof(float);
    float *src[ANSNR_DIS_TAPS], *copy[ANSNR_DIS_TAPS];
    for (int i = 0; i < taps; i++) {
        src[i] = checkasm_alloc(row_bytes);
        copy[i] = checkasm_alloc(row_bytes);
    }
    float *want = checkasm_alloc(MAX_W * sizeof(float));
    const float *rows[ANSNR_DIS_TAPS];
    for (int i = 0; i < taps; i++) rows[i] = src[i] + PAD;
    for (unsigned b = 0; b < QUALE_ARRAY_SIZE(depths); b++) {
        for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
            for (unsigned f = 0; f < FILL_KINDS; f++) {
                const int w = widths[wi];
                for (int i = 0; i < taps; i++) {
                    fill_row(src[i], w, depths[b], f);
                    memcpy(copy[i], src[i], (w + 2 * PAD) * sizeof(float));
                }
                float *got = alloc_output(w * sizeof(float));
                c(rows, want, w);
                d(rows, got, w);
                char what[80];
                snprintf(what, sizeof(what), "%d bits, width %d, %s", depths[b], w,
                         fill_name(f));
                checkasm_check_equal(got, want, w * sizeof(float), what);
                for (int i = 0; i < taps; i++)
                    checkasm_check_equal(src[i], copy[i], (w + 2 * PAD) * sizeof(float),
                                         "source rows");
                checkasm_free(got);
            }
        }
    }
    for (int i = 0; i < taps; i++) fill_row(src[i], MAX_W, 8, CHECKASM_FILL_RANDOM);
    CHECKASM_BENCH(d(rows, want, MAX_W));
    for (int i = 0; i < taps; i++) {
        checkasm_free(src[i]);
        checkasm_free(copy[i]);
    }
    checkasm_free(want);
    checkasm_end();
}

static void check_filter_ref(const CheckasmLevel *level, const FloatAnsnrDsp *c,
                             const FloatAnsnrDsp *d)
{
    check_filter(level, "float_ansnr_filter_ref_row", ANSNR_REF_TAPS, c->filter_ref_row,
                 d->filter_ref_row);
}

static void check_filter_dis(const CheckasmLevel *level, const FloatAnsnrDsp *c,
                             const FloatAnsnrDsp *d)
{
    check_filter(level, "float_ansnr_filter_dis_row", ANSNR_DIS_TAPS, c->filter_dis_row,
                 d->filter_dis_row);
}

/* rows x w filtered samples (stride floats apart) of pictures of `bits`
 * bits: the reference's (3x3) and the distorted picture's (5x5) filter of
 * random source rows, or the reference's twice (same: equal pictures). */
static void fill_filtered(const FloatAnsnrDsp *c, float *ref, float *dis, size_t stride,
                          int rows, int w, unsigned bits, unsigned fill, bool same)
{
    float *src[ANSNR_DIS_TAPS];
    const float *in[ANSNR_DIS_TAPS];
    for (int i = 0; i < ANSNR_DIS_TAPS; i++) {
        src[i] = checkasm_alloc((MAX_W + 2 * PAD) * sizeof(float));
        in[i] = src[i] + PAD;
    }
    for (int y = 0; y < rows; y++) {
        for (int i = 0; i < ANSNR_DIS_TAPS; i++) fill_row(src[i], w, bits, fill);
        c->filter_ref_row(in, ref + (size_t)y * stride, w);
        if (same) {
            memcpy(dis + (size_t)y * stride, ref + (size_t)y * stride, w * sizeof(float));
        } else {
            for (int i = 0; i < ANSNR_DIS_TAPS; i++) fill_row(src[i], w, bits, fill);
            c->filter_dis_row(in, dis + (size_t)y * stride, w);
        }
    }
    for (int i = 0; i < ANSNR_DIS_TAPS; i++) checkasm_free(src[i]);
}

static void check_row_sums(const CheckasmLevel *level, const FloatAnsnrDsp *c,
                           const FloatAnsnrDsp *d)
{
    if (!checkasm_begin("float_ansnr_row_sums", level)) return;
    /* partial batches (the last rows of a picture), and full ones */
    static const int row_counts[] = { 1, 2, 7, 8, 9, 15 };
    const size_t stride = MAX_W + 7; /* rows not a vector apart */
    const size_t bytes = ANSNR_SUM_ROWS * stride * sizeof(float);
    float *ref = checkasm_alloc(bytes), *dis = checkasm_alloc(bytes);
    float *ref_copy = checkasm_alloc(bytes), *dis_copy = checkasm_alloc(bytes);
    float sig_c[ANSNR_SUM_ROWS], noise_c[ANSNR_SUM_ROWS];
    for (unsigned b = 0; b < QUALE_ARRAY_SIZE(depths); b++) {
        for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
            for (unsigned f = 0; f < FILL_KINDS; f++) {
                for (int variant = 0; variant < 4; variant++) {
                    const int w = widths[wi];
                    const bool same = variant & 1;
                    const int rows =
                        variant & 2 ? ANSNR_SUM_ROWS
                                    : row_counts[(wi + f + same) % QUALE_ARRAY_SIZE(row_counts)];
                    fill_filtered(c, ref, dis, stride, rows, w, depths[b], f, same);
                    memcpy(ref_copy, ref, bytes);
                    memcpy(dis_copy, dis, bytes);
                    float *sig = alloc_output(rows * sizeof(float));
                    float *noise = alloc_output(rows * sizeof(float));
                    c->row_sums(ref, dis, stride, rows, w, sig_c, noise_c);
                    d->row_sums(ref, dis, stride, rows, w, sig, noise);
                    char what[96];
                    snprintf(what, sizeof(what), "sig, %d bits, %d rows of %d, %s%s", depths[b],
                             rows, w, fill_name(f), same ? ", equal pictures" : "");
                    checkasm_check_equal(sig, sig_c, rows * sizeof(float), what);
                    snprintf(what, sizeof(what), "noise, %d bits, %d rows of %d, %s%s", depths[b],
                             rows, w, fill_name(f), same ? ", equal pictures" : "");
                    checkasm_check_equal(noise, noise_c, rows * sizeof(float), what);
                    checkasm_check_equal(ref, ref_copy, bytes, "reference rows");
                    checkasm_check_equal(dis, dis_copy, bytes, "distorted rows");
                    checkasm_free(sig);
                    checkasm_free(noise);
                }
            }
        }
    }
    fill_filtered(c, ref, dis, stride, ANSNR_SUM_ROWS, MAX_W, 8, CHECKASM_FILL_RANDOM, false);
    CHECKASM_BENCH(d->row_sums(ref, dis, stride, ANSNR_SUM_ROWS, MAX_W, sig_c, noise_c));
    checkasm_free(ref);
    checkasm_free(dis);
    checkasm_free(ref_copy);
    checkasm_free(dis_copy);
    checkasm_end();
}

void checkasm_check_float_ansnr(void)
{
    typedef void (*Check)(const CheckasmLevel *, const FloatAnsnrDsp *, const FloatAnsnrDsp *);
    static const Check checks[] = { check_filter_ref, check_filter_dis, check_row_sums };
    unsigned count;
    const CheckasmLevel *levels = checkasm_levels(&count);
    FloatAnsnrDsp c;
    float_ansnr_dsp_init(&c, levels[0].flags);
    for (unsigned k = 0; k < QUALE_ARRAY_SIZE(checks); k++) {
        for (unsigned i = 0; i < count; i++) {
            FloatAnsnrDsp d;
            float_ansnr_dsp_init(&d, levels[i].flags);
            /* every kernel changes with the level: C once, each SIMD level
             * where its table differs from C's */
            if (i > 0 && !memcmp(&d, &c, sizeof(d))) continue;
            checks[k](&levels[i], &c, &d);
        }
    }
}
