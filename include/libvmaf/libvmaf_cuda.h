/*
 * libvmaf's CUDA interface, as libquale provides it (the libvmaf 3.x API:
 * same names, types and layouts; see docs/libvmaf.md).  With it a program
 * that keeps its frames on an NVIDIA GPU (FFmpeg's libvmaf_cuda filter)
 * hands them over in device memory: quale's CUDA twins score them there,
 * and only metrics that run on the CPU get a copy on the host.
 */
#ifndef __VMAF_CUDA_H__
#define __VMAF_CUDA_H__

#include "libvmaf/libvmaf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct VmafCudaState VmafCudaState;

typedef struct VmafCudaConfiguration {
    void *cu_ctx; /* a CUcontext of the caller's; NULL: the first device's
                   * primary context */
} VmafCudaConfiguration;

/* Makes a CUDA state for one VmafContext: checks the driver and the
 * context (or device).  Returns 0, or a negative errno. */
int vmaf_cuda_state_init(VmafCudaState **cu_state, VmafCudaConfiguration cfg);

/* Scores the context's frames with the CUDA backend in the state's CUDA
 * context.  Before the first picture.  The VmafContext owns the state from
 * then on (vmaf_close() frees it). */
int vmaf_cuda_import_state(VmafContext *vmaf, VmafCudaState *cu_state);

enum VmafCudaPicturePreallocationMethod {
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_NONE = 0,
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE,
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST,
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST_PINNED,
};

typedef struct VmafCudaPictureConfiguration {
    struct {
        unsigned w, h;
        unsigned bpc;
        enum VmafPixelFormat pix_fmt;
    } pic_params;
    enum VmafCudaPicturePreallocationMethod pic_prealloc_method;
} VmafCudaPictureConfiguration;

/* Sets the pictures vmaf_cuda_fetch_preallocated_picture() gives: DEVICE,
 * planes in device memory of the state's CUDA context (data[i] holds a
 * CUdeviceptr); HOST and HOST_PINNED, host memory the device reads
 * directly.  After vmaf_cuda_import_state(). */
int vmaf_cuda_preallocate_pictures(VmafContext *vmaf, VmafCudaPictureConfiguration cfg);

/* A picture as vmaf_cuda_preallocate_pictures() set, for one call of
 * vmaf_read_pictures() (which takes it back). */
int vmaf_cuda_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic);

#ifdef __cplusplus
}
#endif

#endif /* __VMAF_CUDA_H__ */
