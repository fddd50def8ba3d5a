/*
 * The pictures and options cambi's GPU twins are checked on, against the C
 * reference: tests/test_cambi_cuda_host.cpp (the CUDA twin's kernels on the
 * CPU) and tests/test_cambi_vulkan.c (the Vulkan twin on a device).  C and
 * C++.  The includer defines `uint32_t rng(void)`, the random stream the
 * pictures are drawn from, before including this.
 */
#ifndef QUALE_TESTS_CAMBI_CASES_H
#define QUALE_TESTS_CAMBI_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "quale/quale.h"
#include "samples.h"

/* ---- pictures -------------------------------------------------------------- */

typedef enum CambiPattern {
    P_BANDS,   /* a quantised gradient: plateaus a few codes apart */
    P_BLOCKS,  /* constant blocks of close values: many runs */
    P_STRIPES, /* stripes of two close values: large c-values everywhere */
    P_MIXED,   /* tiles of every kind, bright and dark */
    P_NOISE,   /* nothing masked */
    P_FLAT,    /* everything masked, no contrast */
    P_WIDE,    /* blocks with samples above the bit depth */
    P_PATTERNS
} CambiPattern;

static const char *const cambi_pattern_names[] = { "bands", "blocks", "stripes", "mixed",
                                                   "noise", "flat",   "wide" };

static inline unsigned cambi_case_max(const QualePicture *p)
{
    return (1u << p->format.bitdepth) - 1;
}

/* A dark base value (where the visibility thresholds let c-values be
 * non-zero), in the picture's codes. */
static inline unsigned cambi_case_dark_base(const QualePicture *p)
{
    return (20 + rng() % 90) << (p->format.bitdepth - 8);
}

static inline unsigned cambi_case_tile(const QualePicture *p, unsigned kind, unsigned x,
                                       unsigned y, unsigned base, unsigned period,
                                       unsigned block, unsigned seed)
{
    const unsigned max = cambi_case_max(p);
    switch (kind) {
    case 0: /* bands along a diagonal */
        return clip((long)base + (long)((x * (seed % 3 + 1) + y * (seed / 3 % 3)) /
                                                   period), max);
    case 1: { /* blocks */
        const uint32_t h = (x / block) * 0x9e3779b1u ^ (y / block) * 0x85ebca77u ^ seed;
        return clip((long)base + (long)((h >> 7) % 5), max);
    }
    case 2: /* stripes */
        return clip((long)base + (long)((x / period) % 2) * (long)(seed % 2 + 1), max);
    case 3: return rng() % (max + 1);
    default: return base;
    }
}

/* The luma of p drawn as pattern (chroma 0). */
static inline void cambi_fill_picture(QualePicture *p, CambiPattern pattern)
{
    const unsigned max = cambi_case_max(p);
    const unsigned w = p->plane_width[0], h = p->plane_height[0];
    const unsigned base = cambi_case_dark_base(p), period = 3 + rng() % 40,
                   block = 2 + rng() % 15;
    const unsigned seed = rng();
    for (unsigned y = 0; y < h; y++) {
        for (unsigned x = 0; x < w; x++) {
            unsigned v;
            switch (pattern) {
            case P_BANDS: v = cambi_case_tile(p, 0, x, y, base, period, block, seed); break;
            case P_BLOCKS: v = cambi_case_tile(p, 1, x, y, base, period, block, seed); break;
            case P_STRIPES: v = cambi_case_tile(p, 2, x, y, base, period, block, seed); break;
            case P_MIXED: {
                /* 40 x 24 tiles of a kind each; some bright (beyond every
                 * visibility threshold) */
                const uint32_t t = (x / 40) * 0x27d4eb2du ^ (y / 24) * 0x165667b1u ^ seed;
                const unsigned kind = (t >> 5) % 5;
                const unsigned b = (t >> 11) % 4 == 0 ? max - max / 8 : base + ((t >> 13) % 8);
                v = cambi_case_tile(p, kind, x, y, b, period, block, t);
                /* scattered extremes */
                if ((rng() & 1023) == 0) v = rng() & 1 ? max : 0;
                break;
            }
            case P_NOISE: v = rng() % (max + 1); break;
            case P_FLAT: v = base; break;
            default: {
                /* blocks of 16-bit samples (above the bit depth: the API
                 * lets them through) and of dark bands */
                const uint32_t t = (x / 8) * 0x9e3779b1u ^ (y / 8) * 0x85ebca77u ^ seed;
                v = (t >> 9) % 3 == 0 ? (t >> 3) & 0xffffu
                                      : cambi_case_tile(p, 0, x, y, base, period, block, seed);
                if (p->format.bitdepth == 8) v &= 0xff;
                break;
            }
            }
            put(p, 0, x, y, v);
        }
    }
    for (unsigned plane = 1; plane < p->plane_count; plane++)
        for (unsigned y = 0; y < p->plane_height[plane]; y++)
            for (unsigned x = 0; x < p->plane_width[plane]; x++) put(p, plane, x, y, 0);
}

/* ---- options --------------------------------------------------------------- */

/* Option sets; "@enc" and "@src" become an encoding or source size of
 * about 3/4 of the picture's (cambi_option_spec). */
static const char *const cambi_option_sets[] = {
    "cambi",
    "cambi=window_size=15",
    "cambi=topk=0.0001",
    "cambi=tvi_threshold=0.1:max_log_contrast=3",
    "cambi=max_log_contrast=0",
    "cambi=max_log_contrast=5:cambi_topk=0.9",
    "cambi=eotf=pq",
    "cambi=cambi_eotf=pq:tvi_threshold=0.5:window_size=90",
    "cambi=full_ref=true",
    "cambi=full_ref=true:window_size=40:topk=0.3",
    "cambi=enc_bitdepth=8",
    "cambi=cambi_vis_lum_threshold=20:cambi_max_val=0.05",
    "cambi=tvi_threshold=0.0001",
    "cambi=cambi_vis_lum_threshold=300",
    "cambi=@enc",
    "cambi=full_ref=true:@src:max_log_contrast=1",
    "cambi=cambi_high_res_speedup=1080:topk=0.05",
    "cambi=window_size=127",
};

/* Option set o for a w x h picture, with its sizes filled in. */
static inline void cambi_option_spec(char *out, size_t size, unsigned o, unsigned w, unsigned h)
{
    const char *set = cambi_option_sets[o];
    const unsigned ew = w * 3 / 4 < 180 ? 180 : w * 3 / 4, eh = h * 3 / 4 < 150 ? 150 : h * 3 / 4;
    const char *at = strchr(set, '@');
    if (!at) {
        snprintf(out, size, "%s", set);
    } else if (!strncmp(at, "@enc", 4)) {
        snprintf(out, size, "%.*senc_width=%u:enc_height=%u%s", (int)(at - set), set, ew, eh,
                 at + 4);
    } else {
        snprintf(out, size, "%.*ssrc_width=%u:src_height=%u%s", (int)(at - set), set,
                 ew < 320 ? 320 : ew, eh < 200 ? 200 : eh, at + 4);
    }
}

enum { CAMBI_OPTION_SETS = sizeof(cambi_option_sets) / sizeof(cambi_option_sets[0]) };
#define CAMBI_ALL_SETS ((1u << CAMBI_OPTION_SETS) - 1)
#define CAMBI_SET(k) (1u << (k))

/* ---- cases ----------------------------------------------------------------- */

typedef struct CambiCase {
    unsigned w, h, bitdepth;
    enum QualeChroma chroma;
    CambiPattern dist, ref; /* a case's odd frames are ref's pattern */
    unsigned options;       /* bit per option set */
    unsigned frames;
    bool large;             /* left out by --quick */
} CambiCase;

/* Shorter: option sets a, b, ... */
#define S_(k) CAMBI_SET(k)

static const CambiCase cambi_fixed_cases[] = {
    /* the thinnest pictures the reference scores */
    { 216, 1, 8, QUALE_CHROMA_444, P_BANDS, P_BLOCKS, S_(0) | S_(1) | S_(4) | S_(8), 2, false },
    { 1, 216, 10, QUALE_CHROMA_444, P_STRIPES, P_BANDS, S_(0) | S_(2) | S_(5), 2, false },
    { 216, 2, 12, QUALE_CHROMA_444, P_MIXED, P_BANDS, S_(0) | S_(3), 2, false },
    { 3, 300, 8, QUALE_CHROMA_444, P_BLOCKS, P_FLAT, S_(0) | S_(9), 2, false },
    { 300, 7, 9, QUALE_CHROMA_444, P_BANDS, P_STRIPES, S_(0) | S_(6), 2, false },
    { 217, 219, 8, QUALE_CHROMA_444, P_BANDS, P_MIXED, CAMBI_ALL_SETS & ~S_(16), 2, false },
    { 216, 216, 10, QUALE_CHROMA_420, P_BLOCKS, P_BANDS, CAMBI_ALL_SETS & ~S_(16), 2, false },
    { 341, 239, 12, QUALE_CHROMA_444, P_MIXED, P_STRIPES, CAMBI_ALL_SETS & ~S_(16), 2, false },
    { 400, 300, 16, QUALE_CHROMA_420, P_WIDE, P_BANDS, S_(0) | S_(3) | S_(8) | S_(10) | S_(14), 2,
      false },
    { 333, 250, 9, QUALE_CHROMA_444, P_FLAT, P_NOISE, S_(0) | S_(8) | S_(11), 2, false },
    { 320, 240, 8, QUALE_CHROMA_420, P_NOISE, P_FLAT, S_(0) | S_(2) | S_(8), 2, false },
    { 640, 360, 8, QUALE_CHROMA_420, P_MIXED, P_BANDS,
      S_(0) | S_(2) | S_(7) | S_(9) | S_(14) | S_(15), 2, false },
    { 640, 360, 10, QUALE_CHROMA_420, P_BANDS, P_MIXED, S_(0) | S_(10) | S_(12) | S_(15), 2,
      false },
    { 720, 480, 16, QUALE_CHROMA_444, P_WIDE, P_MIXED, S_(0) | S_(6), 1, false },
    /* banding everywhere with the largest window the picture allows:
     * sums of c-values that are not exact in any order */
    { 1280, 720, 8, QUALE_CHROMA_420, P_STRIPES, P_BANDS, S_(0) | S_(17), 1, true },
    { 1920, 1080, 8, QUALE_CHROMA_420, P_MIXED, P_BANDS, S_(0) | S_(16), 1, true },
    { 1920, 1080, 10, QUALE_CHROMA_420, P_BANDS, P_BANDS, S_(16), 1, true },
    /* window 65, the largest: a window's run starts fill 64 bits */
    { 1920, 1104, 10, QUALE_CHROMA_420, P_BLOCKS, P_BANDS, S_(17), 1, true },
};

#undef S_

/* A random case: size (at least 216 in one direction), depth, patterns, the
 * defaults and one more option set. */
static inline CambiCase cambi_random_case(void)
{
    static const unsigned depths[] = { 8, 8, 9, 10, 10, 12, 12, 16 };
    CambiCase c;
    const bool wide = rng() % 2;
    c.w = wide ? 216 + rng() % 300 : 1 + rng() % 300;
    c.h = wide ? 1 + rng() % 300 : 216 + rng() % 300;
    c.bitdepth = depths[rng() % 8];
    c.chroma = (c.w % 2 || c.h % 2) ? QUALE_CHROMA_444 : QUALE_CHROMA_420;
    c.dist = (CambiPattern)(rng() % P_PATTERNS);
    c.ref = (CambiPattern)(rng() % P_PATTERNS);
    c.options = CAMBI_SET(0) | (1u << (rng() % (CAMBI_OPTION_SETS - 1)));
    c.frames = 2;
    c.large = false;
    return c;
}

#endif /* QUALE_TESTS_CAMBI_CASES_H */
