/*
 * Included first when a kernel source (<metric>.cu) is compiled for AMD
 * GPUs with HIP (hipcc -include hip_prelude.h): HIP's runtime header, then
 * __CUDACC__, which the kernel sources and the metric headers they share
 * with the C reference test to mean "compiled for a GPU" (their device
 * code and __global__ wrappers are under it, their host-only parts
 * outside).  HIP's own headers are in before it is defined, so they keep
 * choosing their AMD paths.
 */
#ifndef QUALE_SRC_CUDA_HIP_PRELUDE_H
#define QUALE_SRC_CUDA_HIP_PRELUDE_H

#include <hip/hip_runtime.h>

#ifndef __CUDACC__
#define __CUDACC__ 1
#endif

#endif /* QUALE_SRC_CUDA_HIP_PRELUDE_H */
