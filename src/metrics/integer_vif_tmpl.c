/*
 * The parts of integer VIF that read samples, for one sample size.
 *
 * integer_vif.c includes this file twice: with BITDEPTH 8 (uint8_t samples,
 * the scale 0 of 8-bit video) and with BITDEPTH 16 (uint16_t samples: the
 * scale 0 of deeper video, and scales 1 to 3 of every bit depth, which hold
 * 16-bit filtered values).  Both read rows through vif_row(), which mirrors
 * the rows above and below the picture.
 *
 * The filters are symmetric, so taps k and fw - 1 - k share a multiply.
 * The sums are unsigned and never wrap, so the order of the additions does
 * not change them.
 */
#ifndef BITDEPTH
/* Compiled on its own, as a build that compiles every file of src/metrics does: the
 * template only means something inside integer_vif.c. */
typedef int quale_integer_vif_tmpl_is_included_by_integer_vif_c;
#else

#if BITDEPTH == 8
#define pixel uint8_t
/* 17 taps summing to 65536, times 255^2: below 2^32. */
#define sqsum uint32_t
#define BITFN(name) name##_8
#elif BITDEPTH == 16
#define pixel uint16_t
/* 65536 * 65535^2 needs 48 bits. */
#define sqsum uint64_t
#define BITFN(name) name##_16
#else
#error "BITDEPTH must be 8 or 16"
#endif

/*
 * Vertical pass of the statistics at output row y: the filtered mean of
 * each picture, and the filtered squares and cross product, each rounded
 * and shifted as libvmaf does for the scale.
 */
static VIF_ALWAYS_INLINE void
BITFN(vif_vertical_stats_fw)(const VifSource *src, unsigned y, const VifShift *sh,
                             const VifLines *out, const unsigned fw)
{
    const unsigned half = fw / 2;
    const uint16_t *const c = vif_filter_for_width(fw);
    const pixel *r[VIF_MAX_TAPS], *d[VIF_MAX_TAPS];
    for (unsigned k = 0; k < fw; k++) {
        const int row = (int)y - (int)half + (int)k;
        r[k] = vif_row(src->ref, src->ref_stride, row, src->h);
        d[k] = vif_row(src->dis, src->dis_stride, row, src->h);
    }

    uint32_t *restrict mu1 = out->mu1, *restrict mu2 = out->mu2;
    uint32_t *restrict xx = out->xx, *restrict yy = out->yy, *restrict xy = out->xy;
    for (unsigned x = 0; x < src->w; x++) {
        const uint32_t rc = r[half][x], dc = d[half][x];
        uint32_t sum1 = c[half] * rc;
        uint32_t sum2 = c[half] * dc;
        sqsum sum11 = c[half] * ((sqsum)rc * rc);
        sqsum sum22 = c[half] * ((sqsum)dc * dc);
        sqsum sum12 = c[half] * ((sqsum)rc * dc);
        for (unsigned k = 0; k < half; k++) {
            const uint32_t r0 = r[k][x], r1 = r[fw - 1 - k][x];
            const uint32_t d0 = d[k][x], d1 = d[fw - 1 - k][x];
            sum1 += c[k] * (r0 + r1);
            sum2 += c[k] * (d0 + d1);
            sum11 += c[k] * ((sqsum)r0 * r0 + (sqsum)r1 * r1);
            sum22 += c[k] * ((sqsum)d0 * d0 + (sqsum)d1 * d1);
            sum12 += c[k] * ((sqsum)r0 * d0 + (sqsum)r1 * d1);
        }
        mu1[x] = (sum1 + sh->mu_round) >> sh->mu_shift;
        mu2[x] = (sum2 + sh->mu_round) >> sh->mu_shift;
        xx[x] = (uint32_t)((sum11 + sh->sq_round) >> sh->sq_shift);
        yy[x] = (uint32_t)((sum22 + sh->sq_round) >> sh->sq_shift);
        xy[x] = (uint32_t)((sum12 + sh->sq_round) >> sh->sq_shift);
    }
}

static void BITFN(vif_vertical_stats)(const VifSource *src, unsigned y,
                                      const VifShift *sh, const VifLines *out,
                                      unsigned fw)
{
    /* A constant width lets the compiler unroll the taps. */
    switch (fw) {
    case 17: BITFN(vif_vertical_stats_fw)(src, y, sh, out, 17); break;
    case 9: BITFN(vif_vertical_stats_fw)(src, y, sh, out, 9); break;
    case 5: BITFN(vif_vertical_stats_fw)(src, y, sh, out, 5); break;
    default: BITFN(vif_vertical_stats_fw)(src, y, sh, out, 3); break;
    }
}

/*
 * Vertical pass of the low-pass filter that precedes decimation, at output
 * row y: (sum + 2^(shift - 1)) >> shift of each picture.
 */
static VIF_ALWAYS_INLINE void
BITFN(vif_vertical_lowpass_fw)(const VifSource *src, unsigned y, unsigned shift,
                               uint32_t *restrict ref_out, uint32_t *restrict dis_out,
                               const unsigned fw)
{
    const unsigned half = fw / 2;
    const uint16_t *const c = vif_filter_for_width(fw);
    const uint32_t round = 1u << (shift - 1);
    const pixel *r[VIF_MAX_TAPS], *d[VIF_MAX_TAPS];
    for (unsigned k = 0; k < fw; k++) {
        const int row = (int)y - (int)half + (int)k;
        r[k] = vif_row(src->ref, src->ref_stride, row, src->h);
        d[k] = vif_row(src->dis, src->dis_stride, row, src->h);
    }

    for (unsigned x = 0; x < src->w; x++) {
        uint32_t sum1 = c[half] * (uint32_t)r[half][x];
        uint32_t sum2 = c[half] * (uint32_t)d[half][x];
        for (unsigned k = 0; k < half; k++) {
            sum1 += c[k] * ((uint32_t)r[k][x] + r[fw - 1 - k][x]);
            sum2 += c[k] * ((uint32_t)d[k][x] + d[fw - 1 - k][x]);
        }
        /* At most 65535 for every input libvmaf feeds it; it keeps 16 bits. */
        ref_out[x] = (uint16_t)((sum1 + round) >> shift);
        dis_out[x] = (uint16_t)((sum2 + round) >> shift);
    }
}

static void BITFN(vif_vertical_lowpass)(const VifSource *src, unsigned y,
                                        unsigned shift, uint32_t *ref_out,
                                        uint32_t *dis_out, unsigned fw)
{
    switch (fw) {
    case 9: BITFN(vif_vertical_lowpass_fw)(src, y, shift, ref_out, dis_out, 9); break;
    case 5: BITFN(vif_vertical_lowpass_fw)(src, y, shift, ref_out, dis_out, 5); break;
    default: BITFN(vif_vertical_lowpass_fw)(src, y, shift, ref_out, dis_out, 3); break;
    }
}

#undef pixel
#undef sqsum
#undef BITFN

#endif /* BITDEPTH */
