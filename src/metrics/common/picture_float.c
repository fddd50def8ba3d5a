/* Samples to float, as libvmaf's picture_copy(): see picture_float.h. */
#include <errno.h>
#include <stdint.h>

#include "picture_float.h"

int picture_float_check(const QualeVideoFormat *f, const char *metric, FeatureSink *sink)
{
    switch (f->bitdepth) {
    case 8: case 10: case 12: case 16:
        return 0;
    default:
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "%s: cannot score %u-bit video: libvmaf's float metrics "
                         "convert 8, 10, 12 and 16-bit samples only",
                         metric, f->bitdepth);
        return -EINVAL;
    }
}

/* libvmaf: (float)d + offset at 8 bits, (float)d / scaler + offset above.
 * The scaler is a power of two (picture_float_scaler()), so the quotient
 * is the product by its reciprocal, exactly, for a fraction of the time. */
PICTURE_FLOAT_INLINE void convert_row(const void *row, unsigned w, float inverse_scaler,
                                      float offset, float *dst, bool hbd)
{
    for (unsigned x = 0; x < w; x++)
        dst[x] = hbd ? (float)picture_sample(row, x, hbd) * inverse_scaler + offset
                     : (float)picture_sample(row, x, hbd) + offset;
}

void picture_float_row(const QualePicture *pic, unsigned plane, unsigned y, float offset,
                       float *dst)
{
    const unsigned w = pic->plane_width[plane];
    const void *row = picture_row(pic, plane, y);
    if (pic->format.bitdepth > 8)
        convert_row(row, w, 1.0f / picture_float_scaler(pic->format.bitdepth), offset, dst,
                    true);
    else
        convert_row(row, w, 1.0f, offset, dst, false);
}

bool picture_float_sums_exact(const QualeVideoFormat *f)
{
    if (f->bitdepth > 12) return false;
    const uint64_t peak = (1u << f->bitdepth) - 1;
    /* count < 2^30 and peak^2 < 2^24: the product fits 64 bits */
    return (uint64_t)f->width * f->height * peak * peak < (UINT64_C(1) << 53);
}
