/*
 * Backends: the CPU, and GPU backends loaded at run time.  A backend that is
 * not built answers "not available", so the API is the same in every build.
 */
#ifndef QUALE_SRC_BACKEND_H
#define QUALE_SRC_BACKEND_H

#include "quale/quale.h"

/* Resolves the requested backend (AUTO picks the first that starts, else
 * the CPU, with a notice) or fails with a message. */
int backend_select(QualeContext *ctx, enum QualeBackend requested,
                   enum QualeBackend *selected);

#endif /* QUALE_SRC_BACKEND_H */
