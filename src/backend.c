#include <errno.h>

#include "backend.h"
#include "context.h"

const char *quale_backend_name(enum QualeBackend backend)
{
    switch (backend) {
    case QUALE_BACKEND_CPU: return "cpu";
    case QUALE_BACKEND_CUDA: return "cuda";
    case QUALE_BACKEND_VULKAN: return "vulkan";
    case QUALE_BACKEND_AUTO: return "auto";
    }
    return "unknown";
}

const GpuOps *gpu_ops(enum QualeBackend kind)
{
    switch (kind) {
    case QUALE_BACKEND_CUDA: return &gpu_cuda_ops;
    case QUALE_BACKEND_VULKAN: return &gpu_vulkan_ops;
    default: return NULL;
    }
}

int quale_backend_built(enum QualeBackend backend)
{
    const GpuOps *ops = gpu_ops(backend);
    if (ops) return ops->unavailable == NULL;
    return backend == QUALE_BACKEND_CPU || backend == QUALE_BACKEND_AUTO;
}

int backend_open(QualeContext *ctx, enum QualeBackend requested, int device,
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
    case QUALE_BACKEND_VULKAN: {
        const GpuOps *o = gpu_ops(requested);
        if (o->unavailable) {
            context_log(ctx, QUALE_LOG_ERROR, "the %s backend is not available: %s",
                        quale_backend_name(requested), o->unavailable);
            return -ENOSYS;
        }
        int err = o->open(ctx, device, gpu, error, sizeof(error));
        if (err) {
            context_log(ctx, QUALE_LOG_ERROR, "the %s backend cannot start: %s",
                        quale_backend_name(requested), error);
            return err;
        }
        *ops = o;
        *selected = requested;
        return 0;
    }
    case QUALE_BACKEND_AUTO: {
        /* The first GPU backend that starts; else the CPU, with one line
         * that says why. */
        static const enum QualeBackend order[] = { QUALE_BACKEND_CUDA, QUALE_BACKEND_VULKAN };
        char reasons[1024] = "";
        size_t len = 0;
        for (unsigned i = 0; i < 2; i++) {
            const GpuOps *o = gpu_ops(order[i]);
            if (o->unavailable) {
                snprintf(error, sizeof(error), "not built");
            } else if (!o->open(ctx, device, gpu, error, sizeof(error))) {
                *ops = o;
                *selected = order[i];
                context_log(ctx, QUALE_LOG_INFO, "using the %s backend",
                            quale_backend_name(order[i]));
                return 0;
            }
            if (len < sizeof(reasons))
                len += (size_t)snprintf(reasons + len, sizeof(reasons) - len, "%s%s: %s",
                                        len ? "; " : "", quale_backend_name(order[i]), error);
        }
        context_log(ctx, QUALE_LOG_INFO, "no GPU backend started, using the CPU (%s)", reasons);
        return 0;
    }
    }
    context_log(ctx, QUALE_LOG_ERROR, "unknown backend %d", (int)requested);
    return -EINVAL;
}
