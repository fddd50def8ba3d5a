/*
 * Pictures taken in (quale_send_pictures()): checked, adopted (a
 * reference, or a copy in the context's pool), device pictures of the
 * CUDA backend, and the bridge to it (a caller's CUDA context, pictures
 * allocated on the device, decoders that leave their frames there).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "context_private.h"
#include "input/video_gpu.h"
#include "picture_pool.h"
#include "thread_pool.h"

static bool same_format(const QualeVideoFormat *a, const QualeVideoFormat *b)
{
    return a->chroma == b->chroma && a->bitdepth == b->bitdepth &&
           a->width == b->width && a->height == b->height;
}

static int check_pictures(QualeContext *ctx, const QualePicture *ref,
                          const QualePicture *dist)
{
    char error[256];
    if (picture_check(ref, error, sizeof(error))) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u: reference picture: %s", ctx->frames_sent,
                    error);
        return -EINVAL;
    }
    if (picture_check(dist, error, sizeof(error))) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u: distorted picture: %s", ctx->frames_sent,
                    error);
        return -EINVAL;
    }
    if (!same_format(&ref->format, &dist->format)) {
        context_log(ctx, QUALE_LOG_ERROR,
                    "reference and distorted pictures differ: %ux%u %s %u-bit vs "
                    "%ux%u %s %u-bit",
                    ref->format.width, ref->format.height, quale_chroma_name(ref->format.chroma),
                    ref->format.bitdepth, dist->format.width, dist->format.height,
                    quale_chroma_name(dist->format.chroma), dist->format.bitdepth);
        return -EINVAL;
    }
    if (ctx->format_known && !same_format(&ctx->format, &ref->format)) {
        context_log(ctx, QUALE_LOG_ERROR,
                    "frame %u is %ux%u %s %u-bit, but the first frame was %ux%u %s %u-bit",
                    ctx->frames_sent, ref->format.width, ref->format.height,
                    quale_chroma_name(ref->format.chroma), ref->format.bitdepth,
                    ctx->format.width, ctx->format.height,
                    quale_chroma_name(ctx->format.chroma), ctx->format.bitdepth);
        return -EINVAL;
    }
    return 0;
}

/*
 * A reference to the picture for a job to keep: a new reference to the
 * caller's picture when it is laid out as quale_picture_alloc() lays out
 * its format, else a copy in the context's pool.  Borrowed memory is the
 * caller's again once quale_send_pictures() returns, and the history of
 * temporal metrics keeps pictures for later frames; the GPU uploads and
 * the metrics rely on the one layout.
 */
static int adopt_picture(QualeContext *ctx, QualePicture *out, const QualePicture *in)
{
    if (picture_is_standard(in)) return quale_picture_ref(out, in);
    const int err = picture_pool_get(ctx->pictures, out, &in->format);
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u: out of memory for a copy of a picture",
                    ctx->frames_sent);
        return err;
    }
    picture_copy_samples(out, in);
    return 0;
}

/* A device picture for a run that reads it on the host: replaced by a copy
 * in the context's pool. */
static int host_copy(QualeContext *ctx, QualePicture *pic)
{
    if (!picture_on_device(pic)) return 0;
    QualePicture host;
    int err = picture_pool_get(ctx->pictures, &host, &pic->format);
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u: out of memory for a host copy of a device "
                    "picture", ctx->frames_sent);
        return err;
    }
    char error[256] = "";
    if ((err = ctx->gpu_ops->device.download(ctx->gpu, &host, pic, error, sizeof(error)))) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u: %s", ctx->frames_sent, error);
        quale_picture_unref(&host);
        return err;
    }
    quale_picture_unref(pic);
    *pic = host;
    return 0;
}

/* Device pictures go to the GPU backend as they are when every metric runs
 * there; otherwise the CPU's metrics need the samples on the host (as
 * libvmaf downloads them for its CPU features). */
static int take_device_pictures(QualeContext *ctx, QualePicture *ref, QualePicture *dist)
{
    const QualePicture *pics[2] = { ref, dist };
    for (int i = 0; i < 2; i++) {
        if (picture_on_device(pics[i]) && !picture_from_pool(pics[i], ctx->device_pictures)) {
            context_log(ctx, QUALE_LOG_ERROR, "frame %u: the %s picture is in the device memory of "
                        "another context (device pictures come from "
                        "quale_context_alloc_device_picture() of the context they are sent to)",
                        ctx->frames_sent, i ? "distorted" : "reference");
            return -EINVAL;
        }
        if (picture_on_device(pics[i]) && !picture_is_standard(pics[i])) {
            context_log(ctx, QUALE_LOG_ERROR, "frame %u: the %s picture is in device memory but "
                        "its planes are no longer where they were allocated", ctx->frames_sent,
                        i ? "distorted" : "reference");
            return -EINVAL;
        }
    }
    if (ctx->gpu_used && ctx->cpu_instance_count == 0) return 0;
    int err = host_copy(ctx, ref);
    if (!err) err = host_copy(ctx, dist);
    return err;
}

/* quale_send_pictures() under the context's send_lock. */
static int send_locked(QualeContext *ctx, QualePicture *ref, QualePicture *dist)
{
    int err = 0;
    if (ctx->flushed) {
        context_log(ctx, QUALE_LOG_ERROR, "pictures sent after quale_flush()");
        err = -EINVAL;
        goto drop;
    }
    if ((err = atomic_load(&ctx->error))) {
        context_log(ctx, QUALE_LOG_ERROR, "frame %u not taken: the run failed before it (%s)",
                    ctx->frames_sent, strerror(-err));
        goto drop;
    }
    if ((err = check_pictures(ctx, ref, dist))) goto drop;
    if (ctx->frames_sent == UINT32_MAX / 2) {
        context_log(ctx, QUALE_LOG_ERROR, "too many frames");
        err = -ERANGE;
        goto drop;
    }
    if (!ctx->format_known) {
        ctx->format = ref->format;
        ctx->format_known = true;
        if ((err = context_start_metrics(ctx, &ctx->format))) {
            context_record_error(ctx, err);
            goto drop;
        }
    }
    if ((picture_on_device(ref) || picture_on_device(dist)) &&
        (err = take_device_pictures(ctx, ref, dist)))
        goto drop;

    FrameJob *job = calloc(1, sizeof(*job));
    if (!job) {
        err = -ENOMEM;
        goto drop;
    }
    job->ctx = ctx;
    job->index = ctx->frames_sent;
    /* The job takes references of its own, so that ref == dist (one
     * picture sent as both) holds two; the caller's are dropped below. */
    if ((err = adopt_picture(ctx, &job->ref, ref)) ||
        (err = adopt_picture(ctx, &job->dist, dist))) {
        context_release_job(job);
        goto drop;
    }
    quale_picture_unref(ref);
    quale_picture_unref(dist); /* a no-op when dist == ref: cleared above */
    for (unsigned h = 0; h < ctx->history; h++) {
        if (ctx->prev_ref[h].buffer) quale_picture_ref(&job->prev_ref[h], &ctx->prev_ref[h]);
        if (ctx->prev_dist[h].buffer) quale_picture_ref(&job->prev_dist[h], &ctx->prev_dist[h]);
    }
    /* Shift the history: this frame becomes index - 1 for the next one. */
    if (ctx->history) {
        quale_picture_unref(&ctx->prev_ref[1]);
        quale_picture_unref(&ctx->prev_dist[1]);
        ctx->prev_ref[1] = ctx->prev_ref[0];
        ctx->prev_dist[1] = ctx->prev_dist[0];
        quale_picture_ref(&ctx->prev_ref[0], &job->ref);
        quale_picture_ref(&ctx->prev_dist[0], &job->dist);
        if (ctx->history < 2) {
            quale_picture_unref(&ctx->prev_ref[1]);
            quale_picture_unref(&ctx->prev_dist[1]);
        }
    }

    return context_submit_job(ctx, job);

drop:
    quale_picture_unref(ref);
    quale_picture_unref(dist);
    return err;
}

int quale_send_pictures(QualeContext *ctx, QualePicture *ref, QualePicture *dist)
{
    if (!ctx) return -EINVAL;
    /* Callers on several threads take turns (send_lock): each frame gets
     * its own number, the history is shifted once a frame, and a GPU
     * backend's submit() queues frames in their order. */
    pthread_mutex_lock(&ctx->send_lock);
    const int err = send_locked(ctx, ref, dist);
    pthread_mutex_unlock(&ctx->send_lock);
    return err;
}

int quale_context_alloc_picture(QualeContext *ctx, QualePicture *pic,
                                const QualeVideoFormat *format)
{
    if (!ctx || !pic) return -EINVAL;
    return picture_pool_get(ctx->pictures, pic, format);
}

/* quale_use_cuda_context() under the context's send_lock. */
static int use_cuda_context_locked(QualeContext *ctx, void *cu_context)
{
    if (ctx->frames_sent || ctx->format_known || ctx->device_pictures) {
        context_log(ctx, QUALE_LOG_ERROR, "quale_use_cuda_context: %s",
                    ctx->device_pictures ? "device pictures were allocated in the context before"
                                         : "called after the first picture");
        return -EINVAL;
    }
    const GpuOps *ops = gpu_ops(QUALE_BACKEND_CUDA);
    if (ops->unavailable) {
        context_log(ctx, QUALE_LOG_ERROR, "the cuda backend is not available: %s", ops->unavailable);
        return -ENOSYS;
    }
    GpuBackend *gpu = NULL;
    char error[512] = "";
    int err = ops->device.adopt(&ctx->log, cu_context, &gpu, error, sizeof(error));
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "the cuda backend cannot start%s: %s",
                    cu_context ? " in the given CUDA context" : "", error);
        return err;
    }
    PicturePool *pictures = NULL;
    const PictureAllocator *host = ops->device.host_allocator(gpu);
    if ((err = picture_pool_open(&pictures, host, context_pool_keep(ctx)))) {
        /* No pool took the host allocator's reference: drop it too. */
        const PictureAllocator kept = *host;
        ops->device.close(gpu);
        kept.release(kept.opaque);
        return err;
    }
    /* Pictures handed out before keep their pool (and its backend) until
     * they come back. */
    picture_pool_close(&ctx->pictures);
    if (ctx->gpu) ctx->gpu_ops->device.close(ctx->gpu);
    ctx->pictures = pictures;
    ctx->gpu = gpu;
    ctx->gpu_ops = ops;
    ctx->backend = QUALE_BACKEND_CUDA;
    ctx->settings.backend = QUALE_BACKEND_CUDA;
    context_log(ctx, QUALE_LOG_INFO, "using cuda%s", cu_context ? " in the caller's CUDA context" : "");
    return 0;
}

int quale_use_cuda_context(QualeContext *ctx, void *cu_context)
{
    if (!ctx) return -EINVAL;
    /* The backend changes under it: no frame may be half taken meanwhile. */
    pthread_mutex_lock(&ctx->send_lock);
    const int err = use_cuda_context_locked(ctx, cu_context);
    pthread_mutex_unlock(&ctx->send_lock);
    return err;
}

int quale_video_decode_on_gpu(QualeVideoReader *reader, QualeContext *ctx)
{
    if (!reader || !ctx) return -EINVAL;
    const bool imports = ctx->gpu && ctx->gpu_ops->device.native_context && ctx->gpu_ops->device.import_frame;
    const GpuImporter importer = { ctx->gpu_ops, ctx->gpu };
    return video_reader_use_gpu(reader, imports ? &importer : NULL,
                                "decoding on the GPU needs the CUDA backend");
}

int quale_context_alloc_device_picture(QualeContext *ctx, QualePicture *pic,
                                       const QualeVideoFormat *format)
{
    if (!ctx || !pic) return -EINVAL;
    memset(pic, 0, sizeof(*pic));
    if (!ctx->gpu || !ctx->gpu_ops->device.device_allocator) {
        context_log(ctx, QUALE_LOG_ERROR, "device pictures need the cuda backend (this context "
                    "runs on %s)", quale_backend_name(ctx->backend));
        return -EINVAL;
    }
    /* Readers on several threads (one per video) may ask first at once:
     * one pool for all of them. */
    pthread_mutex_lock(&ctx->flow_lock);
    int err = 0;
    if (!ctx->device_pictures) {
        const PictureAllocator *device = ctx->gpu_ops->device.device_allocator(ctx->gpu);
        err = picture_pool_open(&ctx->device_pictures, device, context_pool_keep(ctx));
        if (err) device->release(device->opaque);
    }
    pthread_mutex_unlock(&ctx->flow_lock);
    if (err) return err;
    return picture_pool_get(ctx->device_pictures, pic, format);
}

int quale_device_picture_copy(QualeContext *ctx, QualePicture *pic, const QualeDevicePlanes *src,
                              void *cu_stream, unsigned flags)
{
    if (!ctx || !pic || !src) return -EINVAL;
    if (flags & ~(unsigned)QUALE_DEVICE_COPY_STREAM_ORDERED) {
        context_log(ctx, QUALE_LOG_ERROR, "unknown flags 0x%x for a device picture copy", flags);
        return -EINVAL;
    }
    if (!ctx->gpu || !ctx->gpu_ops->device.copy_in) {
        context_log(ctx, QUALE_LOG_ERROR, "copying device planes needs the cuda backend (this "
                    "context runs on %s)", quale_backend_name(ctx->backend));
        return -ENOSYS;
    }
    if (!picture_on_device(pic) || !ctx->device_pictures ||
        !picture_from_pool(pic, ctx->device_pictures) || !picture_is_standard(pic)) {
        context_log(ctx, QUALE_LOG_ERROR, "planes are copied into a picture from "
                    "quale_context_alloc_device_picture() of the same context");
        return -EINVAL;
    }
    char error[256] = "";
    const int err = ctx->gpu_ops->device.copy_in(
        ctx->gpu, pic, src, cu_stream, (flags & QUALE_DEVICE_COPY_STREAM_ORDERED) != 0, error,
        sizeof(error));
    if (err) context_log(ctx, QUALE_LOG_ERROR, "%s", error);
    return err;
}
