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
 * variables with double expressions exactly as libvmaf writes them (the
 * same pow/powf, atan2, sin, cos, exp calls on the same arguments); the
 * mean is a double sum in raster order.
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
 * Work that cannot change a bit is avoided:
 *  - pixels whose reference and distorted samples are equal are skipped:
 *    their L*a*b* colours are equal and every term of CIEDE2000 is then
 *    exactly 0 (all intermediates are finite: S_L, S_C >= 1, and S_H >= 1
 *    since T >= 0.36), so their deltaE would add +0 to the sum (checked
 *    for every 8-bit triple);
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
#include "metric.h"

#if defined(__GNUC__)
#define CIEDE_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define CIEDE_ALWAYS_INLINE inline
#endif

static const char *const ciede_keys[] = { "ciede2000", NULL };

/* ---- the colour cache ------------------------------------------------------ */

/*
 * L*a*b* is a pure function of the sample triple, and a picture holds far
 * fewer distinct triples than pixels (a 1080p frame of natural video about
 * 185,000 for 2 million pixels): each worker keeps its last conversions in
 * a direct-mapped cache, in its scratch, across frames.  A hit returns the
 * very floats a conversion would, so the cache changes no bit, only the
 * number of pow() calls.
 */
#define CIEDE_CACHE_BITS 16
#define CIEDE_CACHE_EMPTY UINT64_MAX /* no triple of samples of <= 16 bits */

typedef struct CiedeCacheEntry {
    uint64_t key; /* y << 32 | u << 16 | v */
    CiedeLab lab;
} CiedeCacheEntry;

typedef struct CiedeScratch {
    CiedeCacheEntry cache[1u << CIEDE_CACHE_BITS];
    /* one row of colours: reference, distorted, and whether the samples
     * are equal (then the colours are left unset) */
    CiedeLab *ref_lab, *dis_lab;
    uint8_t *same;
} CiedeScratch;

static CIEDE_ALWAYS_INLINE CiedeLab ciede_lab_cached(const CiedeState *s, CiedeScratch *scratch,
                                                      unsigned y, unsigned u, unsigned v)
{
    const uint64_t key = (uint64_t)y << 32 | (uint64_t)u << 16 | v;
    /* Fibonacci hashing: the top bits of key * 2^64 / phi */
    CiedeCacheEntry *e =
        &scratch->cache[(key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - CIEDE_CACHE_BITS)];
    if (e->key != key) {
        e->key = key;
        e->lab = ciede_lab(&s->convert, y, u, v);
    }
    return e->lab;
}

/* ---- one frame ------------------------------------------------------------ */

static CIEDE_ALWAYS_INLINE unsigned ciede_sample(const void *row, size_t x, bool hbd)
{
    return hbd ? ((const uint16_t *)row)[x] : ((const uint8_t *)row)[x];
}

/* The chroma rows a luma row reads, indexed by chroma_row[x]. */
typedef struct CiedeChroma {
    const void *cb[CIEDE_ROW_ZERO + 1], *cr[CIEDE_ROW_ZERO + 1];
} CiedeChroma;

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

static CiedeChroma ciede_chroma_rows(const CiedeState *s, const QualePicture *pic, unsigned y)
{
    const unsigned r = y >> s->row_shift;
    CiedeChroma c;
    for (unsigned k = 0; k <= CIEDE_ROW_AHEAD_MAX; k++) {
        c.cb[k] = ciede_vmaf_chroma_row(s, pic, 1, r + k);
        c.cr[k] = ciede_vmaf_chroma_row(s, pic, 2, r + k);
    }
    c.cb[CIEDE_ROW_ZERO] = c.cr[CIEDE_ROW_ZERO] = s->zero_row;
    return c;
}

/*
 * Adds the deltaE of row y to sum, in raster order.  The colours of the
 * row are looked up first and the differences computed after, so that the
 * cache reads of neighbouring pixels overlap instead of each waiting
 * behind a whole CIEDE2000.
 */
static CIEDE_ALWAYS_INLINE double ciede_row(const CiedeState *s, CiedeScratch *scratch,
                                            const QualePicture *ref, const QualePicture *dis,
                                            unsigned y, double sum, bool hbd)
{
    const void *ry = ciede_plane_row(ref, 0, y), *dy = ciede_plane_row(dis, 0, y);
    const CiedeChroma rc = ciede_chroma_rows(s, ref, y), dc = ciede_chroma_rows(s, dis, y);
    const uint32_t *col = s->chroma_col;
    const uint8_t *crow = s->chroma_row;
    CiedeLab *restrict ref_lab = scratch->ref_lab, *restrict dis_lab = scratch->dis_lab;
    uint8_t *restrict same = scratch->same;

    for (unsigned x = 0; x < s->width; x++) {
        const unsigned cx = col[x], cr = crow[x];
        const unsigned r_y = ciede_sample(ry, x, hbd), d_y = ciede_sample(dy, x, hbd);
        const unsigned r_u = ciede_sample(rc.cb[cr], cx, hbd);
        const unsigned d_u = ciede_sample(dc.cb[cr], cx, hbd);
        const unsigned r_v = ciede_sample(rc.cr[cr], cx, hbd);
        const unsigned d_v = ciede_sample(dc.cr[cr], cx, hbd);
        same[x] = r_y == d_y && r_u == d_u && r_v == d_v;
        if (same[x]) continue;
        ref_lab[x] = ciede_lab_cached(s, scratch, r_y, r_u, r_v);
        dis_lab[x] = ciede_lab_cached(s, scratch, d_y, d_u, d_v);
    }
    for (unsigned x = 0; x < s->width; x++) {
        if (same[x]) continue; /* deltaE is +0 */
        sum += ciede2000(ref_lab[x], dis_lab[x]);
    }
    return sum;
}

static double ciede_sum_8(const CiedeState *s, CiedeScratch *scratch, const QualePicture *ref,
                          const QualePicture *dis)
{
    double sum = 0.;
    for (unsigned y = 0; y < s->height; y++)
        sum = ciede_row(s, scratch, ref, dis, y, sum, false);
    return sum;
}

static double ciede_sum_16(const CiedeState *s, CiedeScratch *scratch, const QualePicture *ref,
                           const QualePicture *dis)
{
    double sum = 0.;
    for (unsigned y = 0; y < s->height; y++)
        sum = ciede_row(s, scratch, ref, dis, y, sum, true);
    return sum;
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

    const double scale = 1 << (f->bitdepth - 8);
    s->convert.y_offset = 16. * scale;
    s->convert.y_scale = 1. / (219. * scale);
    s->convert.c_offset = 128. * scale;
    s->convert.c_scale = 1. / (224. * scale);

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
    free(c->ref_lab);
    free(c->dis_lab);
    free(c->same);
    quale_aligned_free(c);
}

static int ciede_scratch_alloc(const void *state, void **scratch)
{
    const CiedeState *s = state;
    CiedeScratch *c = quale_aligned_alloc(sizeof(*c));
    if (!c) return -ENOMEM;
    for (size_t i = 0; i < QUALE_ARRAY_SIZE(c->cache); i++) c->cache[i].key = CIEDE_CACHE_EMPTY;
    c->ref_lab = malloc(s->width * sizeof(*c->ref_lab));
    c->dis_lab = malloc(s->width * sizeof(*c->dis_lab));
    c->same = malloc(s->width);
    if (!c->ref_lab || !c->dis_lab || !c->same) {
        ciede_scratch_free(c);
        return -ENOMEM;
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

const Metric metric_ciede = {
    .name = "ciede",
    .keys = ciede_keys,
    .state_size = sizeof(CiedeState),
    .init = ciede_init,
    .scratch_alloc = ciede_scratch_alloc,
    .scratch_free = ciede_scratch_free,
    .extract = ciede_extract,
    .close = ciede_close,
};
