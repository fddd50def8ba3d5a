/*
 * The HIP runtime table (src/cuda/hip_api.c) over a fake libamdhip64
 * (tests/fake_hip.c, named by QUALE_HIP_LIBRARY): every CudaApi entry the
 * backend calls reaches its HIP function with the values translated (device
 * attributes by HIP's numbers, device pointers, flags, launch shapes, error
 * codes and their text), and the HIP backend opens on it, lists its device
 * and loads the AMD code-object bundles, not the CUDA fatbins.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hip.h"
#include "gpu/hip/hip_api.h"
#include "quale/quale.h"
#include "test.h"


static void check_table(const CudaApi *api, FakeHipLog *log)
{
    CHECK(api->Init(0) == CUDA_SUCCESS);
    /* no GPU at all is CUDA's "no device", whatever ROCm calls it */
    CHECK(api->Init(7) == CUDA_ERROR_NO_DEVICE);
    CHECK(api->Init(1) == CUDA_ERROR_INVALID_VALUE);
    int version = 0;
    CHECK(api->DriverGetVersion(&version) == CUDA_SUCCESS && version == 50221153);
    const char *text = NULL;
    CHECK(api->GetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &text) == CUDA_SUCCESS);
    CHECK_STR(text, "hipErrorOutOfMemory (fake)");
    CHECK_STR(cuda_error_text(api, CUDA_ERROR_OUT_OF_MEMORY), "hipErrorOutOfMemory (fake)");

    int count = 0;
    CUdevice device = -1;
    char name[64] = "";
    CHECK(api->DeviceGetCount(&count) == CUDA_SUCCESS && count == 1);
    CHECK(api->DeviceGet(&device, 0) == CUDA_SUCCESS && device == 0);
    CHECK(api->DeviceGetName(name, sizeof(name), device) == CUDA_SUCCESS);
    CHECK_STR(name, "Fake AMD gfx90a 0");

    /* Each CUDA attribute asks for HIP's own (the fake answers with the
     * number it was asked for). */
    static const struct {
        CUdevice_attribute cuda;
        int hip, value;
    } attributes[] = {
        { CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 23, 23 },
        { CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 63, 63 },
        { CU_DEVICE_ATTRIBUTE_INTEGRATED, 16, 0 },
        { CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 74, 65536 },
        { CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 10002, 10002 },
    };
    for (unsigned i = 0; i < sizeof(attributes) / sizeof(attributes[0]); i++) {
        const unsigned before = log->attribute_count;
        int value = -1;
        CHECK(api->DeviceGetAttribute(&value, attributes[i].cuda, device) == CUDA_SUCCESS);
        CHECK(log->attribute_count == before + 1 &&
              log->attributes[before] == attributes[i].hip);
        CHECK(value == attributes[i].value);
    }
    int reserved = -1;
    const unsigned asked = log->attribute_count;
    CHECK(api->DeviceGetAttribute(&reserved, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
                                  device) == CUDA_SUCCESS && reserved == 0);
    CHECK(log->attribute_count == asked);
    CHECK(api->DeviceGetAttribute(&reserved, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device) ==
          CUDA_ERROR_INVALID_VALUE);
    size_t total = 0, free_bytes = 0;
    CHECK(api->DeviceTotalMem(&total, device) == CUDA_SUCCESS && total == (size_t)64 << 30);
    CHECK(api->MemGetInfo(&free_bytes, &total) == CUDA_SUCCESS && free_bytes == (size_t)60 << 30);

    CUcontext context = NULL;
    CHECK(api->DevicePrimaryCtxRetain(&context, device) == CUDA_SUCCESS &&
          context == (CUcontext)(uintptr_t)0x1000);
    CHECK(api->CtxSetCurrent(context) == CUDA_SUCCESS && log->current_context == (void *)context);
    CHECK(api->CtxGetDevice(&device) == CUDA_SUCCESS && device == 0);

    /* Device memory: HIP's pointers as CUDA's integers, and back. */
    CUdeviceptr a = 0, b = 0;
    CHECK(api->MemAlloc(&a, 64) == CUDA_SUCCESS && a != 0);
    CHECK(api->MemAlloc(&b, 64) == CUDA_SUCCESS && b != 0 && b != a);
    CHECK(api->MemsetD8(a, 0x5a, 64) == CUDA_SUCCESS);
    unsigned char host[64];
    CHECK(api->MemcpyDtoH(host, a, 64) == CUDA_SUCCESS && host[0] == 0x5a && host[63] == 0x5a);
    for (unsigned i = 0; i < 64; i++) host[i] = (unsigned char)i;
    CHECK(api->MemcpyHtoDAsync(a, host, 64, NULL) == CUDA_SUCCESS);
    CHECK(api->MemcpyDtoDAsync(b, a, 64, NULL) == CUDA_SUCCESS);
    CHECK(api->MemsetD8Async(a, 0, 32, NULL) == CUDA_SUCCESS);
    unsigned char back[64], first[64];
    CHECK(api->MemcpyDtoHAsync(back, b, 64, NULL) == CUDA_SUCCESS && !memcmp(back, host, 64));
    CHECK(api->MemcpyDtoHAsync(first, a, 64, NULL) == CUDA_SUCCESS && first[31] == 0 &&
          first[32] == 32);
    CHECK(api->MemFree(a) == CUDA_SUCCESS && api->MemFree(b) == CUDA_SUCCESS);
    CUdeviceptr huge = 0;
    CHECK(api->MemAlloc(&huge, (size_t)1 << 41) == CUDA_ERROR_OUT_OF_MEMORY);

    void *pinned = NULL;
    CHECK(api->MemHostAlloc(&pinned, 128, CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS && pinned);
    CHECK(log->host_flags == 1);
    CHECK(api->MemFreeHost(pinned) == CUDA_SUCCESS);
    /* memory of our own, registered (host_pages.h) */
    char own[256];
    const unsigned before = log->registered;
    CHECK(api->MemHostRegister(own, sizeof(own), CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS);
    CHECK(log->register_flags == 1 && log->register_bytes == sizeof(own) &&
          log->registered == before + 1);
    CHECK(api->MemHostUnregister(own) == CUDA_SUCCESS && log->registered == before);

    CUstream stream = NULL;
    CUevent start = NULL, end = NULL;
    CHECK(api->StreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS && stream);
    CHECK(log->stream_flags == 1);
    CHECK(api->EventCreate(&start, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS && start);
    CHECK(log->event_flags == 2);
    CHECK(api->EventCreate(&end, CU_EVENT_DEFAULT) == CUDA_SUCCESS && log->event_flags == 0);
    CHECK(api->EventRecord(start, stream) == CUDA_SUCCESS);
    CHECK(api->StreamWaitEvent(stream, start, 0) == CUDA_SUCCESS);
    CHECK(api->EventSynchronize(start) == CUDA_SUCCESS);
    float ms = 0;
    CHECK(api->EventElapsedTime(&ms, start, end) == CUDA_SUCCESS && ms == 1.5f);
    CHECK(api->StreamSynchronize(stream) == CUDA_SUCCESS);

    CUmodule module = NULL;
    CUfunction function = NULL;
    static const unsigned char image[] = "an image";
    CHECK(api->ModuleLoadData(&module, image) == CUDA_SUCCESS && (const void *)module == image);
    CHECK(api->ModuleGetFunction(&function, module, "some_kernel") == CUDA_SUCCESS && function);
    CHECK_STR(log->functions[log->function_count - 1], "some_kernel");
    /* nothing to opt in to: accepted, and no HIP call */
    CHECK(api->FuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 60000) ==
          CUDA_SUCCESS);
    int argument = 7;
    void *params[] = { &argument };
    CHECK(api->LaunchKernel(function, 3, 4, 5, 64, 2, 1, 1024, stream, params, NULL) ==
          CUDA_SUCCESS);
    CHECK(log->launches == 1 && log->grid[0] == 3 && log->grid[1] == 4 && log->grid[2] == 5 &&
          log->block[0] == 64 && log->block[1] == 2 && log->block[2] == 1 &&
          log->shared == 1024 && log->params == params);
    CHECK(api->ModuleUnload(module) == CUDA_SUCCESS);
    CHECK(api->EventDestroy(start) == CUDA_SUCCESS && api->EventDestroy(end) == CUDA_SUCCESS);
    CHECK(api->StreamDestroy(stream) == CUDA_SUCCESS);
    CHECK(api->DevicePrimaryCtxRelease(device) == CUDA_SUCCESS);
}

/* The backend on the fake: its device listed, a context on it, a frame of
 * psnr through the AMD images. */
static void check_backend(FakeHipLog *log)
{
    QualeDeviceInfo devices[2];
    unsigned count = 0;
    char error[256] = "";
    CHECK(quale_list_devices(QUALE_BACKEND_HIP, devices, 2, &count, error, sizeof(error)) == 0);
    CHECK(count == 1 && devices[0].backend == QUALE_BACKEND_HIP &&
          devices[0].type == QUALE_DEVICE_DISCRETE);
    CHECK_STR(devices[0].name, "Fake AMD gfx90a 0");

    QualeSettings s;
    quale_settings_default(&s);
    s.backend = QUALE_BACKEND_HIP;
    s.threads = 1;
    s.log_level = QUALE_LOG_ERROR;
    QualeContext *ctx = NULL;
    CHECK(quale_open(&ctx, &s) == 0);
    if (!ctx) return;
    CHECK(quale_backend(ctx) == QUALE_BACKEND_HIP);
    CHECK(quale_use_metric(ctx, "psnr") == 0);
    const QualeVideoFormat format = { QUALE_CHROMA_420, 8, 64, 48 };
    QualePicture ref = { 0 }, dist = { 0 };
    const unsigned registered_before = log->registered;
    CHECK(quale_context_alloc_picture(ctx, &ref, &format) == 0);
    CHECK(quale_context_alloc_picture(ctx, &dist, &format) == 0);
    /* the pictures are host memory of our own, registered (host_pages.h) */
    CHECK(log->registered == registered_before + 2);
    const unsigned images_before = log->image_count, launches_before = log->launches;
    CHECK(quale_send_pictures(ctx, &ref, &dist) == 0);
    CHECK(quale_flush(ctx) == 0);
    CHECK(log->launches > launches_before);
    CHECK(log->image_count > images_before);
    /* every image the backend loaded is an AMD code-object bundle */
    for (unsigned i = images_before; i < log->image_count; i++)
        CHECK(!memcmp(log->images[i], "__CLANG_OFFLOAD_BUNDLE__", 24));
    quale_close(&ctx);
    /* and unregistered when the pool lets them go */
    CHECK(log->registered == registered_before);
}

int main(void)
{
    const char *path = getenv("QUALE_HIP_LIBRARY");
    void *fake = path ? dlopen(path, RTLD_NOW) : NULL;
    FakeHipLog *(*get_log)(void) = fake ? (FakeHipLog * (*)(void)) dlsym(fake, "fake_hip_log") : NULL;
    if (!get_log) {
        fprintf(stderr, "QUALE_HIP_LIBRARY must name the fake HIP runtime (tests/fake_hip.c)\n");
        return 1;
    }
    CudaApi api;
    char error[256] = "";
    CHECK(hip_api_load(&api, error, sizeof(error)) == 0);
    if (!api.Init) {
        fprintf(stderr, "%s\n", error);
        return 1;
    }
    check_table(&api, get_log());
    check_backend(get_log());
    return test_summary();
}
