#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "log.h"

const char *quale_backend_name(enum QualeBackend backend)
{
    switch (backend) {
    case QUALE_BACKEND_CPU: return "cpu";
    case QUALE_BACKEND_CUDA: return "cuda";
    case QUALE_BACKEND_VULKAN: return "vulkan";
    case QUALE_BACKEND_AUTO: return "auto";
    case QUALE_BACKEND_HIP: return "hip";
    }
    return "unknown";
}

const GpuOps *gpu_ops(enum QualeBackend kind)
{
    switch (kind) {
    case QUALE_BACKEND_CUDA: return &gpu_cuda_ops;
    case QUALE_BACKEND_VULKAN: return &gpu_vulkan_ops;
    case QUALE_BACKEND_HIP: return &gpu_hip_ops;
    default: return NULL;
    }
}

int quale_backend_built(enum QualeBackend backend)
{
    const GpuOps *ops = gpu_ops(backend);
    if (ops) return ops->unavailable == NULL;
    return backend == QUALE_BACKEND_CPU || backend == QUALE_BACKEND_AUTO;
}

const char *quale_device_type_name(enum QualeDeviceType type)
{
    switch (type) {
    case QUALE_DEVICE_DISCRETE: return "discrete";
    case QUALE_DEVICE_INTEGRATED: return "integrated";
    case QUALE_DEVICE_VIRTUAL: return "virtual";
    case QUALE_DEVICE_SOFTWARE: return "software";
    case QUALE_DEVICE_OTHER: return "other";
    }
    return "other";
}

int quale_list_devices(enum QualeBackend backend, QualeDeviceInfo *devices, unsigned max,
                       unsigned *count, char *error, size_t error_size)
{
    char dummy[1];
    if (!error || !error_size) {
        error = dummy;
        error_size = sizeof(dummy);
    }
    error[0] = '\0';
    if (count) *count = 0;
    const GpuOps *ops = gpu_ops(backend);
    if (!count || (max && !devices) || !ops) {
        snprintf(error, error_size, "%s", !count || (max && !devices)
                                              ? "quale_list_devices needs count (and devices when max > 0)"
                                              : "only GPU backends have devices to list");
        return -EINVAL;
    }
    if (ops->unavailable) {
        snprintf(error, error_size, "%s", ops->unavailable);
        return -ENOSYS;
    }
    return ops->device.list_devices(devices, max, count, error, error_size);
}

/* "using cuda: NVIDIA H100 80GB HBM3", and what a software device means. */
static void log_device(const LogSink *log, const GpuOps *ops, const GpuBackend *gpu)
{
    QualeDeviceInfo info;
    ops->device.describe(gpu, &info);
    if (info.type == QUALE_DEVICE_SOFTWARE)
        log_sink_print(log, QUALE_LOG_WARNING, "using %s: %s, a software renderer on the CPU: "
                       "--backend cpu is many times faster", quale_backend_name(ops->kind),
                       info.name);
    else
        log_sink_print(log, QUALE_LOG_INFO, "using %s: %s", quale_backend_name(ops->kind), info.name);
}

int backend_open(const LogSink *log, enum QualeBackend requested, int device,
                 enum QualeBackend *selected, const GpuOps **ops, GpuBackend **gpu)
{
    *ops = NULL;
    *gpu = NULL;
    *selected = QUALE_BACKEND_CPU;
    char error[512];
    switch (requested) {
    case QUALE_BACKEND_CPU:
        return 0;
    case QUALE_BACKEND_CUDA:
    case QUALE_BACKEND_VULKAN:
    case QUALE_BACKEND_HIP: {
        const GpuOps *o = gpu_ops(requested);
        if (o->unavailable) {
            log_sink_print(log, QUALE_LOG_ERROR, "the %s backend is not available: %s",
                           quale_backend_name(requested), o->unavailable);
            return -ENOSYS;
        }
        int err = o->device.open(log, device, gpu, error, sizeof(error));
        if (err) {
            log_sink_print(log, QUALE_LOG_ERROR, "the %s backend cannot start: %s",
                           quale_backend_name(requested), error);
            return err;
        }
        *ops = o;
        *selected = requested;
        log_device(log, o, *gpu);
        return 0;
    }
    case QUALE_BACKEND_AUTO: {
        /* The first GPU backend that starts on a hardware device; else the
         * CPU, with one line that says why.  A software Vulkan device
         * (lavapipe) is skipped: it computes the same numbers as the CPU
         * backend, tens of times slower. */
        static const enum QualeBackend order[] = { QUALE_BACKEND_CUDA, QUALE_BACKEND_HIP,
                                                   QUALE_BACKEND_VULKAN };
        char reasons[1024] = "";
        size_t len = 0;
        for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
            const GpuOps *o = gpu_ops(order[i]);
            if (o->unavailable) {
                snprintf(error, sizeof(error), "not built");
            } else if (!o->device.open(log, device, gpu, error, sizeof(error))) {
                QualeDeviceInfo info;
                o->device.describe(*gpu, &info);
                /* Tests reach what lies behind on lavapipe with this. */
                const char *take = getenv("QUALE_AUTO_TAKES_SOFTWARE");
                if (info.type != QUALE_DEVICE_SOFTWARE || (take && !strcmp(take, "1"))) {
                    *ops = o;
                    *selected = order[i];
                    log_device(log, o, *gpu);
                    return 0;
                }
                /* Closed before a picture pool took the host allocator's
                 * reference: drop that one too. */
                const PictureAllocator *host = o->device.host_allocator(*gpu);
                const PictureAllocator kept = host ? *host : (PictureAllocator){ 0 };
                o->device.close(*gpu);
                if (kept.release) kept.release(kept.opaque);
                *gpu = NULL;
                snprintf(error, sizeof(error), "only %s, a software renderer", info.name);
            }
            if (len < sizeof(reasons))
                len += (size_t)snprintf(reasons + len, sizeof(reasons) - len, "%s%s: %s",
                                        len ? "; " : "", quale_backend_name(order[i]), error);
        }
        log_sink_print(log, QUALE_LOG_INFO, "using cpu: no GPU backend started (%s)", reasons);
        return 0;
    }
    }
    log_sink_print(log, QUALE_LOG_ERROR, "unknown backend %d", (int)requested);
    return -EINVAL;
}
