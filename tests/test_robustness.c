/*
 * Robustness of every registered metric through the public API:
 *
 *  - tiny and odd frames: 1x1, 2x2, 16x16 and odd sizes, in every chroma
 *    format and at 8, 10, 12 and 16 bits.  Each metric either scores them
 *    (every key it declared has a value at every frame) or refuses with an
 *    error that names the metric.  Never a crash.
 *  - samples above the declared bit depth (all 0xFFFF and random 16-bit
 *    values in 9- to 15-bit pictures), which an API caller can send even
 *    though the readers clamp them: same rule, and never a read or write
 *    out of bounds.  Run it under ASan/UBSan (scripts/sanitize.sh) to
 *    check the last part.
 *
 * The metrics come from the registry (quale_metric_count()), so a new
 * metric is covered without a change here.  Prints one line per failed
 * check, a short census of what scored and what was refused (-v lists
 * every refusal; metric names as arguments limit the run to them), then
 * "N passed, M failed".
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quale/quale.h"
#include "test.h"

static bool verbose;
static enum QualeBackend backend = QUALE_BACKEND_CPU;
static char **only; /* metric names given on the command line, NULL-terminated */

/* Whether to test this metric: all of them, or those named. */
static bool selected(const char *name)
{
    if (!only || !only[0]) return true;
    for (char **n = only; *n; n++)
        if (!strcmp(*n, name)) return true;
    return false;
}

/* ---- log capture --------------------------------------------------------- */

typedef struct Log {
    char text[4096];
    size_t len;
    unsigned errors;
} Log;

static void capture(void *cookie, enum QualeLogLevel level, const char *message)
{
    Log *log = cookie;
    if (level == QUALE_LOG_ERROR) log->errors++;
    if (level > QUALE_LOG_WARNING) return;
    const int n = snprintf(log->text + log->len, sizeof(log->text) - log->len, "%s%s",
                           log->len ? " | " : "", message);
    if (n > 0) log->len += (size_t)n;
    if (log->len >= sizeof(log->text)) log->len = sizeof(log->text) - 1;
}

/* ---- pictures ------------------------------------------------------------ */

static uint32_t rng_next(uint32_t *s)
{
    /* xorshift32: deterministic content, no dependency on rand(). */
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

enum Fill {
    FILL_PATTERN,   /* in range: a gradient, the frame index, some noise */
    FILL_NOISY,     /* in range: the pattern plus more noise (distorted) */
    FILL_ALL_ONES,  /* every sample 0xFFFF (0xFF at 8 bits) */
    FILL_ZERO,
    FILL_RANDOM16,  /* any 16-bit value, whatever the bit depth */
    FILL_CHECKER,   /* in range: 0 and the maximum in a checkerboard */
    FILL_CHECKER_INV, /* the same, inverted */
};

static void fill_picture(QualePicture *pic, enum Fill fill, unsigned frame, uint32_t seed)
{
    const unsigned depth = pic->format.bitdepth;
    const unsigned max = (1u << depth) - 1;
    uint32_t s = seed * 2654435761u + frame * 40503u + 1;
    for (unsigned p = 0; p < pic->plane_count; p++) {
        for (unsigned y = 0; y < pic->plane_height[p]; y++) {
            uint8_t *row8 = (uint8_t *)pic->data[p] + (size_t)y * (size_t)pic->stride[p];
            uint16_t *row16 = (uint16_t *)(void *)row8;
            for (unsigned x = 0; x < pic->plane_width[p]; x++) {
                unsigned v;
                switch (fill) {
                case FILL_ALL_ONES: v = 0xFFFF; break;
                case FILL_ZERO: v = 0; break;
                case FILL_RANDOM16: v = rng_next(&s) & 0xFFFF; break;
                case FILL_CHECKER: v = (x + y) % 2 ? max : 0; break;
                case FILL_CHECKER_INV: v = (x + y) % 2 ? 0 : max; break;
                case FILL_NOISY:
                case FILL_PATTERN:
                default: {
                    unsigned base = (x * 7 + y * 13 + frame * 5 + p * 31) % 256;
                    unsigned noise = rng_next(&s) % (fill == FILL_NOISY ? 24 : 4);
                    v = (base + noise) % 256;
                    v = depth > 8 ? v << (depth - 8) | (v >> (16 - depth)) : v;
                    if (v > max) v = max;
                    break;
                }
                }
                if (depth > 8) row16[x] = (uint16_t)v;
                else row8[x] = (uint8_t)v;
            }
        }
    }
}

/* ---- one run --------------------------------------------------------------- */

typedef struct Outcome {
    int status;      /* 0 scored; else the first negative return */
    const char *at;  /* the call that refused */
    bool nonfinite;  /* some value is NaN or infinite */
    Log log;
} Outcome;

#define FRAMES 3

static const char *metric_name(unsigned index)
{
    QualeMetricInfo info;
    return quale_metric_info(index, &info) ? "?" : info.name;
}

/* Scores FRAMES pairs of one format with one metric. */
static void run_metric(const char *metric, const QualeVideoFormat *f, enum Fill ref_fill,
                       enum Fill dist_fill, unsigned threads, Outcome *out)
{
    memset(out, 0, sizeof(*out));
    QualeSettings settings;
    quale_settings_default(&settings);
    settings.threads = threads;
    settings.backend = backend;
    settings.log = capture;
    settings.log_cookie = &out->log;
    settings.log_level = QUALE_LOG_WARNING;

    QualeContext *ctx = NULL;
    int err = quale_open(&ctx, &settings);
    CHECK(err == 0);
    if (err) {
        out->status = err;
        out->at = "quale_open";
        return;
    }
    err = quale_use_metric(ctx, metric);
    CHECK(err == 0);
    if (err) {
        out->status = err;
        out->at = "quale_use_metric";
        quale_close(&ctx);
        return;
    }
    for (unsigned i = 0; i < FRAMES && !err; i++) {
        QualePicture ref, dist;
        memset(&ref, 0, sizeof(ref));
        memset(&dist, 0, sizeof(dist));
        const int a = quale_context_alloc_picture(ctx, &ref, f);
        const int b = quale_context_alloc_picture(ctx, &dist, f);
        CHECK(a == 0 && b == 0);
        if (a || b) {
            quale_picture_unref(&ref);
            quale_picture_unref(&dist);
            err = a ? a : b;
            out->at = "quale_context_alloc_picture";
            break;
        }
        fill_picture(&ref, ref_fill, i, 1);
        fill_picture(&dist, dist_fill, i, 2);
        err = quale_send_pictures(ctx, &ref, &dist);
        if (err) out->at = "quale_send_pictures";
    }
    if (!err) {
        err = quale_flush(ctx);
        if (err) out->at = "quale_flush";
    }
    out->status = err;
    if (!err) {
        /* Scored: every key has a value at every frame, and pools. */
        const unsigned keys = quale_feature_count(ctx);
        CHECK(keys > 0);
        for (unsigned k = 0; k < keys; k++) {
            const char *key = quale_feature_name(ctx, k);
            for (unsigned i = 0; i < FRAMES; i++) {
                double v = 0;
                const int got = quale_feature_value(ctx, key, i, &v);
                if (got) {
                    fprintf(stderr, "%s: %ux%u %s %u-bit: key %s has no value at frame %u (%d)\n",
                            metric, f->width, f->height, quale_chroma_name(f->chroma),
                            f->bitdepth, key, i, got);
                }
                CHECK(got == 0);
                if (!got && !isfinite(v)) out->nonfinite = true;
            }
            double pooled;
            CHECK(quale_feature_pooled(ctx, key, QUALE_POOL_MEAN, &pooled) == 0);
        }
        /* A run that scored says nothing alarming. */
        CHECK(out->log.errors == 0);
    } else {
        /* Refused: with an error line that names the metric. */
        const bool named = out->log.errors > 0 && strstr(out->log.text, metric) != NULL;
        if (!named)
            fprintf(stderr, "%s: %ux%u %s %u-bit: %s failed (%d) without a message naming "
                    "the metric: \"%s\"\n", metric, f->width, f->height,
                    quale_chroma_name(f->chroma), f->bitdepth, out->at, err, out->log.text);
        CHECK(named);
    }
    quale_close(&ctx);
}

/* ---- tiny and odd frames --------------------------------------------------- */

static const unsigned sizes[][2] = {
    { 1, 1 }, { 2, 2 }, { 1, 9 }, { 9, 1 }, { 3, 5 }, { 16, 16 }, { 17, 9 }, { 33, 31 },
    { 67, 37 },
    /* Odd, and the smallest size every metric scores (cambi needs 216
     * samples on one side, float_ms_ssim 176 on both). */
    { 217, 177 },
};
static const enum QualeChroma chromas[] = { QUALE_CHROMA_400, QUALE_CHROMA_420,
                                            QUALE_CHROMA_422, QUALE_CHROMA_444 };
static const unsigned depths[] = { 8, 10, 12, 16 };

#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

static void test_tiny_frames(void)
{
    const unsigned metrics = quale_metric_count();
    CHECK(metrics > 0);
    for (unsigned m = 0; m < metrics; m++) {
        const char *name = metric_name(m);
        if (!selected(name)) continue;
        unsigned scored = 0, refused = 0, nonfinite = 0;
        unsigned smallest = 0; /* smallest square-ish size scored, by area */
        for (unsigned s = 0; s < N_SIZES; s++) {
            for (unsigned c = 0; c < 4; c++) {
                for (unsigned d = 0; d < 4; d++) {
                    const QualeVideoFormat f = { chromas[c], depths[d], sizes[s][0], sizes[s][1] };
                    Outcome o;
                    run_metric(name, &f, FILL_PATTERN, FILL_NOISY, 1, &o);
                    if (o.status == 0) {
                        scored++;
                        nonfinite += o.nonfinite;
                        const unsigned area = f.width * f.height;
                        if (!smallest || area < smallest) smallest = area;
                    } else {
                        refused++;
                        if (verbose)
                            printf("  %s refuses %ux%u %s %u-bit: %s\n", name, f.width,
                                   f.height, quale_chroma_name(f.chroma), f.bitdepth,
                                   o.log.text);
                    }
                }
            }
        }
        printf("tiny frames: %-14s scored %3u, refused %3u of %zu formats%s (smallest scored: "
               "%u samples)\n", name, scored, refused, N_SIZES * 16,
               nonfinite ? " (some values not finite)" : "", smallest);
        /* Every metric scores an ordinary small frame in some format. */
        CHECK(scored > 0);
    }
}

/* ---- in-range extremes ----------------------------------------------------- */

/* The largest contrast samples in range can make, at every depth: the
 * arithmetic of every metric must hold it (no overflow, no table read out
 * of bounds). */
static void test_extremes(void)
{
    const unsigned metrics = quale_metric_count();
    for (unsigned m = 0; m < metrics; m++) {
        const char *name = metric_name(m);
        if (!selected(name)) continue;
        unsigned scored = 0, refused = 0;
        for (unsigned c = 0; c < 4; c++) {
            for (unsigned d = 0; d < 4; d++) {
                const QualeVideoFormat f = { chromas[c], depths[d], 217, 177 };
                Outcome o;
                run_metric(name, &f, FILL_CHECKER, FILL_CHECKER_INV, 2, &o);
                if (o.status == 0) scored++;
                else refused++;
                run_metric(name, &f, FILL_CHECKER, FILL_ZERO, 2, &o);
                if (o.status == 0) scored++;
                else refused++;
            }
        }
        printf("in-range extremes: %-14s scored %3u, refused %3u\n", name, scored, refused);
    }
}

/* ---- samples above the bit depth ----------------------------------------- */

static void test_out_of_range(void)
{
    static const struct {
        enum Fill ref, dist;
        const char *what;
    } fills[] = {
        { FILL_ALL_ONES, FILL_ALL_ONES, "all 0xFFFF" },
        { FILL_ALL_ONES, FILL_ZERO, "0xFFFF vs 0" },
        { FILL_ZERO, FILL_ALL_ONES, "0 vs 0xFFFF" },
        { FILL_RANDOM16, FILL_RANDOM16, "random 16-bit" },
        { FILL_PATTERN, FILL_RANDOM16, "pattern vs random 16-bit" },
    };
    static const unsigned oor_depths[] = { 9, 10, 12, 15 };
    static const unsigned oor_sizes[][2] = { { 17, 9 }, { 217, 177 } };
    const unsigned metrics = quale_metric_count();
    for (unsigned m = 0; m < metrics; m++) {
        const char *name = metric_name(m);
        if (!selected(name)) continue;
        unsigned scored = 0, refused = 0;
        for (unsigned s = 0; s < 2; s++) {
            for (unsigned c = 0; c < 4; c++) {
                for (unsigned d = 0; d < 4; d++) {
                    /* All of it at 10 bits (the case); the other
                     * depths with the first two fills. */
                    const unsigned nfill = oor_depths[d] == 10 ? 5 : 2;
                    for (unsigned k = 0; k < nfill; k++) {
                        const QualeVideoFormat f = { chromas[c], oor_depths[d], oor_sizes[s][0],
                                                     oor_sizes[s][1] };
                        Outcome o;
                        run_metric(name, &f, fills[k].ref, fills[k].dist, 2, &o);
                        if (o.status == 0) {
                            scored++;
                        } else {
                            refused++;
                            if (verbose)
                                printf("  %s refuses %s at %ux%u %s %u-bit: %s\n", name,
                                       fills[k].what, f.width, f.height,
                                       quale_chroma_name(f.chroma), f.bitdepth, o.log.text);
                        }
                    }
                }
            }
        }
        printf("out-of-range samples: %-14s scored %3u, refused %3u\n", name, scored, refused);
    }
}

/* test_robustness [-v] [--backend cuda|vulkan] [METRIC...]: -v lists every
 * refusal; a GPU backend runs the metrics that have a twin there (skip,
 * 77, when it cannot start); names limit the run to those metrics. */
int main(int argc, char **argv)
{
    (void)argc;
    setvbuf(stdout, NULL, _IOLBF, 0); /* a crash keeps the lines before it */
    only = argv + 1;
    for (;;) {
        if (*only && !strcmp(*only, "-v")) {
            verbose = true;
            only++;
        } else if (only[0] && only[1] && !strcmp(only[0], "--backend")) {
            backend = !strcmp(only[1], "cuda") ? QUALE_BACKEND_CUDA
                    : !strcmp(only[1], "vulkan") ? QUALE_BACKEND_VULKAN : QUALE_BACKEND_CPU;
            only += 2;
        } else {
            break;
        }
    }
    if (backend != QUALE_BACKEND_CPU) {
        QualeSettings settings;
        quale_settings_default(&settings);
        settings.backend = backend;
        settings.log_level = QUALE_LOG_ERROR;
        QualeContext *ctx = NULL;
        if (quale_open(&ctx, &settings)) {
            printf("the %s backend does not start here: skipped\n", quale_backend_name(backend));
            return 77;
        }
        quale_close(&ctx);
    }
    test_tiny_frames();
    test_extremes();
    test_out_of_range();
    return test_summary();
}
