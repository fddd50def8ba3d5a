/* Every CUDA twin of this build. */
#include "cuda_twin.h"

extern const CudaTwin cuda_twin_psnr;

const CudaTwin *const cuda_twins[] = {
    &cuda_twin_psnr,
    NULL,
};
