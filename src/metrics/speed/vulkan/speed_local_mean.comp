#version 450
// SpEED's Vulkan twin, step 2: the operating picture less its local mean
// (VIF's scale-4 filter, the same sums as the blur, libvmaf's mirror).
// Invocation: sample x of row y of picture z, rows of every picture along
// the dispatch's y.
#include "speed.glsl"

layout(local_size_x = 64) in;

void main()
{
    const int w = c_int(C_OP_W), h = c_int(C_OP_H);
    const uint z = gl_WorkGroupID.y / uint(h);
    const int y = int(gl_WorkGroupID.y % uint(h)), x = int(gl_GlobalInvocationID.x);
    if (x >= w) return;
    const int taps = c_int(C_MEAN_TAPS), r = taps / 2;
    const uint first = cst[C_MEAN], op = speed_work(z) + cst[C_L_OP];
    precise float mean = 0.0;
    for (int kh = 0; kh < taps; kh++) {
        const int sx = speed_mirror(x - r + kh, w);
        precise float column = 0.0;
        for (int kv = 0; kv < taps; kv++)
            column += uintBitsToFloat(cst[first + uint(kv)]) *
                      work[op + uint(speed_mirror(y - r + kv, h) * w + sx)];
        mean += uintBitsToFloat(cst[first + uint(kh)]) * column;
    }
    precise float centred = work[op + uint(y * w + x)] - mean;
    work[speed_work(z) + cst[C_L_F] + uint(y * w + x)] = centred;
}
