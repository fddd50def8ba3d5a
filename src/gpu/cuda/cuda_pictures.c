/*
 * The CUDA backend's pictures in device memory: the caller's device
 * pictures, downloads, and decoded frames imported (and scaled) into them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "log.h"
#include "cuda_backend.h"
#include "cuda_twin.h"
#include "gpu/gpu.h"
#include "input/scale.h"
#include "kernel_images.h"
#include "cuda_backend.h"

/* ---- pictures in device memory ---------------------------------------- */

/* Device memory for a picture, cleared: a caller that fills only some
 * planes (FFmpeg's libvmaf_cuda copies the luma alone) leaves the others
 * zero rather than whatever the memory held. */
void *device_picture_alloc(void *opaque, size_t size)
{
    GpuBackend *gpu = opaque;
    CUdeviceptr p = 0;
    const CudaApi *api = &gpu->dev.api;
    if (api->CtxSetCurrent(gpu->dev.context) != CUDA_SUCCESS) return NULL;
    /* The caller's pictures, not the backend's working memory: outside
     * what QUALE_CUDA_MEMORY_LIMIT counts. */
    const CUresult r = api->MemAlloc(&p, size ? size : 1);
    if (r != CUDA_SUCCESS) {
        log_sink_print(&gpu->log, QUALE_LOG_ERROR, "allocating a device picture of %zu bytes failed: %s",
                    size, cuda_error_text(api, r));
        return NULL;
    }
    /* Cleared before it is handed out: the memset is queued on the legacy
     * stream, which a caller's copy on a stream of its own (FFmpeg's, a
     * framework's) does not wait for, so it could land after that copy. */
    if (api->MemsetD8(p, 0, size) != CUDA_SUCCESS || api->StreamSynchronize(NULL) != CUDA_SUCCESS) {
        api->MemFree(p);
        return NULL;
    }
    return (void *)(uintptr_t)p;
}

void device_picture_free(void *opaque, void *memory)
{
    GpuBackend *gpu = opaque;
    gpu->dev.api.CtxSetCurrent(gpu->dev.context);
    gpu->dev.api.MemFree((CUdeviceptr)(uintptr_t)memory);
}

const PictureAllocator *cuda_device_allocator(GpuBackend *gpu)
{
    atomic_fetch_add(&gpu->refs, 1);
    return &gpu->device;
}

int cuda_download(GpuBackend *gpu, QualePicture *host, const QualePicture *device,
                         char *error, size_t error_size)
{
    CudaDevice *dev = &gpu->dev;
    CU_TRY(dev, dev->api.CtxSetCurrent(dev->context), "making the CUDA context current");
    /* Both are laid out as quale_picture_alloc() lays out their format:
     * one copy from the first plane's start to the last one's end.  On the
     * context's default stream, after the caller's copies into it. */
    const unsigned last = device->plane_count - 1;
    const size_t bytes = (size_t)((const uint8_t *)device->data[last] - (const uint8_t *)device->data[0]) +
                         (size_t)device->stride[last] * device->plane_height[last];
    CU_TRY(dev, dev->api.MemcpyDtoH(host->data[0], (CUdeviceptr)(uintptr_t)device->data[0], bytes),
           "copying a device picture to the host");
    return 0;
}

/* Whether plane p of the caller's (rows of row_bytes, pitch apart) is
 * device memory of the backend's device and lies inside one allocation:
 * a copy from anywhere else would fault the context or read what is not
 * the caller's.  One driver call: each call on a frame's path delays the
 * workers' launches. */
static int plane_check(const CudaDevice *dev, unsigned p, CUdeviceptr data, size_t pitch,
                       size_t row_bytes, unsigned rows, char *error, size_t error_size)
{
    unsigned memory_type = 0;
    int ordinal = -1;
    CUdeviceptr start = 0;
    size_t size = 0;
    CUpointer_attribute attributes[] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                         CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                         CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                         CU_POINTER_ATTRIBUTE_RANGE_SIZE };
    void *values[] = { &memory_type, &ordinal, &start, &size };
    if (dev->api.PointerGetAttributes(4, attributes, values, data) != CUDA_SUCCESS ||
        memory_type != CU_MEMORYTYPE_DEVICE) {
        snprintf(error, error_size, "plane %u (at 0x%llx) is not in CUDA device memory", p,
                 (unsigned long long)data);
        return -EINVAL;
    }
    if (ordinal != (int)dev->device) {
        snprintf(error, error_size, "plane %u is on CUDA device %d; this context runs on "
                 "device %d", p, ordinal, (int)dev->device);
        return -EINVAL;
    }
    const unsigned long long end =
        (unsigned long long)data + (unsigned long long)pitch * (rows - 1) + row_bytes;
    if (start == 0 || size == 0 || end > (unsigned long long)start + size) {
        snprintf(error, error_size, "plane %u: %u rows of %zu bytes, %zu apart, run past the end "
                 "of its allocation", p, rows, row_bytes, pitch);
        return -EINVAL;
    }
    return 0;
}

int cuda_copy_in(GpuBackend *gpu, QualePicture *dst, const QualeDevicePlanes *src, void *stream,
                 bool stream_ordered, char *error, size_t error_size)
{
    CudaDevice *dev = &gpu->dev;
    CU_TRY(dev, dev->api.CtxSetCurrent(dev->context), "making the CUDA context current");
    const size_t sample = dst->format.bitdepth > 8 ? 2 : 1;
    for (unsigned p = 0; p < dst->plane_count; p++) {
        const size_t row_bytes = dst->plane_width[p] * sample;
        if (src->pitch[p] < row_bytes) {
            snprintf(error, error_size, "plane %u: a pitch of %zu bytes is shorter than its rows "
                     "(%zu bytes)", p, src->pitch[p], row_bytes);
            return -EINVAL;
        }
        int err = plane_check(dev, p, (CUdeviceptr)src->data[p], src->pitch[p], row_bytes,
                              dst->plane_height[p], error, error_size);
        if (err) return err;
    }
    for (unsigned p = 0; p < dst->plane_count; p++) {
        const CUDA_MEMCPY2D copy = {
            .srcMemoryType = CU_MEMORYTYPE_DEVICE,
            .srcDevice = (CUdeviceptr)src->data[p],
            .srcPitch = src->pitch[p],
            .dstMemoryType = CU_MEMORYTYPE_DEVICE,
            .dstDevice = (CUdeviceptr)(uintptr_t)dst->data[p],
            .dstPitch = (size_t)dst->stride[p],
            .WidthInBytes = dst->plane_width[p] * sample,
            .Height = dst->plane_height[p],
        };
        CU_TRY(dev, dev->api.Memcpy2DAsync(&copy, (CUstream)stream),
               "copying the caller's planes on the device");
    }
    if (!stream_ordered) {
        /* The caller may reuse its memory once the call returns. */
        CU_TRY(dev, dev->api.StreamSynchronize((CUstream)stream),
               "waiting for the caller's stream");
        return 0;
    }
    /* The backend's uploads wait for the legacy default stream
     * (upload()): a copy on another stream is made part of it. */
    if (stream == NULL || stream == (void *)CU_STREAM_LEGACY) return 0;
    pthread_mutex_lock(&gpu->import_lock);
    CUresult r = CUDA_SUCCESS;
    if (!gpu->copied) r = dev->api.EventCreate(&gpu->copied, CU_EVENT_DISABLE_TIMING);
    if (r == CUDA_SUCCESS) r = dev->api.EventRecord(gpu->copied, (CUstream)stream);
    if (r == CUDA_SUCCESS) r = dev->api.StreamWaitEvent(NULL, gpu->copied, 0);
    pthread_mutex_unlock(&gpu->import_lock);
    if (r != CUDA_SUCCESS) {
        snprintf(error, error_size, "ordering the copies of the caller's planes failed: %s",
                 cuda_error_text(&dev->api, r));
        return -EIO;
    }
    return 0;
}

void *cuda_native_context(const GpuBackend *gpu)
{
    return gpu->dev.context;
}

/* A scaled import's tables on the device (GpuFrameImport.state): for luma
 * and chroma, each direction's first samples and weights, and the
 * intermediate rows of the largest plane. */
typedef struct CudaScale {
    CUdeviceptr first[2][2], coeff[2][2]; /* [plane kind][0: horizontal, 1: vertical] */
    size_t first_bytes[2][2], coeff_bytes[2][2];
    CUdeviceptr mid;
    size_t mid_bytes;
} CudaScale;

void cuda_import_release(GpuBackend *gpu, void *state)
{
    CudaScale *sc = state;
    if (!sc) return;
    CudaDevice *dev = &gpu->dev;
    if (dev->api.CtxSetCurrent(dev->context) == CUDA_SUCCESS) {
        for (unsigned k = 0; k < 2; k++)
            for (unsigned d = 0; d < 2; d++) {
                cuda_free(dev, sc->first[k][d], sc->first_bytes[k][d]);
                cuda_free(dev, sc->coeff[k][d], sc->coeff_bytes[k][d]);
            }
        cuda_free(dev, sc->mid, sc->mid_bytes);
    }
    free(sc);
}

/* The plan's tables into device memory, once per reader. */
static int scale_upload(GpuBackend *gpu, const ScalePlan *plan, CudaScale **out, char *error,
                        size_t error_size)
{
    CudaDevice *dev = &gpu->dev;
    CudaScale *sc = calloc(1, sizeof(*sc));
    if (!sc) {
        snprintf(error, error_size, "out of memory");
        return -ENOMEM;
    }
    int err = 0;
    for (unsigned k = 0; k < (plan->planes > 1 ? 2u : 1u) && !err; k++) {
        const ScaleFilter *f[2] = { &plan->horizontal[k], &plan->vertical[k] };
        for (unsigned d = 0; d < 2 && !err; d++) {
            sc->first_bytes[k][d] = f[d]->dst_size * sizeof(*f[d]->first);
            sc->coeff_bytes[k][d] = (size_t)f[d]->dst_size * f[d]->taps * sizeof(*f[d]->coeff);
            err = cuda_alloc(dev, &sc->first[k][d], sc->first_bytes[k][d], "the scaler's table",
                             error, error_size);
            if (!err)
                err = cuda_alloc(dev, &sc->coeff[k][d], sc->coeff_bytes[k][d],
                                 "the scaler's weights", error, error_size);
            if (!err && dev->api.MemcpyHtoDAsync(sc->first[k][d], f[d]->first,
                                                 sc->first_bytes[k][d], NULL) != CUDA_SUCCESS)
                err = -EIO;
            if (!err && dev->api.MemcpyHtoDAsync(sc->coeff[k][d], f[d]->coeff,
                                                 sc->coeff_bytes[k][d], NULL) != CUDA_SUCCESS)
                err = -EIO;
            if (err == -EIO) snprintf(error, error_size, "copying the scaler's tables failed");
        }
        const size_t mid = (size_t)plan->src_height[k] * plan->dst_width[k] * sizeof(int16_t);
        if (mid > sc->mid_bytes) sc->mid_bytes = mid;
    }
    if (!err) err = cuda_alloc(dev, &sc->mid, sc->mid_bytes, "the scaler's rows", error, error_size);
    if (!err && dev->api.StreamSynchronize(NULL) != CUDA_SUCCESS) {
        snprintf(error, error_size, "copying the scaler's tables failed");
        err = -EIO;
    }
    if (err) {
        cuda_import_release(gpu, sc);
        return err;
    }
    *out = sc;
    return 0;
}

/* Plane p of the frame (0: luma; 1, 2: Cb, Cr of the interleaved chroma)
 * resampled into plane p of dst: rows, then columns. */
static int scale_plane(GpuBackend *gpu, const GpuFrameImport *src, const CudaScale *sc,
                       unsigned p, QualePicture *dst, char *error, size_t error_size)
{
    enum { THREADS = 128 };
    const CudaDevice *dev = &gpu->dev;
    const ScalePlan *plan = src->scale;
    const unsigned k = p ? 1 : 0;
    CUdeviceptr plane = (CUdeviceptr)(uintptr_t)src->planes[k];
    int pitch = src->pitch[k], step = p ? 2 : 1, offset = p ? (int)p - 1 : 0;
    int bytes = (int)src->bytes, shift = (int)src->shift;
    int src_rows = (int)plan->src_height[k], dst_w = (int)plan->dst_width[k];
    int dst_rows = (int)plan->dst_height[k];
    int h_taps = (int)plan->horizontal[k].taps, v_taps = (int)plan->vertical[k].taps;
    int depth = (int)plan->bitdepth, deepen = (int)src->deepen;
    CUdeviceptr mid = sc->mid, out = (CUdeviceptr)(uintptr_t)dst->data[p];
    CUdeviceptr h_first = sc->first[k][0], h_coeff = sc->coeff[k][0];
    CUdeviceptr v_first = sc->first[k][1], v_coeff = sc->coeff[k][1];
    int out_pitch = (int)dst->stride[p];
    void *rows[] = { &plane, &pitch, &step,  &offset, &bytes, &shift, &src_rows,
                     &h_first, &h_coeff, &h_taps, &mid, &dst_w, &depth };
    int err = cuda_launch(dev, gpu->scale_rows, "scale_rows", cuda_blocks_for((size_t)dst_w, THREADS),
                          (unsigned)src_rows, THREADS, 0, NULL, rows, error, error_size);
    void *columns[] = { &mid, &dst_w, &dst_rows, &v_first, &v_coeff, &v_taps,
                        &out, &out_pitch, &depth, &deepen };
    if (!err)
        err = cuda_launch(dev, gpu->scale_columns, "scale_columns",
                          cuda_blocks_for((size_t)dst_w, THREADS), (unsigned)dst_rows, THREADS, 0,
                          NULL, columns, error, error_size);
    return err;
}

int cuda_import_frame(GpuBackend *gpu, const GpuFrameImport *src, QualePicture *dst,
                             char *error, size_t error_size)
{
    CudaDevice *dev = &gpu->dev;
    CU_TRY(dev, dev->api.CtxSetCurrent(dev->context), "making the CUDA context current");
    pthread_mutex_lock(&gpu->import_lock);
    int err = 0;
    if (!gpu->import_module) {
        const CUresult r = dev->api.ModuleLoadData(
            &gpu->import_module, module_image(gpu->runtime, cuda_module_picture_import));
        if (r != CUDA_SUCCESS) {
            gpu->import_module = NULL;
            snprintf(error, error_size, "loading the picture import kernels failed: %s",
                     cuda_error_text(&dev->api, r));
            err = -EIO;
        }
        static const char *const names[] = { "import_luma", "import_chroma", "scale_rows",
                                             "scale_columns" };
        CUfunction *functions[] = { &gpu->import_luma, &gpu->import_chroma, &gpu->scale_rows,
                                    &gpu->scale_columns };
        for (unsigned i = 0; i < 4 && !err; i++)
            err = cuda_function(dev, gpu->import_module, names[i], functions[i], error,
                                error_size);
    }
    pthread_mutex_unlock(&gpu->import_lock);
    if (err) return err;

    if (src->scale) {
        /* the reader's own tables: uploaded at its first frame */
        if (!src->state) {
            snprintf(error, error_size, "a scaled import needs a place for its tables");
            return -EINVAL;
        }
        if (!*src->state) {
            CudaScale *sc = NULL;
            if ((err = scale_upload(gpu, src->scale, &sc, error, error_size))) return err;
            *src->state = sc;
        }
        for (unsigned p = 0; p < dst->plane_count && !err; p++)
            err = scale_plane(gpu, src, *src->state, p, dst, error, error_size);
        if (err) return err;
        CU_TRY(dev, dev->api.StreamSynchronize(NULL), "waiting for the scaled picture import");
        return 0;
    }

    enum { THREADS = 256 };
    CUdeviceptr luma = (CUdeviceptr)(uintptr_t)src->planes[0];
    CUdeviceptr out = (CUdeviceptr)(uintptr_t)dst->data[0];
    int src_pitch = src->pitch[0], dst_pitch = (int)dst->stride[0];
    int w = (int)dst->plane_width[0], h = (int)dst->plane_height[0];
    int bytes = (int)src->bytes, shift = (int)src->shift;
    void *luma_args[] = { &luma, &src_pitch, &out, &dst_pitch, &w, &h, &bytes, &shift };
    /* the context's default stream: after the decoder's copies into the
     * frame, before the backend's uploads of the picture */
    err = cuda_launch(dev, gpu->import_luma, "import_luma", (unsigned)(w + THREADS - 1) / THREADS,
                      (unsigned)h, THREADS, 0, NULL, luma_args, error, error_size);
    if (!err && dst->plane_count == 3) {
        CUdeviceptr chroma = (CUdeviceptr)(uintptr_t)src->planes[1];
        CUdeviceptr cb = (CUdeviceptr)(uintptr_t)dst->data[1];
        CUdeviceptr cr = (CUdeviceptr)(uintptr_t)dst->data[2];
        int chroma_pitch = src->pitch[1], out_pitch = (int)dst->stride[1];
        int cw = (int)dst->plane_width[1], ch = (int)dst->plane_height[1];
        void *chroma_args[] = { &chroma, &chroma_pitch, &cb, &cr, &out_pitch, &cw, &ch, &bytes,
                                &shift };
        err = cuda_launch(dev, gpu->import_chroma, "import_chroma",
                          (unsigned)(cw + THREADS - 1) / THREADS, (unsigned)ch, THREADS, 0, NULL,
                          chroma_args, error, error_size);
    }
    if (err) return err;
    /* the decoder reuses the frame's memory once it is given back */
    CU_TRY(dev, dev->api.StreamSynchronize(NULL), "waiting for the picture import");
    return 0;
}
