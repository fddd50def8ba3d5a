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

int quale_backend_built(enum QualeBackend backend)
{
    /* The GPU backends arrive with their own directories; until then only
     * the CPU is built. */
    return backend == QUALE_BACKEND_CPU;
}

int backend_select(QualeContext *ctx, enum QualeBackend requested,
                   enum QualeBackend *selected)
{
    switch (requested) {
    case QUALE_BACKEND_CPU:
        *selected = QUALE_BACKEND_CPU;
        return 0;
    case QUALE_BACKEND_AUTO:
        context_log(ctx, QUALE_LOG_INFO, "no GPU backend is available in this build; "
                    "using the CPU");
        *selected = QUALE_BACKEND_CPU;
        return 0;
    case QUALE_BACKEND_CUDA:
    case QUALE_BACKEND_VULKAN:
        context_log(ctx, QUALE_LOG_ERROR, "the %s backend is not available in this build",
                    quale_backend_name(requested));
        return -ENOSYS;
    }
    context_log(ctx, QUALE_LOG_ERROR, "unknown backend %d", (int)requested);
    return -EINVAL;
}
