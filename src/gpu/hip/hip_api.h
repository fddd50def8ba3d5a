/*
 * The HIP runtime as a CudaApi (hip_api.c): the table the CUDA backend's
 * primitive layer calls, with HIP behind each entry, for --backend hip.
 */
#ifndef QUALE_SRC_CUDA_HIP_API_H
#define QUALE_SRC_CUDA_HIP_API_H

#include <stddef.h>

#include "gpu/cuda/cuda_api.h"

/* Loads the HIP runtime once per process (libamdhip64.so.5, or
 * QUALE_HIP_LIBRARY; built in on HIP's NVIDIA platform) and fills api with
 * adapters over it; api->library stays NULL (the runtime is never
 * unloaded).  On failure error has one line and a negative errno comes
 * back. */
int hip_api_load(CudaApi *api, char *error, size_t error_size);

#endif /* QUALE_SRC_CUDA_HIP_API_H */
