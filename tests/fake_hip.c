/*
 * A fake HIP runtime (libamdhip64's functions, on the host), for
 * test_hip_api: device memory is host memory, kernels launch nothing, and
 * every call that carries something the adapters translate (attributes,
 * flags, error codes, device pointers, launch shapes) is recorded for the
 * test to read back through fake_hip_log() (fake_hip.h).  Its types are
 * plain C: the adapters must reach it through libamdhip64's ABI (pointers
 * for device memory and handles, int for devices, errors and attributes).
 * Its hip* functions are found by name, as the runtime's are (hence no
 * prototypes).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hip.h"

#define EXPORT __attribute__((visibility("default")))

static FakeHipLog fake;

EXPORT FakeHipLog *fake_hip_log(void) { return &fake; }

enum { OK = 0, OUT_OF_MEMORY = 2, INVALID_VALUE = 1 };

/* flags 7: ROCm's answer on a machine without a GPU (hipErrorInvalidDevice) */
EXPORT int hipInit(unsigned flags) { return flags == 7 ? 101 : flags ? INVALID_VALUE : OK; }
EXPORT int hipDriverGetVersion(int *v) { *v = 50221153; return OK; }
EXPORT const char *hipGetErrorString(int e)
{
    return e == OUT_OF_MEMORY ? "hipErrorOutOfMemory (fake)" : "some hip error (fake)";
}
EXPORT int hipGetDeviceCount(int *n) { *n = 1; return OK; }
EXPORT int hipDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal == 0 ? OK : 101; }
EXPORT int hipDeviceGetName(char *name, int length, int d)
{
    snprintf(name, (size_t)length, "Fake AMD gfx90a %d", d);
    return OK;
}
/* The attribute's own number as its value (so the test sees which one was
 * asked), but not integrated, and 64 KB of local memory per block. */
EXPORT int hipDeviceGetAttribute(int *v, int attribute, int d)
{
    if (fake.attribute_count < 16) fake.attributes[fake.attribute_count++] = attribute;
    *v = attribute == 16 ? 0 : attribute == 74 ? 65536 : attribute;
    return d == 0 ? OK : 101;
}
EXPORT int hipDeviceTotalMem(size_t *bytes, int d) { *bytes = (size_t)64 << 30; return d ? 101 : OK; }
EXPORT int hipDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)(uintptr_t)(0x1000 + d); return OK; }
EXPORT int hipDevicePrimaryCtxRelease(int d) { (void)d; return OK; }
EXPORT int hipCtxSetCurrent(void *c) { fake.current_context = c; return OK; }
EXPORT int hipCtxGetDevice(int *d) { *d = 0; return OK; }
EXPORT int hipModuleLoadData(void **m, const void *image)
{
    if (fake.image_count < 64) fake.images[fake.image_count++] = image;
    *m = (void *)image;
    return OK;
}
EXPORT int hipModuleUnload(void *m) { (void)m; return OK; }
EXPORT int hipModuleGetFunction(void **f, void *m, const char *name)
{
    (void)m;
    if (fake.function_count < 64)
        snprintf(fake.functions[fake.function_count++], sizeof(fake.functions[0]), "%s", name);
    *f = (void *)(uintptr_t)(0x2000 + fake.function_count);
    return OK;
}
EXPORT int hipMalloc(void **p, size_t n)
{
    if (n > ((size_t)1 << 40)) return OUT_OF_MEMORY;
    *p = calloc(1, n ? n : 1);
    return *p ? OK : OUT_OF_MEMORY;
}
EXPORT int hipFree(void *p) { free(p); return OK; }
EXPORT int hipMemGetInfo(size_t *free_bytes, size_t *total)
{
    *free_bytes = (size_t)60 << 30;
    *total = (size_t)64 << 30;
    return OK;
}
EXPORT int hipHostMalloc(void **p, size_t n, unsigned flags)
{
    fake.host_flags = flags;
    *p = calloc(1, n ? n : 1);
    return *p ? OK : OUT_OF_MEMORY;
}
EXPORT int hipHostFree(void *p) { free(p); return OK; }
EXPORT int hipHostRegister(void *p, size_t n, unsigned flags)
{
    if (!p || !n) return INVALID_VALUE;
    fake.register_flags = flags;
    fake.register_bytes = n;
    fake.registered++;
    return OK;
}
EXPORT int hipHostUnregister(void *p)
{
    if (!p || !fake.registered) return INVALID_VALUE;
    fake.registered--;
    return OK;
}
EXPORT int hipMemcpyHtoDAsync(void *dst, void *src, size_t n, void *s) { (void)s; memcpy(dst, src, n); return OK; }
EXPORT int hipMemcpyDtoHAsync(void *dst, void *src, size_t n, void *s) { (void)s; memcpy(dst, src, n); return OK; }
EXPORT int hipMemcpyDtoDAsync(void *dst, void *src, size_t n, void *s) { (void)s; memmove(dst, src, n); return OK; }
EXPORT int hipMemcpyDtoH(void *dst, void *src, size_t n) { memcpy(dst, src, n); return OK; }
EXPORT int hipMemsetD8(void *dst, unsigned char v, size_t n) { memset(dst, v, n); return OK; }
EXPORT int hipMemsetD8Async(void *dst, unsigned char v, size_t n, void *s) { (void)s; memset(dst, v, n); return OK; }
EXPORT int hipStreamCreateWithFlags(void **s, unsigned flags)
{
    fake.stream_flags = flags;
    *s = malloc(1);
    return OK;
}
EXPORT int hipStreamDestroy(void *s) { free(s); return OK; }
EXPORT int hipStreamWaitEvent(void *s, void *e, unsigned flags) { (void)s; (void)e; return flags ? INVALID_VALUE : OK; }
EXPORT int hipStreamSynchronize(void *s) { (void)s; return OK; }
EXPORT int hipEventCreateWithFlags(void **e, unsigned flags)
{
    fake.event_flags = flags;
    *e = malloc(1);
    return OK;
}
EXPORT int hipEventDestroy(void *e) { free(e); return OK; }
EXPORT int hipEventRecord(void *e, void *s) { (void)e; (void)s; return OK; }
EXPORT int hipEventSynchronize(void *e) { (void)e; return OK; }
EXPORT int hipEventElapsedTime(float *ms, void *a, void *b) { (void)a; (void)b; *ms = 1.5f; return OK; }
EXPORT int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, void *stream,
                                 void **params, void **extra)
{
    (void)f;
    (void)stream;
    (void)extra;
    fake.launches++;
    fake.grid[0] = gx, fake.grid[1] = gy, fake.grid[2] = gz;
    fake.block[0] = bx, fake.block[1] = by, fake.block[2] = bz;
    fake.shared = shared;
    fake.params = params;
    return OK;
}
