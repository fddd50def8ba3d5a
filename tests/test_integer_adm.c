/*
 * Tests of integer ADM ("adm") through the public API.
 *
 * The golden corpus covers the default options and adm_enhn_gain_limit=1 on
 * real pictures; this covers the rest against values computed by libvmaf
 * itself (its C code, commit f85a8536) on the synthetic clips below:
 * awkward sizes, 8 to 16 bits, samples above the bit depth, every option
 * family (CSF modes, viewing geometry, skips, noise weight, weights) and
 * the debug keys.  Every key of every frame must match to the bit, with 1
 * and 3 threads.  The row bands of a level change no sum: every band size
 * against one band, and larger pictures at 1 to 8 threads.  Also: pictures
 * too small for the four DWT levels, and options libvmaf cannot score, are
 * errors with a message.
 *
 * To regenerate the expected values: run this program with --dump DIR; it
 * writes every clip as raw 4:4:4 (DIR/case<N>_{ref,dis}.yuv) and prints
 * the libvmaf command of each; paste libvmaf's values into `expected`.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "metrics/integer_adm/integer_adm.h"
#include "option.h"
#include "quale/quale.h"
#include "test.h"

#define MAX_FRAMES 3
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- clips ----------------------------------------------------------------- */

static uint64_t rng_state;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

enum Pattern {
    PATTERN_NOISE,    /* uniform over the bit depth */
    PATTERN_TEXTURE,  /* ramps and stripes with a little noise */
    PATTERN_EXTREME,  /* 0 or the maximum */
    PATTERN_WIDE,     /* any uint16_t, above the bit depth */
    PATTERN_FLAT,
};

enum Distortion {
    DISTORT_NOISE,    /* the reference plus small noise */
    DISTORT_SHARPEN,  /* the reference plus its Laplacian: enhancement */
    DISTORT_RANDOM,   /* unrelated noise */
};

typedef struct Case {
    unsigned w, h, bitdepth, frames;
    enum Pattern pattern;
    enum Distortion distortion;
    const char *spec;
} Case;

static const Case cases[] = {
    { 33, 33, 8, 2, PATTERN_NOISE, DISTORT_NOISE, "adm=debug=true" },
    { 64, 48, 10, 2, PATTERN_TEXTURE, DISTORT_NOISE,
      "adm=adm_enhn_gain_limit=1.2:adm_skip_scale0=true" },
    { 47, 35, 12, 2, PATTERN_EXTREME, DISTORT_RANDOM, "adm=adm_csf_mode=2" },
    { 70, 41, 16, 2, PATTERN_NOISE, DISTORT_NOISE,
      "adm=adm_csf_mode=1:adm_csf_scale=50:adm_csf_diag_scale=0.3" },
    { 40, 36, 8, 2, PATTERN_TEXTURE, DISTORT_SHARPEN,
      "adm=adm_csf_mode=3:adm_ref_display_height=2160:adm_norm_view_dist=1.5" },
    { 37, 66, 10, 2, PATTERN_WIDE, DISTORT_RANDOM,
      "adm=adm_noise_weight=0:adm_skip_aim=true:adm_min_val=0.5:adm_dlm_weight=0.25" },
    { 129, 34, 16, 1, PATTERN_TEXTURE, DISTORT_SHARPEN,
      "adm=adm_norm_view_dist=4.2:adm_ref_display_height=1000" },
    { 35, 40, 8, 1, PATTERN_TEXTURE, DISTORT_SHARPEN, "adm=adm_noise_weight=7.5:adm_csf_mode=1" },
};

static unsigned clip(int v, unsigned max)
{
    return v < 0 ? 0 : (unsigned)v > max ? max : (unsigned)v;
}

static unsigned get(const QualePicture *p, unsigned x, unsigned y)
{
    const uint8_t *row = (const uint8_t *)p->data[0] + (ptrdiff_t)y * p->stride[0];
    return p->format.bitdepth > 8 ? ((const uint16_t *)row)[x] : row[x];
}

static void put(QualePicture *p, unsigned plane, unsigned x, unsigned y, unsigned v)
{
    uint8_t *row = (uint8_t *)p->data[plane] + (ptrdiff_t)y * p->stride[plane];
    if (p->format.bitdepth > 8) ((uint16_t *)row)[x] = (uint16_t)v;
    else row[x] = (uint8_t)v;
}

static void fill_reference(QualePicture *p, enum Pattern pattern, unsigned frame)
{
    const unsigned max = (1u << p->format.bitdepth) - 1, w = p->format.width;
    const unsigned h = p->format.height;
    for (unsigned y = 0; y < h; y++) {
        for (unsigned x = 0; x < w; x++) {
            unsigned v;
            switch (pattern) {
            case PATTERN_TEXTURE: {
                const unsigned stripe = ((x * 37 + y * 23 + frame * 11) % 64) * (max / 128);
                const unsigned grain = rng() % (max / 32 + 1);
                v = clip((int)(max / 4 + stripe + (x * y % 7) * (max / 64) + grain), max);
                break;
            }
            case PATTERN_EXTREME: v = (rng() & 1) ? max : 0; break;
            case PATTERN_WIDE: v = rng() & 0xffff; break;
            case PATTERN_FLAT: v = max / 3; break;
            default: v = rng() % (max + 1); break;
            }
            put(p, 0, x, y, v);
        }
    }
}

static void fill_distorted(QualePicture *d, const QualePicture *r, enum Distortion distortion)
{
    const unsigned bd = r->format.bitdepth, w = r->format.width, h = r->format.height;
    const unsigned max = (1u << bd) - 1;
    /* samples above the bit depth stay what they are: any uint16_t */
    const unsigned top = bd > 8 ? 0xffff : max;
    for (unsigned y = 0; y < h; y++) {
        for (unsigned x = 0; x < w; x++) {
            const int c = (int)get(r, x, y);
            int v;
            switch (distortion) {
            case DISTORT_SHARPEN: {
                const int lap = 4 * c - (int)get(r, x ? x - 1 : 1, y) -
                                (int)get(r, x + 1 < w ? x + 1 : w - 2, y) -
                                (int)get(r, x, y ? y - 1 : 1) -
                                (int)get(r, x, y + 1 < h ? y + 1 : h - 2);
                v = c + lap / 3;
                break;
            }
            case DISTORT_RANDOM: v = (int)(rng() % (max + 1)); break;
            default: v = c + (int)(rng() % (max / 16 + 1)) - (int)(max / 32); break;
            }
            put(d, 0, x, y, clip(v, top));
        }
    }
}

typedef struct Video {
    QualeVideoFormat format;
    unsigned frames;
    QualePicture ref[MAX_FRAMES], dist[MAX_FRAMES];
} Video;

static void neutral_chroma(QualePicture *p)
{
    for (unsigned plane = 1; plane < p->plane_count; plane++)
        for (unsigned y = 0; y < p->plane_height[plane]; y++)
            for (unsigned x = 0; x < p->plane_width[plane]; x++)
                put(p, plane, x, y, 1u << (p->format.bitdepth - 1));
}

static int video_make(Video *v, const Case *c, unsigned index)
{
    memset(v, 0, sizeof(*v));
    v->format = (QualeVideoFormat){ .chroma = QUALE_CHROMA_444, .bitdepth = c->bitdepth,
                                    .width = c->w, .height = c->h };
    v->frames = c->frames;
    rng_state = 0x9e3779b97f4a7c15ull + index;
    for (unsigned i = 0; i < c->frames; i++) {
        if (quale_picture_alloc(&v->ref[i], &v->format) ||
            quale_picture_alloc(&v->dist[i], &v->format))
            return -ENOMEM;
        fill_reference(&v->ref[i], c->pattern, i);
        fill_distorted(&v->dist[i], &v->ref[i], c->distortion);
        neutral_chroma(&v->ref[i]);
        neutral_chroma(&v->dist[i]);
    }
    return 0;
}

static void video_free(Video *v)
{
    for (unsigned i = 0; i < v->frames; i++) {
        quale_picture_unref(&v->ref[i]);
        quale_picture_unref(&v->dist[i]);
    }
}

/* ---- libvmaf's values ------------------------------------------------------ */

typedef struct Expected {
    unsigned case_index, frame;
    const char *key;
    double value;
} Expected;

/* libvmaf f85a8536 (C code, -Denable_asm=false), printed with %a. */
static const Expected expected[] = {
    { 0, 0, "integer_adm2", 0x1.f2c11d810c8d1p-1 },
    { 0, 0, "integer_aim", 0x0.0p+0 },
    { 0, 0, "integer_adm3", 0x1.f9608ec086468p-1 },
    { 0, 0, "integer_adm_scale0", 0x1.f87398ceb3ea6p-1 },
    { 0, 0, "integer_adm_scale1", 0x1.f5a568824411bp-1 },
    { 0, 0, "integer_adm_scale2", 0x1.f3431e458da6ap-1 },
    { 0, 0, "integer_adm_scale3", 0x1.ea12c7a8b44d9p-1 },
    { 0, 0, "integer_adm", 0x1.f2c11d810c8d1p-1 },
    { 0, 0, "integer_adm_num", 0x1.df31080000000p+6 },
    { 0, 0, "integer_adm_den", 0x1.ebeaea0000000p+6 },
    { 0, 0, "integer_adm_num_scale0", 0x1.9f9d3c0000000p+4 },
    { 0, 0, "integer_adm_den_scale0", 0x1.a5d5540000000p+4 },
    { 0, 0, "integer_adm_num_scale1", 0x1.0d23d00000000p+5 },
    { 0, 0, "integer_adm_den_scale1", 0x1.12b1e40000000p+5 },
    { 0, 0, "integer_adm_num_scale2", 0x1.ee54080000000p+4 },
    { 0, 0, "integer_adm_den_scale2", 0x1.faf0b00000000p+4 },
    { 0, 0, "integer_adm_num_scale3", 0x1.d48b3c0000000p+4 },
    { 0, 0, "integer_adm_den_scale3", 0x1.e981dc0000000p+4 },
    { 0, 1, "integer_adm2", 0x1.f42e1dbba92f8p-1 },
    { 0, 1, "integer_aim", 0x0.0p+0 },
    { 0, 1, "integer_adm3", 0x1.fa170eddd497cp-1 },
    { 0, 1, "integer_adm_scale0", 0x1.f789a4d908d80p-1 },
    { 0, 1, "integer_adm_scale1", 0x1.f4d19ac84c741p-1 },
    { 0, 1, "integer_adm_scale2", 0x1.f3e12693f0525p-1 },
    { 0, 1, "integer_adm_scale3", 0x1.f0b294178bae1p-1 },
    { 0, 1, "integer_adm", 0x1.f42e1dbba92f8p-1 },
    { 0, 1, "integer_adm_num", 0x1.b9c0db0000000p+6 },
    { 0, 1, "integer_adm_den", 0x1.c431480000000p+6 },
    { 0, 1, "integer_adm_num_scale0", 0x1.aa739e0000000p+4 },
    { 0, 1, "integer_adm_den_scale0", 0x1.b19e540000000p+4 },
    { 0, 1, "integer_adm_num_scale1", 0x1.d06e9c0000000p+4 },
    { 0, 1, "integer_adm_den_scale1", 0x1.dacd0a0000000p+4 },
    { 0, 1, "integer_adm_num_scale2", 0x1.a656160000000p+4 },
    { 0, 1, "integer_adm_den_scale2", 0x1.b0939c0000000p+4 },
    { 0, 1, "integer_adm_num_scale3", 0x1.c5cb1c0000000p+4 },
    { 0, 1, "integer_adm_den_scale3", 0x1.d3c6260000000p+4 },
    { 1, 0, "integer_adm2_egl_1.2_ssz", 0x1.ceed3e6486fc8p-1 },
    { 1, 0, "integer_aim_egl_1.2_ssz", 0x1.12648326a285dp-5 },
    { 1, 0, "integer_adm3_egl_1.2_ssz", 0x1.dee37b190e6a1p-1 },
    { 1, 0, "integer_adm_scale0_egl_1.2_ssz", 0x0.0p+0 },
    { 1, 0, "integer_adm_scale1_egl_1.2_ssz", 0x1.dd650578c4d69p-1 },
    { 1, 0, "integer_adm_scale2_egl_1.2_ssz", 0x1.cc4687fb302d1p-1 },
    { 1, 0, "integer_adm_scale3_egl_1.2_ssz", 0x1.9b6036407a16fp-1 },
    { 1, 1, "integer_adm2_egl_1.2_ssz", 0x1.d510037731ab4p-1 },
    { 1, 1, "integer_aim_egl_1.2_ssz", 0x1.7023537bd031ep-6 },
    { 1, 1, "integer_adm3_egl_1.2_ssz", 0x1.e4c7746da994ep-1 },
    { 1, 1, "integer_adm_scale0_egl_1.2_ssz", 0x0.0p+0 },
    { 1, 1, "integer_adm_scale1_egl_1.2_ssz", 0x1.dfd17f31a5c77p-1 },
    { 1, 1, "integer_adm_scale2_egl_1.2_ssz", 0x1.cd7353fe06f65p-1 },
    { 1, 1, "integer_adm_scale3_egl_1.2_ssz", 0x1.bc8c6737633ecp-1 },
    { 2, 0, "integer_adm2_csf_2", 0x1.6882946dfbc22p-2 },
    { 2, 0, "integer_aim_csf_2", 0x1.81772e8c98c31p-2 },
    { 2, 0, "integer_adm3_csf_2", 0x1.f385b2f0b17f9p-2 },
    { 2, 0, "integer_adm_scale0_csf_2", 0x1.8fe08ff3687b8p-2 },
    { 2, 0, "integer_adm_scale1_csf_2", 0x1.50a1509ebb770p-2 },
    { 2, 0, "integer_adm_scale2_csf_2", 0x1.87944600bb265p-2 },
    { 2, 0, "integer_adm_scale3_csf_2", 0x1.2de0382b7af45p-2 },
    { 2, 1, "integer_adm2_csf_2", 0x1.5065362f2ea18p-2 },
    { 2, 1, "integer_aim_csf_2", 0x1.a1c9b48a7c84cp-2 },
    { 2, 1, "integer_adm3_csf_2", 0x1.d74dc0d2590e6p-2 },
    { 2, 1, "integer_adm_scale0_csf_2", 0x1.968b335abe904p-2 },
    { 2, 1, "integer_adm_scale1_csf_2", 0x1.5b203de814df9p-2 },
    { 2, 1, "integer_adm_scale2_csf_2", 0x1.3a31f9481d58dp-2 },
    { 2, 1, "integer_adm_scale3_csf_2", 0x1.1a9fc6bc8c898p-2 },
    { 3, 0, "integer_adm2_scfd_0.3_csf_1_scf_50", 0x1.5f070d7587fe5p-11 },
    { 3, 0, "integer_aim_scfd_0.3_csf_1_scf_50", 0x0.0p+0 },
    { 3, 0, "integer_adm3_scfd_0.3_csf_1_scf_50", 0x1.002be0e1aeb10p-1 },
    { 3, 0, "integer_adm_scale0_scfd_0.3_csf_1_scf_50", 0x1.1240cae08190ep-11 },
    { 3, 0, "integer_adm_scale1_scfd_0.3_csf_1_scf_50", 0x1.9d7de181e8ebdp-11 },
    { 3, 0, "integer_adm_scale2_scfd_0.3_csf_1_scf_50", 0x1.7a465b973a3d8p-11 },
    { 3, 0, "integer_adm_scale3_scfd_0.3_csf_1_scf_50", 0x1.3c1443a462c01p-11 },
    { 3, 1, "integer_adm2_scfd_0.3_csf_1_scf_50", NAN },
    { 3, 1, "integer_aim_scfd_0.3_csf_1_scf_50", 0x0.0p+0 },
    { 3, 1, "integer_adm3_scfd_0.3_csf_1_scf_50", 0x0.0p+0 },
    { 3, 1, "integer_adm_scale0_scfd_0.3_csf_1_scf_50", 0x1.1018bb3d71902p-11 },
    { 3, 1, "integer_adm_scale1_scfd_0.3_csf_1_scf_50", NAN },
    { 3, 1, "integer_adm_scale2_scfd_0.3_csf_1_scf_50", 0x1.788d353ca6bedp-11 },
    { 3, 1, "integer_adm_scale3_scfd_0.3_csf_1_scf_50", 0x1.34057456da3ecp-11 },
    { 4, 0, "integer_adm2_csf_3_nvd_1.5_rdh_2160", 0x1.e35333d16b5c0p-1 },
    { 4, 0, "integer_aim_csf_3_nvd_1.5_rdh_2160", 0x1.59ed1d4bad5c7p-3 },
    { 4, 0, "integer_adm3_csf_3_nvd_1.5_rdh_2160", 0x1.c66bf63f40027p-1 },
    { 4, 0, "integer_adm_scale0_csf_3_nvd_1.5_rdh_2160", 0x1.dab6112d67ed4p-1 },
    { 4, 0, "integer_adm_scale1_csf_3_nvd_1.5_rdh_2160", 0x1.f27f774cf89a0p-1 },
    { 4, 0, "integer_adm_scale2_csf_3_nvd_1.5_rdh_2160", 0x1.e4d9aa8e1c67ep-1 },
    { 4, 0, "integer_adm_scale3_csf_3_nvd_1.5_rdh_2160", 0x1.d458d36800e87p-1 },
    { 4, 1, "integer_adm2_csf_3_nvd_1.5_rdh_2160", 0x1.e8aed95fda6eep-1 },
    { 4, 1, "integer_aim_csf_3_nvd_1.5_rdh_2160", 0x1.5d209c095feecp-3 },
    { 4, 1, "integer_adm3_csf_3_nvd_1.5_rdh_2160", 0x1.c8b3592ec139ap-1 },
    { 4, 1, "integer_adm_scale0_csf_3_nvd_1.5_rdh_2160", 0x1.d81e4be1e6f7ap-1 },
    { 4, 1, "integer_adm_scale1_csf_3_nvd_1.5_rdh_2160", 0x1.fcbfa1fcb0604p-1 },
    { 4, 1, "integer_adm_scale2_csf_3_nvd_1.5_rdh_2160", 0x1.eee3747d42656p-1 },
    { 4, 1, "integer_adm_scale3_csf_3_nvd_1.5_rdh_2160", 0x1.dbf1301ed17a9p-1 },
    { 5, 0, "integer_adm2_dlmw_0.25_min_0.5_nw_0", 0x1.63f6c2ca31f08p-3 },
    { 5, 0, "integer_aim_dlmw_0.25_min_0.5_nw_0", 0x0.0p+0 },
    { 5, 0, "integer_adm3_dlmw_0.25_min_0.5_nw_0", 0x1.963f6c2ca31f0p-1 },
    { 5, 0, "integer_adm_scale0_dlmw_0.25_min_0.5_nw_0", 0x1.c2e825c975404p-3 },
    { 5, 0, "integer_adm_scale1_dlmw_0.25_min_0.5_nw_0", 0x1.b971c65093561p-3 },
    { 5, 0, "integer_adm_scale2_dlmw_0.25_min_0.5_nw_0", 0x1.46a4237a15c75p-3 },
    { 5, 0, "integer_adm_scale3_dlmw_0.25_min_0.5_nw_0", 0x1.b3fa3f4256522p-4 },
    { 5, 1, "integer_adm2_dlmw_0.25_min_0.5_nw_0", 0x1.b6b4ca69b89c5p-3 },
    { 5, 1, "integer_aim_dlmw_0.25_min_0.5_nw_0", 0x0.0p+0 },
    { 5, 1, "integer_adm3_dlmw_0.25_min_0.5_nw_0", 0x1.9b6b4ca69b89cp-1 },
    { 5, 1, "integer_adm_scale0_dlmw_0.25_min_0.5_nw_0", 0x1.085889bbec765p-2 },
    { 5, 1, "integer_adm_scale1_dlmw_0.25_min_0.5_nw_0", 0x1.fc7ae315c18b0p-3 },
    { 5, 1, "integer_adm_scale2_dlmw_0.25_min_0.5_nw_0", 0x1.b9c534ff56450p-3 },
    { 5, 1, "integer_adm_scale3_dlmw_0.25_min_0.5_nw_0", 0x1.fefbe3cf7f5f5p-4 },
    { 6, 0, "integer_adm2_nvd_4.2_rdh_1000", 0x1.990517f39168cp-1 },
    { 6, 0, "integer_aim_nvd_4.2_rdh_1000", 0x1.37ef2d6210e97p-2 },
    { 6, 0, "integer_adm3_nvd_4.2_rdh_1000", 0x1.7e86c0a1447a0p-1 },
    { 6, 0, "integer_adm_scale0_nvd_4.2_rdh_1000", 0x1.a1ba736d724adp-1 },
    { 6, 0, "integer_adm_scale1_nvd_4.2_rdh_1000", 0x1.b42ede643671bp-1 },
    { 6, 0, "integer_adm_scale2_nvd_4.2_rdh_1000", 0x1.85bd0e7a72095p-1 },
    { 6, 0, "integer_adm_scale3_nvd_4.2_rdh_1000", 0x1.5b26416e7e925p-1 },
    { 7, 0, "integer_adm2_csf_1_nw_7.5", 0x1.7a8d4efbd6824p-5 },
    { 7, 0, "integer_aim_csf_1_nw_7.5", 0x1.0b5c02a1430c4p-8 },
    { 7, 0, "integer_adm3_csf_1_nw_7.5", 0x1.0ac90e753d710p-1 },
    { 7, 0, "integer_adm_scale0_csf_1_nw_7.5", 0x1.3b5ecd6f9a14cp-4 },
    { 7, 0, "integer_adm_scale1_csf_1_nw_7.5", 0x1.c206282fcdc32p-6 },
    { 7, 0, "integer_adm_scale2_csf_1_nw_7.5", 0x1.b6dbb36bef608p-5 },
    { 7, 0, "integer_adm_scale3_csf_1_nw_7.5", 0x1.54da8e84b70bep-5 },
};

/* ---- running quale --------------------------------------------------------- */

static char last_error[256];

static void keep_errors(void *cookie, enum QualeLogLevel level, const char *message)
{
    (void)cookie;
    if (level == QUALE_LOG_ERROR && !last_error[0])
        snprintf(last_error, sizeof(last_error), "%s", message);
}

static int run(QualeContext **ctx, const Video *v, const char *spec, unsigned threads)
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = threads;
    s.log = keep_errors;
    last_error[0] = '\0';
    int err = quale_open(ctx, &s);
    if (err) return err;
    if ((err = quale_use_metric(*ctx, spec))) return err;
    for (unsigned i = 0; i < v->frames && !err; i++) {
        QualePicture r, d;
        quale_picture_ref(&r, &v->ref[i]);
        quale_picture_ref(&d, &v->dist[i]);
        err = quale_send_pictures(*ctx, &r, &d);
    }
    const int flush_err = quale_flush(*ctx);
    return err ? err : flush_err;
}

/* ---- tests ----------------------------------------------------------------- */

static void test_against_libvmaf(void)
{
    for (unsigned c = 0; c < COUNT_OF(cases); c++) {
        Video v;
        CHECK(video_make(&v, &cases[c], c) == 0);
        for (unsigned threads = 1; threads <= 3; threads += 2) {
            QualeContext *ctx = NULL;
            const int err = run(&ctx, &v, cases[c].spec, threads);
            if (err)
                fprintf(stderr, "  case %u (%s): error %d %s\n", c, cases[c].spec, err, last_error);
            CHECK(err == 0);
            unsigned compared = 0;
            for (unsigned i = 0; i < COUNT_OF(expected); i++) {
                const Expected *e = &expected[i];
                if (e->case_index != c) continue;
                double got = -1.0;
                const bool ok = !quale_feature_value(ctx, e->key, e->frame, &got) &&
                                (got == e->value || (got != got && e->value != e->value));
                if (!ok)
                    fprintf(stderr, "  case %u (%s), %u threads: %s frame %u: %a, libvmaf %a\n", c,
                            cases[c].spec, threads, e->key, e->frame, got, e->value);
                CHECK(ok);
                compared++;
            }
            /* every key quale writes is one libvmaf writes */
            CHECK(quale_feature_count(ctx) * v.frames == compared);
            quale_close(&ctx);
        }
        video_free(&v);
    }
}

/* ---- row bands -------------------------------------------------------------- */

static int apply_option(void *cookie, const char *key, const char *value)
{
    const MetricOption *o = option_find(metric_integer_adm.options, key);
    char error[256];
    return o ? option_set(o, cookie, value, error, sizeof(error)) : -EINVAL;
}

/* A state of "adm" for the first picture of v, as the context makes it:
 * defaults, the options of spec, init() with the CPU's kernels. */
static AdmState *adm_state(QualeContext *ctx, const Video *v, const char *spec)
{
    AdmState *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    options_set_defaults(metric_integer_adm.options, s);
    size_t name_len = 0;
    char error[256];
    if (option_spec_split(spec, &name_len, apply_option, s, error, sizeof(error)) ||
        metric_integer_adm.init(s, &v->format, context_sink(ctx))) {
        free(s);
        return NULL;
    }
    return s;
}

/* Every level cut into bands of any size gives one band's 36 sums. */
static void test_band_sizes(void)
{
    QualeContext *ctx = NULL;
    QualeSettings settings;
    quale_settings_default(&settings);
    settings.log = keep_errors;
    CHECK(quale_open(&ctx, &settings) == 0);
    static const unsigned band_rows[] = { 1, 2, 3, 4, 5, 7, 9, 16, 1000 };
    for (unsigned c = 0; c < COUNT_OF(cases); c++) {
        Video v;
        CHECK(video_make(&v, &cases[c], c) == 0);
        AdmState *s = adm_state(ctx, &v, cases[c].spec);
        CHECK(s != NULL);
        if (!s) continue;
        uint64_t whole[ADM_SUMS], banded[ADM_SUMS];
        CHECK(adm_reference_sums(s, &v.ref[0], &v.dist[0], whole) == 0);
        unsigned nonzero = 0;
        for (unsigned i = 0; i < ADM_SUMS; i++) nonzero += whole[i] != 0;
        CHECK(nonzero >= ADM_SUMS / 2); /* something to compare */
        for (unsigned b = 0; b < COUNT_OF(band_rows); b++) {
            memset(banded, 0xA5, sizeof(banded));
            CHECK(adm_reference_sums_banded(s, &v.ref[0], &v.dist[0], band_rows[b], banded) == 0);
            const bool same = !memcmp(whole, banded, sizeof(whole));
            if (!same)
                fprintf(stderr, "  case %u (%s): bands of %u rows change the sums\n", c,
                        cases[c].spec, band_rows[b]);
            CHECK(same);
        }
        free(s);
        video_free(&v);
    }
    quale_close(&ctx);
}

/* Pictures large enough for several bands a level at every thread count:
 * every key of every frame the same bits as with one thread. */
static void test_band_threads(void)
{
    static const Case large[] = {
        { 301, 517, 8, 3, PATTERN_TEXTURE, DISTORT_NOISE, "adm=debug=true" },
        { 260, 611, 10, 2, PATTERN_NOISE, DISTORT_SHARPEN, "adm=adm_enhn_gain_limit=1.2" },
        { 97, 1100, 12, 2, PATTERN_TEXTURE, DISTORT_RANDOM, "adm=adm_skip_scale0=true" },
    };
    for (unsigned c = 0; c < COUNT_OF(large); c++) {
        Video v;
        CHECK(video_make(&v, &large[c], 50 + c) == 0);
        QualeContext *one = NULL;
        CHECK(run(&one, &v, large[c].spec, 1) == 0);
        for (unsigned threads = 2; threads <= 8; threads += 3) {
            QualeContext *many = NULL;
            CHECK(run(&many, &v, large[c].spec, threads) == 0);
            CHECK(quale_feature_count(one) == quale_feature_count(many));
            unsigned same = 0, total = 0;
            for (unsigned k = 0; k < quale_feature_count(one); k++) {
                const char *key = quale_feature_name(one, k);
                for (unsigned i = 0; i < v.frames; i++, total++) {
                    double a = 0, b = 1;
                    CHECK(quale_feature_value(one, key, i, &a) == 0);
                    CHECK(quale_feature_value(many, key, i, &b) == 0);
                    same += !memcmp(&a, &b, sizeof(a));
                }
            }
            if (same != total)
                fprintf(stderr, "  %ux%u (%s), %u threads: %u of %u values differ\n",
                        large[c].w, large[c].h, large[c].spec, threads, total - same, total);
            CHECK(total >= 7 && same == total);
            quale_close(&many);
        }
        quale_close(&one);
        video_free(&v);
    }
}

static void test_flat_reference(void)
{
    /* den is 0 only without noise floor on a flat reference: adm2 is 1, and
     * AIM, which libvmaf leaves uninitialised there, is 0. */
    const Case c = { 40, 40, 8, 1, PATTERN_FLAT, DISTORT_NOISE, "adm=adm_noise_weight=0" };
    Video v;
    CHECK(video_make(&v, &c, 99) == 0);
    QualeContext *ctx = NULL;
    CHECK(run(&ctx, &v, c.spec, 1) == 0);
    double adm2 = 0, aim = -1, adm3 = 0;
    CHECK(quale_feature_value(ctx, "integer_adm2_nw_0", 0, &adm2) == 0 && adm2 == 1.0);
    CHECK(quale_feature_value(ctx, "integer_aim_nw_0", 0, &aim) == 0 && aim == 0.0);
    CHECK(quale_feature_value(ctx, "integer_adm3_nw_0", 0, &adm3) == 0 && adm3 == 1.0);
    quale_close(&ctx);
    video_free(&v);
}

static void test_refusals(void)
{
    /* Too small for four DWT levels (libvmaf reads outside the picture). */
    static const unsigned small[][2] = {
        { 1, 1 }, { 2, 2 }, { 17, 9 }, { 32, 32 }, { 32, 40 }, { 40, 32 },
    };
    for (unsigned i = 0; i < COUNT_OF(small); i++) {
        const Case c = { small[i][0], small[i][1], 8, 1, PATTERN_NOISE, DISTORT_NOISE, "adm" };
        Video v;
        CHECK(video_make(&v, &c, i) == 0);
        QualeContext *ctx = NULL;
        CHECK(run(&ctx, &v, "adm", 1) != 0);
        CHECK(strstr(last_error, "too small") != NULL);
        quale_close(&ctx);
        video_free(&v);
    }

    /* Options the integer ADM cannot score. */
    const Case c = { 33, 33, 8, 1, PATTERN_NOISE, DISTORT_NOISE, "adm" };
    Video v;
    CHECK(video_make(&v, &c, 0) == 0);
    static const char *const refused[] = {
        "adm=adm_norm_view_dist=2",                      /* below 1080 lines at 3H */
        "adm=adm_ref_display_height=720",
        "adm=adm_csf_mode=2:adm_norm_view_dist=4",       /* no blend table */
        "adm=adm_csf_mode=3:adm_ref_display_height=1440",
    };
    for (unsigned i = 0; i < COUNT_OF(refused); i++) {
        QualeContext *ctx = NULL;
        CHECK(run(&ctx, &v, refused[i], 1) != 0);
        CHECK(strstr(last_error, "adm:") != NULL);
        quale_close(&ctx);
    }
    video_free(&v);

    /* Out-of-range values are refused when parsed. */
    QualeContext *ctx = NULL;
    QualeSettings s;
    quale_settings_default(&s);
    s.log = keep_errors;
    CHECK(quale_open(&ctx, &s) == 0);
    CHECK(quale_use_metric(ctx, "adm=adm_enhn_gain_limit=0.5") != 0);
    CHECK(quale_use_metric(ctx, "adm=adm_csf_mode=4") != 0);
    CHECK(quale_use_metric(ctx, "adm=adm_dlm_weight=1.5") != 0);
    CHECK(quale_use_metric(ctx, "adm=adm_ref_display_height=5000") != 0);
    quale_close(&ctx);
}

/* Writes the clips and the libvmaf commands that give `expected`. */
static int dump(const char *dir)
{
    for (unsigned c = 0; c < COUNT_OF(cases); c++) {
        Video v;
        if (video_make(&v, &cases[c], c)) return 1;
        char path[2][512];
        for (unsigned k = 0; k < 2; k++) {
            snprintf(path[k], sizeof(path[k]), "%s/case%u_%s.yuv", dir, c, k ? "dis" : "ref");
            FILE *f = fopen(path[k], "wb");
            if (!f) return 1;
            for (unsigned i = 0; i < v.frames; i++) {
                const QualePicture *p = k ? &v.dist[i] : &v.ref[i];
                for (unsigned plane = 0; plane < 3; plane++)
                    for (unsigned y = 0; y < p->plane_height[plane]; y++)
                        fwrite((const uint8_t *)p->data[plane] + (ptrdiff_t)y * p->stride[plane],
                               p->format.bitdepth > 8 ? 2 : 1, p->plane_width[plane], f);
            }
            fclose(f);
        }
        printf("%u vmaf -r %s -d %s -w %u -h %u -p 444 -b %u --feature %s -n --json\n", c, path[0],
               path[1], cases[c].w, cases[c].h, cases[c].bitdepth, cases[c].spec);
        video_free(&v);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--dump")) return dump(argv[2]);
    test_against_libvmaf();
    test_band_sizes();
    test_band_threads();
    test_flat_reference();
    test_refusals();
    return test_summary();
}
