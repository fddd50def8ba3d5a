/*
 * The host side of cambi's CUDA twin (cambi_cuda.c) that its CPU test
 * drives (tests/test_cambi_cuda_host.cpp): the plan of a run (slot layout,
 * table, every launch of a frame) and the pooling that collect() does.
 * Nothing here touches a device.
 */
#ifndef QUALE_SRC_CUDA_CAMBI_CUDA_H
#define QUALE_SRC_CUDA_CAMBI_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_plan.h"
#include "metrics/cambi/cambi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CambiPlan CambiPlan;

/* The shared memory of a c-value block strip (64 or 32) columns wide. */
unsigned cambi_cuda_shared_bytes(const CambiState *s, unsigned strip);

/* The plan of a run: strip is the c-value block's width (64 or 32),
 * resident_blocks how many of those blocks the device runs at once (0:
 * unknown).  NULL when out of memory or for another strip. */
CambiPlan *cambi_cuda_plan_new(const CambiState *s, const QualeVideoFormat *format,
                               unsigned strip, unsigned resident_blocks);

/* A slot's layout (its statistics read back) and its steps. */
const CudaSlotLayout *cambi_cuda_slot(const CambiPlan *p);

/* Bytes of the table uploaded once, and its contents. */
size_t cambi_cuda_table_bytes(const CambiPlan *p);
void cambi_cuda_table_fill(const CambiPlan *p, void *table);

/* The launches of a frame, in stream order: step i's kernel name, launch
 * (grid x, grid y, threads per block, shared bytes) and arguments (args:
 * room for the larger of cambi.cu's CambiPrepArgs and CambiCArgs); NULL
 * past the last.  Addresses are device addresses (the test passes host
 * ones). */
const char *cambi_cuda_step(const CambiPlan *p, unsigned i, uint64_t slot, uint64_t table,
                            uint64_t ref, uint64_t dist, uint64_t stride, unsigned launch[4],
                            void *args);

/* Reads bytes at offset of the slot into dst; 0, or an error with its
 * message in error. */
typedef int (*CambiFetch)(void *cookie, size_t offset, void *dst, size_t bytes, char *error,
                          size_t error_size);

/* The scores of the frame's pictures (score[1]: the reference's, with
 * full_ref) from a copy of the slot's statistics, pooled as the C
 * reference pools; fetch reads a scale's c-values where pooling needs
 * them. */
int cambi_cuda_scores(const CambiPlan *p, const void *stats, CambiFetch fetch, void *cookie,
                      double score[2], char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* QUALE_SRC_CUDA_CAMBI_CUDA_H */
