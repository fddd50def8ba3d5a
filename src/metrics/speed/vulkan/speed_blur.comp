#version 450
// SpEED's Vulkan twin, step 1: each sample of the operating picture, the
// blur of speed.c's filter_decimate() at (16 x, 16 y): a float sum over
// the horizontal taps of weight times (a float sum over the vertical taps
// of weight times sample), both in tap order from 0, libvmaf's mirror,
// over the picture resized by speed_prescale (or its samples).
// The resized picture's samples are computed where the blur reads them.
// Invocation: sample x of row y of picture z's operating picture, rows of
// every picture along the dispatch's y.
#include "speed.glsl"

layout(local_size_x = 64) in;

float prescale_mirror(float i, float left, float right)
{
    precise float reflected = 2.0 * right - i, negated = -i;
    return i < left ? negated : i > right ? reflected : i;
}

// Sample (x, y) of picture z resized by speed_prescale, as vif_tools.c's
// nearest and bilinear scalers compute it (the other methods run on the
// CPU).  Computed again by each blur tap that reads it (the taps span
// more than the 16 samples between operating samples, so a few times),
// which costs less than a pass that stores the resized picture.
float prescaled(uint z, int x, int y)
{
    const int sw = c_int(C_W), sh = c_int(C_H);
    const float ratio_x = c_float(C_RATIO_X), ratio_y = c_float(C_RATIO_Y);
    if (cst[C_METHOD] == 0u) {
        precise float sy = float(y) * ratio_y, sx = float(x) * ratio_x;
        return speed_source(z, int(sx), int(sy));
    }
    // (float)((y + 0.5) * ratio - 0.5): the arithmetic in double
    precise double ty = (double(y) + 0.5LF) * double(ratio_y) - 0.5LF;
    precise double tx = (double(x) + 0.5LF) * double(ratio_x) - 0.5LF;
    const float yy = f32_from_f64(ty), xx = f32_from_f64(tx);
    const int y1 = int(prescale_mirror(floor(yy), 0.0, float(sh - 1)));
    const int y2 = int(prescale_mirror(ceil(yy), 0.0, float(sh - 1)));
    const int x1 = int(prescale_mirror(floor(xx), 0.0, float(sw - 1)));
    const int x2 = int(prescale_mirror(ceil(xx), 0.0, float(sw - 1)));
    precise float dy = yy - float(y1), dx = xx - float(x1);
    precise float a = (1.0 - dy) * (1.0 - dx) * speed_source(z, x1, y1);
    precise float b = (1.0 - dy) * dx * speed_source(z, x2, y1);
    precise float c = dy * (1.0 - dx) * speed_source(z, x1, y2);
    precise float d = dy * dx * speed_source(z, x2, y2);
    precise float v = ((a + b) + c) + d;
    return v;
}

float blur_input(uint z, int x, int y)
{
    return cst[C_PRESCALE] != 0u ? prescaled(z, x, y) : speed_source(z, x, y);
}

void main()
{
    const int op_w = c_int(C_OP_W), op_h = c_int(C_OP_H);
    const uint z = gl_WorkGroupID.y / uint(op_h);
    const int y = int(gl_WorkGroupID.y % uint(op_h)), x = int(gl_GlobalInvocationID.x);
    if (x >= op_w) return;
    const int w = c_int(C_SCALED_W), h = c_int(C_SCALED_H);
    const int taps = c_int(C_AA_TAPS), r = taps / 2;
    const uint first = cst[C_AA];
    const int cy = y << SPEED_SCALES, cx = x << SPEED_SCALES;
    precise float acc = 0.0;
    for (int kh = 0; kh < taps; kh++) {
        const int sx = speed_mirror(cx - r + kh, w);
        precise float column = 0.0;
        for (int kv = 0; kv < taps; kv++)
            column += uintBitsToFloat(cst[first + uint(kv)]) *
                      blur_input(z, sx, speed_mirror(cy - r + kv, h));
        acc += uintBitsToFloat(cst[first + uint(kh)]) * column;
    }
    work[speed_work(z) + cst[C_L_OP] + uint(y * op_w + x)] = acc;
}
