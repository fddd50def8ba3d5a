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

/* The members that carry a frame's planes into an argument block: where
 * each plane of both pictures starts and its row stride in bytes (what
 * cuda_frame_planes gives), declared once for the blocks that take them. */
#define CUDA_ARGS_PLANES                                                           \
    DEVICE_POINTER(const uint8_t) ref[3];                                          \
    DEVICE_POINTER(const uint8_t) dist[3];                                         \
    unsigned long long stride[3]

/* The same with each plane's size (what cuda_frame_planes_sized gives). */
#define CUDA_ARGS_SIZED_PLANES                                                     \
    CUDA_ARGS_PLANES;                                                              \
    unsigned width[3], height[3]

#endif /* QUALE_SRC_CUDA_CUDA_ARGS_H */
