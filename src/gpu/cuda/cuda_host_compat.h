/*
 * Lets the element code of a .cu file compile as plain C++ on the host, so
 * that a test can run the very functions the kernels run: outside nvcc the
 * CUDA function qualifiers mean nothing (__forceinline__ becomes inline).
 * A .cu file keeps its __global__ wrappers, and anything else that only
 * exists on the device (reduce.cuh, atomics, threadIdx), under
 * #ifdef __CUDACC__.
 */
#ifndef QUALE_SRC_CUDA_CUDA_HOST_COMPAT_H
#define QUALE_SRC_CUDA_CUDA_HOST_COMPAT_H

#ifndef __CUDACC__
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
#endif

#endif /* QUALE_SRC_CUDA_CUDA_HOST_COMPAT_H */
