/*
 * The float metrics' row sums, as their C references add: acc + v[0] +
 * v[1] + ... + v[n - 1], one float addition after the other.  That chain
 * is the result, so it stays serial; what need not wait are the loads.
 * Unrolled by eight, each group's loads are issued before its additions:
 * a shared-memory load takes about 30 cycles and an addition 4, and a loop
 * that waits for every load before its addition runs several times slower
 * (the few threads of a block that add the rows of a segment hold up the
 * whole block at its next barrier).
 */
#ifndef QUALE_SRC_CUDA_FLOAT_CHAIN_H
#define QUALE_SRC_CUDA_FLOAT_CHAIN_H

#include "cuda_host_compat.h"

__host__ __device__ __forceinline__ float float_chain_sum(float acc, const float *v, int n)
{
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        float t[8];
        for (int k = 0; k < 8; k++) t[k] = v[i + k];
        for (int k = 0; k < 8; k++) acc += t[k];
    }
    for (; i < n; i++) acc += v[i];
    return acc;
}

#endif /* QUALE_SRC_CUDA_FLOAT_CHAIN_H */
