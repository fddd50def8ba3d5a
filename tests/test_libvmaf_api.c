/*
 * libvmaf's API (libvmaf.so.3) used as FFmpeg's libvmaf filter uses it,
 * against quale's own API on the same pictures: the same numbers, key by
 * key and frame by frame; then misused: NULLs, pictures that are not the
 * run's, frames out of order, reads after the flush, a double close, a
 * double unref, the CUDA calls out of order or without a device.  Each
 * misuse must return an error, never crash
 * (scripts/sanitize.sh runs this under ASan and UBSan).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libvmaf.h"
#include "libvmaf_cuda.h"
#include "quale/quale.h"
#include "synth.h"
#include "test.h"

#define FRAMES 5

static const QualeVideoFormat format = { QUALE_CHROMA_420, 10, 96, 64 };

static void make_pair(unsigned index, QualePicture *ref, QualePicture *dist)
{
    quale_picture_alloc(ref, &format);
    quale_picture_alloc(dist, &format);
    synth_reference(ref, index);
    synth_distort(ref, dist, index, 2);
}

/* A VmafPicture holding a copy of a quale picture, as FFmpeg copies its
 * frames into vmaf_picture_alloc()'s pictures. */
static int to_vmaf(const QualePicture *q, VmafPicture *v)
{
    int err = vmaf_picture_alloc(v, VMAF_PIX_FMT_YUV420P, q->format.bitdepth, q->format.width,
                                 q->format.height);
    if (err) return err;
    for (unsigned p = 0; p < 3; p++) {
        for (unsigned y = 0; y < v->h[p]; y++)
            memcpy((char *)v->data[p] + (size_t)y * (size_t)v->stride[p],
                   (const char *)q->data[p] + (size_t)y * (size_t)q->stride[p], v->w[p] * 2u);
    }
    return 0;
}

/* Frames 0 .. frames-1 of the synthetic pair through vmaf_read_pictures(),
 * which must take each picture's reference; then the flush. */
static void read_synthetic(VmafContext *vmaf, unsigned frames)
{
    for (unsigned i = 0; i < frames; i++) {
        QualePicture r, d;
        make_pair(i, &r, &d);
        VmafPicture vr, vd;
        CHECK(to_vmaf(&r, &vr) == 0 && to_vmaf(&d, &vd) == 0);
        quale_picture_unref(&r);
        quale_picture_unref(&d);
        CHECK(vmaf_read_pictures(vmaf, &vr, &vd, i) == 0);
        CHECK(vr.ref == NULL && vd.ref == NULL);
    }
    CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) == 0);
}

static const char *const keys[] = {
    "vmaf", "psnr_y", "psnr_cb", "psnr_cr", "integer_vif_scale0", "integer_adm2",
    "integer_motion2",
};

static void scores_agree(void)
{
    /* quale's own API. */
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = 2;
    QualeContext *ctx = NULL;
    CHECK(quale_open(&ctx, &s) == 0);
    CHECK(quale_use_model(ctx, "version=vmaf_v0.6.1:name=vmaf") == 0);
    CHECK(quale_use_metric(ctx, "psnr") == 0);
    for (unsigned i = 0; i < FRAMES; i++) {
        QualePicture r, d;
        make_pair(i, &r, &d);
        CHECK(quale_send_pictures(ctx, &r, &d) == 0);
    }
    CHECK(quale_flush(ctx) == 0);

    /* libvmaf's, as FFmpeg's filter calls it. */
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_WARNING, .n_threads = 2 };
    VmafContext *vmaf = NULL;
    CHECK(vmaf_init(&vmaf, cfg) == 0);
    VmafModel *model = NULL;
    VmafModelConfig model_cfg = { .name = "vmaf" };
    CHECK(vmaf_model_load(&model, &model_cfg, "vmaf_v0.6.1") == 0);
    CHECK(vmaf_use_features_from_model(vmaf, model) == 0);
    VmafFeatureDictionary *opts = NULL;
    CHECK(vmaf_feature_dictionary_set(&opts, "enable_chroma", "true") == 0);
    CHECK(vmaf_use_feature(vmaf, "psnr", opts) == 0); /* takes opts */
    read_synthetic(vmaf, FRAMES);

    for (unsigned k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        for (unsigned i = 0; i < FRAMES; i++) {
            double a = NAN, b = NAN;
            CHECK(quale_feature_value(ctx, keys[k], i, &a) == 0);
            const int err = !strcmp(keys[k], "vmaf")
                                ? vmaf_score_at_index(vmaf, model, &b, i)
                                : vmaf_feature_score_at_index(vmaf, keys[k], &b, i);
            CHECK(err == 0 && a == b);
        }
    }
    double pooled = NAN, mean = NAN, hmean = NAN, expected = NAN;
    CHECK(vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, &pooled, 0, FRAMES - 1) == 0);
    CHECK(quale_feature_pooled(ctx, "vmaf", QUALE_POOL_MEAN, &mean) == 0 && pooled == mean);
    CHECK(vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_HARMONIC_MEAN, &hmean, 0,
                            FRAMES - 1) == 0);
    CHECK(quale_feature_pooled(ctx, "vmaf", QUALE_POOL_HARMONIC_MEAN, &expected) == 0);
    CHECK(fabs(hmean - expected) <= 1e-12 * fabs(expected));
    /* A range: frames 1 to 2 only. */
    double a = 0, b = 0, range = 0;
    vmaf_score_at_index(vmaf, model, &a, 1);
    vmaf_score_at_index(vmaf, model, &b, 2);
    CHECK(vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MAX, &range, 1, 2) == 0 &&
          range == (a > b ? a : b));

    /* The output file equals quale's writer's at 6 decimals, but for fps. */
    char path[] = "/tmp/quale_libvmaf_XXXXXX";
    const int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(vmaf_write_output(vmaf, path, VMAF_OUTPUT_FORMAT_CSV) == 0);
        FILE *f = fopen(path, "r");
        char got[8192] = "", want[8192] = "";
        if (f) {
            got[fread(got, 1, sizeof(got) - 1, f)] = '\0';
            fclose(f);
        }
        FILE *m = fmemopen(want, sizeof(want) - 1, "w");
        const QualeOutputOptions o = { .precision = 6 };
        CHECK(m && quale_write_output(ctx, m, QUALE_OUTPUT_CSV, &o) == 0);
        if (m) fclose(m);
        CHECK(got[0] && !strcmp(got, want));
        unlink(path);
        close(fd);
    }

    CHECK(vmaf_close(vmaf) == 0);
    vmaf_model_destroy(model);
    quale_close(&ctx);
}

static void misuse(void)
{
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_NONE };
    CHECK(vmaf_init(NULL, cfg) == -EINVAL);
    VmafContext *vmaf = NULL;
    CHECK(vmaf_init(&vmaf, cfg) == 0);
    VmafModel *model = NULL;
    VmafModelConfig mc = { 0 };
    CHECK(vmaf_model_load(&model, &mc, "no_such_model") < 0 && model == NULL);
    CHECK(vmaf_model_load(NULL, &mc, "vmaf_v0.6.1") == -EINVAL);
    CHECK(vmaf_model_load_from_path(&model, &mc, "/nonexistent/model.json") < 0);
    CHECK(vmaf_use_feature(vmaf, "no_such_feature", NULL) < 0);
    CHECK(vmaf_use_feature(vmaf, NULL, NULL) == -EINVAL);
    CHECK(vmaf_use_features_from_model(vmaf, NULL) == -EINVAL);
    VmafFeatureDictionary *d = NULL;
    CHECK(vmaf_feature_dictionary_set(&d, "bad:key", "1") == -EINVAL);
    CHECK(vmaf_feature_dictionary_set(NULL, "k", "1") == -EINVAL);
    CHECK(vmaf_feature_dictionary_set(&d, "enable_chroma", "maybe") == 0);
    CHECK(vmaf_use_feature(vmaf, "psnr", d) < 0); /* a bad value; d is taken */
    CHECK(vmaf_use_feature(vmaf, "psnr", NULL) == 0);

    VmafPicture r, s;
    CHECK(vmaf_picture_alloc(NULL, VMAF_PIX_FMT_YUV420P, 8, 16, 16) == -EINVAL);
    CHECK(vmaf_picture_alloc(&r, VMAF_PIX_FMT_UNKNOWN, 8, 16, 16) == -EINVAL);
    CHECK(vmaf_picture_alloc(&r, VMAF_PIX_FMT_YUV420P, 7, 16, 16) == -EINVAL);
    CHECK(vmaf_picture_alloc(&r, VMAF_PIX_FMT_YUV420P, 8, 0, 16) == -EINVAL);
    CHECK(vmaf_picture_alloc(&r, VMAF_PIX_FMT_YUV420P, 8, 32, 32) == 0);
    CHECK(vmaf_picture_unref(&r) == 0);
    CHECK(vmaf_picture_unref(&r) == -EINVAL); /* twice */
    CHECK(vmaf_picture_unref(NULL) == -EINVAL);

    /* One picture without the other; then an index out of order. */
    CHECK(vmaf_picture_alloc(&r, VMAF_PIX_FMT_YUV420P, 8, 32, 32) == 0);
    CHECK(vmaf_read_pictures(vmaf, &r, NULL, 0) == -EINVAL && r.ref == NULL);
    CHECK(vmaf_picture_alloc(&r, VMAF_PIX_FMT_YUV420P, 8, 32, 32) == 0);
    CHECK(vmaf_picture_alloc(&s, VMAF_PIX_FMT_YUV420P, 8, 32, 32) == 0);
    CHECK(vmaf_read_pictures(vmaf, &r, &s, 3) == -EINVAL);
    /* Frame 0, then a frame of another size. */
    CHECK(vmaf_picture_alloc(&r, VMAF_PIX_FMT_YUV420P, 8, 32, 32) == 0);
    CHECK(vmaf_picture_alloc(&s, VMAF_PIX_FMT_YUV420P, 8, 32, 32) == 0);
    CHECK(vmaf_read_pictures(vmaf, &r, &s, 0) == 0);
    CHECK(vmaf_picture_alloc(&r, VMAF_PIX_FMT_YUV420P, 8, 48, 32) == 0);
    CHECK(vmaf_picture_alloc(&s, VMAF_PIX_FMT_YUV420P, 8, 48, 32) == 0);
    CHECK(vmaf_read_pictures(vmaf, &r, &s, 1) < 0);
    /* A borrowed picture that describes nothing. */
    VmafPicture junk = { .pix_fmt = VMAF_PIX_FMT_YUV420P, .bpc = 8, .w = { 32, 16, 16 },
                         .h = { 32, 16, 16 } };
    CHECK(vmaf_picture_alloc(&s, VMAF_PIX_FMT_YUV420P, 8, 32, 32) == 0);
    CHECK(vmaf_read_pictures(vmaf, &junk, &s, 1) < 0);
    /* Features after the first frame. */
    CHECK(vmaf_use_feature(vmaf, "float_ssim", NULL) == -EINVAL);
    /* Refused pairs are not sent: the run goes on, and ends. */
    CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) == 0);
    /* After the flush: no more frames, no second flush. */
    CHECK(vmaf_picture_alloc(&r, VMAF_PIX_FMT_YUV420P, 8, 32, 32) == 0);
    CHECK(vmaf_picture_alloc(&s, VMAF_PIX_FMT_YUV420P, 8, 32, 32) == 0);
    CHECK(vmaf_read_pictures(vmaf, &r, &s, 1) == -EINVAL);
    CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) == -EINVAL);
    double score;
    CHECK(vmaf_feature_score_pooled(vmaf, "psnr_y", VMAF_POOL_METHOD_NB, &score, 0, 0) == -EINVAL);
    CHECK(vmaf_feature_score_pooled(vmaf, "psnr_y", VMAF_POOL_METHOD_MEAN, &score, 2, 1) == -EINVAL);
    CHECK(vmaf_feature_score_pooled(vmaf, "nonesuch", VMAF_POOL_METHOD_MEAN, &score, 0, 0) == -EINVAL);
    CHECK(vmaf_score_pooled(vmaf, NULL, VMAF_POOL_METHOD_MEAN, &score, 0, 0) == -EINVAL);
    CHECK(vmaf_write_output(vmaf, "/nonexistent/dir/out.json", VMAF_OUTPUT_FORMAT_JSON) < 0);
    CHECK(vmaf_write_output(vmaf, "/tmp/x.json", VMAF_OUTPUT_FORMAT_NONE) == -EINVAL);
    CHECK(vmaf_close(vmaf) == 0);
    /* Closed: every call is refused, a second close too. */
    CHECK(vmaf_close(vmaf) == -EINVAL);
    CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) == -EINVAL);
    CHECK(vmaf_use_feature(vmaf, "psnr", NULL) == -EINVAL);
    CHECK(vmaf_close(NULL) == -EINVAL);
    CHECK(vmaf_version() && !strncmp(vmaf_version(), "3.", 2));
}

/* libvmaf_cuda.h's calls out of order, and quale's device pictures where
 * there is no CUDA backend; on a machine without an NVIDIA GPU the state
 * itself is refused.  (tests/test_libvmaf_cuda.c scores on the device.) */
static void cuda_misuse(void)
{
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_NONE };
    VmafContext *vmaf = NULL;
    CHECK(vmaf_init(&vmaf, cfg) == 0);
    const VmafCudaConfiguration no_context = { .cu_ctx = NULL };
    CHECK(vmaf_cuda_state_init(NULL, no_context) == -EINVAL);
    CHECK(vmaf_cuda_import_state(vmaf, NULL) == -EINVAL);
    CHECK(vmaf_cuda_import_state(NULL, NULL) == -EINVAL);
    const VmafCudaPictureConfiguration pictures = {
        .pic_params = { 64, 48, 8, VMAF_PIX_FMT_YUV420P },
        .pic_prealloc_method = VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE,
    };
    CHECK(vmaf_cuda_preallocate_pictures(vmaf, pictures) == -EINVAL); /* no state */
    VmafPicture pic;
    CHECK(vmaf_cuda_fetch_preallocated_picture(vmaf, &pic) == -EINVAL); /* nothing preallocated */
    CHECK(vmaf_cuda_fetch_preallocated_picture(vmaf, NULL) == -EINVAL);
    VmafCudaState *state = NULL;
    const int err = vmaf_cuda_state_init(&state, no_context);
    if (err) {
        /* No driver or no device here: refused, with nothing made. */
        CHECK(err < 0 && state == NULL);
    } else {
        CHECK(state != NULL);
        CHECK(vmaf_cuda_import_state(vmaf, state) == 0);
        CHECK(vmaf_cuda_import_state(vmaf, state) == -EINVAL); /* twice */
        VmafCudaPictureConfiguration bad = pictures;
        bad.pic_prealloc_method = (enum VmafCudaPicturePreallocationMethod)9;
        CHECK(vmaf_cuda_preallocate_pictures(vmaf, bad) == -EINVAL);
        CHECK(vmaf_cuda_preallocate_pictures(vmaf, pictures) == 0);
        CHECK(vmaf_cuda_preallocate_pictures(vmaf, pictures) == -EINVAL); /* twice */
    }
    CHECK(vmaf_close(vmaf) == 0);

    /* quale's side: device pictures need the CUDA backend, and the backend
     * cannot change once pictures flow. */
    QualeSettings s;
    quale_settings_default(&s);
    QualeContext *ctx = NULL;
    CHECK(quale_open(&ctx, &s) == 0);
    QualePicture dp;
    CHECK(quale_context_alloc_device_picture(ctx, &dp, &format) == -EINVAL && dp.buffer == NULL);
    CHECK(quale_context_alloc_device_picture(NULL, &dp, &format) == -EINVAL);
    CHECK(quale_use_cuda_context(NULL, NULL) == -EINVAL);
    CHECK(quale_use_metric(ctx, "psnr") == 0);
    QualePicture r, d;
    make_pair(0, &r, &d);
    CHECK(quale_send_pictures(ctx, &r, &d) == 0);
    CHECK(quale_use_cuda_context(ctx, NULL) == -EINVAL); /* after the first picture */
    CHECK(quale_flush(ctx) == 0);
    quale_close(&ctx);
}

static void collections(void)
{
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_WARNING, .n_threads = 1 };
    VmafContext *vmaf = NULL;
    CHECK(vmaf_init(&vmaf, cfg) == 0);
    VmafModel *model = NULL;
    VmafModelCollection *collection = NULL;
    VmafModelConfig mc = { .name = "vmaf" };
    CHECK(vmaf_model_collection_load(&model, &collection, &mc, "vmaf_b_v0.6.3") == 0);
    CHECK(vmaf_use_features_from_model_collection(vmaf, collection) == 0);
    read_synthetic(vmaf, 3);
    VmafModelCollectionScore score = { 0 };
    CHECK(vmaf_score_pooled_model_collection(vmaf, collection, VMAF_POOL_METHOD_MEAN, &score,
                                             0, 2) == 0);
    double bagging = 0;
    CHECK(vmaf_feature_score_pooled(vmaf, "vmaf_bagging", VMAF_POOL_METHOD_MEAN, &bagging, 0, 2) == 0);
    CHECK(score.type == VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP && score.bootstrap.bagging_score == bagging &&
          score.bootstrap.ci.p95.lo <= score.bootstrap.ci.p95.hi && score.bootstrap.stddev > 0);
    CHECK(vmaf_close(vmaf) == 0);
    vmaf_model_destroy(model);
    vmaf_model_collection_destroy(collection);
}

int main(void)
{
    scores_agree();
    misuse();
    cuda_misuse();
    collections();
    return test_summary();
}
