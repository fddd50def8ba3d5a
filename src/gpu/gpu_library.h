/*
 * Opening a GPU runtime's shared library (the CUDA driver, the Vulkan
 * loader, the HIP runtime), the same way for each: a variable of the
 * environment may name another library instead (the tests' broken or fake
 * runtimes).
 */
#ifndef QUALE_SRC_GPU_GPU_LIBRARY_H
#define QUALE_SRC_GPU_GPU_LIBRARY_H

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* The library `env` names, or else `usual`: its handle, and its name in
 * *name; NULL (-ENODEV) with a message that calls it `what` where it cannot
 * be loaded. */
static inline void *gpu_library_open(const char *env, const char *usual, const char *what,
                                     const char **name, char *error, size_t error_size)
{
    const char *override = getenv(env);
    *name = override && *override ? override : usual;
    void *handle = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(error, error_size, "%s %s could not be loaded (%s)", what, *name,
                 why ? why : "not found");
    }
    return handle;
}

#endif /* QUALE_SRC_GPU_GPU_LIBRARY_H */
