/*
 * checkasm: integer ADM's row kernels (AdmDsp, src/metrics/integer_adm.h).
 *
 * Every kernel of every level that replaces the previous level's runs on
 * the same rows as the C kernel: the DWT of level 0 on samples of 8, 10,
 * 12 and 16 bits (and on samples above the bit depth, which libvmaf's
 * arithmetic wraps), the other kernels on rows of details over their whole
 * domain (int16 values at level 0, any int32 at levels 1..3): random
 * values, small values, distorted details near the reference ones (so that
 * the angle test and the gain limit go both ways), values whose angle test
 * depends on exact rounding, and the extremes.  Widths run from the
 * smallest band of a level to widths that are no multiple of any vector
 * width, column ranges from whole rows to ranges with odd ends.  Output
 * rows are compared whole, their slack included (a kernel writes no more
 * than C does), sums exactly; inputs must come back unchanged.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "checkasm.h"
#include "common.h"
#include "metrics/integer_adm/integer_adm.h"

#define MAX_LEVELS 4

static AdmDsp dsps[MAX_LEVELS];
static const CheckasmLevel *levels;
static unsigned level_count;

/* The kernel at byte offset `field` of a table. */
static const void *kernel_of(const AdmDsp *dsp, size_t field)
{
    const void *fn;
    memcpy(&fn, (const char *)dsp + field, sizeof(fn));
    return fn;
}

/* Whether level i is checked: a level that brings its own version of the
 * kernel; and C itself with --bench, for the speed-ups. */
static bool level_runs(unsigned i, size_t field, const char *name)
{
    if (i == 0 ? !checkasm_bench_enabled()
               : kernel_of(&dsps[i], field) == kernel_of(&dsps[i - 1], field))
        return false;
    return checkasm_begin(name, &levels[i]);
}

/* ---- rows ---- */

/* A row of n int32 with ADM_ROW_PAD of slack on both sides, guarded. */
static int32_t *row_alloc(int n)
{
    return (int32_t *)checkasm_alloc((size_t)(n + 2 * ADM_ROW_PAD) * sizeof(int32_t)) +
           ADM_ROW_PAD;
}

static void row_free(int32_t *row)
{
    checkasm_free(row - ADM_ROW_PAD);
}

static size_t row_bytes(int n)
{
    return (size_t)(n + 2 * ADM_ROW_PAD) * sizeof(int32_t);
}

/* Whether two rows are equal, slack included. */
static bool rows_equal(const int32_t *a, const int32_t *b, int n, const char *what)
{
    return checkasm_check_equal(a - ADM_ROW_PAD, b - ADM_ROW_PAD, row_bytes(n), what);
}

/* Band widths of level 0 (17: half the smallest picture) and of levels
 * 1..3 (3: the smallest level 3), odd ones around the vector widths (8 and
 * 16 int32), wide ones. */
#define WIDTH_COUNT 10
static const int band_widths[2][WIDTH_COUNT] = {
    { 17, 18, 23, 31, 33, 47, 64, 129, 240, 961 },
    { 3, 5, 9, 17, 31, 33, 47, 64, 129, 240 },
};

enum BandFill {
    BAND_RANDOM,      /* uniform over the domain */
    BAND_SMALL,       /* |v| < 64 */
    BAND_ZERO,
    BAND_MAX,
    BAND_MIN,
    BAND_ALTERNATE,   /* max and min by turns */
    BAND_FILL_COUNT,
};
static const char *const band_fill_names[BAND_FILL_COUNT] = {
    "random", "small", "zero", "max", "min", "alternate",
};

/* Fills a row, slack included, with signed values of `bits` bits: 16 for
 * level 0, 32 for levels 1..3. */
static void fill_row(int32_t *row, int n, unsigned bits, enum BandFill fill)
{
    const int32_t max = bits >= 32 ? INT32_MAX : (int32_t)((1u << (bits - 1)) - 1);
    const int32_t min = -max - 1;
    for (int i = -ADM_ROW_PAD; i < n + ADM_ROW_PAD; i++) {
        int32_t v;
        switch (fill) {
        case BAND_RANDOM:
            v = bits >= 32 ? (int32_t)(uint32_t)checkasm_rand()
                           : (int32_t)checkasm_rand_below(1u << bits) + min;
            break;
        case BAND_SMALL: v = (int32_t)checkasm_rand_below(127) - 63; break;
        case BAND_ZERO: v = 0; break;
        case BAND_MAX: v = max; break;
        case BAND_MIN: v = min; break;
        default: v = (i & 1) ? max : min; break;
        }
        row[i] = v;
    }
}

/* A value near x: x times a factor in [0.5, 1.5] plus a little noise, or
 * now and then something unrelated; kept to `bits` bits.  Distorted details
 * made this way point close to the reference ones. */
static int32_t near_value(int32_t x, unsigned bits)
{
    const int64_t max = bits >= 32 ? INT32_MAX : (1 << (bits - 1)) - 1;
    const uint32_t r = checkasm_rand_below(16);
    int64_t v;
    if (r == 0) v = (int64_t)(int32_t)(uint32_t)checkasm_rand() >> (32 - bits);
    else if (r == 1) v = x;
    else v = (int64_t)x * (int64_t)(512 + checkasm_rand_below(1024)) / 1024 +
             (int64_t)checkasm_rand_below(7) - 3;
    return (int32_t)(v > max ? max : v < -max - 1 ? -max - 1 : v);
}

/* Three rows (h, v, d) of n values. */
typedef struct Rows {
    int32_t *p[3];
    int n;
} Rows;

static void rows_alloc(Rows *r, int n)
{
    r->n = n;
    for (int k = 0; k < 3; k++) r->p[k] = row_alloc(n);
}

static void rows_free(Rows *r)
{
    for (int k = 0; k < 3; k++) row_free(r->p[k]);
}

static void rows_copy(Rows *dst, const Rows *src)
{
    for (int k = 0; k < 3; k++)
        memcpy(dst->p[k] - ADM_ROW_PAD, src->p[k] - ADM_ROW_PAD, row_bytes(src->n));
}

static bool rows3_equal(const Rows *a, const Rows *b, const char *what)
{
    static const char *const names[3] = { "h", "v", "d" };
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof(name), "%s %s", what, names[k]);
        if (!rows_equal(a->p[k], b->p[k], a->n, name)) return false;
    }
    return true;
}

static void rows_fill(Rows *r, unsigned bits, enum BandFill fill)
{
    for (int k = 0; k < 3; k++) fill_row(r->p[k], r->n, bits, fill);
}

static void rows_near(Rows *dis, const Rows *ref, unsigned bits)
{
    for (int k = 0; k < 3; k++)
        for (int i = -ADM_ROW_PAD; i < ref->n + ADM_ROW_PAD; i++)
            dis->p[k][i] = near_value(ref->p[k][i], bits);
}

static const int32_t *const *in3(const Rows *r)
{
    return (const int32_t *const *)r->p;
}

/* Column ranges of a w-wide band: the masking's (the scored region and a
 * column on each side), the whole row, and odd ends. */
static void column_range(int w, int pick, int *j0, int *j1)
{
    const AdmRect r = adm_rect_scored(w, w);
    switch (pick) {
    case 0:
        *j0 = QUALE_MAX(r.left - 1, 0);
        *j1 = QUALE_MIN(r.right + 1, w);
        break;
    case 1:
        *j0 = 0;
        *j1 = w;
        break;
    default:
        *j0 = w > 3 ? 1 + (int)checkasm_rand_below((unsigned)w / 3) : 0;
        *j1 = w - (int)checkasm_rand_below((unsigned)(w - *j0) / 2);
        break;
    }
}

/* ---- --bench inputs: the rows of a 1080p frame ---- */

/* A textured 1920 x 1080 picture and a distorted copy, and every row of
 * their levels 0 and 1 (details, decoupled details, masking terms) as the
 * C kernels make them, so that the kernels are timed on what they meet in
 * a video rather than on noise, whose unpredictable branches would flatter
 * the SIMD.  A timed call runs a kernel over every row of a level. */
enum { BENCH_W = 1920, BENCH_H = 1080 };

typedef struct BenchLevel {
    int w, h;
    int32_t **approx[2];            /* [ref, dis][row] */
    int32_t **details[2][3];        /* [ref, dis][h, v, d][row] */
    int32_t **rst[3], **add[3];
    int32_t **around, **centre;     /* the masking of add */
} BenchLevel;

static struct {
    bool ready;
    uint16_t *pic[2];   /* 10-bit samples: reference, distorted */
    uint8_t *pic8[2];   /* the same in 8 bits */
    BenchLevel level[2];
} bench;

static int32_t **bench_rows(int count, int n)
{
    int32_t **rows = checkasm_alloc((size_t)count * sizeof(*rows));
    for (int i = 0; i < count; i++) rows[i] = row_alloc(n);
    return rows;
}

static void bench_rows_free(int32_t **rows, int count)
{
    for (int i = 0; i < count; i++) row_free(rows[i]);
    checkasm_free(rows);
}

static int mirror(int k, int n)
{
    return k < 0 ? -k : k >= n ? 2 * n - k - 1 : k;
}

static void bench_init(void)
{
    if (bench.ready) return;
    bench.ready = true;
    const size_t samples = (size_t)BENCH_W * BENCH_H;
    for (int p = 0; p < 2; p++) {
        bench.pic[p] = checkasm_alloc(samples * 2);
        bench.pic8[p] = checkasm_alloc(samples);
    }
    for (int y = 0; y < BENCH_H; y++) {
        for (int x = 0; x < BENCH_W; x++) {
            const double v = 512 + 240 * sin(x / 37.0) * cos(y / 53.0) +
                             120 * sin((x + 2 * y) / 7.0) * (x % 300 < 150) +
                             (double)checkasm_rand_below(17) - 8;
            const double d = v + (double)checkasm_rand_below(41) - 20;
            const size_t i = (size_t)y * BENCH_W + (size_t)x;
            bench.pic[0][i] = (uint16_t)(v < 0 ? 0 : v > 1023 ? 1023 : v);
            bench.pic[1][i] = (uint16_t)(d < 0 ? 0 : d > 1023 ? 1023 : d);
            for (int p = 0; p < 2; p++) bench.pic8[p][i] = (uint8_t)(bench.pic[p][i] >> 2);
        }
    }
    int32_t *lo = row_alloc(BENCH_W), *hi = row_alloc(BENCH_W);
    int32_t *div_lookup = checkasm_alloc(ADM_DIV_LOOKUP_SIZE * sizeof(int32_t));
    adm_div_lookup_init(div_lookup);
    static const uint32_t csf[2][3] = { { 36453, 36453, 49417 },
                                        { 137373792, 137373792, 61414028 } };
    int in_w = BENCH_W, in_h = BENCH_H;
    for (int l = 0; l < 2; l++) {
        BenchLevel *b = &bench.level[l];
        b->w = adm_half(in_w);
        b->h = adm_half(in_h);
        for (int p = 0; p < 2; p++) {
            b->approx[p] = bench_rows(b->h, b->w);
            for (int k = 0; k < 3; k++) b->details[p][k] = bench_rows(b->h, b->w);
        }
        for (int k = 0; k < 3; k++) {
            b->rst[k] = bench_rows(b->h, b->w);
            b->add[k] = bench_rows(b->h, b->w);
        }
        b->around = bench_rows(b->h, b->w);
        b->centre = bench_rows(b->h, b->w);
        for (int i = 0; i < b->h; i++) {
            for (int p = 0; p < 2; p++) {
                int32_t *const out[4] = { b->approx[p][i], b->details[p][0][i],
                                          b->details[p][1][i], b->details[p][2][i] };
                if (l == 0) {
                    const uint16_t *pic = bench.pic[p];
                    const uint8_t *const src[4] = {
                        (const uint8_t *)(pic + (size_t)mirror(2 * i - 1, in_h) * BENCH_W),
                        (const uint8_t *)(pic + (size_t)mirror(2 * i, in_h) * BENCH_W),
                        (const uint8_t *)(pic + (size_t)mirror(2 * i + 1, in_h) * BENCH_W),
                        (const uint8_t *)(pic + (size_t)mirror(2 * i + 2, in_h) * BENCH_W),
                    };
                    dsps[0].dwt_row0_16(src, 10, in_w, true, out, lo, hi);
                } else {
                    int32_t **a = bench.level[0].approx[p];
                    const int32_t *const src[4] = { a[mirror(2 * i - 1, in_h)], a[mirror(2 * i, in_h)],
                                                    a[mirror(2 * i + 1, in_h)],
                                                    a[mirror(2 * i + 2, in_h)] };
                    dsps[0].dwt_row123(src, in_w, 1, true, out, lo, hi);
                }
            }
            const int32_t *const ref[3] = { b->details[0][0][i], b->details[0][1][i],
                                            b->details[0][2][i] };
            const int32_t *const dis[3] = { b->details[1][0][i], b->details[1][1][i],
                                            b->details[1][2][i] };
            int32_t *const rst[3] = { b->rst[0][i], b->rst[1][i], b->rst[2][i] };
            int32_t *const add[3] = { b->add[0][i], b->add[1][i], b->add[2][i] };
            (l == 0 ? dsps[0].decouple_row0 : dsps[0].decouple_row123)(
                div_lookup, 0.99969541f, 100.0, ref, dis, rst, add, 0, b->w);
            const int32_t *const add_in[3] = { add[0], add[1], add[2] };
            (l == 0 ? dsps[0].masking_row0 : dsps[0].masking_row123)(
                csf[l], add_in, b->around[i], b->centre[i], 0, b->w);
        }
        in_w = b->w;
        in_h = b->h;
    }
    row_free(lo);
    row_free(hi);
    checkasm_free(div_lookup);
}

static void bench_free(void)
{
    if (!bench.ready) return;
    for (int p = 0; p < 2; p++) {
        checkasm_free(bench.pic[p]);
        checkasm_free(bench.pic8[p]);
    }
    for (int l = 0; l < 2; l++) {
        BenchLevel *b = &bench.level[l];
        for (int p = 0; p < 2; p++) {
            bench_rows_free(b->approx[p], b->h);
            for (int k = 0; k < 3; k++) bench_rows_free(b->details[p][k], b->h);
        }
        for (int k = 0; k < 3; k++) {
            bench_rows_free(b->rst[k], b->h);
            bench_rows_free(b->add[k], b->h);
        }
        bench_rows_free(b->around, b->h);
        bench_rows_free(b->centre, b->h);
    }
    bench.ready = false;
}

/* The rows of level 0 or level 1 of the bench frame. */
static const BenchLevel *bench_level(bool level0)
{
    bench_init();
    return &bench.level[!level0];
}

/* ---- DWT of level 0 ---- */

/* The output rows of a C and a SIMD run of a DWT kernel, and their scratch
 * rows. */
typedef struct DwtRuns {
    int32_t *ref[4], *out[4], *scratch[4];
    int half;
} DwtRuns;

static void dwt_runs_alloc(DwtRuns *r, int w)
{
    r->half = adm_half(w);
    for (int k = 0; k < 4; k++) {
        r->ref[k] = row_alloc(r->half);
        r->out[k] = row_alloc(r->half);
        r->scratch[k] = row_alloc(w);
    }
}

/* Whether the SIMD run wrote what the C run did, slack included. */
static bool dwt_runs_equal(const DwtRuns *r)
{
    static const char *const names[4] = { "band a", "band h", "band v", "band d" };
    for (int k = 0; k < 4; k++)
        if (!rows_equal(r->out[k], r->ref[k], r->half, names[k])) return false;
    return true;
}

static void dwt_runs_free(DwtRuns *r)
{
    for (int k = 0; k < 4; k++) {
        row_free(r->ref[k]);
        row_free(r->out[k]);
        row_free(r->scratch[k]);
    }
}

/* Every row of level 0 of the bench picture. */
static void bench_dwt_row0(AdmDwtRow0Fn fn, bool high, int32_t *const out[4], int32_t *lo,
                           int32_t *hi)
{
    const size_t bytes = high ? 2 : 1;
    const uint8_t *pic = high ? (const uint8_t *)bench.pic[0] : bench.pic8[0];
    for (int i = 0; i < BENCH_H / 2; i++) {
        const uint8_t *src[4];
        for (int k = 0; k < 4; k++)
            src[k] = pic + (size_t)mirror(2 * i - 1 + k, BENCH_H) * BENCH_W * bytes;
        fn(src, high ? 10 : 8, BENCH_W, true, out, lo, hi);
    }
}

static void check_dwt_row0(bool high)
{
    const size_t field = high ? offsetof(AdmDsp, dwt_row0_16) : offsetof(AdmDsp, dwt_row0_8);
    static const int widths[] = { 33, 34, 47, 63, 64, 65, 97, 130, 257, 1921 };
    /* bit depth and the bits of the samples (above the depth: wrapped) */
    static const unsigned depths[][2] = { { 10, 10 }, { 12, 12 }, { 16, 16 }, { 10, 16 } };
    const unsigned depth_count = high ? 4 : 1;
    const size_t bytes = high ? 2 : 1;
    const AdmDwtRow0Fn c_fn = kernel_of(&dsps[0], field);

    for (unsigned l = 0; l < level_count; l++) {
        if (!level_runs(l, field, high ? "adm_dwt_row0_16" : "adm_dwt_row0_8")) continue;
        const AdmDwtRow0Fn fn = kernel_of(&dsps[l], field);
        for (unsigned s = 0; l > 0 && s < QUALE_ARRAY_SIZE(widths); s++) {
            const int w = widths[s];
            for (unsigned d = 0; d < depth_count; d++) {
                for (int fill = 0; fill < CHECKASM_FILL_COUNT; fill++) {
                    const unsigned depth = high ? depths[d][0] : 8;
                    const unsigned bits = high ? depths[d][1] : 8;
                    uint8_t *src[4], *copy[4];
                    for (int k = 0; k < 4; k++) {
                        /* exactly w samples: a kernel reads no further */
                        src[k] = checkasm_alloc((size_t)w * bytes);
                        copy[k] = checkasm_alloc((size_t)w * bytes);
                        checkasm_fill_samples(src[k], (size_t)w, bits,
                                              k == 3 && fill == CHECKASM_FILL_ZERO
                                                  ? CHECKASM_FILL_MAX : fill);
                        memcpy(copy[k], src[k], (size_t)w * bytes);
                    }
                    for (int details = 0; details < 2; details++) {
                        DwtRuns r;
                        dwt_runs_alloc(&r, w);
                        const uint8_t *const in[4] = { src[0], src[1], src[2], src[3] };
                        c_fn(in, (int)depth, w, details, r.ref, r.scratch[0], r.scratch[1]);
                        fn(in, (int)depth, w, details, r.out, r.scratch[2], r.scratch[3]);
                        if (!dwt_runs_equal(&r))
                            checkasm_fail("width %d, %u-bit video, samples of %u bits, %s, "
                                          "details %d", w, depth, bits,
                                          checkasm_fill_names[fill], details);
                        dwt_runs_free(&r);
                    }
                    for (int k = 0; k < 4; k++) {
                        checkasm_check_equal(src[k], copy[k], (size_t)w * bytes, "samples");
                        checkasm_free(src[k]);
                        checkasm_free(copy[k]);
                    }
                }
            }
        }
        if (checkasm_bench_enabled()) {
            /* every row of one picture */
            bench_init();
            int32_t *out[4], *lo = row_alloc(BENCH_W), *hi = row_alloc(BENCH_W);
            for (int k = 0; k < 4; k++) out[k] = row_alloc(BENCH_W / 2);
            CHECKASM_BENCH(bench_dwt_row0(fn, high, out, lo, hi));
            for (int k = 0; k < 4; k++) row_free(out[k]);
            row_free(lo);
            row_free(hi);
        }
        checkasm_end();
    }
}

/* ---- DWT of levels 1..3 ---- */

/* Every row of level 1 from the bench frame's level 0. */
static void bench_dwt_row123(AdmDwtRow123Fn fn, const BenchLevel *b0, int32_t *const out[4],
                             int32_t *lo, int32_t *hi)
{
    for (int i = 0; i < adm_half(b0->h); i++) {
        const int32_t *src[4];
        for (int k = 0; k < 4; k++) src[k] = b0->approx[0][mirror(2 * i - 1 + k, b0->h)];
        fn(src, b0->w, 1, true, out, lo, hi);
    }
}

static void check_dwt_row123(void)
{
    const size_t field = offsetof(AdmDsp, dwt_row123);
    const AdmDwtRow123Fn c_fn = dsps[0].dwt_row123;

    for (unsigned l = 0; l < level_count; l++) {
        if (!level_runs(l, field, "adm_dwt_row123")) continue;
        const AdmDwtRow123Fn fn = dsps[l].dwt_row123;
        for (unsigned s = 1; l > 0 && s < WIDTH_COUNT; s++) {
            /* the input: the previous level's approximation, 5 or more wide */
            const int w = band_widths[1][s];
            for (int scale = 1; scale <= 3; scale++) {
                for (int fill = 0; fill < BAND_FILL_COUNT; fill++) {
                    int32_t *src[4], *copy[4];
                    for (int k = 0; k < 4; k++) {
                        src[k] = row_alloc(w);
                        copy[k] = row_alloc(w);
                        fill_row(src[k], w, (s + (unsigned)k) & 1 ? 32 : 16,
                                 (enum BandFill)((fill + k) % BAND_FILL_COUNT));
                        memcpy(copy[k] - ADM_ROW_PAD, src[k] - ADM_ROW_PAD, row_bytes(w));
                    }
                    for (int details = 0; details < 2; details++) {
                        DwtRuns r;
                        dwt_runs_alloc(&r, w);
                        const int32_t *const in[4] = { src[0], src[1], src[2], src[3] };
                        c_fn(in, w, scale, details, r.ref, r.scratch[0], r.scratch[1]);
                        fn(in, w, scale, details, r.out, r.scratch[2], r.scratch[3]);
                        if (!dwt_runs_equal(&r))
                            checkasm_fail("width %d, scale %d, %s, details %d", w, scale,
                                          band_fill_names[fill], details);
                        dwt_runs_free(&r);
                    }
                    for (int k = 0; k < 4; k++) {
                        rows_equal(src[k], copy[k], w, "source");
                        row_free(src[k]);
                        row_free(copy[k]);
                    }
                }
            }
        }
        if (checkasm_bench_enabled()) {
            /* level 1 of a picture from the level-0 approximation */
            const BenchLevel *b0 = bench_level(true);
            int32_t *out[4], *lo = row_alloc(b0->w), *hi = row_alloc(b0->w);
            for (int k = 0; k < 4; k++) out[k] = row_alloc(adm_half(b0->w));
            CHECKASM_BENCH(bench_dwt_row123(fn, b0, out, lo, hi));
            for (int k = 0; k < 4; k++) row_free(out[k]);
            row_free(lo);
            row_free(hi);
        }
        checkasm_end();
    }
}

/* ---- decoupling ---- */

/* Details of levels 1..3 whose angle test depends on rounding a 64-bit
 * dot product or squared length to float exactly as a C cast does (once,
 * to nearest even): rounding it to double first would flip the test.
 * Found by search; oh, ov, th, tv. */
static const int32_t rounding_traps[][4] = {
    /* u.v */
    { -903105265, -293284646, -956364629, -292230385 },
    { 1411621079, 79121724, 999405509, 38535425 },
    { 1411621079, 79121724, 999432087, 38535460 },
    /* |u|^2, and with u and v swapped |v|^2 */
    { 798747960, -425543392, 564236732, -288077762 },
    { -139536408, -150103346, -95827142, -106760744 },
    { -588455593, 772472474, -421293193, 533459429 },
    { 564236732, -288077762, 798747960, -425543392 },
    { -95827142, -106760744, -139536408, -150103346 },
    { -421293193, 533459429, -588455593, 772472474 },
};

/* Fills the h and v details with the traps, in turn, so that each falls in
 * every lane of a vector. */
static void rows_traps(Rows *ref, Rows *dis)
{
    const int n = (int)QUALE_ARRAY_SIZE(rounding_traps);
    for (int i = -ADM_ROW_PAD; i < ref->n + ADM_ROW_PAD; i++) {
        const int32_t *q = rounding_traps[(i + ADM_ROW_PAD) % n];
        ref->p[0][i] = q[0];
        ref->p[1][i] = q[1];
        dis->p[0][i] = q[2];
        dis->p[1][i] = q[3];
    }
}

static void bench_decouple(AdmDecoupleRowFn fn, const BenchLevel *b, const int32_t *div_lookup,
                           float cos_1deg_sq, int32_t *const rst[3], int32_t *const add[3])
{
    for (int i = 0; i < b->h; i++) {
        const int32_t *ref[3], *dis[3];
        for (int k = 0; k < 3; k++) {
            ref[k] = b->details[0][k][i];
            dis[k] = b->details[1][k][i];
        }
        fn(div_lookup, cos_1deg_sq, 100.0, ref, dis, rst, add, 0, b->w);
    }
}

/* The divisor of level 0's ratio, or the 15 leading bits of level 1..3's,
 * at i of `count`: every value the kernels divide by, in order. */
static int32_t sweep_divisor(bool level0, int64_t i)
{
    if (level0) return (int32_t)(i - 32768); /* -32768 .. 32768 */
    /* |o| from 1 to 65535 as they are, then 32768 .. 65535 shifted
     * left by 1 to 16 (their rounding to 15 bits hits every divisor),
     * each of both signs; INT32_MIN last */
    const int64_t direct = 2 * 65535, shifted = 2 * 32768 * 16;
    if (i < direct) return (int32_t)((i / 2 + 1) * (i % 2 ? -1 : 1));
    if (i < direct + shifted) {
        const int64_t k = i - direct;
        const int64_t v = (32768 + k / 2 % 32768) << (1 + k / 65536);
        return (int32_t)(k % 2 ? -v : v);
    }
    return INT32_MIN;
}

/* Every divisor of the reciprocal (the kernels compute what the C code
 * reads from its table) in each of the three bands, against distorted
 * values of the same sign and a random fraction of the magnitude, so
 * that the ratios land inside (0, 32768) and not on the clamps. */
static void check_decouple_divisors(bool level0)
{
    const size_t field = level0 ? offsetof(AdmDsp, decouple_row0)
                                : offsetof(AdmDsp, decouple_row123);
    const AdmDecoupleRowFn c_fn = kernel_of(&dsps[0], field);
    static int32_t div_lookup[ADM_DIV_LOOKUP_SIZE];
    adm_div_lookup_init(div_lookup);
    const double cos_1deg = cos(1.0 * 3.14159265358979323846 / 180.0);
    const float cos_1deg_sq = (float)(cos_1deg * cos_1deg);
    const int64_t count = level0 ? 65537 : 2 * 65535 + 2 * 32768 * 16 + 1;
    enum { W = 4096 };

    for (unsigned l = 0; l < level_count; l++) {
        if (!level_runs(l, field, level0 ? "adm_decouple_row0 divisors"
                                         : "adm_decouple_row123 divisors"))
            continue;
        const AdmDecoupleRowFn fn = kernel_of(&dsps[l], field);
        Rows ref, dis, rst, add, rst_c, add_c;
        rows_alloc(&ref, W);
        rows_alloc(&dis, W);
        rows_alloc(&rst, W);
        rows_alloc(&add, W);
        rows_alloc(&rst_c, W);
        rows_alloc(&add_c, W);
        for (int64_t first = 0; first < count; first += W) {
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < W; j++) {
                    /* each band a third of a row further along */
                    const int64_t i = (first + j + k * (W / 3)) % count;
                    const int32_t o = sweep_divisor(level0, i);
                    const int64_t t = (int64_t)o * checkasm_rand_below(32768) / 32768;
                    ref.p[k][j] = o;
                    dis.p[k][j] = (int32_t)t;
                }
            c_fn(div_lookup, cos_1deg_sq, 1.0, in3(&ref), in3(&dis), rst_c.p, add_c.p, 0, W);
            fn(div_lookup, cos_1deg_sq, 1.0, in3(&ref), in3(&dis), rst.p, add.p, 0, W);
            if (!rows3_equal(&rst, &rst_c, "restored") || !rows3_equal(&add, &add_c, "additive")) {
                checkasm_fail("divisors from %lld", (long long)sweep_divisor(level0, first));
                break;
            }
        }
        rows_free(&ref);
        rows_free(&dis);
        rows_free(&rst);
        rows_free(&add);
        rows_free(&rst_c);
        rows_free(&add_c);
        checkasm_end();
    }
}

static void check_decouple(bool level0)
{
    const size_t field = level0 ? offsetof(AdmDsp, decouple_row0)
                                : offsetof(AdmDsp, decouple_row123);
    const unsigned bits = level0 ? 16 : 32;
    const AdmDecoupleRowFn c_fn = kernel_of(&dsps[0], field);
    static int32_t div_lookup[ADM_DIV_LOOKUP_SIZE];
    adm_div_lookup_init(div_lookup);
    const double cos_1deg = cos(1.0 * 3.14159265358979323846 / 180.0);
    const float cos_1deg_sq = (float)(cos_1deg * cos_1deg);
    static const double gains[] = { 100.0, 1.0, 1.2 };
    /* the fills, then distorted details near the reference ones, then
     * (levels 1..3) the rounding traps */
    const int rounds = BAND_FILL_COUNT + 1 + !level0;

    for (unsigned l = 0; l < level_count; l++) {
        if (!level_runs(l, field, level0 ? "adm_decouple_row0" : "adm_decouple_row123"))
            continue;
        const AdmDecoupleRowFn fn = kernel_of(&dsps[l], field);
        for (unsigned s = 0; l > 0 && s < WIDTH_COUNT; s++) {
            const int w = band_widths[!level0][s];
            for (int round = 0; round < rounds; round++) {
                for (int pick = 0; pick < 3; pick++) {
                    const double gain = gains[(s + (unsigned)round + (unsigned)pick) % 3];
                    int j0, j1;
                    column_range(w, pick, &j0, &j1);
                    enum { REF, DIS, REF_COPY, DIS_COPY, RST, ADD, RST_C, ADD_C, COUNT };
                    Rows rows[COUNT];
                    for (int k = 0; k < COUNT; k++) rows_alloc(&rows[k], w);
                    Rows ref = rows[REF], dis = rows[DIS], ref_copy = rows[REF_COPY];
                    Rows dis_copy = rows[DIS_COPY], rst = rows[RST], add = rows[ADD];
                    Rows rst_c = rows[RST_C], add_c = rows[ADD_C];
                    if (round < BAND_FILL_COUNT) {
                        rows_fill(&ref, bits, round);
                        rows_fill(&dis, bits, (round + (int)s) % BAND_FILL_COUNT);
                    } else {
                        rows_fill(&ref, bits, s & 1 ? BAND_SMALL : BAND_RANDOM);
                        rows_near(&dis, &ref, bits);
                        if (round > BAND_FILL_COUNT) rows_traps(&ref, &dis);
                    }
                    rows_copy(&ref_copy, &ref);
                    rows_copy(&dis_copy, &dis);
                    c_fn(div_lookup, cos_1deg_sq, gain, in3(&ref), in3(&dis), rst_c.p, add_c.p,
                         j0, j1);
                    fn(div_lookup, cos_1deg_sq, gain, in3(&ref), in3(&dis), rst.p, add.p, j0, j1);
                    if (!rows3_equal(&rst, &rst_c, "restored") ||
                        !rows3_equal(&add, &add_c, "additive"))
                        checkasm_fail("width %d, columns %d..%d, %s, gain %g", w, j0, j1 - 1,
                                      round < BAND_FILL_COUNT    ? band_fill_names[round]
                                      : round == BAND_FILL_COUNT ? "near"
                                                                 : "rounding traps",
                                      gain);
                    rows3_equal(&ref, &ref_copy, "reference (input)");
                    rows3_equal(&dis, &dis_copy, "distorted (input)");
                    for (int k = 0; k < COUNT; k++) rows_free(&rows[k]);
                }
            }
        }
        if (checkasm_bench_enabled()) {
            const BenchLevel *b = bench_level(level0);
            Rows rst, add;
            rows_alloc(&rst, b->w);
            rows_alloc(&add, b->w);
            CHECKASM_BENCH(bench_decouple(fn, b, div_lookup, cos_1deg_sq, rst.p, add.p));
            rows_free(&rst);
            rows_free(&add);
        }
        checkasm_end();
    }
}

/* ---- the denominator ---- */

static void bench_den(AdmDenRowFn fn, const BenchLevel *b, const AdmDenShifts *p,
                      uint64_t sums[3])
{
    const AdmRect r = adm_rect_scored(b->w, b->h);
    for (int i = r.top; i < r.bottom; i++) {
        const int32_t *ref[3];
        for (int k = 0; k < 3; k++) ref[k] = b->details[0][k][i];
        fn(p, ref, r.left, r.right, sums);
    }
}

static void check_den(bool level0)
{
    const size_t field = level0 ? offsetof(AdmDsp, den_row0) : offsetof(AdmDsp, den_row123);
    const unsigned bits = level0 ? 16 : 32;
    const AdmDenRowFn c_fn = kernel_of(&dsps[0], field);

    for (unsigned l = 0; l < level_count; l++) {
        if (!level_runs(l, field, level0 ? "adm_den_row0" : "adm_den_row123")) continue;
        const AdmDenRowFn fn = kernel_of(&dsps[l], field);
        for (unsigned s = 0; l > 0 && s < WIDTH_COUNT; s++) {
            const int w = band_widths[!level0][s];
            const AdmRect r = adm_rect_scored(w, w);
            for (int fill = 0; fill < BAND_FILL_COUNT; fill++) {
                for (int scale = level0 ? 0 : 1; scale <= (level0 ? 0 : 3); scale++) {
                    AdmDenShifts p;
                    adm_den_shifts(level0, scale, w, w + (int)s, &p);
                    Rows ref, copy;
                    rows_alloc(&ref, w);
                    rows_alloc(&copy, w);
                    rows_fill(&ref, bits, fill);
                    rows_copy(&copy, &ref);
                    uint64_t sums_c[3] = { 1, 2, 3 }, sums[3] = { 4, 5, 6 };
                    c_fn(&p, in3(&ref), r.left, r.right, sums_c);
                    fn(&p, in3(&ref), r.left, r.right, sums);
                    if (!checkasm_check_equal(sums, sums_c, sizeof(sums), "sums"))
                        checkasm_fail("width %d, scale %d, %s", w, scale, band_fill_names[fill]);
                    rows3_equal(&ref, &copy, "reference (input)");
                    rows_free(&ref);
                    rows_free(&copy);
                }
            }
        }
        if (checkasm_bench_enabled()) {
            const BenchLevel *b = bench_level(level0);
            AdmDenShifts p;
            adm_den_shifts(level0, level0 ? 0 : 1, b->w, b->h, &p);
            uint64_t sums[3];
            CHECKASM_BENCH(bench_den(fn, b, &p, sums));
        }
        checkasm_end();
    }
}

/* ---- CSF and masking ---- */

/* CSF weights: libvmaf's defaults (the Q21/Q23 constants of level 0, the
 * Q32 Watson weights of levels 1..3 at 1080 lines and 3H) or random ones
 * (at levels 1..3 also above 2^31, as large adm_csf_scale values give). */
static void csf_weights(bool level0, int pick, uint32_t csf[3])
{
    static const uint32_t level0_default[3] = { 36453, 36453, 49417 };
    static const uint32_t level123_default[3][3] = {
        { 137373792, 137373792, 61414028 },
        { 186284160, 186284160, 104783920 },
        { 196165808, 196165808, 134487184 },
    };
    for (int b = 0; b < 3; b++) {
        if (pick == 0) csf[b] = level0 ? level0_default[b] : level123_default[0][b];
        else if (pick <= 2 && !level0) csf[b] = level123_default[pick][b];
        else csf[b] = level0 ? checkasm_rand_below(65536) : (uint32_t)checkasm_rand();
    }
}

static void bench_masking(AdmMaskingRowFn fn, const BenchLevel *b, const uint32_t csf[3],
                          int32_t *around, int32_t *centre)
{
    for (int i = 0; i < b->h; i++) {
        const int32_t *src[3];
        for (int k = 0; k < 3; k++) src[k] = b->add[k][i];
        fn(csf, src, around, centre, 0, b->w);
    }
}

static void check_masking(bool level0)
{
    const size_t field = level0 ? offsetof(AdmDsp, masking_row0)
                                : offsetof(AdmDsp, masking_row123);
    const unsigned bits = level0 ? 16 : 32;
    const AdmMaskingRowFn c_fn = kernel_of(&dsps[0], field);

    for (unsigned l = 0; l < level_count; l++) {
        if (!level_runs(l, field, level0 ? "adm_masking_row0" : "adm_masking_row123"))
            continue;
        const AdmMaskingRowFn fn = kernel_of(&dsps[l], field);
        for (unsigned s = 0; l > 0 && s < WIDTH_COUNT; s++) {
            const int w = band_widths[!level0][s];
            for (int fill = 0; fill < BAND_FILL_COUNT; fill++) {
                for (int pick = 0; pick < 3; pick++) {
                    int j0, j1;
                    column_range(w, pick, &j0, &j1);
                    uint32_t csf[3];
                    csf_weights(level0, (int)((s + (unsigned)fill + (unsigned)pick) % 4), csf);
                    Rows src, copy;
                    rows_alloc(&src, w);
                    rows_alloc(&copy, w);
                    rows_fill(&src, bits, fill);
                    rows_copy(&copy, &src);
                    int32_t *out[4];
                    for (int k = 0; k < 4; k++) out[k] = row_alloc(w);
                    c_fn(csf, in3(&src), out[0], out[1], j0, j1);
                    fn(csf, in3(&src), out[2], out[3], j0, j1);
                    if (!rows_equal(out[2], out[0], w, "around") ||
                        !rows_equal(out[3], out[1], w, "centre"))
                        checkasm_fail("width %d, columns %d..%d, %s, csf %u %u %u", w, j0,
                                      j1 - 1, band_fill_names[fill], csf[0], csf[1], csf[2]);
                    rows3_equal(&src, &copy, "details (input)");
                    for (int k = 0; k < 4; k++) row_free(out[k]);
                    rows_free(&src);
                    rows_free(&copy);
                }
            }
        }
        if (checkasm_bench_enabled()) {
            const BenchLevel *b = bench_level(level0);
            uint32_t csf[3];
            csf_weights(level0, 0, csf);
            int32_t *around = row_alloc(b->w), *centre = row_alloc(b->w);
            CHECKASM_BENCH(bench_masking(fn, b, csf, around, centre));
            row_free(around);
            row_free(centre);
        }
        checkasm_end();
    }
}

static void bench_masked(AdmMaskedRowFn fn, const BenchLevel *b, const uint32_t csf[3],
                         const AdmMaskedShifts *p, uint32_t *col, uint64_t sums[3])
{
    const AdmRect r = adm_rect_scored(b->w, b->h);
    for (int i = r.top; i < r.bottom; i++) {
        const int32_t *src[3], *around[3];
        for (int k = 0; k < 3; k++) {
            src[k] = b->rst[k][i];
            around[k] = b->around[i - 1 + k];
        }
        fn(csf, p, src, around, b->centre[i], b->w, r.left, r.right, col, sums);
    }
}

static void check_masked(bool level0)
{
    const size_t field = level0 ? offsetof(AdmDsp, masked_row0)
                                : offsetof(AdmDsp, masked_row123);
    const unsigned bits = level0 ? 16 : 32;
    const AdmMaskedRowFn c_fn = kernel_of(&dsps[0], field);
    const AdmMaskingRowFn masking = level0 ? dsps[0].masking_row0 : dsps[0].masking_row123;

    for (unsigned l = 0; l < level_count; l++) {
        if (!level_runs(l, field, level0 ? "adm_masked_row0" : "adm_masked_row123")) continue;
        const AdmMaskedRowFn fn = kernel_of(&dsps[l], field);
        for (unsigned s = 0; l > 0 && s < WIDTH_COUNT; s++) {
            const int w = band_widths[!level0][s];
            const int h = w + (int)(s & 3); /* the height sets the shifts */
            const AdmRect r = adm_rect_scored(w, h);
            AdmMaskedShifts p;
            adm_masked_shifts(level0, w, h, &p);
            /* the masking of other details (the real case), then any
             * masking values */
            for (int fill = 0; fill <= BAND_FILL_COUNT; fill++) {
                uint32_t csf[3];
                csf_weights(level0, (int)((s + (unsigned)fill) % 4), csf);
                Rows src, copy, around, around_copy;
                rows_alloc(&src, w);
                rows_alloc(&copy, w);
                rows_alloc(&around, w);
                rows_alloc(&around_copy, w);
                int32_t *centre = row_alloc(w), *centre_copy = row_alloc(w);
                if (fill < BAND_FILL_COUNT) {
                    rows_fill(&src, bits, fill);
                    for (int k = 0; k < 3; k++) {
                        Rows other;
                        rows_alloc(&other, w);
                        rows_fill(&other, bits, (enum BandFill)((fill + (int)s + k) %
                                                                BAND_FILL_COUNT));
                        masking(csf, in3(&other), around.p[k], k == 1 ? centre : centre_copy,
                                0, w);
                        rows_free(&other);
                    }
                } else {
                    rows_fill(&src, bits, BAND_RANDOM);
                    rows_fill(&around, 32, BAND_RANDOM);
                    fill_row(centre, w, 32, BAND_RANDOM);
                }
                rows_copy(&copy, &src);
                rows_copy(&around_copy, &around);
                memcpy(centre_copy - ADM_ROW_PAD, centre - ADM_ROW_PAD, row_bytes(w));
                int32_t *col_c = row_alloc(w), *col = row_alloc(w);
                uint64_t sums_c[3] = { 1, 2, 3 }, sums[3] = { 4, 5, 6 };
                c_fn(csf, &p, in3(&src), in3(&around), centre, w, r.left, r.right,
                     (uint32_t *)col_c, sums_c);
                fn(csf, &p, in3(&src), in3(&around), centre, w, r.left, r.right,
                   (uint32_t *)col, sums);
                if (!checkasm_check_equal(sums, sums_c, sizeof(sums), "sums"))
                    checkasm_fail("width %d, %s, csf %u %u %u", w,
                                  fill < BAND_FILL_COUNT ? band_fill_names[fill] : "any masking",
                                  csf[0], csf[1], csf[2]);
                rows3_equal(&src, &copy, "details (input)");
                rows3_equal(&around, &around_copy, "around (input)");
                rows_equal(centre, centre_copy, w, "centre (input)");
                row_free(col_c);
                row_free(col);
                row_free(centre);
                row_free(centre_copy);
                rows_free(&src);
                rows_free(&copy);
                rows_free(&around);
                rows_free(&around_copy);
            }
        }
        if (checkasm_bench_enabled()) {
            /* the restored part against the additive impairment's masking */
            const BenchLevel *b = bench_level(level0);
            AdmMaskedShifts p;
            adm_masked_shifts(level0, b->w, b->h, &p);
            uint32_t csf[3];
            csf_weights(level0, 0, csf);
            int32_t *col = row_alloc(b->w);
            uint64_t sums[3];
            CHECKASM_BENCH(bench_masked(fn, b, csf, &p, (uint32_t *)col, sums));
            row_free(col);
        }
        checkasm_end();
    }
}

void checkasm_check_integer_adm(void)
{
    levels = checkasm_levels(&level_count);
    if (level_count > MAX_LEVELS) level_count = MAX_LEVELS;
    for (unsigned l = 0; l < level_count; l++) adm_dsp_init(&dsps[l], levels[l].flags);

    check_dwt_row0(false);
    check_dwt_row0(true);
    check_dwt_row123();
    check_decouple(true);
    check_decouple(false);
    check_decouple_divisors(true);
    check_decouple_divisors(false);
    check_den(true);
    check_den(false);
    check_masking(true);
    check_masking(false);
    check_masked(true);
    check_masked(false);
    bench_free();
}
