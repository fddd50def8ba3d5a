// Integer VIF's statistic of one filtered sample: vif_pixel() of
// src/metrics/integer_vif.h, bit for bit, for integer_vif.glsl (and for
// tests/test_integer_vif_vulkan.comp, which checks it against the C
// function on inputs chosen to reach every rounding).  The includer declares
// `table_words`: the log2 table (two 16-bit entries a word), then at
// VIF_EPS_WORDS + b, for a sigma1_sq of b bits (18..31), what adding eps
// to it adds to its 53-bit mantissa.
//
// vif_pixel() computes three steps in double: g = sigma12 / (sigma1_sq +
// eps), sigma2_sq - g * sigma12 and g * g * sigma1_sq, each converted back
// to an integer.  Two ways to libvmaf's bits:
//   - VIF_NATIVE (devices with shaderFloat64 and shaderInt64): the device's
//     64-bit integers and doubles.  The products and the difference are
//     single IEEE operations, `precise` so that no driver fuses them; the
//     division is not one a Vulkan driver must round correctly, so its
//     result is only a guess that vif_quotient() checks with exact integer
//     arithmetic and moves to the correctly rounded double.
//   - otherwise: 64-bit integers as pairs of words and the doubles as
//     common.glsl's SDouble, carried out in integers.
#define VIF_EPS_WORDS 16384u

uint vif_log2_entry(uint i)
{
    return (table_words[i >> 1] >> ((i & 1u) * 16u)) & 0xffffu;
}

// log2(v) * 2048 for v >= 2^17: the top 16 bits index the table.
int vif_log2_32(uint v)
{
    const int k = findMSB(v) - 15;
    return int(vif_log2_entry((v >> uint(k)) - 32768u)) + 2048 * k;
}

int vif_log2_64(uvec2 v)
{
    const int k = u64_bitlen(v) - 16;
    return int(vif_log2_entry(u64_shr(v, uint(k)).x - 32768u)) + 2048 * k;
}

// The 53-bit mantissa of sigma1_sq + eps rounded to a double, whose
// exponent is b - 53 (b the bit length of s1 >= 2^17): s1's mantissa plus
// eps in its units (the rounding is the same for every s1 of b bits).
uvec2 vif_divisor_mantissa(uint s1, int b)
{
    return u64_add(u64_shl(uvec2(s1, 0u), uint(53 - b)), uvec2(table_words[VIF_EPS_WORDS + uint(b)], 0u));
}

#ifdef VIF_NATIVE

// Where x = A * 2^(53 - b) / D (A >= 1; D the 53-bit mantissa of a
// divisor of exponent b - 53) lies from the double q: 0 when q is x
// rounded to nearest (ties to even), +1 or -1 when x is nearer the double
// above or below, 2 when q is no positive normal double near x.
//
// With q = G * 2^eq: x - q = 2^eq * (A * 2^k - G * D) / D, k = 53 - b - eq,
// so q is the rounding of x when |A * 2^k - G * D| is below D / 2 (D / 4
// below q when G = 2^52: the doubles below q are twice as dense).  The
// difference is computed exactly in 128 bits; k >= 64 for any q near x
// (A * 2^(53 - b) / D >= 2^(-b - 1)), so A * 2^k has no low word.
int vif_quotient_side(uint A, uint64_t D, int b, double q)
{
    const uvec2 bits = unpackDouble2x32(q);
    const int field = int((bits.y >> 20) & 0x7ffu);
    const int k = 53 - b - (field - 1075);
    if (field == 0 || field == 0x7ff || k < 64 || k > 126 - findMSB(A)) return 2;
    const uint gl = bits.x, gh = (bits.y & 0xfffffu) | 0x100000u;
    const uint dl = uint(D), dh = uint(D >> 32);
    const uint64_t lo = uint64_t(gl) * dl;
    const uint64_t mid = uint64_t(gh) * dl + uint64_t(gl) * dh;
    const uint64_t p_lo = lo + (mid << 32);
    const uint64_t p_hi = uint64_t(gh) * dh + (mid >> 32) + (p_lo < lo ? 1ul : 0ul);
    // diff = (A << k) - (p_hi, p_lo), two's complement in two 64-bit words.
    const uint64_t diff_lo = 0ul - p_lo;
    const uint64_t diff_hi = (uint64_t(A) << uint(k - 64)) - p_hi - (p_lo != 0ul ? 1ul : 0ul);
    const bool even = (gl & 1u) == 0u;
    if (diff_hi == 0ul) { // x >= q
        if (diff_lo >= (1ul << 62)) return 1;
        const uint64_t twice = 2ul * diff_lo;
        return twice < D || (twice == D && even) ? 0 : 1;
    }
    if (diff_hi == ~0ul && diff_lo != 0ul) { // x < q
        const uint64_t m = 0ul - diff_lo;
        if (m >= (1ul << 61)) return -1;
        const bool power = gl == 0u && gh == 0x100000u;
        const uint64_t scaled = power ? 4ul * m : 2ul * m;
        return scaled < D || (scaled == D && (power || even)) ? 0 : -1;
    }
    return int64_t(diff_hi) < 0l ? -1 : 1;
}

// sigma12 / (sigma1_sq + eps) rounded to nearest, as IEEE division gives
// it, from a guess (the device's division): a few steps to the correct
// double, or, for a guess far off, the long division of common.glsl.
double vif_quotient(uint A, uvec2 D, int b, double guess)
{
    const uint64_t d = packUint2x32(D);
    double q = guess;
    for (int i = 0; i < 4; i++) {
        const int side = vif_quotient_side(A, d, b, q);
        if (side == 0) return q;
        if (side == 2) break;
        q = packDouble2x32(unpackUint2x32(packUint2x32(unpackDouble2x32(q)) + uint64_t(int64_t(side))));
    }
    const SDouble exact = sd_div(sd_from_u32(A), SDouble(D, b - 53));
    return sd_to_double(exact);
}

// vif_enhn_gain_limit from its IEEE binary64 bits.
double vif_gain_limit(uint lo, uint hi)
{
    return packDouble2x32(uvec2(lo, hi));
}

// The bit length of a nonzero 64-bit integer.
int vif_bitlen64(uint64_t v)
{
    return u64_bitlen(unpackUint2x32(v));
}

int vif_log2_64n(uint64_t v)
{
    const int k = vif_bitlen64(v) - 16;
    return int(vif_log2_entry(uint(v >> uint(k)) - 32768u)) + 2048 * k;
}

// The integers vif_pixel() makes of its doubles, for sigma1_sq >= sigma_nsq
// and sigma12, sigma2_sq > 0: sv_sq = max((int32_t)(sigma2_sq - g *
// sigma12), 0) and (int64_t)(g * g * sigma1_sq), g = sigma12 / (sigma1_sq
// + eps) limited to the gain limit after its first use.
void vif_double_steps(uint s1, uint sigma2_sq, uint sigma12, double gain_limit, out uint sv_sq,
                      out uint64_t gain_term)
{
    const int b = findMSB(s1) + 1;
    const uvec2 dm = vif_divisor_mantissa(s1, b);
    const double guess = double(sigma12) / sd_to_double(SDouble(dm, b - 53));
    double g = vif_quotient(sigma12, dm, b, guess);
    // The difference is below 2^31, and a negative one (in range or not)
    // gives 0.
    precise double g_sigma12 = g * double(sigma12);
    precise double sv = double(sigma2_sq) - g_sigma12;
    sv_sq = sv > 0.0lf ? uint(sv) : 0u;
    g = g < gain_limit ? g : gain_limit;
    precise double gg = g * g;
    precise double gain = gg * double(s1);
    gain_term = uint64_t(gain); // below 2^45: g <= 100
}

// One filtered sample's statistic: num_log, den_log, num_non_log (64-bit,
// two's complement) and den_non_log added to acc[0..3].
void vif_pixel(uint mu1, uint mu2, uint64_t xx_sum, uint64_t yy_sum, uint64_t xy_sum,
               double gain_limit, inout uint64_t acc[4])
{
    const uint sigma_nsq = 131072u;
    const uint mu1_sq = uint((uint64_t(mu1) * mu1 + 0x80000000ul) >> 32);
    const uint mu2_sq = uint((uint64_t(mu2) * mu2 + 0x80000000ul) >> 32);
    const uint mu1_mu2 = uint((uint64_t(mu1) * mu2 + 0x80000000ul) >> 32);
    const uint xx = uint((xx_sum + 32768ul) >> 16);
    const uint yy = uint((yy_sum + 32768ul) >> 16);
    const uint xy = uint((xy_sum + 32768ul) >> 16);
    const int sigma1_sq = int(xx - mu1_sq);
    const int sigma2_sq = max(int(yy - mu2_sq), 0);
    const int sigma12 = int(xy - mu1_mu2);

    if (sigma1_sq < int(sigma_nsq)) {
        acc[2] += uint64_t(sigma2_sq);
        acc[3] += 1ul;
        return;
    }
    const uint s1 = uint(sigma1_sq);
    acc[1] += uint64_t(int64_t(vif_log2_32(s1 + sigma_nsq) - 2048 * 17));

    if (sigma12 > 0 && sigma2_sq > 0) {
        uint sv_sq;
        uint64_t gain_term;
        vif_double_steps(s1, uint(sigma2_sq), uint(sigma12), gain_limit, sv_sq, gain_term);
        const uint numer1 = sv_sq + sigma_nsq;
        acc[0] += uint64_t(int64_t(vif_log2_64n(gain_term + numer1) - vif_log2_32(numer1)));
    }
}

#else // ---- without shaderFloat64 / shaderInt64 ----------------------------

// max((int32_t)(v - p), 0) for the double p: v - p rounded to a double,
// then truncated (vif_double_to_int32; every value that reaches it here is
// in range).  With p < v < 2^31, p = i + f (f its fraction) and x = v - p =
// (v - i - 1) + (1 - f): x rounds up to the integer v - i exactly when f is
// at most half a unit in the last place of x, 2^(floor(log2 x) - 53) (the
// tie goes up too: that integer's mantissa is even).
uint vif_sv_sq(uint v, SDouble p)
{
    if (!sd_lt(p, sd_from_u32(v))) return 0u;
    const uint sh = uint(-p.e); // p < 2^31 with 53 bits: sh >= 22
    uint i = 0u;
    uvec2 frac = p.m;
    if (sh < 64u) {
        const uvec2 ip = u64_shr(p.m, sh);
        i = ip.x;
        frac = u64_sub(p.m, u64_shl(ip, sh));
    }
    if (frac == uvec2(0u)) return v - i;
    const uint f = v - i - 1u;
    const int e = (f >= 1u ? findMSB(f) : -1) - 53 + int(sh);
    const bool up = e >= 53 || (e >= 0 && !u64_lt(u64_shl(uvec2(1u, 0u), uint(e)), frac));
    return up ? f + 1u : f;
}

// vif_double_steps() of the native path, in SDouble arithmetic.
void vif_double_steps(uint s1, uint sigma2_sq, uint sigma12, SDouble gain_limit, out uint sv_sq,
                      out uvec2 gain_term)
{
    const int b = findMSB(s1) + 1;
    const SDouble den = SDouble(vif_divisor_mantissa(s1, b), b - 53);
    const SDouble c12 = sd_from_u32(sigma12);
    SDouble g = sd_div(c12, den);
    sv_sq = vif_sv_sq(sigma2_sq, sd_mul(g, c12));
    if (!sd_lt(g, gain_limit)) g = gain_limit;
    gain_term = sd_trunc_u64(sd_mul(sd_mul(g, g), sd_from_u32(s1)));
}

// vif_enhn_gain_limit (a normal double) from its IEEE binary64 bits.
SDouble vif_gain_limit(uint lo, uint hi)
{
    return SDouble(uvec2(lo, (hi & 0xfffffu) | 0x100000u), int((hi >> 20) & 0x7ffu) - 1075);
}

// One filtered sample's statistic: num_log, den_log, num_non_log (64-bit,
// two's complement) and den_non_log added to acc[0..3].
void vif_pixel(uint mu1, uint mu2, uvec2 xx_sum, uvec2 yy_sum, uvec2 xy_sum, SDouble gain_limit,
               inout uvec2 acc[4])
{
    const uint sigma_nsq = 131072u;
    const uint mu1_sq = u64_add(u64_mul32(mu1, mu1), uvec2(0x80000000u, 0u)).y;
    const uint mu2_sq = u64_add(u64_mul32(mu2, mu2), uvec2(0x80000000u, 0u)).y;
    const uint mu1_mu2 = u64_add(u64_mul32(mu1, mu2), uvec2(0x80000000u, 0u)).y;
    const uint xx = u64_shr(u64_add(xx_sum, uvec2(32768u, 0u)), 16u).x;
    const uint yy = u64_shr(u64_add(yy_sum, uvec2(32768u, 0u)), 16u).x;
    const uint xy = u64_shr(u64_add(xy_sum, uvec2(32768u, 0u)), 16u).x;
    const int sigma1_sq = int(xx - mu1_sq);
    const int sigma2_sq = max(int(yy - mu2_sq), 0);
    const int sigma12 = int(xy - mu1_mu2);

    if (sigma1_sq < int(sigma_nsq)) {
        acc[2] = u64_add(acc[2], uvec2(uint(sigma2_sq), 0u));
        acc[3] = u64_add(acc[3], uvec2(1u, 0u));
        return;
    }
    const uint s1 = uint(sigma1_sq);
    acc[1] = u64_add(acc[1], i64_from_int(vif_log2_32(s1 + sigma_nsq) - 2048 * 17));

    if (sigma12 > 0 && sigma2_sq > 0) {
        uint sv_sq;
        uvec2 gain_term;
        vif_double_steps(s1, uint(sigma2_sq), uint(sigma12), gain_limit, sv_sq, gain_term);
        const uint numer1 = sv_sq + sigma_nsq;
        const uvec2 numer1_tmp = u64_add(gain_term, uvec2(numer1, 0u));
        acc[0] = u64_add(acc[0], i64_from_int(vif_log2_64(numer1_tmp) - vif_log2_64(uvec2(numer1, 0u))));
    }
}
#endif
