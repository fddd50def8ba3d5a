// What the float metrics' shaders share (include after common.glsl):
// samples to float as src/metrics/picture_float.c converts them, and the
// exact integer sums that float_psnr and float_moment make of them.
//
// Float arithmetic whose rounding matters is `precise` (SPIR-V
// NoContraction), so that no driver fuses a product into an addition that
// the C reference rounds separately (the library is built with
// -ffp-contract=off).

// Sample d on the 8-bit float scale plus offset, as picture_float_row():
// (float)d + offset at 8 bits, (float)d / 2^(bitdepth - 8) + offset above.
// The division by a power of two is exact, so it is the product by the
// inverse (inv_scaler: 1 at 8 bits, 2^-(bitdepth - 8) above), which every
// driver rounds correctly.
float picture_float(uint d, float inv_scaler, float offset)
{
    precise float v = float(d) * inv_scaler;
    precise float shifted = v + offset;
    return shifted;
}

// The float square of v (a converted sample, or the float difference of
// two) times scaler^2 = 2^2(bitdepth - 8): the C reference's (float)(v * v)
// in units of 2^-2(bitdepth - 8), an integer (v * scaler is one, and the
// square keeps 24 bits of one) below 2^32 (65535^2 rounded to 24 bits).
uint picture_float_square_units(float v, float scaler_sq)
{
    precise float square = v * v;
    precise float units = square * scaler_sq;
    return uint(units);
}

// The sum over a workgroup of PICTURE_FLOAT_GROUP invocations of one
// 64-bit value each (a fixed tree: integers, so the order is free anyway);
// every invocation must call it.  The includer defines PICTURE_FLOAT_GROUP
// (a power of two, its local_size_x) to get it.
#ifdef PICTURE_FLOAT_GROUP
shared uvec2 picture_float_sums[PICTURE_FLOAT_GROUP];

uvec2 picture_float_group_sum(uvec2 v)
{
    const uint i = gl_LocalInvocationID.x;
    barrier(); // an earlier call's readers are done
    picture_float_sums[i] = v;
    barrier();
    for (uint half_size = PICTURE_FLOAT_GROUP / 2u; half_size > 0u; half_size >>= 1) {
        if (i < half_size) picture_float_sums[i] = u64_add(picture_float_sums[i], picture_float_sums[i + half_size]);
        barrier();
    }
    return picture_float_sums[0];
}
#endif
