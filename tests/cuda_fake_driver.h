/*
 * A CUDA driver on the CPU, for tests of the host side of the CUDA backend
 * without a GPU: device memory is host memory (a CUdeviceptr is a host
 * address), streams run each call at once, and a "kernel" is a host
 * function the test registers under the kernel's name, called once per
 * launch with the grid and the argument block.  It counts what is
 * allocated, can make the n-th allocation fail, fills fresh device memory
 * with garbage and keeps a guard zone after every device allocation,
 * checked when it is freed (guard_broken counts writes past the end).
 * Its device reports an H100's shared memory (227 KB a block, 228 KB an
 * SM, 1 KB kept per block); the kernels' attributes set are counted.
 *
 * C and C++; one test program includes it once.
 */
#ifndef QUALE_TESTS_CUDA_FAKE_DRIVER_H
#define QUALE_TESTS_CUDA_FAKE_DRIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "gpu/cuda/cuda_twin.h"
#ifdef __cplusplus
}
#endif

/* A launch as the kernel sees it. */
typedef struct FakeLaunch {
    unsigned grid[3], block;
    unsigned shared_bytes;
    const void *args; /* the argument block */
    const void *user; /* what the kernel was registered with */
} FakeLaunch;

typedef void (*FakeKernelFn)(const FakeLaunch *launch);

typedef struct FakeKernel {
    const char *name;
    FakeKernelFn run;
    const void *user;
} FakeKernel;

enum { FAKE_MAX_KERNELS = 64, FAKE_MAX_LOG = 256, FAKE_HEADER = 16, FAKE_GUARD = 256 };

static struct {
    FakeKernel kernels[FAKE_MAX_KERNELS];
    unsigned kernel_count;
    /* what happened, for the tests to read */
    long live_device, live_host; /* allocations not yet freed */
    unsigned allocations;        /* device and host, since the last reset */
    unsigned fail_allocation;    /* make this one (1-based) fail; 0: none */
    unsigned launches, memsets, uploads, readbacks, syncs;
    unsigned guard_broken;
    const char *launched[FAKE_MAX_LOG];
    unsigned attributes_set;     /* FuncSetAttribute calls */
    int largest_shared;          /* the largest dynamic shared memory allowed */
    bool fail_attribute;         /* make FuncSetAttribute fail */
} fake;

static inline void fake_reset(void)
{
    const unsigned count = fake.kernel_count;
    FakeKernel kernels[FAKE_MAX_KERNELS];
    memcpy(kernels, fake.kernels, sizeof(kernels));
    memset(&fake, 0, sizeof(fake));
    memcpy(fake.kernels, kernels, sizeof(kernels));
    fake.kernel_count = count;
}

/* A kernel `name` that runs `run`, given `user` with every launch. */
static inline void fake_kernel_with(const char *name, FakeKernelFn run, const void *user)
{
    if (fake.kernel_count < FAKE_MAX_KERNELS)
        fake.kernels[fake.kernel_count++] = (FakeKernel){ name, run, user };
}

static inline void fake_kernel(const char *name, FakeKernelFn run)
{
    fake_kernel_with(name, run, NULL);
}

static inline bool fake_allocation_fails(void)
{
    return ++fake.allocations == fake.fail_allocation;
}

static inline CUresult fake_error_string(CUresult error, const char **text)
{
    *text = error == CUDA_ERROR_OUT_OF_MEMORY ? "out of memory" : "failed";
    return CUDA_SUCCESS;
}

static inline CUresult fake_get_function(CUfunction *function, CUmodule module, const char *name)
{
    (void)module;
    for (unsigned i = 0; i < fake.kernel_count; i++) {
        if (!strcmp(fake.kernels[i].name, name)) {
            *function = (CUfunction)(void *)&fake.kernels[i];
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_NOT_FOUND;
}

static inline unsigned char fake_guard_byte(size_t i)
{
    return (unsigned char)(0x3C ^ (i * 7));
}

static inline CUresult fake_mem_alloc(CUdeviceptr *pointer, size_t bytes)
{
    if (fake_allocation_fails()) return CUDA_ERROR_OUT_OF_MEMORY;
    unsigned char *block = (unsigned char *)malloc(FAKE_HEADER + bytes + FAKE_GUARD);
    if (!block) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(block, &bytes, sizeof(bytes));
    unsigned char *p = block + FAKE_HEADER;
    /* Garbage, not zeros: a twin must not count on fresh memory. */
    memset(p, 0xA5, bytes);
    for (size_t i = 0; i < FAKE_GUARD; i++) p[bytes + i] = fake_guard_byte(i);
    *pointer = (CUdeviceptr)(uintptr_t)p;
    fake.live_device++;
    return CUDA_SUCCESS;
}

static inline CUresult fake_mem_free(CUdeviceptr pointer)
{
    if (!pointer) return CUDA_SUCCESS;
    fake.live_device--;
    unsigned char *p = (unsigned char *)(uintptr_t)pointer;
    size_t bytes;
    memcpy(&bytes, p - FAKE_HEADER, sizeof(bytes));
    for (size_t i = 0; i < FAKE_GUARD; i++)
        if (p[bytes + i] != fake_guard_byte(i)) {
            fake.guard_broken++;
            break;
        }
    free(p - FAKE_HEADER);
    return CUDA_SUCCESS;
}

static inline CUresult fake_host_alloc(void **pointer, size_t bytes, unsigned flags)
{
    (void)flags;
    if (fake_allocation_fails()) return CUDA_ERROR_OUT_OF_MEMORY;
    *pointer = malloc(bytes);
    if (!*pointer) return CUDA_ERROR_OUT_OF_MEMORY;
    memset(*pointer, 0x5A, bytes);
    fake.live_host++;
    return CUDA_SUCCESS;
}

static inline CUresult fake_host_free(void *pointer)
{
    if (pointer) fake.live_host--;
    free(pointer);
    return CUDA_SUCCESS;
}

static inline CUresult fake_upload(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream)
{
    (void)stream;
    fake.uploads++;
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return CUDA_SUCCESS;
}

static inline CUresult fake_read_back(void *dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    (void)stream;
    fake.readbacks++;
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
}

static inline CUresult fake_memset(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream stream)
{
    (void)stream;
    fake.memsets++;
    memset((void *)(uintptr_t)dst, value, bytes);
    return CUDA_SUCCESS;
}

static inline CUresult fake_sync(CUstream stream)
{
    (void)stream;
    fake.syncs++;
    return CUDA_SUCCESS;
}

static inline CUresult fake_launch(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                            unsigned block_x, unsigned block_y, unsigned block_z,
                            unsigned shared_bytes, CUstream stream, void **params, void **extra)
{
    (void)block_y;
    (void)block_z;
    (void)stream;
    (void)extra;
    const FakeKernel *k = (const FakeKernel *)(void *)f;
    if (fake.launches < FAKE_MAX_LOG) fake.launched[fake.launches] = k->name;
    fake.launches++;
    const FakeLaunch launch = { { grid_x, grid_y, grid_z }, block_x, shared_bytes, params[0],
                                k->user };
    k->run(&launch);
    return CUDA_SUCCESS;
}

static inline CUresult fake_set_attribute(CUfunction function, CUfunction_attribute attribute,
                                          int value)
{
    (void)function;
    if (fake.fail_attribute) return CUDA_ERROR_INVALID_VALUE;
    fake.attributes_set++;
    if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && value > fake.largest_shared)
        fake.largest_shared = value;
    return CUDA_SUCCESS;
}

static inline CUresult fake_device_attribute(int *value, CUdevice_attribute attribute,
                                             CUdevice device)
{
    (void)device;
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 227 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *value = 228 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *value = 1024; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* A device on the fake driver. */
static inline void fake_device(CudaDevice *dev)
{
    memset(dev, 0, sizeof(*dev));
    dev->api.GetErrorString = fake_error_string;
    dev->api.ModuleGetFunction = fake_get_function;
    dev->api.MemAlloc = fake_mem_alloc;
    dev->api.MemFree = fake_mem_free;
    dev->api.MemHostAlloc = fake_host_alloc;
    dev->api.MemFreeHost = fake_host_free;
    dev->api.MemcpyHtoDAsync = fake_upload;
    dev->api.MemcpyDtoHAsync = fake_read_back;
    dev->api.MemsetD8Async = fake_memset;
    dev->api.StreamSynchronize = fake_sync;
    dev->api.LaunchKernel = fake_launch;
    dev->api.FuncSetAttribute = fake_set_attribute;
    dev->api.DeviceGetAttribute = fake_device_attribute;
    dev->multiprocessors = 132;
    snprintf(dev->name, sizeof(dev->name), "fake");
}

#endif /* QUALE_TESTS_CUDA_FAKE_DRIVER_H */
