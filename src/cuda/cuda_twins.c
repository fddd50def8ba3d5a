/* Every CUDA twin of this build. */
#include "cuda_twin.h"

extern const CudaTwin cuda_twin_psnr;
extern const CudaTwin cuda_twin_integer_motion;

const CudaTwin *const cuda_twins[] = {
    &cuda_twin_psnr,
    &cuda_twin_integer_motion,
    NULL,
};
