/*
 * checkasm for integer motion's SAD kernels (the MotionDsp table,
 * src/metrics/integer_motion.h): pictures of 8, 10, 12 and 16 bits, and of
 * 16-bit words above the bit depth (which the API lets through and which
 * wrap a row's sum the way libvmaf's does); random, all-zero, all-max and
 * max-against-zero fills; widths and heights from 3 up, odd ones included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkasm.h"
#include "metrics/integer_motion/integer_motion.h"

static const unsigned widths[] = { 3, 4, 7, 15, 16, 17, 31, 32, 33, 63, 100, 257, 1920 };
static const unsigned heights[] = { 3, 5, 8 };

/* FILL_WORDS14 and FILL_LATE_WORD are for the SIMD kernels' two ways
 * with 16-bit samples: through differences while every sample is below
 * 2^14 (whatever the depth), the pictures' own filtered sums otherwise,
 * from the start again when the first larger sample comes late. */
enum Fill {
    FILL_RANDOM, FILL_ZERO, FILL_MAX, FILL_OPPOSITE, FILL_WORDS, FILL_WORDS14, FILL_LATE_WORD,
    FILLS
};
static const char *const fill_names[FILLS] = {
    "random", "zero", "max", "max against zero", "words above the depth",
    "14-bit words above the depth", "one full word in the last row",
};

/* A picture with a stride a little wider than its rows. */
typedef struct Picture {
    void *data, *copy;
    ptrdiff_t stride;
    size_t bytes;
} Picture;

static void picture_make(Picture *p, unsigned w, unsigned h, unsigned bits, enum Fill fill,
                         bool second)
{
    const size_t sample = bits > 8 ? 2 : 1;
    p->stride = (ptrdiff_t)((w + 5) * sample);
    p->bytes = (size_t)p->stride * h;
    p->data = malloc(p->bytes);
    p->copy = malloc(p->bytes);
    if (!p->data || !p->copy) {
        fprintf(stderr, "checkasm: out of memory\n");
        exit(1);
    }
    const size_t count = p->bytes / sample;
    switch (fill) {
    case FILL_ZERO: checkasm_fill_samples(p->data, count, bits, CHECKASM_FILL_ZERO); break;
    case FILL_MAX: checkasm_fill_samples(p->data, count, bits, CHECKASM_FILL_MAX); break;
    case FILL_OPPOSITE:
        checkasm_fill_samples(p->data, count, bits, second ? CHECKASM_FILL_ZERO : CHECKASM_FILL_MAX);
        break;
    case FILL_WORDS: checkasm_fill_samples(p->data, count, 16, CHECKASM_FILL_RANDOM); break;
    case FILL_WORDS14: checkasm_fill_samples(p->data, count, 14, CHECKASM_FILL_RANDOM); break;
    default: checkasm_fill_samples(p->data, count, bits, CHECKASM_FILL_RANDOM); break;
    }
    if (fill == FILL_LATE_WORD && !second) ((uint16_t *)p->data)[count - 6] = 0xFFFF;
    memcpy(p->copy, p->data, p->bytes);
}

static void picture_check_and_free(Picture *p, const char *what)
{
    checkasm_check_equal(p->data, p->copy, p->bytes, what);
    free(p->data);
    free(p->copy);
}

static void check_level(const CheckasmLevel *level, const MotionDsp *c, const MotionDsp *simd)
{
    static const unsigned depths[2][4] = { { 8, 8, 8, 8 }, { 9, 10, 12, 16 } };
    for (unsigned wide = 0; wide < 2; wide++) {
        if (simd->sad[wide] == c->sad[wide]) continue;
        if (!checkasm_begin(wide ? "motion_sad_16" : "motion_sad_8", level)) continue;
        for (unsigned d = 0; d < (wide ? 4u : 1u); d++)
            for (unsigned fill = 0; fill < FILLS; fill++) {
                if ((fill == FILL_WORDS || fill == FILL_WORDS14 || fill == FILL_LATE_WORD) && !wide)
                    continue;
                for (unsigned wi = 0; wi < sizeof(widths) / sizeof(*widths); wi++)
                    for (unsigned hi = 0; hi < sizeof(heights) / sizeof(*heights); hi++) {
                        const unsigned w = widths[wi], h = heights[hi], bits = depths[wide][d];
                        Picture a, b;
                        picture_make(&a, w, h, bits, (enum Fill)fill, false);
                        picture_make(&b, w, h, bits, (enum Fill)fill, true);
                        void *row_c = checkasm_alloc(MOTION_ROW_BUFFER_BYTES(w));
                        void *row_s = checkasm_alloc(MOTION_ROW_BUFFER_BYTES(w));
                        const uint64_t sc = c->sad[wide](a.data, a.stride, b.data, b.stride, w, h, bits, row_c);
                        const uint64_t ss = simd->sad[wide](a.data, a.stride, b.data, b.stride, w, h, bits, row_s);
                        if (!checkasm_check_equal(&ss, &sc, sizeof(sc), "sad"))
                            checkasm_fail("  %u bits, %s, %ux%u: %llu, C %llu", bits,
                                          fill_names[fill], w, h, (unsigned long long)ss,
                                          (unsigned long long)sc);
                        picture_check_and_free(&a, "earlier picture (input)");
                        picture_check_and_free(&b, "current picture (input)");
                        checkasm_free(row_c);
                        checkasm_free(row_s);
                    }
            }
        checkasm_end();
    }
}

/* --bench: a 1080p pair of random pictures. */
static void bench(const CheckasmLevel *levels, unsigned count, const MotionDsp *c)
{
    enum { W = 1920, H = 1080 };
    for (unsigned wide = 0; wide < 2; wide++) {
        const unsigned bits = wide ? 10 : 8;
        Picture a, b;
        picture_make(&a, W, H, bits, FILL_RANDOM, false);
        picture_make(&b, W, H, bits, FILL_RANDOM, true);
        void *row = checkasm_alloc(MOTION_ROW_BUFFER_BYTES(W));
        uint64_t sink = 0;
        for (unsigned l = 0; l < count; l++) {
            MotionDsp dsp, below;
            motion_dsp_init(&dsp, levels[l].flags);
            motion_dsp_init(&below, l > 0 ? levels[l - 1].flags : 0);
            if (l > 0 && (dsp.sad[wide] == c->sad[wide] || dsp.sad[wide] == below.sad[wide])) continue;
            if (!checkasm_begin(wide ? "motion_sad_16 1080p" : "motion_sad_8 1080p", &levels[l]))
                continue;
            CHECKASM_BENCH(sink += dsp.sad[wide](a.data, a.stride, b.data, b.stride, W, H, bits, row));
            checkasm_end();
        }
        (void)sink;
        picture_check_and_free(&a, "earlier picture (input)");
        picture_check_and_free(&b, "current picture (input)");
        checkasm_free(row);
    }
}

void checkasm_check_integer_motion(void)
{
    unsigned count;
    const CheckasmLevel *levels = checkasm_levels(&count);
    MotionDsp c, previous;
    motion_dsp_init(&c, 0);
    previous = c;
    for (unsigned l = 1; l < count; l++) {
        MotionDsp simd;
        motion_dsp_init(&simd, levels[l].flags);
        /* a level that adds no kernel of its own was checked as the one before */
        if (memcmp(&simd, &previous, sizeof(simd))) check_level(&levels[l], &c, &simd);
        previous = simd;
    }
    if (checkasm_bench_enabled()) bench(levels, count, &c);
}
