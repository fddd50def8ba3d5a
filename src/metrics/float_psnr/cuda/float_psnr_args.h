/* What float_psnr.cu's kernels read, and their threads per block: one
 * declaration for float_psnr_cuda.c and the kernels (cuda_args.h), the
 * argument block of float_moment's kernels too (luma_sums_args.h). */
#ifndef QUALE_SRC_CUDA_FLOAT_PSNR_ARGS_H
#define QUALE_SRC_CUDA_FLOAT_PSNR_ARGS_H

#include "metrics/common/cuda/luma_sums_args.h"

#define FPSNR_THREADS LUMA_SUMS_THREADS

/* partials: one per block */
typedef LumaSumsArgs FloatPsnrArgs;

#endif /* QUALE_SRC_CUDA_FLOAT_PSNR_ARGS_H */
