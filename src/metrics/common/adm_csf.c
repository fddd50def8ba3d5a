/*
 * The contrast sensitivity functions of ADM (adm_csf.h), shared by integer
 * and float ADM: libvmaf computes them in the same float and double steps
 * for both.
 */
#include <math.h>

#include "adm_csf.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Watson et al., "Visibility of Wavelet Quantization Noise", IEEE TIP 1997:
 * formula (9) with the Y parameters of table IV and the 7-9 biorthogonal
 * basis amplitudes of table V; theta 1 = h/v, 2 = diagonal. */
static const float watson_a = 0.495f, watson_k = 0.466f, watson_f0 = 0.401f;
static const float watson_g[4] = { 1.501f, 1.0f, 0.534f, 1.0f };
static const float watson_amplitude[4][4] = {
    { 0.62171f, 0.67234f, 0.72709f, 0.67234f },
    { 0.34537f, 0.41317f, 0.49428f, 0.41317f },
    { 0.18004f, 0.22727f, 0.28688f, 0.22727f },
    { 0.091401f, 0.11792f, 0.15214f, 0.11792f },
};

float adm_csf_watson_quant_step(int lambda, int theta, double view_dist, int display_height)
{
    const float r = view_dist * display_height * M_PI / 180.0;
    const float temp = log10(pow(2.0, lambda + 1) * watson_f0 * watson_g[theta] / r);
    return 2.0 * watson_a * pow(10.0, watson_k * temp * temp) / watson_amplitude[lambda][theta];
}

/* The DLM paper's CSF (Li, Zhang, Ma, Ngan, IEEE TMM 2011) at the nominal
 * frequency of each level, diagonals at 45 degrees. */
float adm_csf_dlm(int lambda, double view_dist, int display_height, int theta)
{
    const float r = view_dist * display_height * M_PI / 180.0;
    float freq = r / pow(2, lambda + 1);
    if (theta == 45) freq /= 0.7;
    return (0.31 + 0.69 * freq) * exp(-0.29 * freq);
}

/* Barten's CSF as simplified in HDR-VDP 2.2.1 (Mantiuk et al. 2011). */
static const float barten_lum_anchor[6] = { 0.002f, 0.02f, 0.2f, 2.f, 20.f, 150.f };
static const float barten_param[6][5] = {
    { 0.0160737f, 0.991265f, 3.74038f, 0.50722f, 4.46044f },
    { 0.383873f, 0.800889f, 3.54104f, 0.682505f, 4.94958f },
    { 0.929301f, 0.476505f, 4.37453f, 0.750315f, 5.28678f },
    { 1.29776f, 0.405782f, 4.40602f, 0.935314f, 5.61425f },
    { 1.49222f, 0.334278f, 3.79542f, 1.07327f, 6.4635f },
    { 1.46213f, 0.394533f, 2.7755f, 1.16577f, 7.45665f },
};
static const float barten_sa[4] = { 30.162f, 4.0627f, 1.6596f, 0.2712f };
static const float barten_mtf_a[4] = { 0.424838596301290f, 0.572435103936480f,
                                       0.000167576239164937f, 0.00255872352306433f };
static const float barten_mtf_b[4] = { 0.028f, 0.37f, 37.f, 360.f };

static float barten_lerp(float x0, float y0, float x1, float y1, float x)
{
    return y0 + ((y1 - y0) / (x1 - x0)) * (x - x0);
}

static float barten_rod_cone(float lum)
{
    return barten_sa[0] * pow(pow(barten_sa[1] / lum, barten_sa[2]) + 1, -barten_sa[3]);
}

static float barten_mtf(float freq)
{
    float mtf = 0.0f;
    for (int i = 0; i < 4; i++) mtf = mtf + barten_mtf_a[i] * exp(-barten_mtf_b[i] * freq);
    return mtf;
}

float adm_csf_barten(int lambda, double view_dist, int display_height, double lum,
                        double scale)
{
    const float r = view_dist * display_height * M_PI / 180.0;
    const float freq = r / pow(2, lambda + 1);
    const double l = lum > barten_lum_anchor[5] ? barten_lum_anchor[5]
                   : lum < barten_lum_anchor[0] ? barten_lum_anchor[0] : lum;
    int lo = 0, hi = 0;
    for (int i = 0; i < 5; i++) {
        if (l >= barten_lum_anchor[i] && l <= barten_lum_anchor[i + 1]) {
            lo = i;
            hi = i + 1;
            break;
        }
    }
    const float x0 = log10(barten_lum_anchor[lo]), x1 = log10(barten_lum_anchor[hi]);
    const float x = log10(l);
    float p[4];
    for (int k = 0; k < 4; k++)
        p[k] = barten_lerp(x0, barten_param[lo][k + 1], x1, barten_param[hi][k + 1], x);

    const float a = 1.0f + pow(p[0] * freq, p[1]);
    const float b = 1.0f / pow(1 - exp(-pow(freq / 7, 2)), p[2]);
    const float csf = p[3] / pow(a * b, 0.5);
    return csf * barten_mtf(freq) * barten_rod_cone((float)lum) * scale;
}
