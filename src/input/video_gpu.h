/*
 * How the context hands a video reader its GPU (quale_video_decode_on_gpu()
 * in src/context/intake.c): the input layer gets the backend's importer,
 * never the context.
 */
#ifndef QUALE_SRC_INPUT_VIDEO_GPU_H
#define QUALE_SRC_INPUT_VIDEO_GPU_H

#include "gpu/gpu.h"
#include "quale/quale.h"

/* Decodes the reader's video on the GPU from its first frame where it can
 * (quale_video_decode_on_gpu()'s return values): importer NULL when the
 * context has no backend that takes decoded frames, `unavailable` then
 * saying why, which the reader gives once the stream's own reasons (a
 * codec that must stay on the CPU) are checked. */
int video_reader_use_gpu(QualeVideoReader *reader, const GpuImporter *importer,
                         const char *unavailable);

#endif /* QUALE_SRC_INPUT_VIDEO_GPU_H */
