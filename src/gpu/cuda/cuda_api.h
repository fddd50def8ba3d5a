/*
 * The CUDA driver API, loaded at run time from libcuda.so.1: nothing links
 * against the driver, so one binary runs on machines with and without an
 * NVIDIA GPU.  Only the functions quale uses are resolved; the types come
 * from the toolkit's cuda.h at build time.
 */
#ifndef QUALE_SRC_CUDA_CUDA_API_H
#define QUALE_SRC_CUDA_CUDA_API_H

#include <cuda.h>

typedef struct CudaApi {
    void *library;
    CUresult (*Init)(unsigned flags);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*GetErrorString)(CUresult error, const char **text);
    CUresult (*DeviceGetCount)(int *count);
    CUresult (*DeviceGet)(CUdevice *device, int ordinal);
    CUresult (*DeviceGetName)(char *name, int length, CUdevice device);
    CUresult (*DeviceGetAttribute)(int *value, CUdevice_attribute attribute, CUdevice device);
    CUresult (*DeviceTotalMem)(size_t *bytes, CUdevice device);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice device);
    CUresult (*CtxSetCurrent)(CUcontext context);
    CUresult (*CtxGetDevice)(CUdevice *device);
    CUresult (*ModuleLoadData)(CUmodule *module, const void *image);
    CUresult (*ModuleUnload)(CUmodule module);
    CUresult (*ModuleGetFunction)(CUfunction *function, CUmodule module, const char *name);
    CUresult (*FuncSetAttribute)(CUfunction function, CUfunction_attribute attribute, int value);
    CUresult (*MemAlloc)(CUdeviceptr *pointer, size_t bytes);
    CUresult (*MemFree)(CUdeviceptr pointer);
    CUresult (*MemGetInfo)(size_t *free_bytes, size_t *total_bytes);
    CUresult (*MemHostAlloc)(void **pointer, size_t bytes, unsigned flags);
    CUresult (*MemFreeHost)(void *pointer);
    CUresult (*MemHostRegister)(void *pointer, size_t bytes, unsigned flags);
    CUresult (*MemHostUnregister)(void *pointer);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream);
    CUresult (*MemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
    CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*Memcpy2DAsync)(const CUDA_MEMCPY2D *copy, CUstream stream);
    CUresult (*PointerGetAttributes)(unsigned count, CUpointer_attribute *attributes, void **values,
                                     CUdeviceptr pointer);
    CUresult (*MemsetD8)(CUdeviceptr dst, unsigned char value, size_t bytes);
    CUresult (*MemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream stream);
    CUresult (*StreamCreate)(CUstream *stream, unsigned flags);
    CUresult (*StreamDestroy)(CUstream stream);
    CUresult (*StreamWaitEvent)(CUstream stream, CUevent event, unsigned flags);
    CUresult (*StreamSynchronize)(CUstream stream);
    CUresult (*EventCreate)(CUevent *event, unsigned flags);
    CUresult (*EventDestroy)(CUevent event);
    CUresult (*EventRecord)(CUevent event, CUstream stream);
    CUresult (*EventSynchronize)(CUevent event);
    CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
    CUresult (*LaunchKernel)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream, void **params, void **extra);
} CudaApi;

/* Loads the driver library and resolves every entry point.  error receives
 * one line ("libcuda.so.1 not found: ...", "driver too old: ...") on
 * failure. */
int cuda_api_load(CudaApi *api, char *error, size_t error_size);
void cuda_api_unload(CudaApi *api);

/* The driver's text for an error code. */
const char *cuda_error_text(const CudaApi *api, CUresult result);

#endif /* QUALE_SRC_CUDA_CUDA_API_H */
