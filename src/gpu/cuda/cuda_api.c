#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "gpu/gpu_library.h"

/* Each entry: the field to fill and the exported (versioned) name, since
 * cuda.h's macros rename the functions a program calls directly. */
#define ENTRY(field, symbol) { offsetof(CudaApi, field), symbol }

static const struct {
    size_t offset;
    const char *symbol;
} entries[] = {
    ENTRY(Init, "cuInit"),
    ENTRY(DriverGetVersion, "cuDriverGetVersion"),
    ENTRY(GetErrorString, "cuGetErrorString"),
    ENTRY(DeviceGetCount, "cuDeviceGetCount"),
    ENTRY(DeviceGet, "cuDeviceGet"),
    ENTRY(DeviceGetName, "cuDeviceGetName"),
    ENTRY(DeviceGetAttribute, "cuDeviceGetAttribute"),
    ENTRY(DeviceTotalMem, "cuDeviceTotalMem_v2"),
    ENTRY(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    ENTRY(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    ENTRY(CtxSetCurrent, "cuCtxSetCurrent"),
    ENTRY(CtxGetDevice, "cuCtxGetDevice"),
    ENTRY(ModuleLoadData, "cuModuleLoadData"),
    ENTRY(ModuleUnload, "cuModuleUnload"),
    ENTRY(ModuleGetFunction, "cuModuleGetFunction"),
    ENTRY(FuncSetAttribute, "cuFuncSetAttribute"),
    ENTRY(MemAlloc, "cuMemAlloc_v2"),
    ENTRY(MemFree, "cuMemFree_v2"),
    ENTRY(MemGetInfo, "cuMemGetInfo_v2"),
    ENTRY(MemHostAlloc, "cuMemHostAlloc"),
    ENTRY(MemFreeHost, "cuMemFreeHost"),
    ENTRY(MemHostRegister, "cuMemHostRegister_v2"),
    ENTRY(MemHostUnregister, "cuMemHostUnregister"),
    ENTRY(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
    ENTRY(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
    ENTRY(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
    ENTRY(MemcpyDtoH, "cuMemcpyDtoH_v2"),
    ENTRY(Memcpy2DAsync, "cuMemcpy2DAsync_v2"),
    ENTRY(PointerGetAttributes, "cuPointerGetAttributes"),
    ENTRY(MemsetD8, "cuMemsetD8_v2"),
    ENTRY(MemsetD8Async, "cuMemsetD8Async"),
    ENTRY(StreamCreate, "cuStreamCreate"),
    ENTRY(StreamDestroy, "cuStreamDestroy_v2"),
    ENTRY(StreamWaitEvent, "cuStreamWaitEvent"),
    ENTRY(StreamSynchronize, "cuStreamSynchronize"),
    ENTRY(EventCreate, "cuEventCreate"),
    ENTRY(EventDestroy, "cuEventDestroy_v2"),
    ENTRY(EventRecord, "cuEventRecord"),
    ENTRY(EventSynchronize, "cuEventSynchronize"),
    ENTRY(EventElapsedTime, "cuEventElapsedTime"),
    ENTRY(LaunchKernel, "cuLaunchKernel"),
};

int cuda_api_load(CudaApi *api, char *error, size_t error_size)
{
    memset(api, 0, sizeof(*api));
    const char *name; /* QUALE_CUDA_LIBRARY: the tests' broken driver */
    api->library = gpu_library_open("QUALE_CUDA_LIBRARY", "libcuda.so.1",
                                    "the NVIDIA driver library", &name, error, error_size);
    if (!api->library) return -ENODEV;
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
        void *fn = dlsym(api->library, entries[i].symbol);
        if (!fn) {
            snprintf(error, error_size, "the NVIDIA driver is too old: it lacks %s",
                     entries[i].symbol);
            cuda_api_unload(api);
            return -ENOSYS;
        }
        memcpy((char *)api + entries[i].offset, &fn, sizeof(fn));
    }
    return 0;
}

void cuda_api_unload(CudaApi *api)
{
    if (api->library) dlclose(api->library);
    memset(api, 0, sizeof(*api));
}

const char *cuda_error_text(const CudaApi *api, CUresult result)
{
    const char *text = NULL;
    if (api->GetErrorString && api->GetErrorString(result, &text) == CUDA_SUCCESS && text)
        return text;
    return "unknown CUDA error";
}
