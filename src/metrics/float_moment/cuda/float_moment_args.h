/* What float_moment.cu's kernels read, and their threads per block: one
 * declaration for float_moment_cuda.c and the kernels (cuda_args.h), the
 * argument block of float_psnr's kernels too (luma_sums_args.h). */
#ifndef QUALE_SRC_CUDA_FLOAT_MOMENT_ARGS_H
#define QUALE_SRC_CUDA_FLOAT_MOMENT_ARGS_H

#include "metrics/common/cuda/luma_sums_args.h"

#define FMOMENT_THREADS LUMA_SUMS_THREADS

/* partials: [picture][first, second][block] */
typedef LumaSumsArgs FloatMomentArgs;

#endif /* QUALE_SRC_CUDA_FLOAT_MOMENT_ARGS_H */
