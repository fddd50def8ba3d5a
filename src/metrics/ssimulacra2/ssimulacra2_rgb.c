/*
 * YUV to 8-bit RGB exactly as FFmpeg 7.1's swscale makes rgb24 through its
 * scale filter with the flags accurate_rnd+bitexact (and so its default
 * scaler, bicubic), the frame's chroma sited at the centre (the filter's
 * default for untagged frames), the matrix and range given:
 *
 *  - every input row to swscale's 15-bit intermediate: luma unscaled
 *    (sample * 2^14 >> shift), chroma through swscale's horizontal filter;
 *  - the rows of a picture's output row through its vertical filter;
 *  - 4:2:0 and 4:2:2 of even width: one chroma pair for two pixels, R, G
 *    and B read from yuv2rgb.c's tables (swscale's packed output);
 *    4:4:4 and odd widths: "full chroma interpolation", each pixel's chroma
 *    filtered to full width and R, G, B by its integer arithmetic.
 *
 * The filters are swscale's initFilter() for these cases: its bicubic
 * (B = 0, C = 0.6) coefficients in 64-bit fixed point, the removal of
 * near-zero taps, the alignment of an x86 build (4 taps horizontally, 2
 * vertically, 1 for an unscaled vertical filter), bitexact's zeroing of
 * the taps past the smallest size, the folding of taps outside the picture
 * onto its edge samples and the normalisation with error diffusion.
 * accurate_rnd keeps swscale off its inexact SIMD output paths, so this C
 * arithmetic is what it runs on every CPU.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "ssimulacra2.h"

/* swscale's ff_yuv2rgb_coeffs: crv, cbu, cgu, cgv in 16.16. */
static const int32_t yuv2rgb_coeffs[][4] = {
    [SSIM2_MATRIX_BT709] = { 117489, 138438, 13975, 34925 },
    [SSIM2_MATRIX_BT601] = { 104597, 132201, 25675, 53279 },
    [SSIM2_MATRIX_BT2020] = { 110013, 140363, 12277, 42626 },
    [SSIM2_MATRIX_FCC] = { 104448, 132798, 24759, 53109 },
    [SSIM2_MATRIX_SMPTE240M] = { 117579, 136230, 16907, 35559 },
};

/* Taps whose summed magnitude stays below this share of one are dropped
 * (swscale's SWS_MAX_REDUCE_CUTOFF). */
#define REDUCE_CUTOFF 0.002

static int floor_log2(int64_t v)
{
    int n = 0;
    while (v > 1) {
        v >>= 1;
        n++;
    }
    return n;
}

/* Rounded to the nearest, halves away from zero, as FFmpeg's ROUNDED_DIV. */
static int64_t rounded_div(int64_t a, int64_t b)
{
    return (a >= 0 ? a + (b >> 1) : a - (b >> 1)) / b;
}

/* The bicubic kernel (B = 0, C = 0.6) at distance d (2^30 = one input
 * sample), in swscale's fixed point. */
static int64_t bicubic_coeff(int64_t d)
{
    const int64_t B = 0;
    const int64_t C = (int64_t)(0.6 * (1 << 24));
    if (d >= (int64_t)1 << 31) return 0;
    const int64_t dd = (d * d) >> 30;
    const int64_t ddd = (dd * d) >> 30;
    if (d < (int64_t)1 << 30)
        return (12 * (1 << 24) - 9 * B - 6 * C) * ddd + (-18 * (1 << 24) + 12 * B + 6 * C) * dd +
               (6 * (1 << 24) - 2 * B) * ((int64_t)1 << 30);
    return (-B - 6 * C) * ddd + (6 * B + 30 * C) * dd + (-12 * B - 48 * C) * d +
           (8 * B + 24 * C) * ((int64_t)1 << 30);
}

/* The raw filter before reduction: *size taps an output sample. */
static int64_t *raw_filter(int64_t x_inc, int src_w, int dst_w, int src_pos, int dst_pos,
                           int64_t fone, int *size, int32_t *pos)
{
    int64_t *f;
    if ((x_inc > 0x10000 - 10 && x_inc < 0x10000 + 10) && src_pos == dst_pos) {
        *size = 1;
        if (!(f = calloc((size_t)dst_w, sizeof(*f)))) return NULL;
        for (int i = 0; i < dst_w; i++) {
            f[i] = fone;
            pos[i] = i;
        }
        return f;
    }
    int n = x_inc <= 1 << 16 ? 1 + 4 : 1 + (4 * src_w + dst_w - 1) / dst_w;
    n = QUALE_MAX(QUALE_MIN(n, src_w - 2), 1);
    *size = n;
    if (!(f = calloc((size_t)dst_w * n, sizeof(*f)))) return NULL;
    int64_t dst_in_src = ((dst_pos * x_inc) >> 7) - (((int64_t)src_pos * 0x10000) >> 7);
    for (int i = 0; i < dst_w; i++) {
        int xx = (int)((dst_in_src - (int64_t)(n - 2) * (1 << 16)) / (1 << 17));
        pos[i] = xx;
        for (int j = 0; j < n; j++, xx++) {
            int64_t d = (int64_t)llabs((int64_t)xx * (1 << 17) - dst_in_src) << 13;
            if (x_inc > 1 << 16) d = d * dst_w / src_w;
            f[(size_t)i * n + j] = bicubic_coeff(d) / (((int64_t)1 << 54) / fone);
        }
        dst_in_src += 2 * x_inc;
    }
    return f;
}

/* initFilter's first reduction: near-zero taps dropped on the left (the
 * filter moved right) while positions stay increasing; returns the
 * smallest size that keeps every filter's taps above the cut-off. */
static int reduce_left(int64_t *f, int size, int32_t *pos, int dst_w, int64_t fone)
{
    int min_size = 0;
    const double cutoff = REDUCE_CUTOFF * (double)fone;
    for (int i = dst_w - 1; i >= 0; i--) {
        int64_t *row = f + (size_t)i * size;
        int64_t cut = 0;
        for (int j = 0; j < size; j++) {
            cut += llabs(row[0]);
            if ((double)cut > cutoff) break;
            if (i < dst_w - 1 && pos[i] >= pos[i + 1]) break;
            memmove(row, row + 1, (size_t)(size - 1) * sizeof(*row));
            row[size - 1] = 0;
            pos[i]++;
        }
        int keep = size;
        cut = 0;
        for (int j = size - 1; j > 0; j--) {
            cut += llabs(row[j]);
            if ((double)cut > cutoff) break;
            keep--;
        }
        min_size = QUALE_MAX(min_size, keep);
    }
    return min_size;
}

/* initFilter's border fix: taps before the first or past the last input
 * sample are added onto the edge sample's tap. */
static void fix_borders(int64_t *f, int size, int32_t *pos, int dst_w, int src_w)
{
    for (int i = 0; i < dst_w; i++) {
        int64_t *row = f + (size_t)i * size;
        if (pos[i] < 0) {
            for (int j = 1; j < size; j++) {
                const int left = QUALE_MAX(j + pos[i], 0);
                row[left] += row[j];
                row[j] = 0;
            }
            pos[i] = 0;
        }
        if (pos[i] + size > src_w) {
            const int shift = pos[i] + QUALE_MIN(size - src_w, 0);
            int64_t acc = 0;
            for (int j = size - 1; j >= 0; j--) {
                if (pos[i] + j >= src_w) {
                    acc += row[j];
                    row[j] = 0;
                }
            }
            for (int j = size - 1; j >= 0; j--) row[j] = j < shift ? 0 : row[j - shift];
            pos[i] -= shift;
            row[src_w - 1 - pos[i]] += acc;
        }
    }
}

/* swscale's initFilter() for the bicubic scaler without extra filters:
 * `align` taps (x86: 4 horizontally, 2 vertically), coefficients summing
 * to `one`. */
static int make_filter(Ssim2Filter *out, int64_t x_inc, int src_w, int dst_w, int align,
                       int one, int src_pos, int dst_pos)
{
    const int64_t fone = (int64_t)1 << (54 - QUALE_MIN(floor_log2(src_w / dst_w), 8));
    int raw_size = 0;
    int ret = -ENOMEM;
    int64_t *f2 = NULL, *raw = NULL;
    out->pos = calloc((size_t)dst_w, sizeof(*out->pos));
    if (!out->pos || !(raw = raw_filter(x_inc, src_w, dst_w, src_pos, dst_pos, fone, &raw_size,
                                        out->pos)))
        goto done;
    const int min_size = reduce_left(raw, raw_size, out->pos, dst_w, fone);
    if (min_size == 1 && align == 2) align = 1; /* swscale's unscaled vertical case */
    const int size = (min_size + align - 1) & ~(align - 1);
    if (!(f2 = calloc((size_t)dst_w * size, sizeof(*f2)))) goto done;
    for (int i = 0; i < dst_w; i++)
        for (int j = 0; j < size && j < raw_size && j < min_size; j++)
            f2[(size_t)i * size + j] = raw[(size_t)i * raw_size + j];
    fix_borders(f2, size, out->pos, dst_w, src_w);

    if (!(out->coeff = calloc((size_t)dst_w * size, sizeof(*out->coeff)))) goto done;
    for (int i = 0; i < dst_w; i++) {
        const int64_t *row = f2 + (size_t)i * size;
        int64_t sum = 0, error = 0;
        for (int j = 0; j < size; j++) sum += row[j];
        sum = (sum + one / 2) / one;
        if (!sum) sum = 1;
        for (int j = 0; j < size; j++) {
            const int64_t v = row[j] + error;
            const int64_t iv = rounded_div(v, sum);
            out->coeff[(size_t)i * size + j] = (int16_t)iv;
            error = v - iv * sum;
        }
    }
    out->count = (unsigned)dst_w;
    out->size = (unsigned)size;
    ret = 0;
done:
    free(raw);
    free(f2);
    if (ret) {
        free(out->pos);
        out->pos = NULL;
    }
    return ret;
}

/* swscale's roundToInt16(): 16.16 to a rounded, saturated int16. */
static int round_to_int16(int64_t f)
{
    const int64_t r = (f + (1 << 15)) >> 16;
    if (r < -0x7FFF) return -0x8000;
    if (r > 0x7FFF) return 0x7FFF;
    return (int)r;
}

static uint8_t clip_u8(int64_t v)
{
    return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v;
}

/* yuv2rgb.c's ff_yuv2rgb_c_init_tables() for 24-bit output at neutral
 * brightness, contrast and saturation. */
static void init_tables(Ssim2Rgb *c, enum Ssim2Matrix matrix, bool full_range)
{
    const int32_t *inv = yuv2rgb_coeffs[matrix];
    int64_t crv = inv[0], cbu = inv[1], cgu = -inv[2], cgv = -inv[3];
    int64_t cy = 1 << 16, oy = 0;
    if (!full_range) {
        cy = (cy * 255) / 219;
        oy = 16 << 16;
    } else {
        crv = (crv * 224) / 255;
        cbu = (cbu * 224) / 255;
        cgu = (cgu * 224) / 255;
        cgv = (cgv * 224) / 255;
    }
    c->y_coeff = round_to_int16(cy * (1 << 13));
    c->y_offset = round_to_int16(oy * (1 << 9));
    c->v2r = round_to_int16(crv * (1 << 13));
    c->v2g = round_to_int16(cgv * (1 << 13));
    c->u2g = round_to_int16(cgu * (1 << 13));
    c->u2b = round_to_int16(cbu * (1 << 13));
    /* the tables add chroma in luma steps: the coefficients over cy,
     * rounded (C's division, towards zero for the negative ones) */
    const int64_t div = QUALE_MAX(cy, 1);
    c->crv = ((crv * (1 << 16)) + 0x8000) / div;
    c->cbu = ((cbu * (1 << 16)) + 0x8000) / div;
    c->cgu = ((cgu * (1 << 16)) + 0x8000) / div;
    c->cgv = ((cgv * (1 << 16)) + 0x8000) / div;
    /* 512 entries of headroom on either side of the 1024 swscale indexes */
    int64_t yb = -((int64_t)384 << 16) - 512 * cy - oy;
    for (int i = 0; i < 2048; i++) {
        c->ytab[i] = clip_u8((yb + 0x8000) >> 16);
        yb += cy;
    }
    c->yoffs = (full_range ? 384 : 326) + 512;
}

/* swscale's vertical stage takes a shortcut for a two-tap chroma filter
 * (pictures of four chroma rows: swscale keeps at most rows - 2 taps)
 * whose taps sum to one with the second in 0..1:
 * its yuv2packed1 output reads the first row alone when the second tap is
 * under a half, else the mean of both (rounded as its own).  As taps:
 * (1, 0) or (1/2, 1/2). */
static void two_tap_shortcut(Ssim2Filter *f)
{
    if (f->size != 2) return;
    for (unsigned i = 0; i < f->count; i++) {
        int16_t *k = f->coeff + 2 * i;
        if (k[0] + k[1] != 4096 || k[1] < 0 || k[1] > 4096) continue;
        const bool first_only = k[1] < 2048;
        k[0] = first_only ? 4096 : 2048;
        k[1] = first_only ? 0 : 2048;
    }
}

int ssim2_rgb_init(Ssim2Rgb *c, const QualeVideoFormat *f, enum Ssim2Matrix matrix,
                   bool full_range)
{
    memset(c, 0, sizeof(*c));
    if (f->chroma == QUALE_CHROMA_400) return -ENOTSUP;
    c->width = f->width;
    c->height = f->height;
    c->bitdepth = f->bitdepth;
    c->chroma = f->chroma;
    const int ssx = f->chroma != QUALE_CHROMA_444, ssy = f->chroma == QUALE_CHROMA_420;
    c->chroma_width = (f->width + ssx) >> ssx;
    c->chroma_height = (f->height + ssy) >> ssy;
    /* hScale8To15 shifts by 7, hScale16To15 by the depth less one (15 at
     * 16 bits) */
    c->in_shift = f->bitdepth == 8 ? 7 : QUALE_MIN(f->bitdepth - 1, 15);
    /* swscale forces full chroma for odd widths and unsubsampled input */
    c->full_chroma = !ssx || (f->width & 1);
    const int dst_ssx = c->full_chroma ? 0 : 1;
    const int cdst_w = (int)((f->width + dst_ssx) >> dst_ssx), cdst_h = (int)f->height;
    const int csrc_w = (int)c->chroma_width, csrc_h = (int)c->chroma_height;
    const int64_t x_inc = (((int64_t)csrc_w << 16) + (cdst_w >> 1)) / cdst_w;
    const int64_t y_inc = (((int64_t)csrc_h << 16) + (cdst_h >> 1)) / cdst_h;
    /* FFmpeg's scale filter passes centre-sited chroma of a subsampled
     * input (128/256 of a luma sample for each halving) and "none" (-513)
     * for an axis not subsampled, the rgb24 output's included; swscale's
     * get_local_pos() makes each of these 128 on its own grid, so input and
     * output chroma sit alike: an unscaled axis is a copy, a halved one is
     * upsampled from a quarter sample before the output's first */
    const int h_src = 128, h_dst = 128, v_src = 128, v_dst = 128;
    int err = make_filter(&c->hchr, x_inc, csrc_w, cdst_w, 4, 1 << 14, h_src, h_dst);
    if (!err) err = make_filter(&c->vchr, y_inc, csrc_h, cdst_h, 2, 1 << 12, v_src, v_dst);
    if (err) {
        ssim2_rgb_free(c);
        return err;
    }
    two_tap_shortcut(&c->vchr);
    init_tables(c, matrix, full_range);
    return 0;
}

void ssim2_rgb_free(Ssim2Rgb *c)
{
    free(c->hchr.pos);
    free(c->hchr.coeff);
    free(c->vchr.pos);
    free(c->vchr.coeff);
    c->hchr = (Ssim2Filter){ 0 };
    c->vchr = (Ssim2Filter){ 0 };
}

size_t ssim2_rgb_scratch_samples(const Ssim2Rgb *c)
{
    /* both chroma planes after the horizontal filter, and a luma row */
    return 2 * (size_t)c->hchr.count * c->chroma_height + c->width;
}

static unsigned sample(const QualePicture *pic, unsigned p, unsigned x, unsigned y)
{
    const uint8_t *row = (const uint8_t *)pic->data[p] + (ptrdiff_t)y * pic->stride[p];
    return pic->format.bitdepth > 8 ? ((const uint16_t *)row)[x] : row[x];
}

/* hScale*To15: a chroma row through the horizontal filter, to 15 bits. */
static void hscale_chroma(const Ssim2Rgb *c, const QualePicture *pic, unsigned p, unsigned y,
                          int16_t *out)
{
    const Ssim2Filter *f = &c->hchr;
    for (unsigned i = 0; i < f->count; i++) {
        int32_t val = 0;
        for (unsigned j = 0; j < f->size; j++) {
            const unsigned x = (unsigned)f->pos[i] + j;
            /* swscale reads past the plane only under zero taps */
            if (x < c->chroma_width) val += (int32_t)sample(pic, p, x, y) * f->coeff[i * f->size + j];
        }
        out[i] = (int16_t)QUALE_MIN(val >> c->in_shift, (1 << 15) - 1);
    }
}

/* One output row by yuv2rgb_X_c_template's tables (two pixels a chroma
 * pair); u and v are the vertical filter's sums. */
static void row_tables(const Ssim2Rgb *c, size_t pairs, const int16_t *y15, const int32_t *u,
                       const int32_t *v, uint8_t *out)
{
    const int rbase = c->yoffs - (int)(c->crv >> 9), bbase = c->yoffs - (int)(c->cbu >> 9);
    const int gbase = c->yoffs - (int)(c->cgu >> 9) - (int)(c->cgv >> 9);
    for (size_t i = 0; i < pairs; i++) {
        const int y1 = ((1 << 18) + y15[2 * i] * 4096) >> 19;
        const int y2 = ((1 << 18) + y15[2 * i + 1] * 4096) >> 19;
        const int64_t uc = clip_u8(((1 << 18) + u[i]) >> 19);
        const int64_t vc = clip_u8(((1 << 18) + v[i]) >> 19);
        const int r = rbase + (int)((vc * c->crv) >> 16);
        const int g = gbase + (int)((uc * c->cgu) >> 16) + (int)((vc * c->cgv) >> 16);
        const int b = bbase + (int)((uc * c->cbu) >> 16);
        uint8_t *px = out + 6 * i;
        px[0] = c->ytab[r + y1];
        px[1] = c->ytab[g + y1];
        px[2] = c->ytab[b + y1];
        px[3] = c->ytab[r + y2];
        px[4] = c->ytab[g + y2];
        px[5] = c->ytab[b + y2];
    }
}

static int32_t clip_30(int32_t v)
{
    return (v & ~((1 << 30) - 1)) ? (~v >> 31) & ((1 << 30) - 1) : v;
}

/* One output row by yuv2rgb_full_X_c_template and yuv2rgb_write_full(). */
static void row_full(const Ssim2Rgb *c, size_t pixels, const int16_t *y15, const int32_t *u,
                     const int32_t *v, uint8_t *out)
{
    for (size_t x = 0; x < pixels; x++) {
        int32_t Y = ((1 << 9) + y15[x] * 4096) >> 10;
        const int32_t U = ((1 << 9) - (128 << 19) + u[x]) >> 10;
        const int32_t V = ((1 << 9) - (128 << 19) + v[x]) >> 10;
        Y = (Y - c->y_offset) * c->y_coeff + (1 << 21);
        /* swscale's unsigned arithmetic: wraps, then the clip catches it */
        int32_t R = (int32_t)((uint32_t)Y + (uint32_t)V * (uint32_t)c->v2r);
        int32_t G = (int32_t)((uint32_t)Y + (uint32_t)V * (uint32_t)c->v2g +
                              (uint32_t)U * (uint32_t)c->u2g);
        int32_t B = (int32_t)((uint32_t)Y + (uint32_t)U * (uint32_t)c->u2b);
        if ((R | G | B) & (int32_t)0xC0000000) {
            R = clip_30(R);
            G = clip_30(G);
            B = clip_30(B);
        }
        out[3 * x] = (uint8_t)(R >> 22);
        out[3 * x + 1] = (uint8_t)(G >> 22);
        out[3 * x + 2] = (uint8_t)(B >> 22);
    }
}

void ssim2_rgb_convert(const Ssim2Rgb *c, const QualePicture *pic, uint8_t *rgb,
                       int16_t *scratch)
{
    const size_t cw = c->hchr.count;
    int16_t *hu = scratch, *hv = scratch + cw * c->chroma_height;
    int16_t *y15 = hv + cw * c->chroma_height;
    for (unsigned y = 0; y < c->chroma_height; y++) {
        hscale_chroma(c, pic, 1, y, hu + y * cw);
        hscale_chroma(c, pic, 2, y, hv + y * cw);
    }
    /* the sums of the vertical filter live on the stack in chunks */
    enum { CHUNK = 256 };
    int32_t u[CHUNK], v[CHUNK];
    const Ssim2Filter *vf = &c->vchr;
    for (unsigned y = 0; y < c->height; y++) {
        for (unsigned x = 0; x < c->width; x++)
            y15[x] = (int16_t)QUALE_MIN((int32_t)(sample(pic, 0, x, y) << 14) >> c->in_shift,
                                        (1 << 15) - 1);
        uint8_t *out = rgb + (size_t)y * c->width * 3;
        for (size_t x0 = 0; x0 < cw; x0 += CHUNK) {
            const size_t n = QUALE_MIN((size_t)CHUNK, cw - x0);
            for (size_t i = 0; i < n; i++) {
                int32_t su = 0, sv = 0;
                for (unsigned j = 0; j < vf->size; j++) {
                    const unsigned row = (unsigned)vf->pos[y] + j;
                    const int16_t k = vf->coeff[y * vf->size + j];
                    if (row >= c->chroma_height) continue; /* a zero tap */
                    su += hu[row * cw + x0 + i] * k;
                    sv += hv[row * cw + x0 + i] * k;
                }
                u[i] = su;
                v[i] = sv;
            }
            if (c->full_chroma)
                row_full(c, n, y15 + x0, u, v, out + x0 * 3);
            else
                row_tables(c, n, y15 + x0 * 2, u, v, out + x0 * 6);
        }
    }
}
