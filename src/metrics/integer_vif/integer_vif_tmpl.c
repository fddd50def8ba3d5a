/*
 * The parts of integer VIF that read samples, for one sample size.
 *
 * integer_vif.c includes this file twice: with BITDEPTH 8 (uint8_t samples,
 * the scale 0 of 8-bit video) and with BITDEPTH 16 (uint16_t samples: the
 * scale 0 of deeper video, and scales 1 to 3 of every bit depth, which hold
 * 16-bit filtered values).  They are the C kernels of the VifDsp table
 * (integer_vif.h): the caller hands them the rows under each tap, already
 * mirrored at the top and the bottom of the picture.
 *
 * The filters are symmetric, so taps k and fw - 1 - k share a multiply.
 * The sums are unsigned and never wrap, so the order of the additions does
 * not change them: taps outer, columns inner, a block of VIF_BLOCK columns
 * at a time so that the sums stay in the first-level cache.
 */
#ifndef BITDEPTH
/* Compiled on its own, as a build that compiles every file of src/metrics
 * does: the template only means something inside integer_vif.c. */
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

/* The vertical sums of the statistics over a block of columns. */
typedef struct BITFN(VifVerticalSums) {
    uint32_t mu1[VIF_BLOCK], mu2[VIF_BLOCK];
    sqsum xx[VIF_BLOCK], yy[VIF_BLOCK], xy[VIF_BLOCK];
} BITFN(VifVerticalSums);

/* Adds the pair of taps of coefficient c, rows r0 and r1 of the reference
 * and d0 and d1 of the distorted picture, to n columns of the sums. */
static inline void BITFN(vif_vertical_stats_taps_n)(BITFN(VifVerticalSums) *restrict v,
                                                    const pixel *restrict r0,
                                                    const pixel *restrict r1,
                                                    const pixel *restrict d0,
                                                    const pixel *restrict d1,
                                                    uint32_t c, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        const uint32_t a0 = r0[i], a1 = r1[i], b0 = d0[i], b1 = d1[i];
        v->mu1[i] += c * (a0 + a1);
        v->mu2[i] += c * (b0 + b1);
        v->xx[i] += (sqsum)(c * a0) * a0 + (sqsum)(c * a1) * a1;
        v->yy[i] += (sqsum)(c * b0) * b0 + (sqsum)(c * b1) * b1;
        v->xy[i] += (sqsum)(c * a0) * b0 + (sqsum)(c * a1) * b1;
    }
}

static VIF_TAPS_FUNCTION void
BITFN(vif_vertical_stats_taps)(BITFN(VifVerticalSums) *v, const pixel *r0, const pixel *r1,
                               const pixel *d0, const pixel *d1, uint32_t c, unsigned n)
{
    if (n == VIF_BLOCK)
        BITFN(vif_vertical_stats_taps_n)(v, r0, r1, d0, d1, c, VIF_BLOCK);
    else
        BITFN(vif_vertical_stats_taps_n)(v, r0, r1, d0, d1, c, n);
}

/*
 * Vertical pass of the statistics at one row: the filtered mean of each
 * picture, and the filtered squares and cross product, rounded and
 * shifted as libvmaf does for the scale, into the planes.
 */
void BITFN(vif_vertical_stats_c)(const void *const ref[], const void *const dis[],
                                        unsigned fw, unsigned n, const VifShift *sh,
                                        int16_t *const planes[VIF_PLANES])
{
    const unsigned half = fw / 2;
    const uint16_t *const c = vif_filter(fw);
    const pixel *const *r = (const pixel *const *)ref, *const *d = (const pixel *const *)dis;

    BITFN(VifVerticalSums) v;
    for (unsigned x0 = 0; x0 < n; x0 += VIF_BLOCK) {
        const unsigned nb = QUALE_MIN(VIF_BLOCK, n - x0);

        const pixel *rc = r[half] + x0, *dc = d[half] + x0;
        const uint32_t cc = c[half];
        for (unsigned i = 0; i < nb; i++) {
            const uint32_t a = rc[i], b = dc[i];
            v.mu1[i] = cc * a;
            v.mu2[i] = cc * b;
            v.xx[i] = (sqsum)(cc * a) * a;
            v.yy[i] = (sqsum)(cc * b) * b;
            v.xy[i] = (sqsum)(cc * a) * b;
        }
        for (unsigned k = 0; k < half; k++)
            BITFN(vif_vertical_stats_taps)(&v, r[k] + x0, r[fw - 1 - k] + x0,
                                           d[k] + x0, d[fw - 1 - k] + x0, c[k], nb);

        /* libvmaf keeps 16 bits of the means (a cast that never cuts
         * samples within their bit depth) and 32 of the squares. */
        for (unsigned i = 0; i < nb; i++) {
            const uint32_t xx = (uint32_t)((v.xx[i] + sh->sq_round) >> sh->sq_shift);
            const uint32_t yy = (uint32_t)((v.yy[i] + sh->sq_round) >> sh->sq_shift);
            const uint32_t xy = (uint32_t)((v.xy[i] + sh->sq_round) >> sh->sq_shift);
            planes[VIF_PLANE_MU1][x0 + i] = vif_plane_value((v.mu1[i] + sh->mu_round) >> sh->mu_shift);
            planes[VIF_PLANE_MU2][x0 + i] = vif_plane_value((v.mu2[i] + sh->mu_round) >> sh->mu_shift);
            planes[VIF_PLANE_XX_HI][x0 + i] = vif_plane_value(xx >> 16);
            planes[VIF_PLANE_XX_LO][x0 + i] = vif_plane_value(xx);
            planes[VIF_PLANE_YY_HI][x0 + i] = vif_plane_value(yy >> 16);
            planes[VIF_PLANE_YY_LO][x0 + i] = vif_plane_value(yy);
            planes[VIF_PLANE_XY_HI][x0 + i] = vif_plane_value(xy >> 16);
            planes[VIF_PLANE_XY_LO][x0 + i] = vif_plane_value(xy);
        }
    }
}

/* Adds a pair of taps of the low-pass filter to n columns of sum1 (rows r0
 * and r1 of the reference) and sum2 (d0 and d1 of the distorted picture). */
static inline void BITFN(vif_vertical_lowpass_taps_n)(uint32_t *restrict sum1,
                                                      uint32_t *restrict sum2,
                                                      const pixel *restrict r0,
                                                      const pixel *restrict r1,
                                                      const pixel *restrict d0,
                                                      const pixel *restrict d1,
                                                      uint32_t c, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        sum1[i] += c * ((uint32_t)r0[i] + r1[i]);
        sum2[i] += c * ((uint32_t)d0[i] + d1[i]);
    }
}

static VIF_TAPS_FUNCTION void
BITFN(vif_vertical_lowpass_taps)(uint32_t *sum1, uint32_t *sum2, const pixel *r0,
                                 const pixel *r1, const pixel *d0, const pixel *d1,
                                 uint32_t c, unsigned n)
{
    if (n == VIF_BLOCK)
        BITFN(vif_vertical_lowpass_taps_n)(sum1, sum2, r0, r1, d0, d1, c, VIF_BLOCK);
    else
        BITFN(vif_vertical_lowpass_taps_n)(sum1, sum2, r0, r1, d0, d1, c, n);
}

/*
 * Vertical pass of the low-pass filter that precedes decimation, at one
 * row: (sum + 2^(shift - 1)) >> shift of each picture, into planes.
 */
void BITFN(vif_vertical_lowpass_c)(const void *const ref[], const void *const dis[],
                                          unsigned fw, unsigned n, unsigned shift,
                                          int16_t *ref_out, int16_t *dis_out)
{
    const unsigned half = fw / 2;
    const uint16_t *const c = vif_filter(fw);
    const uint32_t round = 1u << (shift - 1);
    const pixel *const *r = (const pixel *const *)ref, *const *d = (const pixel *const *)dis;

    uint32_t sum1[VIF_BLOCK], sum2[VIF_BLOCK];
    for (unsigned x0 = 0; x0 < n; x0 += VIF_BLOCK) {
        const unsigned nb = QUALE_MIN(VIF_BLOCK, n - x0);
        const pixel *rc = r[half] + x0, *dc = d[half] + x0;
        const uint32_t cc = c[half];
        for (unsigned i = 0; i < nb; i++) {
            sum1[i] = cc * rc[i];
            sum2[i] = cc * dc[i];
        }
        for (unsigned k = 0; k < half; k++)
            BITFN(vif_vertical_lowpass_taps)(sum1, sum2, r[k] + x0, r[fw - 1 - k] + x0,
                                             d[k] + x0, d[fw - 1 - k] + x0, c[k], nb);
        /* At most 65535 for every input libvmaf feeds it; it keeps 16 bits. */
        for (unsigned i = 0; i < nb; i++) {
            ref_out[x0 + i] = vif_plane_value((sum1[i] + round) >> shift);
            dis_out[x0 + i] = vif_plane_value((sum2[i] + round) >> shift);
        }
    }
}

#undef pixel
#undef sqsum
#undef BITFN

#endif /* BITDEPTH */
