/*
 * libvmaf's pictures (counted quale pictures), preallocated pools and the
 * CUDA calls (libvmaf_cuda.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libvmaf_private.h"

/* ---- pictures ----------------------------------------------------------- */


static const struct {
    enum VmafPixelFormat vmaf;
    enum QualeChroma quale;
} pixel_formats[] = {
    { VMAF_PIX_FMT_YUV420P, QUALE_CHROMA_420 },
    { VMAF_PIX_FMT_YUV422P, QUALE_CHROMA_422 },
    { VMAF_PIX_FMT_YUV444P, QUALE_CHROMA_444 },
    { VMAF_PIX_FMT_YUV400P, QUALE_CHROMA_400 },
};

int format_of(enum VmafPixelFormat pix_fmt, unsigned bpc, unsigned w, unsigned h,
                     QualeVideoFormat *f)
{
    for (unsigned i = 0; i < sizeof(pixel_formats) / sizeof(pixel_formats[0]); i++) {
        if (pixel_formats[i].vmaf == pix_fmt) {
            *f = (QualeVideoFormat){ .chroma = pixel_formats[i].quale, .bitdepth = bpc,
                                     .width = w, .height = h };
            char error[256];
            if (quale_video_format_check(f, error, sizeof(error))) {
                say(VMAF_LOG_LEVEL_ERROR, "picture of %ux%u, %u bits: %s", w, h, bpc, error);
                return -EINVAL;
            }
            return 0;
        }
    }
    say(VMAF_LOG_LEVEL_ERROR, "picture: unknown pixel format %d", (int)pix_fmt);
    return -EINVAL;
}

/* Fills a VmafPicture that owns (a reference to) ref->pic. */
static void describe_picture(VmafPicture *pic, struct VmafRef *ref, enum VmafPixelFormat pix_fmt)
{
    memset(pic, 0, sizeof(*pic));
    pic->pix_fmt = pix_fmt;
    pic->bpc = ref->pic.format.bitdepth;
    for (unsigned p = 0; p < ref->pic.plane_count && p < 3; p++) {
        pic->w[p] = ref->pic.plane_width[p];
        pic->h[p] = ref->pic.plane_height[p];
        pic->stride[p] = ref->pic.stride[p];
        pic->data[p] = ref->pic.data[p];
    }
    pic->ref = ref;
}

int vmaf_picture_alloc(VmafPicture *pic, enum VmafPixelFormat pix_fmt, unsigned bpc,
                       unsigned w, unsigned h)
{
    if (!pic) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_picture_alloc: no picture");
        return -EINVAL;
    }
    memset(pic, 0, sizeof(*pic));
    QualeVideoFormat f;
    int err = format_of(pix_fmt, bpc, w, h, &f);
    if (err) return err;
    struct VmafRef *ref = calloc(1, sizeof(*ref));
    if (!ref) return -ENOMEM;
    err = quale_picture_alloc(&ref->pic, &f);
    if (err) {
        free(ref);
        return err;
    }
    atomic_init(&ref->count, 1);
    describe_picture(pic, ref, pix_fmt);
    return 0;
}

void ref_release(struct VmafRef *ref)
{
    if (atomic_fetch_sub(&ref->count, 1) != 1) return;
    quale_picture_unref(&ref->pic);
    free(ref);
}

int vmaf_picture_unref(VmafPicture *pic)
{
    if (!pic || !pic->ref) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_picture_unref: %s", pic ? "the picture holds no "
            "reference (unreferenced already, or never allocated)" : "no picture");
        return -EINVAL;
    }
    ref_release(pic->ref);
    memset(pic, 0, sizeof(*pic));
    return 0;
}

/* ---- preallocated pictures ------------------------------------------------ */

/* Where fetched pictures come from: the context's recycled host pictures,
 * or (on_device) its device pictures. */
static int set_pool(VmafContext *vmaf, const char *caller, enum VmafPixelFormat pix_fmt,
                    unsigned bpc, unsigned w, unsigned h, bool on_device)
{
    if (vmaf->preallocated) {
        say(VMAF_LOG_LEVEL_ERROR, "%s: pictures were preallocated already", caller);
        return -EINVAL;
    }
    QualeVideoFormat f;
    const int err = format_of(pix_fmt, bpc, w, h, &f);
    if (err) return err;
    /* The context's pool recycles pictures as they come back: pic_cnt is
     * how many libvmaf would make ahead, which quale does not need. */
    vmaf->pool_format = f;
    vmaf->pool_pix_fmt = pix_fmt;
    vmaf->pool_on_device = on_device;
    vmaf->preallocated = true;
    return 0;
}

static int fetch(VmafContext *vmaf, VmafPicture *pic, const char *caller)
{
    if (!pic || !vmaf->preallocated) {
        say(VMAF_LOG_LEVEL_ERROR, "%s: %s", caller, pic ? "no preallocation before" : "no picture");
        return -EINVAL;
    }
    struct VmafRef *ref = calloc(1, sizeof(*ref));
    if (!ref) return -ENOMEM;
    const int err = vmaf->pool_on_device
                        ? quale_context_alloc_device_picture(vmaf->ctx, &ref->pic, &vmaf->pool_format)
                        : quale_context_alloc_picture(vmaf->ctx, &ref->pic, &vmaf->pool_format);
    if (err) {
        free(ref);
        return err;
    }
    atomic_init(&ref->count, 1);
    describe_picture(pic, ref, vmaf->pool_pix_fmt);
    return 0;
}

int vmaf_preallocate_pictures(VmafContext *vmaf, VmafPictureConfiguration cfg)
{
    if (!enter(vmaf, "vmaf_preallocate_pictures")) return -EINVAL;
    const int err = set_pool(vmaf, "vmaf_preallocate_pictures", cfg.pic_params.pix_fmt,
                             cfg.pic_params.bpc, cfg.pic_params.w, cfg.pic_params.h, false);
    leave(vmaf);
    return err;
}

int vmaf_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic)
{
    if (!enter(vmaf, "vmaf_fetch_preallocated_picture")) return -EINVAL;
    const int err = fetch(vmaf, pic, "vmaf_fetch_preallocated_picture");
    leave(vmaf);
    return err;
}

/* ---- CUDA ------------------------------------------------------------------ */


int vmaf_cuda_state_init(VmafCudaState **cu_state, VmafCudaConfiguration cfg)
{
    if (!cu_state) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_cuda_state_init: no state pointer");
        return -EINVAL;
    }
    *cu_state = NULL;
    if (!quale_backend_built(QUALE_BACKEND_CUDA)) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_cuda_state_init: this build of quale has no CUDA backend");
        return -ENOSYS;
    }
    /* The driver must load and see a device; the context itself is checked
     * when a VmafContext takes the state. */
    unsigned count = 0;
    char error[512] = "";
    const int err = quale_list_devices(QUALE_BACKEND_CUDA, NULL, 0, &count, error, sizeof(error));
    if (err || count == 0) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_cuda_state_init: %s", err ? error : "no CUDA device");
        return err ? err : -ENODEV;
    }
    VmafCudaState *state = calloc(1, sizeof(*state));
    if (!state) return -ENOMEM;
    state->cu_ctx = cfg.cu_ctx;
    *cu_state = state;
    return 0;
}

/* vmaf_cuda_import_state(), inside its call. */
static int import_state(VmafContext *vmaf, VmafCudaState *cu_state)
{
    if (!before_frames(vmaf, "vmaf_cuda_import_state")) return -EINVAL;
    if (!cu_state || vmaf->cuda_state) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_cuda_import_state: %s",
            cu_state ? "the context has a CUDA state already" : "no state");
        return -EINVAL;
    }
    if (vmaf->preallocated) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_cuda_import_state: after the pictures were preallocated "
            "(import the state first)");
        return -EINVAL;
    }
    const int err = quale_use_cuda_context(vmaf->ctx, cu_state->cu_ctx);
    if (!err) vmaf->cuda_state = cu_state;
    return err;
}

int vmaf_cuda_import_state(VmafContext *vmaf, VmafCudaState *cu_state)
{
    if (!enter(vmaf, "vmaf_cuda_import_state")) return -EINVAL;
    const int err = import_state(vmaf, cu_state);
    leave(vmaf);
    return err;
}

/* vmaf_cuda_preallocate_pictures(), inside its call. */
static int cuda_preallocate(VmafContext *vmaf, VmafCudaPictureConfiguration cfg)
{
    static const char caller[] = "vmaf_cuda_preallocate_pictures";
    if (!vmaf->cuda_state) {
        say(VMAF_LOG_LEVEL_ERROR, "%s: no CUDA state (vmaf_cuda_import_state() first)", caller);
        return -EINVAL;
    }
    switch (cfg.pic_prealloc_method) {
    case VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_NONE:
        return 0;
    case VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE:
    case VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST:
    case VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST_PINNED:
        /* Host pictures of a CUDA context are pinned memory already. */
        return set_pool(vmaf, caller, cfg.pic_params.pix_fmt, cfg.pic_params.bpc, cfg.pic_params.w,
                        cfg.pic_params.h,
                        cfg.pic_prealloc_method == VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE);
    }
    say(VMAF_LOG_LEVEL_ERROR, "%s: unknown preallocation method %d", caller,
        (int)cfg.pic_prealloc_method);
    return -EINVAL;
}

int vmaf_cuda_preallocate_pictures(VmafContext *vmaf, VmafCudaPictureConfiguration cfg)
{
    if (!enter(vmaf, "vmaf_cuda_preallocate_pictures")) return -EINVAL;
    const int err = cuda_preallocate(vmaf, cfg);
    leave(vmaf);
    return err;
}

int vmaf_cuda_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic)
{
    if (!enter(vmaf, "vmaf_cuda_fetch_preallocated_picture")) return -EINVAL;
    const int err = fetch(vmaf, pic, "vmaf_cuda_fetch_preallocated_picture");
    leave(vmaf);
    return err;
}
