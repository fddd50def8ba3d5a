/*
 * CIEDE2000 ("ciede": ciede2000), as libvmaf computes it:
 *   score = 45 - 20 * log10(mean over the luma grid of deltaE00)
 * with deltaE00 the CIEDE2000 colour difference (kL = 0.65, kC = 1,
 * kH = 4) between the reference and distorted pixels in CIE L*a*b*.
 *
 * Each pixel goes Y'CbCr -> R'G'B' (BT.709, limited range: 16..235 and
 * 16..240 scaled by 2^(bitdepth - 8)) -> linear RGB (sRGB curve, its knee
 * at 10/255) -> XYZ (sRGB primaries, D65) -> L*a*b*.  libvmaf's types and
 * orders are kept: the conversion is double and rounds the three L*a*b*
 * companding values and the L*, a*, b* to float; CIEDE2000 mixes float
 * variables with double expressions exactly as libvmaf writes them (its
 * pow/powf, atan2, sin, cos, exp calls on the same arguments, see below);
 * the mean is a double sum in raster order.
 *
 * Chroma is upsampled to the luma grid by libvmaf's indexing: output row
 * i reads chroma row i / 2 for 4:2:0 and 4:2:2, output column j reads
 * column j / 2 for 4:2:0 and column j for 4:2:2.  For 4:2:2 that runs
 * past the end of the chroma row: libvmaf then reads its picture buffer,
 * whose chroma rows are S = align32(w / 2) samples apart with zeros after
 * the w / 2 samples of each row and Cr right after Cb.  That memory is
 * emulated: column j of 4:2:2 reads chroma row i / 2 + j / S, column
 * j % S, or 0 when j % S >= w / 2.  A row past the Cb plane is the Cr
 * plane's; one past the Cr plane, outside libvmaf's buffer (where libvmaf
 * reads whatever lies there), reads 0 here.  Only 4:2:2 pictures one row
 * high (two for some odd widths) get past a plane.
 *
 * Odd 4:2:0 sizes use the picture's own (w + 1) / 2 x (h + 1) / 2 chroma
 * (libvmaf's pictures have w / 2 x h / 2 and its CLI cannot read such
 * files consistently, so they are not comparable).  4:0:0 has no colour
 * and is refused, as libvmaf refuses it.
 *
 * libvmaf's pow, atan2, sin, cos and exp are the C library's; here they
 * are quale's own, exactly specified (ciede_tmpl.h), so that the SIMD
 * kernels and the GPU twin compute the same bits as this reference.
 *
 * Each row's six samples per pixel are gathered onto the luma grid, the
 * row's colours come from a cache or are converted by the colours kernel,
 * the deltaE kernel takes them (CiedeDsp: this file's C kernels, or
 * src/metrics/x86/ciede_<isa>.c), and the row is added to the frame's
 * sum.  Work that cannot change a bit is avoided:
 *  - pixels whose reference and distorted samples are equal add nothing:
 *    their L*a*b* colours are equal and every term of CIEDE2000 is then
 *    exactly 0 (all intermediates are finite: S_L, S_C >= 1, and S_H >= 1
 *    since T >= 0.36), so their deltaE is +0 (checked for every 8-bit
 *    triple);
 *  - each worker caches the L*a*b* of the sample triples it converted
 *    (see the colour cache below).
 *
 * The conversion, CIEDE2000 and the chroma indexing are in ciede.h, which
 * the CUDA twin compiles too.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ciede.h"
#include "common.h"
#include "cpu.h"
#include "metric.h"

#if defined(__GNUC__)
#define CIEDE_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define CIEDE_ALWAYS_INLINE inline
#endif

static const char *const ciede_keys[] = { "ciede2000", NULL };

/* ---- the C kernels ---------------------------------------------------------- */

static void ciede_colours_c(const CiedeConvert *convert, const uint16_t *y, const uint16_t *u,
                            const uint16_t *v, float *l, float *a, float *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++) ciede_colour(convert, y[i], u[i], v[i], &l[i], &a[i], &b[i]);
}

static void ciede_delta_e_c(const float *const ref[3], const float *const dist[3], float *out,
                            unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        out[i] = ciede_difference(ref[0][i], ref[1][i], ref[2][i], dist[0][i], dist[1][i],
                                  dist[2][i]);
}

/* The dsp of one instruction set's kernels. */
#define CIEDE_KERNELS(isa) \
    (CiedeDsp){ .colours = ciede_colours_##isa, .delta_e = ciede_delta_e_##isa }

void ciede_dsp_init(CiedeDsp *dsp, unsigned cpu_flags)
{
    CPU_PICK_KERNELS(*dsp, CIEDE_KERNELS, cpu_flags);
}

/* ---- the colour cache ------------------------------------------------------ */

/*
 * L*a*b* is a pure function of the sample triple, and a picture holds far
 * fewer distinct triples than pixels (a 1080p frame of natural video about
 * 185,000 for 2 million pixels): each worker keeps its last conversions in
 * a direct-mapped cache, in its scratch, across frames (about 4 in 5
 * look-ups hit).  A hit returns the very floats a conversion would, so
 * the cache changes no bit, only the number of conversions.
 */
#define CIEDE_CACHE_BITS 16
#define CIEDE_CACHE_EMPTY UINT64_MAX /* no triple of samples of <= 16 bits */

typedef struct CiedeCacheEntry {
    uint64_t key; /* y << 32 | u << 16 | v */
    float lab[3];
} CiedeCacheEntry;

static CIEDE_ALWAYS_INLINE uint64_t ciede_key(unsigned y, unsigned u, unsigned v)
{
    return (uint64_t)y << 32 | (uint64_t)u << 16 | v;
}

static CIEDE_ALWAYS_INLINE CiedeCacheEntry *ciede_cache_slot(CiedeCacheEntry *cache, uint64_t key)
{
    /* Fibonacci hashing: the top bits of key * 2^64 / phi */
    return &cache[(key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - CIEDE_CACHE_BITS)];
}

/* ---- one frame ------------------------------------------------------------ */

typedef struct CiedeScratch {
    CiedeCacheEntry *cache; /* 1 << CIEDE_CACHE_BITS entries */
    /* one row on the luma grid: reference Y', Cb, Cr, distorted Y', Cb, Cr;
     * the colours of its pixels, L*, a*, b* of each; their deltaE, and
     * whether the six samples are equal */
    uint16_t *samples[6];
    float *lab[6];
    float *delta_e;
    uint8_t *same;
    /* the triples the cache missed, where their colours go (an index into
     * lab[0] of its reference (0) or distorted (3) half), their colours */
    uint16_t *miss_samples[3];
    uint32_t *miss_at;
    float *miss_lab[3];
} CiedeScratch;

static CIEDE_ALWAYS_INLINE unsigned ciede_sample(const void *row, size_t x, bool hbd)
{
    return hbd ? ((const uint16_t *)row)[x] : ((const uint8_t *)row)[x];
}

static const void *ciede_plane_row(const QualePicture *pic, unsigned plane, unsigned row)
{
    return (const uint8_t *)pic->data[plane] + (ptrdiff_t)row * pic->stride[plane];
}

/* Chroma row `row` of a plane as libvmaf's buffer holds it: the Cr plane
 * follows the Cb plane, and nothing that can be read follows Cr. */
static const void *ciede_vmaf_chroma_row(const CiedeState *s, const QualePicture *pic,
                                         unsigned plane, unsigned row)
{
    unsigned src_plane, src_row;
    if (ciede_vmaf_chroma_source(plane, row, pic->plane_height[1], &src_plane, &src_row))
        return ciede_plane_row(pic, src_plane, src_row);
    return s->zero_row;
}

/* Row y of a picture on the luma grid: out[0] Y', out[1] Cb, out[2] Cr,
 * each chroma sample where libvmaf's indexing reads it. */
static CIEDE_ALWAYS_INLINE void ciede_gather_row(const CiedeState *s, const QualePicture *pic,
                                                 unsigned y, uint16_t *const out[3], bool hbd)
{
    const void *luma = ciede_plane_row(pic, 0, y);
    for (unsigned x = 0; x < s->width; x++) out[0][x] = (uint16_t)ciede_sample(luma, x, hbd);

    const unsigned r = y >> s->row_shift;
    const void *cb[CIEDE_ROW_ZERO + 1], *cr[CIEDE_ROW_ZERO + 1];
    for (unsigned k = 0; k <= CIEDE_ROW_AHEAD_MAX; k++) {
        cb[k] = ciede_vmaf_chroma_row(s, pic, 1, r + k);
        cr[k] = ciede_vmaf_chroma_row(s, pic, 2, r + k);
    }
    cb[CIEDE_ROW_ZERO] = cr[CIEDE_ROW_ZERO] = s->zero_row;
    if (s->chroma_shift >= 0) {
        /* 4:2:0 and 4:4:4: column x >> shift of the row itself */
        const unsigned shift = (unsigned)s->chroma_shift;
        for (unsigned x = 0; x < s->width; x++) {
            out[1][x] = (uint16_t)ciede_sample(cb[0], x >> shift, hbd);
            out[2][x] = (uint16_t)ciede_sample(cr[0], x >> shift, hbd);
        }
        return;
    }
    const uint32_t *col = s->chroma_col;
    const uint8_t *ahead = s->chroma_row;
    for (unsigned x = 0; x < s->width; x++) {
        out[1][x] = (uint16_t)ciede_sample(cb[ahead[x]], col[x], hbd);
        out[2][x] = (uint16_t)ciede_sample(cr[ahead[x]], col[x], hbd);
    }
}

/* How many pixels ahead the look-ups prefetch their slots. */
#define CIEDE_PREFETCH 16

/*
 * The colours of a row: from the cache where it has them, the others
 * converted together by the colours kernel and then cached.  (Pixels
 * whose six samples are equal get any colour: their deltaE is not used.)
 */
static void ciede_row_colours(const CiedeState *s, CiedeScratch *t)
{
    const unsigned w = s->width;
    const size_t stride = (size_t)(t->lab[1] - t->lab[0]);
    uint32_t misses = 0;
    /* Without branches on the outcome of a look-up (about 1 in 5 misses,
     * unpredictably): a pixel always takes the colours its slots hold and
     * always writes a miss record, which only a miss keeps.  Pixels whose
     * samples are equal keep whatever their slots held. */
    for (unsigned x = 0; x < w; x++) {
        const unsigned ry = t->samples[0][x], ru = t->samples[1][x], rv = t->samples[2][x];
        const unsigned dy = t->samples[3][x], du = t->samples[4][x], dv = t->samples[5][x];
        const unsigned same = (ry == dy) & (ru == du) & (rv == dv);
        t->same[x] = (uint8_t)same;
#if defined(__GNUC__)
        /* the slots of a pixel further on, so that their loads overlap */
        if (x + CIEDE_PREFETCH < w) {
            const unsigned a = x + CIEDE_PREFETCH;
            for (unsigned half = 0; half < 2; half++) {
                uint16_t *const *p = t->samples + 3 * half;
                const uint64_t key = ciede_key(p[0][a], p[1][a], p[2][a]);
                __builtin_prefetch(ciede_cache_slot(t->cache, key));
            }
        }
#endif
        for (unsigned half = 0; half < 2; half++) {
            const unsigned y = half ? dy : ry, u = half ? du : ru, v = half ? dv : rv;
            const uint64_t key = ciede_key(y, u, v);
            const CiedeCacheEntry *e = ciede_cache_slot(t->cache, key);
            for (unsigned k = 0; k < 3; k++) t->lab[3 * half + k][x] = e->lab[k];
            t->miss_samples[0][misses] = (uint16_t)y;
            t->miss_samples[1][misses] = (uint16_t)u;
            t->miss_samples[2][misses] = (uint16_t)v;
            t->miss_at[misses] = (uint32_t)(3 * half * stride + x);
            misses += (e->key != key) & !same;
        }
    }

    s->dsp.colours(&s->convert, t->miss_samples[0], t->miss_samples[1], t->miss_samples[2],
                   t->miss_lab[0], t->miss_lab[1], t->miss_lab[2], misses);
    for (uint32_t i = 0; i < misses; i++) {
        const uint64_t key =
            ciede_key(t->miss_samples[0][i], t->miss_samples[1][i], t->miss_samples[2][i]);
        CiedeCacheEntry *e = ciede_cache_slot(t->cache, key);
        e->key = key;
        for (unsigned k = 0; k < 3; k++) {
            e->lab[k] = t->miss_lab[k][i];
            t->lab[0][t->miss_at[i] + k * stride] = t->miss_lab[k][i];
        }
    }
}

/* The frame's sum of deltaE, in raster order. */
static CIEDE_ALWAYS_INLINE double ciede_sum(const CiedeState *s, CiedeScratch *t,
                                            const QualePicture *ref, const QualePicture *dis,
                                            bool hbd)
{
    uint16_t *const *rs = t->samples, *const *ds = t->samples + 3;
    const float *const ref_lab[3] = { t->lab[0], t->lab[1], t->lab[2] };
    const float *const dis_lab[3] = { t->lab[3], t->lab[4], t->lab[5] };
    double sum = 0.;
    for (unsigned y = 0; y < s->height; y++) {
        ciede_gather_row(s, ref, y, rs, hbd);
        ciede_gather_row(s, dis, y, ds, hbd);
        ciede_row_colours(s, t);
        s->dsp.delta_e(ref_lab, dis_lab, t->delta_e, s->width);
        /* equal samples: deltaE +0, which adds nothing */
        for (unsigned x = 0; x < s->width; x++)
            if (!t->same[x]) sum += t->delta_e[x];
    }
    return sum;
}

static double ciede_sum_8(const CiedeState *s, CiedeScratch *scratch, const QualePicture *ref,
                          const QualePicture *dis)
{
    return ciede_sum(s, scratch, ref, dis, false);
}

static double ciede_sum_16(const CiedeState *s, CiedeScratch *scratch, const QualePicture *ref,
                           const QualePicture *dis)
{
    return ciede_sum(s, scratch, ref, dis, true);
}

/* ---- shared with the twins ------------------------------------------------ */

int ciede_check_format(const QualeVideoFormat *f, char *error, size_t error_size)
{
    if (f->chroma == QUALE_CHROMA_400) {
        snprintf(error, error_size, "ciede: 4:0:0 video is not supported: CIEDE2000 needs colour");
        return -EINVAL;
    }
    return 0;
}

void ciede_convert_init(CiedeConvert *convert, unsigned bitdepth)
{
    const double scale = 1 << (bitdepth - 8);
    convert->y_offset = 16. * scale;
    convert->y_scale = 1. / (219. * scale);
    convert->c_offset = 128. * scale;
    convert->c_scale = 1. / (224. * scale);
}

double ciede_value(const CiedeState *s, double sum)
{
    /* libvmaf divides by an unsigned product */
    return 45. - 20. * log10(sum / (s->width * s->height));
}

int ciede_write(const CiedeState *s, FeatureSink *sink, unsigned index, double sum)
{
    return feature_sink_put(sink, s->key, index, ciede_value(s, sum));
}

double ciede_frame_sum(const CiedeState *s, void *scratch, const QualePicture *ref,
                       const QualePicture *dist)
{
    return s->bitdepth > 8 ? ciede_sum_16(s, scratch, ref, dist) : ciede_sum_8(s, scratch, ref, dist);
}

/* ---- descriptor ------------------------------------------------------------ */

static void ciede_close(void *state)
{
    CiedeState *s = state;
    free(s->chroma_col);
    free(s->chroma_row);
    free(s->zero_row);
    s->chroma_col = NULL;
    s->chroma_row = NULL;
    s->zero_row = NULL;
}

static int ciede_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    CiedeState *s = state;
    char error[256];
    int err = ciede_check_format(f, error, sizeof(error));
    if (err) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s", error);
        return err;
    }

    s->bitdepth = f->bitdepth;
    s->width = f->width;
    s->height = f->height;
    s->row_shift = f->chroma == QUALE_CHROMA_444 ? 0 : 1;
    s->chroma_shift = f->chroma == QUALE_CHROMA_444 ? 0 : f->chroma == QUALE_CHROMA_420 ? 1 : -1;

    ciede_convert_init(&s->convert, f->bitdepth);
    ciede_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));

    const size_t w = f->width;
    s->chroma_col = malloc(w * sizeof(*s->chroma_col));
    s->chroma_row = malloc(w);
    s->zero_row = calloc(w, sizeof(uint16_t));
    if (!s->chroma_col || !s->chroma_row || !s->zero_row) {
        ciede_close(s);
        return -ENOMEM;
    }

    /* libvmaf's chroma rows: w / 2 samples, align32(w / 2) apart.  With
     * S >= w / 2, x / S <= 2 for every x < w. */
    const unsigned vmaf_cw = f->width / 2;
    const unsigned vmaf_stride = (vmaf_cw + CIEDE_VMAF_ALIGN - 1) & ~(CIEDE_VMAF_ALIGN - 1);
    for (unsigned x = 0; x < f->width; x++) {
        switch (f->chroma) {
        case QUALE_CHROMA_420:
            s->chroma_col[x] = x / 2;
            s->chroma_row[x] = 0;
            break;
        case QUALE_CHROMA_422:
            if (vmaf_cw == 0 || x % vmaf_stride >= vmaf_cw) {
                s->chroma_col[x] = 0;
                s->chroma_row[x] = CIEDE_ROW_ZERO;
            } else {
                s->chroma_col[x] = x % vmaf_stride;
                s->chroma_row[x] = (uint8_t)(x / vmaf_stride);
            }
            break;
        default:
            s->chroma_col[x] = x;
            s->chroma_row[x] = 0;
            break;
        }
    }

    err = feature_sink_declare(sink, ciede_keys[0], &s->key);
    if (err) ciede_close(s);
    return err;
}

static void ciede_scratch_free(void *scratch)
{
    CiedeScratch *c = scratch;
    if (!c) return;
    quale_aligned_free(c->cache);
    quale_aligned_free(c->samples[0]);
    quale_aligned_free(c->lab[0]);
    quale_aligned_free(c->delta_e);
    quale_aligned_free(c->same);
    quale_aligned_free(c->miss_samples[0]);
    quale_aligned_free(c->miss_at);
    quale_aligned_free(c->miss_lab[0]);
    free(c);
}

static int ciede_scratch_alloc(const void *state, void **scratch)
{
    const CiedeState *s = state;
    CiedeScratch *c = calloc(1, sizeof(*c));
    if (!c) return -ENOMEM;
    /* rows of 64-byte multiples; a row's misses are at most 2 per pixel */
    const size_t row = quale_align(s->width, QUALE_ALIGNMENT / sizeof(uint16_t));
    const size_t misses = 2 * row;
    c->cache = quale_aligned_alloc(sizeof(*c->cache) << CIEDE_CACHE_BITS);
    c->samples[0] = quale_aligned_alloc(6 * row * sizeof(uint16_t));
    c->lab[0] = quale_aligned_alloc(6 * row * sizeof(float));
    c->delta_e = quale_aligned_alloc(row * sizeof(float));
    c->same = quale_aligned_alloc(row);
    c->miss_samples[0] = quale_aligned_alloc(3 * misses * sizeof(uint16_t));
    c->miss_at = quale_aligned_alloc(misses * sizeof(uint32_t));
    c->miss_lab[0] = quale_aligned_alloc(3 * misses * sizeof(float));
    if (!c->cache || !c->samples[0] || !c->lab[0] || !c->delta_e || !c->same ||
        !c->miss_samples[0] || !c->miss_at || !c->miss_lab[0]) {
        ciede_scratch_free(c);
        return -ENOMEM;
    }
    for (size_t i = 0; i < ((size_t)1 << CIEDE_CACHE_BITS); i++)
        c->cache[i] = (CiedeCacheEntry){ .key = CIEDE_CACHE_EMPTY };
    for (unsigned k = 1; k < 6; k++) {
        c->samples[k] = c->samples[0] + k * row;
        c->lab[k] = c->lab[0] + k * row;
    }
    for (unsigned k = 1; k < 3; k++) {
        c->miss_samples[k] = c->miss_samples[0] + k * misses;
        c->miss_lab[k] = c->miss_lab[0] + k * misses;
    }
    *scratch = c;
    return 0;
}

static int ciede_extract(const void *state, void *scratch, const MetricFrame *frame,
                         FeatureSink *sink)
{
    const CiedeState *s = state;
    return ciede_write(s, sink, frame->index, ciede_frame_sum(s, scratch, frame->ref, frame->dist));
}

static const MetricModelFeature ciede_model_features[] = {
    { "ciede2000", "ciede2000" },
    { NULL, NULL },
};

const Metric metric_ciede = {
    .name = "ciede",
    .keys = ciede_keys,
    .model_features = ciede_model_features,
    .state_size = sizeof(CiedeState),
    .init = ciede_init,
    .scratch_alloc = ciede_scratch_alloc,
    .scratch_free = ciede_scratch_free,
    .extract = ciede_extract,
    .close = ciede_close,
};
