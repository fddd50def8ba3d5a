/* Every CUDA twin of this build. */
#include "cuda_twin.h"

extern const CudaTwin cuda_twin_psnr;
extern const CudaTwin cuda_twin_integer_motion;
extern const CudaTwin cuda_twin_integer_adm;
extern const CudaTwin cuda_twin_integer_vif;
extern const CudaTwin cuda_twin_float_psnr, cuda_twin_float_moment, cuda_twin_float_ansnr;
extern const CudaTwin cuda_twin_float_ssim, cuda_twin_float_ms_ssim;
extern const CudaTwin cuda_twin_psnr_hvs, cuda_twin_ciede;
extern const CudaTwin cuda_twin_float_vif, cuda_twin_float_adm, cuda_twin_float_motion;
extern const CudaTwin cuda_twin_cambi;
extern const CudaTwin cuda_twin_speed_chroma, cuda_twin_speed_temporal;

const CudaTwin *const cuda_twins[] = {
    &cuda_twin_psnr,
    &cuda_twin_integer_motion,
    &cuda_twin_integer_adm,
    &cuda_twin_integer_vif,
    &cuda_twin_float_psnr, &cuda_twin_float_moment, &cuda_twin_float_ansnr,
    &cuda_twin_float_ssim, &cuda_twin_float_ms_ssim,
    &cuda_twin_psnr_hvs, &cuda_twin_ciede,
    &cuda_twin_float_vif, &cuda_twin_float_adm, &cuda_twin_float_motion,
    &cuda_twin_cambi,
    &cuda_twin_speed_chroma, &cuda_twin_speed_temporal,
    NULL,
};
