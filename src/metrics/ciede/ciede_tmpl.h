/*
 * CIEDE2000's per-pixel arithmetic, written once for a scalar and for SIMD
 * vectors: the C reference (ciede.h, with plain double and float), its
 * CUDA twin (the same scalar code on the device) and the x86 kernels
 * (src/metrics/x86/ciede_<isa>.c, GCC vector extensions) include this file
 * with their own types, so every lane of every implementation computes the
 * same operations in the same order and gives the same bits.
 *
 * libvmaf calls the C library's pow, atan2, sin, cos and exp.  Those are
 * not exactly specified (glibc's are within an ulp and pick their code by
 * CPU at run time), so they cannot be reproduced in SIMD; instead quale
 * defines its own, below: range reduction and polynomials in plain double
 * arithmetic (+, -, *, /, sqrt, which IEEE 754 rounds exactly, and integer
 * operations on the bits), with coefficients from
 * scripts/gen_ciede_math.py.  They are within a few ulp of the exact
 * values over the ranges CIEDE2000 uses, and their results are rounded to
 * float almost at once, so a colour or a deltaE differs from libvmaf's in
 * a last float bit at most, and rarely: the golden test measures it.
 *
 * The includer defines, before including:
 *   CT(name)        the name of a function of this instantiation
 *   CT_FN           its qualifiers
 *   VD, VF          N doubles, N floats (N = 1: double, float)
 *   VU64, VU32      N uint64, N uint32: bit patterns and lane masks
 *                   (all ones for true, all zeros for false)
 *   CT_MD(c)        VU64 mask of a comparison of VD values
 *   CT_MF(c)        VU32 mask of a comparison of VF values
 *   CT_MD2MF(m)     the VU32 mask of a VU64 mask
 *   CT_BITS(x), CT_DOUBLE(u)   VD <-> VU64, reinterpreting the bits
 *   CT_FBITS(x), CT_FLOAT(u)   VF <-> VU32, likewise
 *   CT_F2D(x), CT_D2F(x)       float -> double, double -> float (rounded
 *                              to nearest), lane by lane
 *   CT_SQRT(x)      double square root
 *   CT_SPLAT(c)     a VD of N copies of the double c
 * Scalars mix with vectors of their type (x * 2.0 with x a VD).  A float
 * vector must only meet float constants (f suffix): GCC would silently
 * compute x * 2.0 in float where C promotes to double.
 */

/* ---- selection --------------------------------------------------------- */

CT_FN VD CT(select)(VU64 mask, VD a, VD b)
{
    return CT_DOUBLE((CT_BITS(a) & mask) | (CT_BITS(b) & ~mask));
}

CT_FN VF CT(selectf)(VU32 mask, VF a, VF b)
{
    return CT_FLOAT((CT_FBITS(a) & mask) | (CT_FBITS(b) & ~mask));
}

/* +0 where mask is set, else x. */
CT_FN VF CT(zerof)(VU32 mask, VF x)
{
    return CT_FLOAT(CT_FBITS(x) & ~mask);
}

CT_FN VF CT(fabsf)(VF x)
{
    return CT_FLOAT(CT_FBITS(x) & 0x7fffffffu);
}

/* ---- elementary functions ---------------------------------------------- */

/* c[0] + x (c[1] + x (c[2] + ... x c[n - 1])), by Horner's rule. */
CT_FN VD CT(horner)(VD x, const double *c, int n)
{
    VD p = CT_SPLAT(c[n - 1]);
    for (int i = n - 2; i >= 0; i--) p = p * x + c[i];
    return p;
}

/* Adding then subtracting 1.5 * 2^52 rounds a double below 2^51 to an
 * integer (to nearest, ties to even), whose low bits the sum holds. */
#define CT_ROUNDER 0x1.8p52

/*
 * exp(x) for |x| < 700: x = k ln2 + r, |r| <= ln2 / 2 (ln2 in two parts,
 * the first with zeros in its low bits so that k * ln2_hi is exact), then
 * exp(r) by a degree-12 polynomial and the exponent k added to its bits.
 */
CT_FN VD CT(exp)(VD x)
{
    x = CT(select)(CT_MD(x > 700.0), CT_SPLAT(700.0), x);
    x = CT(select)(CT_MD(x < -700.0), CT_SPLAT(-700.0), x);
    const VD t = x * CIEDE_INV_LN2 + CT_ROUNDER;
    const VD k = t - CT_ROUNDER;
    const VD r = (x - k * CIEDE_LN2_HI) - k * CIEDE_LN2_LO;
    const double coeffs[] = CIEDE_EXP_POLY;
    const VD p = CT(horner)(r, coeffs, CIEDE_EXP_TERMS);
    /* 2^k: k + 1023 in the exponent field (the rounder's bits end in k) */
    const VU64 scale = (CT_BITS(t) << 52) + ((uint64_t)1023 << 52);
    return p * CT_DOUBLE(scale);
}

/*
 * log(x) for normal positive x: x = 2^k m with sqrt(1/2) <= m < sqrt(2),
 * f = m - 1 (exact), s = f / (2 + f), and
 *   log(m) = 2 atanh(s) = f - (f^2 / 2 - s (f^2 / 2 + R(s^2)))
 * with R(z) = 2 z / 3 + 2 z^2 / 5 + ... a degree-8 polynomial.
 */
CT_FN VD CT(log)(VD x)
{
    /* Moving sqrt(1/2)'s bits to 1.0's puts every m >= sqrt(1/2) in the
     * exponent of 1 and every smaller one in that of 1/2. */
    const VU64 u = CT_BITS(x) + (UINT64_C(0x3ff0000000000000) - UINT64_C(0x3fe6a09e667f3bcd));
    const VD k = CT_DOUBLE((u >> 52) | UINT64_C(0x4330000000000000)) - (0x1p52 + 1023.0);
    const VD m = CT_DOUBLE((u & UINT64_C(0x000fffffffffffff)) + UINT64_C(0x3fe6a09e667f3bcd));
    const VD f = m - 1.0;
    const VD s = f / (2.0 + f);
    const VD z = s * s;
    const double coeffs[] = CIEDE_LOG_POLY;
    VD r = CT(horner)(z, coeffs, CIEDE_LOG_TERMS);
    r = r * z;
    const VD hfsq = 0.5 * f * f;
    return k * CIEDE_LN2_HI + ((f - (hfsq - (s * (hfsq + r) + k * CIEDE_LN2_LO))));
}

/* x^y = exp(y log(x)) for x > 0 (not x = 0: the callers never ask). */
CT_FN VD CT(pow)(VD x, double y)
{
    return CT(exp)(y * CT(log)(x));
}

/* sin(r) and cos(r) for |r| <= pi / 4 (a little more is harmless). */
CT_FN VD CT(sin_kernel)(VD r)
{
    const VD z = r * r;
    const double coeffs[] = CIEDE_SIN_POLY;
    const VD p = CT(horner)(z, coeffs, CIEDE_SIN_TERMS);
    return r + (r * z) * p;
}

CT_FN VD CT(cos_kernel)(VD r)
{
    const VD z = r * r;
    const double coeffs[] = CIEDE_COS_POLY;
    const VD p = CT(horner)(z, coeffs, CIEDE_COS_TERMS);
    return 1.0 + z * p;
}

/*
 * sin and cos for |x| < 2^20: x = q pi/2 + r, |r| <= pi/4 (pi/2 in two
 * parts, the first of 33 bits so that q * its value is exact, and x less
 * it then exact too), then the kernel of r the quadrant q mod 4 asks for,
 * its sign flipped in the bits.  (CIEDE2000's sines are of angles within
 * pi/2: sin_half_turn() takes them without the reduction.)
 */
CT_FN VD CT(reduce_pio2)(VD x, VU64 *quadrant)
{
    const VD t = x * CIEDE_TWO_OVER_PI + CT_ROUNDER;
    const VD q = t - CT_ROUNDER;
    *quadrant = CT_BITS(t);
    return (x - q * CIEDE_PIO2_HI) - q * CIEDE_PIO2_LO;
}

/* sin(x) for |x| <= pi/2 (a little more is harmless), without a
 * reduction: x + x z P(z), z = x^2, P of degree 8. */
CT_FN VD CT(sin_half_turn)(VD x)
{
    const VD z = x * x;
    const double coeffs[] = CIEDE_SIN_HALF_POLY;
    const VD p = CT(horner)(z, coeffs, CIEDE_SIN_HALF_TERMS);
    return x + (x * z) * p;
}

/* sin(x) and cos(x) from one reduction. */
CT_FN void CT(sincos)(VD x, VD *sin_x, VD *cos_x)
{
    VU64 q;
    const VD r = CT(reduce_pio2)(x, &q);
    const VU64 odd = 0 - (q & 1);
    const VD s = CT(sin_kernel)(r), c = CT(cos_kernel)(r);
    *sin_x = CT_DOUBLE(CT_BITS(CT(select)(odd, c, s)) ^ ((q & 2) << 62));
    *cos_x = CT_DOUBLE(CT_BITS(CT(select)(odd, s, c)) ^ (((q + 1) & 2) << 62));
}

/*
 * atan2(y, x) for (y, x) not both 0, finite.  With lo <= hi the smaller
 * and larger of |y|, |x|, t = lo / hi in [0, 1] is reduced to |u| <= 7/16
 * as atan(t) = atan(c) + atan((t - c) / (1 + t c)) with c = 0, 1/2 or 1
 * (for t below 7/16, below 11/16, above), atan(u) = u + u z P(z), z = u^2,
 * P of degree 12; then pi/2 - a where |y| > |x|, pi - a where x < 0, and
 * y's sign (a y of -0 gives -0 or -pi, as the C library's atan2).
 */
CT_FN VD CT(atan2)(VD y, VD x)
{
    const VD ay = CT_DOUBLE(CT_BITS(y) & UINT64_C(0x7fffffffffffffff));
    const VD ax = CT_DOUBLE(CT_BITS(x) & UINT64_C(0x7fffffffffffffff));
    const VU64 swap = CT_MD(ay > ax);
    const VD lo = CT(select)(swap, ax, ay), hi = CT(select)(swap, ay, ax);
    /* lo / hi < 7/16: c = 0; < 11/16: c = 1/2; else c = 1 */
    const VU64 mid = CT_MD(lo >= hi * 0.4375);
    const VU64 high = CT_MD(lo >= hi * 0.6875);
    VD num = CT(select)(mid, 2.0 * lo - hi, lo);
    VD den = CT(select)(mid, 2.0 * hi + lo, hi);
    num = CT(select)(high, lo - hi, num);
    den = CT(select)(high, lo + hi, den);
    VD base_hi = CT(select)(mid, CT_SPLAT(CIEDE_ATAN_HALF_HI), CT_SPLAT(0.0));
    VD base_lo = CT(select)(mid, CT_SPLAT(CIEDE_ATAN_HALF_LO), CT_SPLAT(0.0));
    base_hi = CT(select)(high, CT_SPLAT(CIEDE_PIO4_HI), base_hi);
    base_lo = CT(select)(high, CT_SPLAT(CIEDE_PIO4_LO), base_lo);

    const VD u = num / den;
    const VD z = u * u;
    const double coeffs[] = CIEDE_ATAN_POLY;
    const VD p = CT(horner)(z, coeffs, CIEDE_ATAN_TERMS);
    VD a = base_hi + (u + ((u * z) * p + base_lo));

    a = CT(select)(swap, CIEDE_PIO2_HI + (CIEDE_PIO2_LO - a), a);
    a = CT(select)(CT_MD(x < 0.0), CIEDE_PI_HI + (CIEDE_PI_LO - a), a);
    return CT_DOUBLE(CT_BITS(a) | (CT_BITS(y) & UINT64_C(0x8000000000000000)));
}

#undef CT_ROUNDER

/* ---- Y'CbCr to L*a*b* ---------------------------------------------------- */

/* sRGB decoding to linear light. */
CT_FN VD CT(linearize)(VD c)
{
    /* pow only sees the values it is taken of (1 elsewhere) */
    const VU64 curve = CT_MD(c > 10. / 255.);
    const VD base = CT(select)(curve, (c + 0.055) * (1.0 / 1.055), CT_SPLAT(1.0));
    return CT(select)(curve, CT(pow)(base, 2.4), c * (1.0 / 12.92));
}

/* The L*a*b* companding function, rounded to float. */
CT_FN VF CT(lab_f)(VD c)
{
    const double kappa = 24389.0 / 27.0;
    const double epsilon = 216.0 / 24389.0;
    const VU64 root = CT_MD(c > epsilon);
    const VD base = CT(select)(root, c, CT_SPLAT(1.0));
    return CT_D2F(CT(select)(root, CT(pow)(base, 1.0 / 3.0), (kappa * c + 16.0) * (1.0 / 116.0)));
}

/* The colour of samples (y, u, v) as doubles: BT.709 limited range to
 * R'G'B', linear sRGB, XYZ (D65) and L*a*b*, each step libvmaf's. */
CT_FN void CT(colour_linear)(VD r, VD g, VD bl, VF *l, VF *a, VF *b);

CT_FN void CT(colour)(const CiedeConvert *s, VD y, VD u, VD v, VF *l, VF *a, VF *b)
{
    y = (y - s->y_offset) * s->y_scale;
    u = (u - s->c_offset) * s->c_scale;
    v = (v - s->c_offset) * s->c_scale;

    const VD r = CT(linearize)(y + 1.28033 * v);
    const VD g = CT(linearize)(y - 0.21482 * u - 0.38059 * v);
    const VD bl = CT(linearize)(y + 2.12798 * u);
    CT(colour_linear)(r, g, bl, l, a, b);
}

/* The rest of colour() from linear R, G, B: XYZ (D65) and L*a*b*.  (R reads
 * no Cb and B no Cr, so a twin may tabulate them: src/cuda/ciede.cu.) */
CT_FN void CT(colour_linear)(VD r, VD g, VD bl, VF *l, VF *a, VF *b)
{
    const VD x = r * 0.4124564390896921 + g * 0.357576077643909 + bl * 0.18043748326639894;
    const VD yy = r * 0.21267285140562248 + g * 0.715152155287818 + bl * 0.07217499330655958;
    const VD z = r * 0.019333895582329317 + g * 0.119192025881303 + bl * 0.9503040785363677;

    /* white point D65 */
    const VD fx = CT_F2D(CT(lab_f)(x * (1.0 / 0.95047)));
    const VD fy = CT_F2D(CT(lab_f)(yy));
    const VD fz = CT_F2D(CT(lab_f)(z * (1.0 / 1.08883)));

    *l = CT_D2F(116.0 * fy - 16.0);
    *a = CT_D2F(500.0 * (fx - fy));
    *b = CT_D2F(200.0 * (fy - fz));
}

/* ---- CIEDE2000 ----------------------------------------------------------- */

/* x^7 of a double, as (x^3)^2 x. */
CT_FN VD CT(pow7)(VD x)
{
    const VD x2 = x * x, x3 = x2 * x, x6 = x3 * x3;
    return x6 * x;
}

/* Hue angle in [0, 2 pi) of (a', b'), 0 for the neutral axis. */
CT_FN VF CT(hue)(VF b, VF a_prime)
{
    VF h = CT_D2F(CT(atan2)(CT_F2D(b), CT_F2D(a_prime)));
    h = CT(selectf)(CT_MF(h < 0.0f), CT_D2F(CT_F2D(h) + 2. * CIEDE_PI), h);
    const VU32 neutral = CT_MF(b == 0.0f) & CT_MF(a_prime == 0.0f);
    return CT(zerof)(neutral, h);
}

/* Hue difference h2 - h1 wrapped into [-pi, pi]; 0 where a chroma is 0
 * (libvmaf tests the chromas before the a' correction). */
CT_FN VF CT(hue_delta)(VF c1, VF c2, VF h1, VF h2)
{
    const VF d = h2 - h1;
    const VF up = CT_D2F(CT_F2D(d) + 2. * CIEDE_PI);
    const VF down = CT_D2F(CT_F2D(d) - 2. * CIEDE_PI);
    VF r = CT(selectf)(CT_MF(h2 <= h1), up, down);
    r = CT(selectf)(CT_MD2MF(CT_MD(CT_F2D(CT(fabsf)(h1 - h2)) <= CIEDE_PI)), d, r);
    const VU32 grey = CT_MF(c1 == 0.0f) | CT_MF(c2 == 0.0f);
    return CT(zerof)(grey, r);
}

/* Mean hue, across the 0 / 2 pi seam where the hues are far apart.  (As
 * libvmaf: no correction when one chroma is 0, and + 2 pi either way.) */
CT_FN VF CT(hue_mean)(VF h1, VF h2)
{
    const VD sum = CT_F2D(h1 + h2);
    return CT_D2F(CT(select)(CT_MD(CT_F2D(CT(fabsf)(h1 - h2)) > CIEDE_PI),
                             (sum + 2.0 * CIEDE_PI) / 2.0, sum / 2.0));
}

/*
 * The hue weighting
 *   T = 1 - 0.17 cos(h - pi/6) + 0.24 cos(2h) + 0.32 cos(3h + pi/30)
 *         - 0.20 cos(4h - 7 pi/20)
 * from one sine and cosine of h: the multiple angles by their sum
 * formulas, the shifts by the constants' sines and cosines.  Each term is
 * within a few 1e-16 of the cosine libvmaf calls, and T is rounded to
 * float.
 */
CT_FN VF CT(t)(VF hf)
{
    VD s1, c1;
    CT(sincos)(CT_F2D(hf), &s1, &c1);
    const VD c2 = c1 * c1 - s1 * s1, s2 = 2.0 * s1 * c1;
    const VD c3 = c2 * c1 - s2 * s1, s3 = s2 * c1 + c2 * s1;
    const VD c4 = c2 * c2 - s2 * s2, s4 = 2.0 * s2 * c2;
    const VD t1 = c1 * CIEDE_COS_PI_6 + s1 * 0.5;
    const VD t3 = c3 * CIEDE_COS_PI_30 - s3 * CIEDE_SIN_PI_30;
    const VD t4 = c4 * CIEDE_COS_7PI_20 + s4 * CIEDE_SIN_7PI_20;
    return CT_D2F(1.0 - 0.17 * t1 + 0.24 * c2 + 0.32 * t3 - 0.20 * t4);
}

/* The rotation term R_T, in float where libvmaf uses float. */
CT_FN VF CT(r_t)(VF c_bar_prime, VF h_bar_prime)
{
    const VF h_deg = CT_D2F(CT_F2D(h_bar_prime) * (180.0 / CIEDE_PI));
    const VF d = CT_D2F((CT_F2D(h_deg) - 275.0) * (1.0 / 25.0));
    /* powf(c, 7): the 7th power in double, rounded */
    const VF c7 = CT_D2F(CT(pow7)(CT_F2D(c_bar_prime)));
    const VF ratio = c7 / (c7 + CIEDE_POWF_25_7);
    const VF theta_deg = CT_D2F(60.0 * CT(exp)(CT_F2D(-(d * d))));
    const VF theta = CT_D2F(CT_F2D(theta_deg) * (CIEDE_PI / 180.0));
    return CT_D2F(-2.0 * CT_SQRT(CT_F2D(ratio)) * CT(sin_half_turn)(CT_F2D(theta)));
}

/* deltaE00 from colour 1 (reference) to colour 2 (distorted), libvmaf's
 * float and double steps. */
CT_FN VF CT(difference)(VF l1, VF a1, VF b1, VF l2, VF a2, VF b2)
{
    const float k_l = 0.65f, k_c = 1.0f, k_h = 4.0f;

    const VF dl_prime = l2 - l1;
    const VF l_bar = (l1 + l2) / 2.0f;
    const VF ch1 = CT_D2F(CT_SQRT(CT_F2D(a1) * CT_F2D(a1) + CT_F2D(b1) * CT_F2D(b1)));
    const VF ch2 = CT_D2F(CT_SQRT(CT_F2D(a2) * CT_F2D(a2) + CT_F2D(b2) * CT_F2D(b2)));
    const VF c_bar = (ch1 + ch2) / 2.0f;

    /* a' = a (1 + G), G = (1 - sqrt(c^7 / (c^7 + 25^7))) / 2; 25^7 is exact */
    const VD c_bar7 = CT(pow7)(CT_F2D(c_bar));
    const VD g = 1.0 - CT_SQRT(c_bar7 / (c_bar7 + 6103515625.0));
    const VF a1_prime = CT_D2F(CT_F2D(a1) + CT_F2D(a1 / 2.0f) * g);
    const VF a2_prime = CT_D2F(CT_F2D(a2) + CT_F2D(a2 / 2.0f) * g);

    const VF c1_prime =
        CT_D2F(CT_SQRT(CT_F2D(a1_prime) * CT_F2D(a1_prime) + CT_F2D(b1) * CT_F2D(b1)));
    const VF c2_prime =
        CT_D2F(CT_SQRT(CT_F2D(a2_prime) * CT_F2D(a2_prime) + CT_F2D(b2) * CT_F2D(b2)));
    const VF c_bar_prime = (c1_prime + c2_prime) / 2.0f;
    const VF dc_prime = c2_prime - c1_prime;

    const VF l50 = l_bar - 50.0f;
    const VD l50_sq = CT_F2D(l50) * CT_F2D(l50);
    const VF s_l = CT_D2F(1. + (0.015 * l50_sq) / CT_SQRT(20.0 + l50_sq));
    const VF s_c = CT_D2F(1. + 0.045 * CT_F2D(c_bar_prime));

    const VF h1_prime = CT(hue)(b1, a1_prime);
    const VF h2_prime = CT(hue)(b2, a2_prime);
    const VF dh_prime = CT(hue_delta)(ch1, ch2, h1_prime, h2_prime);
    /* |dh'| / 2 <= pi/2 */
    const VF dH_prime = CT_D2F(2.0 * CT_SQRT(CT_F2D(c1_prime * c2_prime)) *
                               CT(sin_half_turn)(CT_F2D(dh_prime) / 2.0));
    const VF h_bar_prime = CT(hue_mean)(h1_prime, h2_prime);
    const VF t = CT(t)(h_bar_prime);
    const VF s_h = CT_D2F(1.0 + 0.015 * CT_F2D(c_bar_prime) * CT_F2D(t));
    const VF r_t = CT(r_t)(c_bar_prime, h_bar_prime);

    const VF dl = dl_prime / (k_l * s_l);
    const VF dc = dc_prime / (k_c * s_c);
    const VF dh = dH_prime / (k_h * s_h);
    return CT_D2F(CT_SQRT(CT_F2D(dl) * CT_F2D(dl) + CT_F2D(dc) * CT_F2D(dc) +
                          CT_F2D(dh) * CT_F2D(dh) + CT_F2D(r_t * dc * dh)));
}
