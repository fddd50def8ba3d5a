/*
 * libvmaf's CUDA API (libvmaf_cuda.h) used as FFmpeg's libvmaf_cuda filter
 * uses it, on a CUDA context the test makes itself (cuCtxCreate, not the
 * primary one): pictures preallocated in device memory, filled by
 * cuMemcpy2D from other device memory on the context's default stream, and
 * scored by quale's CUDA twins.  Every key of every frame must equal a CPU
 * run of the same pictures through vmaf_picture_alloc():
 *   - vmaf_v0.6.1 with the luma alone copied (what FFmpeg copies);
 *   - vmaf_v1.0.16_3d0h with every plane (SpEED reads chroma);
 *   - a metric without a CUDA twin beside the model (SpEED's bicubic
 *     prescale): the device pictures are copied to the host for it;
 *   - HOST preallocation: host pictures on the CUDA backend.
 * Needs an NVIDIA GPU: without one it says so and exits 77 (skipped).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "libvmaf.h"
#include "libvmaf_cuda.h"
#include "quale/quale.h"
#include "synth.h"
#include "test.h"

#define FRAMES 6
#define SKIP 77

/* The driver calls the test makes, as a client program would. */
static struct {
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*CtxCreate)(CUcontext *, unsigned, CUdevice);
    CUresult (*CtxDestroy)(CUcontext);
    CUresult (*CtxPushCurrent)(CUcontext);
    CUresult (*CtxPopCurrent)(CUcontext *);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*Memcpy2D)(const CUDA_MEMCPY2D *);
} cu;

static int load_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return -ENODEV;
    static const struct {
        void **slot;
        const char *name;
    } entries[] = {
        { (void **)&cu.Init, "cuInit" },
        { (void **)&cu.DeviceGet, "cuDeviceGet" },
        { (void **)&cu.CtxCreate, "cuCtxCreate_v2" },
        { (void **)&cu.CtxDestroy, "cuCtxDestroy_v2" },
        { (void **)&cu.CtxPushCurrent, "cuCtxPushCurrent_v2" },
        { (void **)&cu.CtxPopCurrent, "cuCtxPopCurrent_v2" },
        { (void **)&cu.MemAlloc, "cuMemAlloc_v2" },
        { (void **)&cu.MemFree, "cuMemFree_v2" },
        { (void **)&cu.Memcpy2D, "cuMemcpy2D_v2" },
    };
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
        if (!(*entries[i].slot = dlsym(lib, entries[i].name))) return -ENOSYS;
    return cu.Init(0) == CUDA_SUCCESS ? 0 : -ENODEV;
}

typedef struct Run {
    const char *model;   /* a model spec */
    const char *feature; /* a further feature, or NULL */
    enum VmafCudaPicturePreallocationMethod method;
    unsigned copied_planes; /* into device pictures: 1 (luma, as FFmpeg), or 3 */
    unsigned bitdepth;
} Run;

static QualeVideoFormat format_of(const Run *run)
{
    return (QualeVideoFormat){ QUALE_CHROMA_420, run->bitdepth, 640, 360 };
}

static void make_pair(const Run *run, unsigned index, QualePicture *ref, QualePicture *dist)
{
    const QualeVideoFormat f = format_of(run);
    quale_picture_alloc(ref, &f);
    quale_picture_alloc(dist, &f);
    synth_reference(ref, index);
    synth_distort(ref, dist, index, 2);
}

static size_t sample_bytes(const QualePicture *q)
{
    return q->format.bitdepth > 8 ? 2 : 1;
}

/* A host VmafPicture holding q's samples (planes below `planes` only, the
 * others left zero, as the device pictures get them). */
static int host_copy(const QualePicture *q, unsigned planes, VmafPicture *v)
{
    int err = vmaf_picture_alloc(v, VMAF_PIX_FMT_YUV420P, q->format.bitdepth, q->format.width,
                                 q->format.height);
    if (err) return err;
    for (unsigned p = 0; p < 3; p++)
        for (unsigned y = 0; y < v->h[p]; y++) {
            char *row = (char *)v->data[p] + (size_t)y * (size_t)v->stride[p];
            const size_t bytes = v->w[p] * sample_bytes(q);
            if (p < planes) memcpy(row, (const char *)q->data[p] + (size_t)y * (size_t)q->stride[p], bytes);
            else memset(row, 0, bytes);
        }
    return 0;
}

/* As FFmpeg: the frame is in device memory of the context (here: uploaded
 * to a pitched buffer first); cuMemcpy2D copies its planes into the
 * preallocated picture, device to device, on the default stream. */
static int device_copy(VmafContext *vmaf, CUcontext context, const QualePicture *q,
                       unsigned planes, VmafPicture *v)
{
    int err = vmaf_cuda_fetch_preallocated_picture(vmaf, v);
    if (err) return err;
    if (cu.CtxPushCurrent(context) != CUDA_SUCCESS) return -EIO;
    for (unsigned p = 0; p < planes && !err; p++) {
        const size_t row = v->w[p] * sample_bytes(q), pitch = row + 64;
        CUdeviceptr frame = 0;
        if (cu.MemAlloc(&frame, pitch * v->h[p]) != CUDA_SUCCESS) {
            err = -ENOMEM;
            break;
        }
        CUDA_MEMCPY2D up = {
            .srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = q->data[p], .srcPitch = (size_t)q->stride[p],
            .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = frame, .dstPitch = pitch,
            .WidthInBytes = row, .Height = v->h[p],
        };
        CUDA_MEMCPY2D over = {
            .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = frame, .srcPitch = pitch,
            .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = (CUdeviceptr)(uintptr_t)v->data[p],
            .dstPitch = (size_t)v->stride[p], .WidthInBytes = row, .Height = v->h[p],
        };
        if (cu.Memcpy2D(&up) != CUDA_SUCCESS || cu.Memcpy2D(&over) != CUDA_SUCCESS) err = -EIO;
        /* Freed once the copy is done: cuMemFree waits for the device. */
        cu.MemFree(frame);
    }
    CUcontext popped;
    cu.CtxPopCurrent(&popped);
    return err;
}

/* Scores FRAMES frames: on the CPU from host pictures (context NULL), or
 * on CUDA in context from pictures the run's method preallocates.  Fills
 * scores[frame][key] for the keys listed. */
static int score(const Run *run, CUcontext context, const char *const *keys, unsigned key_count,
                 double scores[FRAMES][16])
{
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_WARNING, .n_threads = 2 };
    VmafContext *vmaf = NULL;
    CHECK(vmaf_init(&vmaf, cfg) == 0);
    if (!vmaf) return -1;
    VmafCudaState *state = NULL;
    if (context) {
        CHECK(vmaf_cuda_state_init(&state, (VmafCudaConfiguration){ .cu_ctx = context }) == 0);
        CHECK(vmaf_cuda_import_state(vmaf, state) == 0);
        const QualeVideoFormat f = format_of(run);
        const VmafCudaPictureConfiguration pic_cfg = {
            .pic_params = { f.width, f.height, f.bitdepth, VMAF_PIX_FMT_YUV420P },
            .pic_prealloc_method = run->method,
        };
        CHECK(vmaf_cuda_preallocate_pictures(vmaf, pic_cfg) == 0);
    }
    VmafModel *model = NULL;
    VmafModelConfig model_cfg = { .name = "vmaf" };
    const char *version = strchr(run->model, '=') + 1;
    CHECK(vmaf_model_load(&model, &model_cfg, version) == 0);
    CHECK(vmaf_use_features_from_model(vmaf, model) == 0);
    if (run->feature) {
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(run->feature, "="), run->feature);
        VmafFeatureDictionary *d = NULL;
        const char *opts = strchr(run->feature, '=') ? strchr(run->feature, '=') + 1 : "";
        while (*opts) {
            char key[64], value[64];
            const size_t k = strcspn(opts, "=");
            snprintf(key, sizeof(key), "%.*s", (int)k, opts);
            const char *vs = opts + k + 1;
            const size_t vlen = strcspn(vs, ":");
            snprintf(value, sizeof(value), "%.*s", (int)vlen, vs);
            CHECK(vmaf_feature_dictionary_set(&d, key, value) == 0);
            opts = vs + vlen + (vs[vlen] == ':');
        }
        CHECK(vmaf_use_feature(vmaf, name, d) == 0);
    }
    for (unsigned i = 0; i < FRAMES; i++) {
        QualePicture r, d;
        make_pair(run, i, &r, &d);
        VmafPicture vr, vd;
        if (context && run->method == VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE) {
            CHECK(device_copy(vmaf, context, &r, run->copied_planes, &vr) == 0);
            CHECK(device_copy(vmaf, context, &d, run->copied_planes, &vd) == 0);
        } else {
            CHECK(host_copy(&r, run->copied_planes, &vr) == 0);
            CHECK(host_copy(&d, run->copied_planes, &vd) == 0);
        }
        quale_picture_unref(&r);
        quale_picture_unref(&d);
        CHECK(vmaf_read_pictures(vmaf, &vr, &vd, i) == 0);
    }
    CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) == 0);
    for (unsigned i = 0; i < FRAMES; i++)
        for (unsigned k = 0; k < key_count; k++) {
            scores[i][k] = -1e300;
            const int err = k == 0 ? vmaf_score_at_index(vmaf, model, &scores[i][k], i)
                                   : vmaf_feature_score_at_index(vmaf, keys[k], &scores[i][k], i);
            if (err) {
                fprintf(stderr, "%s: no %s at frame %u\n", context ? "cuda" : "cpu", keys[k], i);
                CHECK(0);
            }
        }
    vmaf_model_destroy(model);
    CHECK(vmaf_close(vmaf) == 0);
    return 0;
}

static void compare(const Run *run, CUcontext context, const char *const *keys, unsigned key_count)
{
    double cpu[FRAMES][16], gpu[FRAMES][16];
    score(run, NULL, keys, key_count, cpu);
    score(run, context, keys, key_count, gpu);
    unsigned differ = 0;
    for (unsigned i = 0; i < FRAMES; i++)
        for (unsigned k = 0; k < key_count; k++)
            if (cpu[i][k] != gpu[i][k]) {
                if (differ++ < 5)
                    fprintf(stderr, "%s: frame %u %s: cpu %.17g, cuda %.17g\n", run->model, i,
                            keys[k], cpu[i][k], gpu[i][k]);
            }
    printf("%-34s %-40s %u-bit, %u plane%s copied, %s: %u keys x %u frames, %u differ\n",
           run->model, run->feature ? run->feature : "", run->bitdepth, run->copied_planes,
           run->copied_planes == 1 ? "" : "s",
           run->method == VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE ? "device" : "host",
           key_count, FRAMES, differ);
    CHECK(differ == 0);
}

int main(void)
{
    if (load_driver()) {
        printf("no CUDA driver or device here: the device checks did not run\n");
        return SKIP;
    }
    CUdevice device;
    CUcontext context = NULL;
    if (cu.DeviceGet(&device, 0) != CUDA_SUCCESS || cu.CtxCreate(&context, 0, device) != CUDA_SUCCESS) {
        printf("no CUDA device: the device checks did not run\n");
        return SKIP;
    }
    CUcontext popped;
    cu.CtxPopCurrent(&popped); /* the library must make it current itself */

    static const char *const v0_keys[] = {
        "vmaf", "integer_adm2", "integer_motion2", "integer_vif_scale0", "integer_vif_scale1",
        "integer_vif_scale2", "integer_vif_scale3",
    };
    static const char *const v1_keys[] = {
        "vmaf", "speed_chroma_uv_mxv_45_nnf_0.1_snn_0.19_wvm_5", "cambi_hrs_1080_cmxv_17_vlt_0.06",
        "integer_motion3_mmxv_18", "integer_adm2_csf_2_dlmw_0.7_egl_1_min_0.5_nw_0.02",
    };
    static const char *const mixed_keys[] = {
        "vmaf", "integer_adm2", "speed_chroma_uv_ps_0.5_psm_bicubic",
    };
    const Run v0_luma = { "version=vmaf_v0.6.1", NULL, VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE, 1, 8 };
    const Run v1 = { "version=vmaf_v1.0.16_3d0h", NULL, VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE, 3, 10 };
    const Run mixed = { "version=vmaf_v0.6.1", "speed_chroma=speed_prescale=0.5:speed_prescale_method=bicubic",
                        VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE, 3, 8 };
    const Run host = { "version=vmaf_v0.6.1", NULL, VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST, 3, 10 };
    compare(&v0_luma, context, v0_keys, 7);
    compare(&v1, context, v1_keys, 5);
    compare(&mixed, context, mixed_keys, 3);
    compare(&host, context, v0_keys, 7);
    cu.CtxDestroy(context);
    return test_summary();
}
