/* The Gaussian filters, kernel scales and prescalers of float VIF and
 * SpEED (vif_tools.h): libvmaf's vif_tools.c, its float and double steps
 * kept. */
#include <math.h>
#include <string.h>

#include "common.h"
#include "vif_tools.h"

const char *const vif_prescale_method_names[] = {
    "nearest", "bilinear", "bicubic", "lanczos4", NULL,
};

/* The kernel scales libvmaf accepts (vif_tools.h there), as floats. */
static const float valid_kernelscales[] = {
    1.0f, 1.0f / 2.0f, 3.0f / 2.0f, 2.0f, 2.0f / 3.0f, 24.0f / 10.0f, 360.0f / 97.0f,
    4.0f / 3.0f, 3.5f / 3.0f, 3.75f / 3.0f, 4.25f / 3.0f, 5.0f / 3.0f, 3.0f,
    1.0f / 2.25f, 1.4746f, 1.54f, 1.6f, 1.06667f, 0.711111f, 0.740740f, 1.111111f,
};

bool vif_kernelscale_valid(float ks)
{
    for (size_t i = 0; i < QUALE_ARRAY_SIZE(valid_kernelscales); i++)
        if (fabsf(ks - valid_kernelscales[i]) < 1e-3) return true;
    return false;
}

int vif_filter_taps(int scale, float ks)
{
    const int n = (1 << (4 - scale)) + 1;
    int taps = (int)ceil(n * ks);
    if (taps % 2 == 0) taps++;
    return taps > 3 ? taps : 3;
}

void vif_gaussian_kernel(float *out, int taps, float stdev)
{
    const int half = (taps - 1) / 2;
    float sum = 0;
    for (int i = 0; i < taps; i++) {
        const float x = (float)(i - half);
        const float num = exp(-0.5 * x / stdev * x / stdev);
        const float den = 1 / (stdev * sqrt(2 * M_PI));
        out[i] = num / den;
        sum += out[i];
    }
    for (int i = 0; i < taps; i++) out[i] /= sum;
}


/*
 * libvmaf's vif_scale_frame_s(), used where vif_prescale changes the size
 * (the same size is a copy whatever the method).  Every method samples
 * the source at ((x + 0.5) * ratio - 0.5), ratio = float source size over
 * target size, computed in double and kept as a float; positions outside
 * the picture are mirrored once (-k -> k, n - 1 + k -> n - 1 - k) on
 * floats.  Float arithmetic in libvmaf's order:
 *  - bilinear: the four neighbours (floor, ceil; mirrored) weighted by
 *    (1 - dy)(1 - dx), (1 - dy)dx, dy(1 - dx), dy dx, with dx, dy the
 *    position less the mirrored floor;
 *  - bicubic: 4x4 neighbours, Keys' kernel with a = -0.75, rows outer,
 *    summed from 0;
 *  - lanczos4: 9x9 neighbours, the Lanczos kernel of a = 4 in double
 *    kept as float, the weighted sum over the weights' sum.
 *  - nearest: sample (int)(x * ratio), the product in float.
 */
static float prescale_mirror(float i, float left, float right)
{
    return i < left ? -i : i > right ? 2 * right - i : i;
}

static void prescale_bilinear(const float *src, int sw, int sh, size_t ss, float *dst, int dw,
                              int dh, size_t ds)
{
    const float ratio_x = (float)sw / dw, ratio_y = (float)sh / dh;
    for (int y = 0; y < dh; y++) {
        const float yy = (y + 0.5) * ratio_y - 0.5;
        const int y1 = (int)prescale_mirror((float)floor(yy), 0, (float)(sh - 1));
        const int y2 = (int)prescale_mirror((float)ceil(yy), 0, (float)(sh - 1));
        const float dy = yy - y1;
        const float *r1 = src + (size_t)y1 * ss, *r2 = src + (size_t)y2 * ss;
        float *out = dst + (size_t)y * ds;
        for (int x = 0; x < dw; x++) {
            const float xx = (x + 0.5) * ratio_x - 0.5;
            const int x1 = (int)prescale_mirror((float)floor(xx), 0, (float)(sw - 1));
            const int x2 = (int)prescale_mirror((float)ceil(xx), 0, (float)(sw - 1));
            const float dx = xx - x1;
            out[x] = (1 - dy) * (1 - dx) * r1[x1] + (1 - dy) * dx * r1[x2] +
                     dy * (1 - dx) * r2[x1] + dy * dx * r2[x2];
        }
    }
}

static float bicubic_weight(float t)
{
    const float a = -0.75f;
    if (t < 0) t = -t;
    if (t < 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return (((t - 5) * t + 8) * t - 4) * a;
    return 0;
}

static float lanczos4_weight(float x, float a)
{
    if (x == 0.0) return 1.0f;
    if (x > -a && x < a)
        return (float)(a * sin(M_PI * x) * sin(M_PI * x / a) / (M_PI * M_PI * x * x));
    return 0.0f;
}

/* One sample of the bicubic (radius 2) or lanczos4 (radius 4) scaler at
 * (x, y) of the source. */
static float prescale_kernel(const float *src, int sw, int sh, size_t ss, float x, float y,
                             int method)
{
    const int x0 = (int)floor(x), y0 = (int)floor(y);
    const float dx = x - x0, dy = y - y0;
    float wx[9], wy[9];
    if (method == VIF_PRESCALE_BICUBIC) {
        for (int i = -1; i <= 2; i++) {
            wx[i + 1] = bicubic_weight(i - dx);
            wy[i + 1] = bicubic_weight(i - dy);
        }
        float acc = 0.0f;
        for (int j = -1; j <= 2; j++) {
            const int yi = (int)prescale_mirror((float)(y0 + j), 0, (float)(sh - 1));
            for (int i = -1; i <= 2; i++) {
                const int xi = (int)prescale_mirror((float)(x0 + i), 0, (float)(sw - 1));
                acc += src[(size_t)yi * ss + xi] * (wx[i + 1] * wy[j + 1]);
            }
        }
        return acc;
    }
    const int a = 4;
    for (int i = -a; i <= a; i++) {
        wx[i + a] = lanczos4_weight(i - dx, (float)a);
        wy[i + a] = lanczos4_weight(i - dy, (float)a);
    }
    float acc = 0.0f, weight_sum = 0.0f;
    for (int j = -a; j <= a; j++) {
        const int yi = (int)prescale_mirror((float)(y0 + j), 0, (float)(sh - 1));
        for (int i = -a; i <= a; i++) {
            const float weight = wx[i + a] * wy[j + a];
            weight_sum += weight;
            const int xi = (int)prescale_mirror((float)(x0 + i), 0, (float)(sw - 1));
            acc += src[(size_t)yi * ss + xi] * weight;
        }
    }
    return acc / weight_sum;
}

void vif_prescale(const float *src, int sw, int sh, size_t ss, float *dst, int dw, int dh,
                  size_t ds, int method)
{
    if (sw == dw && sh == dh) {
        for (int y = 0; y < dh; y++) memcpy(dst + (size_t)y * ds, src + (size_t)y * ss, sizeof(float) * (size_t)dw);
        return;
    }
    if (method == VIF_PRESCALE_NEAREST) {
        const float ratio_x = (float)sw / dw, ratio_y = (float)sh / dh;
        for (int y = 0; y < dh; y++) {
            const float *row = src + (size_t)(int)(y * ratio_y) * ss;
            float *out = dst + (size_t)y * ds;
            for (int x = 0; x < dw; x++) out[x] = row[(int)(x * ratio_x)];
        }
        return;
    }
    if (method == VIF_PRESCALE_BILINEAR) {
        prescale_bilinear(src, sw, sh, ss, dst, dw, dh, ds);
        return;
    }
    const float ratio_x = (float)sw / dw, ratio_y = (float)sh / dh;
    for (int y = 0; y < dh; y++) {
        const float yy = (y + 0.5) * ratio_y - 0.5;
        float *out = dst + (size_t)y * ds;
        for (int x = 0; x < dw; x++) {
            const float xx = (x + 0.5) * ratio_x - 0.5;
            out[x] = prescale_kernel(src, sw, sh, ss, xx, yy, method);
        }
    }
}

