#version 450
// SpEED's Vulkan twin, step 3: the means of the 25 neighbourhood offsets
// (covariance_matrix() of speed.c), each a float sum of the samples that
// offset sees in row order, over their count.  Workgroup z: picture z;
// invocation o: offset o.
#include "speed.glsl"

layout(local_size_x = 32) in;

void main()
{
    const int o = int(gl_LocalInvocationID.x);
    if (o >= SPEED_ELEMENTS) return;
    const uint z = gl_WorkGroupID.y;
    const int op_w = c_int(C_OP_W), sub_w = c_int(C_SUB_W), sub_h = c_int(C_SUB_H);
    const uint f = speed_work(z) + cst[C_L_F] + uint((o / SPEED_BLOCK) * op_w + o % SPEED_BLOCK);
    precise float sum = 0.0;
    for (int i = 0; i < sub_h; i++)
        for (int j = 0; j < sub_w; j++) sum += work[f + uint(i * op_w + j)];
    work[speed_work(z) + cst[C_L_MEANS] + uint(o)] = f32_div(sum, float(sub_w * sub_h));
}
