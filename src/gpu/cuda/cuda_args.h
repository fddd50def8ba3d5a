/*
 * The argument blocks of the CUDA kernels are declared once, in a header
 * per metric (*_args.h) that the host code (C) and the kernels (C++, under
 * nvcc or in the host tests) both include, so that the two cannot drift
 * apart.  A device pointer is a CUdeviceptr on the host side and a typed
 * pointer in the kernels: 8 bytes either way.
 */
#ifndef QUALE_SRC_CUDA_CUDA_ARGS_H
#define QUALE_SRC_CUDA_CUDA_ARGS_H

#ifdef __cplusplus
#define DEVICE_POINTER(T) T *
#else
#include <cuda.h>
#define DEVICE_POINTER(T) CUdeviceptr
_Static_assert(sizeof(CUdeviceptr) == sizeof(void *), "device pointers are host-pointer wide");
#endif

#endif /* QUALE_SRC_CUDA_CUDA_ARGS_H */
