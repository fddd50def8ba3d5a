/*
 * The HIP runtime as a CudaApi (cuda_api.h): the CUDA backend's primitive
 * layer, executor and twins run unchanged over it (--backend hip).
 *
 * Two builds of this file:
 * - AMD (the default): HIP's AMD headers for the types, and the runtime,
 *   libamdhip64.so.5, loaded at run time like libcuda.so.1, so that one
 *   quale binary runs with or without ROCm.
 * - HIP's NVIDIA platform (QUALE_HIP_NVIDIA, meson -Dhip_platform=nvidia):
 *   HIP's NVIDIA headers, whose hip* functions are inline calls into CUDA;
 *   the table holds those functions.  This is how quale's HIP backend runs
 *   on NVIDIA GPUs.
 *
 * Each CudaApi entry is an adapter of a few lines where the two APIs
 * differ: HIP's device pointers are pointers (CUDA's are integers), its
 * error text is returned rather than written, its device attributes have
 * their own numbers, and its module API has no function attributes (AMD's
 * local memory needs no opt-in; the adapter reports the per-block limit
 * without one, so no plan asks for more).  HIP's error codes for the cases
 * quale tells apart (out of memory, no device) have CUDA's values, and its
 * stream, event and pinned-memory flags have CUDA's bits.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_api.h"
#include "gpu/gpu_library.h"

#if QUALE_HAVE_HIP_RUNTIME

#include <hip/hip_runtime_api.h>

_Static_assert((int)hipSuccess == (int)CUDA_SUCCESS &&
                   (int)hipErrorOutOfMemory == (int)CUDA_ERROR_OUT_OF_MEMORY &&
                   (int)hipErrorNoDevice == (int)CUDA_ERROR_NO_DEVICE,
               "the HIP errors quale tells apart have CUDA's values");
_Static_assert(hipStreamNonBlocking == CU_STREAM_NON_BLOCKING &&
                   hipEventDisableTiming == CU_EVENT_DISABLE_TIMING &&
                   hipEventDefault == CU_EVENT_DEFAULT &&
                   hipHostMallocPortable == CU_MEMHOSTALLOC_PORTABLE &&
                   hipHostRegisterPortable == CU_MEMHOSTREGISTER_PORTABLE,
               "HIP's stream, event and pinned-memory flags have CUDA's bits");

/* HIP marks its context functions deprecated; they are the ones whose
 * meaning is CUDA's (the primary context made current), and both HIP 5 and
 * 6 have them. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define HIP_FUNCTIONS(X)                                                                       \
    X(Init, hipInit)                                                                           \
    X(DriverGetVersion, hipDriverGetVersion)                                                   \
    X(GetErrorString, hipGetErrorString)                                                       \
    X(GetDeviceCount, hipGetDeviceCount)                                                       \
    X(DeviceGet, hipDeviceGet)                                                                 \
    X(DeviceGetName, hipDeviceGetName)                                                         \
    X(DeviceGetAttribute, hipDeviceGetAttribute)                                               \
    X(DeviceTotalMem, hipDeviceTotalMem)                                                       \
    X(DevicePrimaryCtxRetain, hipDevicePrimaryCtxRetain)                                       \
    X(DevicePrimaryCtxRelease, hipDevicePrimaryCtxRelease)                                     \
    X(CtxSetCurrent, hipCtxSetCurrent)                                                         \
    X(CtxGetDevice, hipCtxGetDevice)                                                           \
    X(ModuleLoadData, hipModuleLoadData)                                                       \
    X(ModuleUnload, hipModuleUnload)                                                           \
    X(ModuleGetFunction, hipModuleGetFunction)                                                 \
    X(Malloc, hipMalloc)                                                                       \
    X(Free, hipFree)                                                                           \
    X(MemGetInfo, hipMemGetInfo)                                                               \
    X(HostMalloc, hipHostMalloc)                                                               \
    X(HostFree, hipHostFree)                                                                   \
    X(HostRegister, hipHostRegister)                                                           \
    X(HostUnregister, hipHostUnregister)                                                       \
    X(MemcpyHtoDAsync, hipMemcpyHtoDAsync)                                                     \
    X(MemcpyDtoHAsync, hipMemcpyDtoHAsync)                                                     \
    X(MemcpyDtoDAsync, hipMemcpyDtoDAsync)                                                     \
    X(MemcpyDtoH, hipMemcpyDtoH)                                                               \
    X(MemsetD8, hipMemsetD8)                                                                   \
    X(MemsetD8Async, hipMemsetD8Async)                                                         \
    X(StreamCreateWithFlags, hipStreamCreateWithFlags)                                         \
    X(StreamDestroy, hipStreamDestroy)                                                         \
    X(StreamWaitEvent, hipStreamWaitEvent)                                                     \
    X(StreamSynchronize, hipStreamSynchronize)                                                 \
    X(EventCreateWithFlags, hipEventCreateWithFlags)                                           \
    X(EventDestroy, hipEventDestroy)                                                           \
    X(EventRecord, hipEventRecord)                                                             \
    X(EventSynchronize, hipEventSynchronize)                                                   \
    X(EventElapsedTime, hipEventElapsedTime)                                                   \
    X(ModuleLaunchKernel, hipModuleLaunchKernel)

/* The runtime's functions, typed as HIP's headers declare them. */
static struct {
#define FIELD(field, name) __typeof__(name) *field;
    HIP_FUNCTIONS(FIELD)
#undef FIELD
} hip;

static pthread_once_t hip_once = PTHREAD_ONCE_INIT;
static int hip_status;
static char hip_error[512];

#if QUALE_HIP_NVIDIA
/* HIP's NVIDIA platform: the functions are the headers' own. */
static void hip_resolve(void)
{
#define TAKE(field, name) hip.field = name;
    HIP_FUNCTIONS(TAKE)
#undef TAKE
}
#else
static void hip_resolve(void)
{
    const char *library; /* QUALE_HIP_LIBRARY: the tests' fake runtime */
    void *handle = gpu_library_open("QUALE_HIP_LIBRARY", "libamdhip64.so.5", "the HIP runtime",
                                    &library, hip_error, sizeof(hip_error));
    if (!handle) {
        hip_status = -ENODEV;
        return;
    }
#define LOOK_UP(field, name)                                                                  \
    if (!hip_status) {                                                                        \
        void *fn = dlsym(handle, #name);                                                      \
        if (!fn) {                                                                            \
            snprintf(hip_error, sizeof(hip_error), "the HIP runtime %s lacks %s", library,    \
                     #name);                                                                  \
            hip_status = -ENOSYS;                                                             \
        }                                                                                     \
        memcpy(&hip.field, &fn, sizeof(fn));                                                  \
    }
    HIP_FUNCTIONS(LOOK_UP)
#undef LOOK_UP
    /* kept loaded for the process's life, as the CUDA driver is */
    if (hip_status) dlclose(handle);
}
#endif

static void hip_load_once(void)
{
    hip_resolve();
}

/* ---- the adapters -------------------------------------------------------- */

static CUresult result(hipError_t e)
{
    return (CUresult)e;
}

static CUdeviceptr to_cuda(void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

/* CUDA's device pointer as HIP's (a pointer on AMD, an integer on NVIDIA). */
#define TO_HIP(p) ((hipDeviceptr_t)(uintptr_t)(p))

/* ROCm answers hipErrorInvalidDevice when it finds no GPU at all: that is
 * CUDA's "no device". */
static CUresult a_Init(unsigned flags)
{
    const hipError_t e = hip.Init(flags);
    return e == hipErrorInvalidDevice ? CUDA_ERROR_NO_DEVICE : result(e);
}
static CUresult a_DriverGetVersion(int *version) { return result(hip.DriverGetVersion(version)); }

static CUresult a_GetErrorString(CUresult error, const char **text)
{
    *text = hip.GetErrorString((hipError_t)error);
    return CUDA_SUCCESS;
}

static CUresult a_DeviceGetCount(int *count) { return result(hip.GetDeviceCount(count)); }

static CUresult a_DeviceGet(CUdevice *device, int ordinal)
{
    hipDevice_t d = 0;
    const hipError_t e = hip.DeviceGet(&d, ordinal);
    *device = (CUdevice)d;
    return result(e);
}

static CUresult a_DeviceGetName(char *name, int length, CUdevice device)
{
    return result(hip.DeviceGetName(name, length, (hipDevice_t)device));
}

/* The attributes quale asks for, by HIP's numbers. */
static CUresult a_DeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device)
{
    hipDeviceAttribute_t a;
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        a = hipDeviceAttributeComputeCapabilityMajor;
        break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: a = hipDeviceAttributeMultiprocessorCount; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: a = hipDeviceAttributeIntegrated; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
#if QUALE_HIP_NVIDIA
        /* HIP 5.2's NVIDIA platform maps no attribute for it: CUDA's own,
         * which a_FuncSetAttribute() then opts in to */
        return cuDeviceGetAttribute(value, attribute, (CUdevice)device);
#else
        /* AMD: no opt-in beyond the per-block limit (64 KB of LDS) */
        a = hipDeviceAttributeMaxSharedMemoryPerBlock;
        break;
#endif
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
        a = hipDeviceAttributeMaxSharedMemoryPerMultiprocessor;
        break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK:
        *value = 0; /* HIP reserves none it would report */
        return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return result(hip.DeviceGetAttribute(value, a, (int)device));
}

static CUresult a_DeviceTotalMem(size_t *bytes, CUdevice device)
{
    return result(hip.DeviceTotalMem(bytes, (hipDevice_t)device));
}

static CUresult a_DevicePrimaryCtxRetain(CUcontext *context, CUdevice device)
{
    hipCtx_t c = NULL;
    const hipError_t e = hip.DevicePrimaryCtxRetain(&c, (hipDevice_t)device);
    *context = (CUcontext)c;
    return result(e);
}

static CUresult a_DevicePrimaryCtxRelease(CUdevice device)
{
    return result(hip.DevicePrimaryCtxRelease((hipDevice_t)device));
}

static CUresult a_CtxSetCurrent(CUcontext context)
{
    return result(hip.CtxSetCurrent((hipCtx_t)context));
}

static CUresult a_CtxGetDevice(CUdevice *device)
{
    hipDevice_t d = 0;
    const hipError_t e = hip.CtxGetDevice(&d);
    *device = (CUdevice)d;
    return result(e);
}

static CUresult a_ModuleLoadData(CUmodule *module, const void *image)
{
    hipModule_t m = NULL;
    const hipError_t e = hip.ModuleLoadData(&m, image);
    *module = (CUmodule)m;
    return result(e);
}

static CUresult a_ModuleUnload(CUmodule module) { return result(hip.ModuleUnload((hipModule_t)module)); }

static CUresult a_ModuleGetFunction(CUfunction *function, CUmodule module, const char *name)
{
    hipFunction_t f = NULL;
    const hipError_t e = hip.ModuleGetFunction(&f, (hipModule_t)module, name);
    *function = (CUfunction)f;
    return result(e);
}

/* HIP 5.2's module API has no function attributes.  On AMD there is
 * nothing to set: the limit reported above needs no opt-in, and HIP chooses
 * its own carveout.  On HIP's NVIDIA platform a module function is a
 * CUfunction, and the opt-in is the CUDA driver call HIP would make. */
static CUresult a_FuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value)
{
#if QUALE_HIP_NVIDIA
    return cuFuncSetAttribute(function, attribute, value);
#else
    (void)function;
    (void)attribute;
    (void)value;
    return CUDA_SUCCESS;
#endif
}

static CUresult a_MemAlloc(CUdeviceptr *pointer, size_t bytes)
{
    void *p = NULL;
    const hipError_t e = hip.Malloc(&p, bytes);
    *pointer = to_cuda(p);
    return result(e);
}

static CUresult a_MemFree(CUdeviceptr pointer) { return result(hip.Free((void *)(uintptr_t)pointer)); }

static CUresult a_MemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    return result(hip.MemGetInfo(free_bytes, total_bytes));
}

static CUresult a_MemHostAlloc(void **pointer, size_t bytes, unsigned flags)
{
    return result(hip.HostMalloc(pointer, bytes, flags));
}

static CUresult a_MemFreeHost(void *pointer) { return result(hip.HostFree(pointer)); }

static CUresult a_MemHostRegister(void *pointer, size_t bytes, unsigned flags)
{
    return result(hip.HostRegister(pointer, bytes, flags));
}

static CUresult a_MemHostUnregister(void *pointer) { return result(hip.HostUnregister(pointer)); }

static CUresult a_MemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream)
{
    return result(hip.MemcpyHtoDAsync(TO_HIP(dst), (void *)(uintptr_t)src, bytes,
                                      (hipStream_t)stream));
}

static CUresult a_MemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    return result(hip.MemcpyDtoHAsync(dst, TO_HIP(src), bytes, (hipStream_t)stream));
}

static CUresult a_MemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    return result(hip.MemcpyDtoDAsync(TO_HIP(dst), TO_HIP(src), bytes, (hipStream_t)stream));
}

static CUresult a_MemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes)
{
    return result(hip.MemcpyDtoH(dst, TO_HIP(src), bytes));
}

static CUresult a_MemsetD8(CUdeviceptr dst, unsigned char value, size_t bytes)
{
    return result(hip.MemsetD8(TO_HIP(dst), value, bytes));
}

static CUresult a_MemsetD8Async(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream stream)
{
    return result(hip.MemsetD8Async(TO_HIP(dst), value, bytes, (hipStream_t)stream));
}

static CUresult a_StreamCreate(CUstream *stream, unsigned flags)
{
    hipStream_t s = NULL;
    const hipError_t e = hip.StreamCreateWithFlags(&s, flags);
    *stream = (CUstream)s;
    return result(e);
}

static CUresult a_StreamDestroy(CUstream stream) { return result(hip.StreamDestroy((hipStream_t)stream)); }

static CUresult a_StreamWaitEvent(CUstream stream, CUevent event, unsigned flags)
{
    return result(hip.StreamWaitEvent((hipStream_t)stream, (hipEvent_t)event, flags));
}

static CUresult a_StreamSynchronize(CUstream stream)
{
    return result(hip.StreamSynchronize((hipStream_t)stream));
}

static CUresult a_EventCreate(CUevent *event, unsigned flags)
{
    hipEvent_t ev = NULL;
    const hipError_t e = hip.EventCreateWithFlags(&ev, flags);
    *event = (CUevent)ev;
    return result(e);
}

static CUresult a_EventDestroy(CUevent event) { return result(hip.EventDestroy((hipEvent_t)event)); }

static CUresult a_EventRecord(CUevent event, CUstream stream)
{
    return result(hip.EventRecord((hipEvent_t)event, (hipStream_t)stream));
}

static CUresult a_EventSynchronize(CUevent event)
{
    return result(hip.EventSynchronize((hipEvent_t)event));
}

static CUresult a_EventElapsedTime(float *ms, CUevent start, CUevent end)
{
    return result(hip.EventElapsedTime(ms, (hipEvent_t)start, (hipEvent_t)end));
}

static CUresult a_LaunchKernel(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                               unsigned block_x, unsigned block_y, unsigned block_z,
                               unsigned shared_bytes, CUstream stream, void **params, void **extra)
{
    return result(hip.ModuleLaunchKernel((hipFunction_t)f, grid_x, grid_y, grid_z, block_x, block_y,
                                         block_z, shared_bytes, (hipStream_t)stream, params, extra));
}

int hip_api_load(CudaApi *api, char *error, size_t error_size)
{
    memset(api, 0, sizeof(*api));
    pthread_once(&hip_once, hip_load_once);
    if (hip_status) {
        snprintf(error, error_size, "%s", hip_error);
        return hip_status;
    }
    *api = (CudaApi){
        .Init = a_Init,
        .DriverGetVersion = a_DriverGetVersion,
        .GetErrorString = a_GetErrorString,
        .DeviceGetCount = a_DeviceGetCount,
        .DeviceGet = a_DeviceGet,
        .DeviceGetName = a_DeviceGetName,
        .DeviceGetAttribute = a_DeviceGetAttribute,
        .DeviceTotalMem = a_DeviceTotalMem,
        .DevicePrimaryCtxRetain = a_DevicePrimaryCtxRetain,
        .DevicePrimaryCtxRelease = a_DevicePrimaryCtxRelease,
        .CtxSetCurrent = a_CtxSetCurrent,
        .CtxGetDevice = a_CtxGetDevice,
        .ModuleLoadData = a_ModuleLoadData,
        .ModuleUnload = a_ModuleUnload,
        .ModuleGetFunction = a_ModuleGetFunction,
        .FuncSetAttribute = a_FuncSetAttribute,
        .MemAlloc = a_MemAlloc,
        .MemFree = a_MemFree,
        .MemGetInfo = a_MemGetInfo,
        .MemHostAlloc = a_MemHostAlloc,
        .MemFreeHost = a_MemFreeHost,
        .MemHostRegister = a_MemHostRegister,
        .MemHostUnregister = a_MemHostUnregister,
        .MemcpyHtoDAsync = a_MemcpyHtoDAsync,
        .MemcpyDtoHAsync = a_MemcpyDtoHAsync,
        .MemcpyDtoDAsync = a_MemcpyDtoDAsync,
        .MemcpyDtoH = a_MemcpyDtoH,
        .MemsetD8 = a_MemsetD8,
        .MemsetD8Async = a_MemsetD8Async,
        .StreamCreate = a_StreamCreate,
        .StreamDestroy = a_StreamDestroy,
        .StreamWaitEvent = a_StreamWaitEvent,
        .StreamSynchronize = a_StreamSynchronize,
        .EventCreate = a_EventCreate,
        .EventDestroy = a_EventDestroy,
        .EventRecord = a_EventRecord,
        .EventSynchronize = a_EventSynchronize,
        .EventElapsedTime = a_EventElapsedTime,
        .LaunchKernel = a_LaunchKernel,
    };
    return 0;
}

#else /* !QUALE_HAVE_HIP_RUNTIME */

int hip_api_load(CudaApi *api, char *error, size_t error_size)
{
    memset(api, 0, sizeof(*api));
    snprintf(error, error_size, "this build of quale has no HIP backend (HIP's headers, "
             "libamdhip64-dev, were not found when it was built)");
    return -ENOSYS;
}

#endif
