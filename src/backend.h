/*
 * Choosing the backend: the CPU, or a GPU backend loaded at run time.
 */
#ifndef QUALE_SRC_BACKEND_H
#define QUALE_SRC_BACKEND_H

#include "gpu/gpu.h"
#include "log.h"
#include "quale/quale.h"

/*
 * Resolves the requested backend and opens it.  AUTO tries each GPU
 * backend that is built and falls back to the CPU with a one-line notice.
 * An explicit GPU backend that cannot start is an error with a message.
 * For the CPU, *ops and *gpu are NULL.  ctx is handed to the GPU backend
 * it opens; the messages go to log.
 */
int backend_open(const LogSink *log, enum QualeBackend requested, int device,
                 enum QualeBackend *selected, const GpuOps **ops, GpuBackend **gpu);

#endif /* QUALE_SRC_BACKEND_H */
