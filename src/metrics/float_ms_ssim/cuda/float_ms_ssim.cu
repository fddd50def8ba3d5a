/*
 * float_ms_ssim's CUDA twin: the four decimations of
 * src/metrics/float_ms_ssim.c on the device, then the SSIM of the five
 * scales in one launch of float_ssim.cu's iqa_ssim_tiles (included here,
 * so that this module has it too).
 *
 *   fms_decimate_8, _16, _f   one thread per sample (x, y) of scale i + 1,
 *           both pictures: libvmaf's 9 x 9 low-pass centred on sample
 *           (2x, 2y) of scale i (the frame's luma as floats for i = 0, the
 *           float planes of the scale after), rows and columns mirrored at
 *           the borders, float products in a double sum, row by row,
 *           rounded to float: iqa_decimate_row() of the rows
 *           ms_ssim_decimate() mirrors and pads.
 *
 * The element functions are __host__ __device__ (see float_ssim.cu);
 * tests/test_float_ssim_cuda_host.cpp runs them on the CPU.
 */
#define FSSIM_TILES_ONLY
#include "metrics/float_ssim/cuda/float_ssim.cu"
#include "metrics/float_ms_ssim/float_ms_ssim.h"
#include "float_ms_ssim_args.h"

template <int KIND>
FSSIM_FN void fms_decimate_at(const MsDecimateArgs &a, unsigned x, unsigned y)
{
    const float k[MS_SSIM_LPF_TAPS * MS_SSIM_LPF_TAPS] = { MS_SSIM_LPF };
    const int centre = MS_SSIM_LPF_TAPS / 2, w = (int)a.w, h = (int)a.h;
    int col[MS_SSIM_LPF_TAPS];
    FSSIM_UNROLL
    for (int u = 0; u < MS_SSIM_LPF_TAPS; u++) col[u] = iqa_mirror(2 * (int)x + u - centre, w);
    double sr = 0.0, sd = 0.0;
    FSSIM_UNROLL
    for (int v = 0; v < MS_SSIM_LPF_TAPS; v++) {
        const int row = iqa_mirror(2 * (int)y + v - centre, h);
        FSSIM_UNROLL
        for (int u = 0; u < MS_SSIM_LPF_TAPS; u++) {
            const float kv = k[v * MS_SSIM_LPF_TAPS + u];
            sr += (double)(fssim_sample<KIND>(a.ref, a.stride, col[u], row, a.inv_scaler) * kv);
            sd += (double)(fssim_sample<KIND>(a.dist, a.stride, col[u], row, a.inv_scaler) * kv);
        }
    }
    const size_t i = (size_t)y * a.dst_w + x;
    a.dst_ref[i] = (float)sr;
    a.dst_dist[i] = (float)sd;
}

/* Grid: x covers the columns of scale i + 1 in blocks of block_dim; y its
 * rows, from block_y in steps of grid_y. */
template <int KIND>
FSSIM_FN void fms_decimate_thread(const MsDecimateArgs &a, unsigned block_x, unsigned block_y,
                                  unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned x = block_x * block_dim + thread_x;
    if (x >= a.dst_w) return;
    for (unsigned y = block_y; y < a.dst_h; y += grid_y) fms_decimate_at<KIND>(a, x, y);
}

#ifdef __CUDACC__

extern "C" __global__ void __launch_bounds__(FSSIM_DECIMATE_THREADS)
    fms_decimate_8(MsDecimateArgs a)
{
    fms_decimate_thread<SSIM_SOURCE_8>(a, FSSIM_GRID);
}

extern "C" __global__ void __launch_bounds__(FSSIM_DECIMATE_THREADS)
    fms_decimate_16(MsDecimateArgs a)
{
    fms_decimate_thread<SSIM_SOURCE_16>(a, FSSIM_GRID);
}

extern "C" __global__ void __launch_bounds__(FSSIM_DECIMATE_THREADS)
    fms_decimate_f(MsDecimateArgs a)
{
    fms_decimate_thread<SSIM_SOURCE_FLOAT>(a, FSSIM_GRID);
}

#endif /* __CUDACC__ */
