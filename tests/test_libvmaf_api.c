/*
 * libvmaf's API (libvmaf.so.3) used as FFmpeg's libvmaf filter uses it,
 * against quale's own API on the same pictures: the same numbers, key by
 * key and frame by frame; then misused: NULLs, pictures that are not the
 * run's, frames out of order, reads after the flush, a double close, a
 * double unref, the CUDA calls out of order or without a device.  Each
 * misuse must return an error, never crash
 * (scripts/sanitize.sh runs this under ASan and UBSan).  Results files
 * that a failed call must leave as they were, a score imported twice,
 * model paths holding ':', and several threads on one context.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* ---- marked pairs -------------------------------------------------------- */

enum { SENT = 200 };

/* Pair k: flat 64x48 pictures whose distorted luma differs in k + 1
 * samples (by 16: psnr_y under the 60 dB cap), so that psnr_y says which
 * pair a frame was. */
static int marked_pair(unsigned k, VmafPicture *ref, VmafPicture *dist)
{
    if (vmaf_picture_alloc(ref, VMAF_PIX_FMT_YUV420P, 8, 64, 48)) return -ENOMEM;
    if (vmaf_picture_alloc(dist, VMAF_PIX_FMT_YUV420P, 8, 64, 48)) {
        vmaf_picture_unref(ref);
        return -ENOMEM;
    }
    VmafPicture *pics[2] = { ref, dist };
    for (unsigned i = 0; i < 2; i++)
        for (unsigned p = 0; p < 3; p++)
            for (unsigned y = 0; y < pics[i]->h[p]; y++)
                memset((unsigned char *)pics[i]->data[p] + (size_t)y * pics[i]->stride[p], 128,
                       pics[i]->w[p]);
    for (unsigned j = 0; j <= k; j++)
        ((unsigned char *)dist->data[0])[(size_t)(j / 64) * dist->stride[0] + j % 64] = 144;
    return 0;
}

/* ---- results files ------------------------------------------------------- */

static char scratch_dir[256];

static const char *scratch(const char *name)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/%s", scratch_dir, name);
    return path;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* The file's first bytes ("" when it cannot be read). */
static const char *read_text(const char *path)
{
    static char text[16384];
    text[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return text;
    text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
    fclose(f);
    return text;
}

/* Files in the scratch directory. */
static unsigned scratch_files(void)
{
    unsigned n = 0;
    DIR *d = opendir(scratch_dir);
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

static VmafContext *psnr_context(void)
{
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_NONE, .n_threads = 1 };
    VmafContext *vmaf = NULL;
    CHECK(vmaf_init(&vmaf, cfg) == 0);
    CHECK(vmaf_use_feature(vmaf, "psnr", NULL) == 0);
    return vmaf;
}

/*
 * vmaf_write_output() that fails leaves the file as it was: before the
 * flush, after a run without frames, on a file the caller may not write.
 * One that succeeds replaces the file whole: its mode kept, no file left
 * beside it, a symbolic link still a link to the file written; a device
 * and a FIFO are written into.
 */
static void write_output_files(void)
{
    const char *old = "the results of another run\n";
    char out[512];
    snprintf(out, sizeof(out), "%s", scratch("out.json"));
    write_text(out, old);
    CHECK(chmod(out, 0640) == 0);

    /* Before the flush: nothing to write yet, the file untouched. */
    VmafContext *vmaf = psnr_context();
    CHECK(vmaf_write_output(vmaf, out, VMAF_OUTPUT_FORMAT_JSON) == -EINVAL);
    CHECK_STR(read_text(out), old);
    for (unsigned i = 0; i < 3; i++) {
        VmafPicture ref, dist;
        CHECK(marked_pair(i, &ref, &dist) == 0);
        CHECK(vmaf_read_pictures(vmaf, &ref, &dist, i) == 0);
    }
    CHECK(vmaf_write_output(vmaf, out, VMAF_OUTPUT_FORMAT_JSON) == -EINVAL);
    CHECK_STR(read_text(out), old);
    CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) == 0);

    /* After it: the file replaced whole, its mode kept, nothing beside it. */
    CHECK(vmaf_write_output(vmaf, out, VMAF_OUTPUT_FORMAT_JSON) == 0);
    char json[16384];
    snprintf(json, sizeof(json), "%s", read_text(out));
    CHECK(json[0] == '{' && strstr(json, "\"psnr_y\"") != NULL);
    struct stat st;
    CHECK(stat(out, &st) == 0 && (st.st_mode & 07777) == 0640);
    CHECK(scratch_files() == 1);

    /* Through a symbolic link: the link stays, its file gets the results. */
    char link[512];
    snprintf(link, sizeof(link), "%s", scratch("link.xml"));
    CHECK(symlink("out.json", link) == 0);
    CHECK(vmaf_write_output(vmaf, link, VMAF_OUTPUT_FORMAT_XML) == 0);
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(!strncmp(read_text(out), "<VMAF ", 6) && scratch_files() == 2);
    unlink(link);

    /* A file the caller may not write stays as it is (root may write any). */
    if (geteuid() != 0) {
        CHECK(chmod(out, 0440) == 0);
        CHECK(vmaf_write_output(vmaf, out, VMAF_OUTPUT_FORMAT_CSV) == -EACCES);
        CHECK(!strncmp(read_text(out), "<VMAF ", 6));
        CHECK(chmod(out, 0640) == 0);
    }
    /* A name of 250 bytes: the file beside it takes a shortened one. */
    char longest[251];
    memset(longest, 'n', 246);
    memcpy(longest + 246, ".csv", 5);
    CHECK(vmaf_write_output(vmaf, scratch(longest), VMAF_OUTPUT_FORMAT_CSV) == 0);
    CHECK(!strncmp(read_text(scratch(longest)), "Frame,", 6) && scratch_files() == 2);
    unlink(scratch(longest));
    CHECK(vmaf_write_output(vmaf, scratch_dir, VMAF_OUTPUT_FORMAT_CSV) == -EISDIR);
    CHECK(vmaf_write_output(vmaf, scratch("no/such/dir.csv"), VMAF_OUTPUT_FORMAT_CSV) < 0);
    CHECK(scratch_files() == 1);

    /* Devices and FIFOs are written into, not replaced. */
    CHECK(vmaf_write_output(vmaf, "/dev/null", VMAF_OUTPUT_FORMAT_CSV) == 0);
    CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    char fifo[512];
    snprintf(fifo, sizeof(fifo), "%s", scratch("fifo"));
    CHECK(mkfifo(fifo, 0600) == 0);
    /* Open for reading first, so that the writer's open does not wait;
     * the CSV of 3 frames fits the pipe's buffer. */
    const int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    CHECK(rd >= 0);
    CHECK(vmaf_write_output(vmaf, fifo, VMAF_OUTPUT_FORMAT_CSV) == 0);
    char piped[8192] = "";
    const ssize_t n = rd >= 0 ? read(rd, piped, sizeof(piped) - 1) : -1;
    if (n > 0) piped[n] = '\0';
    if (rd >= 0) close(rd);
    CHECK(vmaf_write_output(vmaf, out, VMAF_OUTPUT_FORMAT_CSV) == 0);
    CHECK(n > 0 && !strcmp(piped, read_text(out)));
    CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    unlink(fifo);
    CHECK(vmaf_close(vmaf) == 0);

    /* A run that scored nothing has nothing to write. */
    write_text(out, old);
    vmaf = psnr_context();
    CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) < 0);
    CHECK(vmaf_write_output(vmaf, out, VMAF_OUTPUT_FORMAT_XML) < 0);
    CHECK_STR(read_text(out), old);
    CHECK(vmaf_close(vmaf) == 0);
    CHECK(scratch_files() == 1);
    unlink(out);
}

/* A second score for one key and frame is refused, as libvmaf's feature
 * collector refuses it; the first stays. */
static void import_scores(void)
{
    VmafContext *vmaf = psnr_context();
    double v = 0;
    CHECK(vmaf_import_feature_score(vmaf, "external", 1.5, 0) == 0);
    CHECK(vmaf_import_feature_score(vmaf, "external", 2.5, 0) == -EINVAL);
    CHECK(vmaf_import_feature_score(vmaf, "external", 1.5, 0) == -EINVAL);
    CHECK(vmaf_import_feature_score(vmaf, "external", 3.5, 1) == 0);
    CHECK(vmaf_feature_score_at_index(vmaf, "external", &v, 0) == 0 && v == 1.5);
    CHECK(vmaf_feature_score_at_index(vmaf, "external", &v, 1) == 0 && v == 3.5);
    /* A key the run's metric writes. */
    VmafPicture ref, dist;
    CHECK(marked_pair(0, &ref, &dist) == 0);
    CHECK(vmaf_read_pictures(vmaf, &ref, &dist, 0) == 0);
    CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) == 0);
    CHECK(vmaf_import_feature_score(vmaf, "psnr_y", 1.0, 0) == -EINVAL);
    CHECK(vmaf_feature_score_at_index(vmaf, "psnr_y", &v, 0) == 0 && v != 1.0);
    CHECK(vmaf_close(vmaf) == 0);
}

/* A small libvmaf model on adm2 and motion2 (as tests/test_model.c's). */
static const char tiny_model[] =
    "{\"model_dict\": {\"model_type\": \"LIBSVMNUSVR\", \"norm_type\": \"linear_rescale\", "
    "\"feature_names\": [\"VMAF_integer_feature_adm2_score\", "
    "\"VMAF_integer_feature_motion2_score\"], \"slopes\": [2.0, 1.0, 3.0], "
    "\"intercepts\": [0.5, -0.5, 0.25], \"score_clip\": [0.0, 100.0], \"model\": "
    "\"svm_type nu_svr\\nkernel_type rbf\\ngamma 0.04\\nnr_class 2\\ntotal_sv 2\\n"
    "rho -1.5\\nSV\\n-4 1:0.5 2:0.25 \\n4 2:0.75 \\n\"}}";

/* The scores of 3 synthetic frames under a model (a collection's, when
 * model is NULL), each frame's into scores. */
static void model_scores(VmafModel *model, VmafModelCollection *collection, double *scores)
{
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_NONE, .n_threads = 1 };
    VmafContext *vmaf = NULL;
    CHECK(vmaf_init(&vmaf, cfg) == 0);
    CHECK((model ? vmaf_use_features_from_model(vmaf, model)
                 : vmaf_use_features_from_model_collection(vmaf, collection)) == 0);
    read_synthetic(vmaf, 3);
    for (unsigned i = 0; i < 3; i++) {
        scores[i] = -1;
        CHECK(vmaf_feature_score_at_index(vmaf, "tiny", &scores[i], i) == 0);
    }
    CHECK(vmaf_close(vmaf) == 0);
}

/* A model file whose path holds ':' (which separates quale's model
 * options) loads and scores as the same file elsewhere. */
static void model_paths_with_colons(void)
{
    char plain[512], colons[512];
    snprintf(plain, sizeof(plain), "%s", scratch("model.json"));
    write_text(plain, tiny_model);
    snprintf(colons, sizeof(colons), "%s", scratch("dir:with:colons"));
    CHECK(mkdir(colons, 0700) == 0);
    strncat(colons, "/a:model.json", sizeof(colons) - strlen(colons) - 1);
    write_text(colons, tiny_model);

    VmafModelConfig cfg = { .name = "tiny" };
    VmafModel *a = NULL, *b = NULL;
    CHECK(vmaf_model_load_from_path(&a, &cfg, plain) == 0);
    CHECK(vmaf_model_load_from_path(&b, &cfg, colons) == 0);
    double want[3] = { 0 }, got[3] = { 1 };
    if (a && b) {
        model_scores(a, NULL, want);
        model_scores(b, NULL, got);
        CHECK(want[0] >= 0 && !memcmp(want, got, sizeof(want)));
    }
    /* An overload (of adm's default) keeps it loadable; a collection has
     * its own copy of the file, which outlives the model. */
    VmafFeatureDictionary *opts = NULL;
    CHECK(vmaf_feature_dictionary_set(&opts, "adm_enhn_gain_limit", "100") == 0);
    CHECK(b && vmaf_model_feature_overload(b, "adm", opts) == 0);
    if (b) {
        model_scores(b, NULL, got);
        CHECK(!memcmp(want, got, sizeof(want)));
    }
    VmafModel *c = NULL;
    VmafModelCollection *collection = NULL;
    CHECK(vmaf_model_collection_load_from_path(&c, &collection, &cfg, colons) == 0);
    vmaf_model_destroy(c);
    if (collection) {
        memset(got, 0, sizeof(got));
        model_scores(NULL, collection, got);
        CHECK(!memcmp(want, got, sizeof(want)));
    }
    vmaf_model_collection_destroy(collection);
    vmaf_model_destroy(a);
    vmaf_model_destroy(b);
    /* Still refused: a file that is not there, a name with ':'. */
    VmafModel *m = NULL;
    CHECK(vmaf_model_load_from_path(&m, &cfg, scratch("no:such.json")) == -ENOENT && !m);
    VmafModelConfig bad = { .name = "a:b" };
    CHECK(vmaf_model_load_from_path(&m, &bad, plain) == -EINVAL && !m);
    unlink(colons);
    rmdir(scratch("dir:with:colons"));
    unlink(plain);
}

/* ---- several threads on one context -------------------------------------- */

static VmafContext *open_marked(void)
{
    /* Quiet: the threads' refused indices are expected. */
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_NONE, .n_threads = 2 };
    VmafContext *vmaf = NULL;
    CHECK(vmaf_init(&vmaf, cfg) == 0);
    CHECK(vmaf_use_feature(vmaf, "psnr", NULL) == 0);
    CHECK(vmaf_use_feature(vmaf, "motion", NULL) == 0);
    return vmaf;
}

typedef struct Reader {
    VmafContext *vmaf;
    atomic_uint *next;     /* the index the threads try next */
    atomic_uint *taken;    /* the calls taken, counted after next moved */
    atomic_uint *accepted; /* [SENT]: how often each index was taken */
    unsigned failed_alloc;
} Reader;

/*
 * Every thread reads the index the threads are at, and the one whose call
 * is taken moves them on: meanwhile the others read the same index again,
 * which must be refused.  Should one index be taken twice, the context is
 * ahead of the threads and would refuse them all from then on: more calls
 * taken than indices passed says so, and the threads stop.
 */
static void *read_marked(void *arg)
{
    Reader *r = arg;
    for (;;) {
        /* taken first: it never passes next, which only grows. */
        const unsigned taken = atomic_load(r->taken), i = atomic_load(r->next);
        if (i >= SENT || taken > i) break;
        VmafPicture ref, dist;
        if (marked_pair(i, &ref, &dist)) {
            r->failed_alloc++;
            break;
        }
        if (vmaf_read_pictures(r->vmaf, &ref, &dist, i) == 0) {
            atomic_fetch_add(&r->accepted[i], 1);
            atomic_store(r->next, i + 1);
            atomic_fetch_add(r->taken, 1);
        } else {
            sched_yield(); /* let the thread that took it move the others on */
        }
    }
    return NULL;
}

/*
 * vmaf_read_pictures() from 2, 3 and 4 threads at once on one context, each
 * thread racing the others for every index, several times: each index is
 * taken exactly once (a second call with it refused), and every frame has
 * the psnr a single-thread run gives it.
 */
static void concurrent_reads(void)
{
    VmafContext *vmaf = open_marked();
    double expected[SENT];
    for (unsigned i = 0; i < SENT; i++) {
        VmafPicture ref, dist;
        CHECK(marked_pair(i, &ref, &dist) == 0);
        CHECK(vmaf_read_pictures(vmaf, &ref, &dist, i) == 0);
    }
    CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) == 0);
    for (unsigned i = 0; i < SENT; i++)
        CHECK(vmaf_feature_score_at_index(vmaf, "psnr_y", &expected[i], i) == 0);
    CHECK(expected[0] > expected[1] && expected[0] < 60);
    CHECK(vmaf_close(vmaf) == 0);

    for (unsigned threads = 2; threads <= 4; threads++) {
        for (unsigned round = 0; round < 3; round++) {
            vmaf = open_marked();
            atomic_uint next, taken, accepted[SENT];
            atomic_init(&next, 0);
            atomic_init(&taken, 0);
            for (unsigned i = 0; i < SENT; i++) atomic_init(&accepted[i], 0);
            Reader readers[4];
            pthread_t ids[4];
            for (unsigned t = 0; t < threads; t++) {
                readers[t] = (Reader){ vmaf, &next, &taken, accepted, 0 };
                CHECK(pthread_create(&ids[t], NULL, read_marked, &readers[t]) == 0);
            }
            unsigned failed_alloc = 0;
            for (unsigned t = 0; t < threads; t++) {
                pthread_join(ids[t], NULL);
                failed_alloc += readers[t].failed_alloc;
            }
            CHECK(failed_alloc == 0);
            unsigned once = 0;
            for (unsigned i = 0; i < SENT; i++) once += atomic_load(&accepted[i]) == 1;
            CHECK(once == SENT);
            CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) == 0);
            unsigned same = 0;
            for (unsigned i = 0; i < SENT; i++) {
                double v = -1;
                same += vmaf_feature_score_at_index(vmaf, "psnr_y", &v, i) == 0 &&
                        v == expected[i];
            }
            CHECK(same == SENT);
            double v;
            CHECK(vmaf_feature_score_at_index(vmaf, "psnr_y", &v, SENT) < 0);
            CHECK(vmaf_close(vmaf) == 0);
        }
    }
}

typedef struct Streamer {
    VmafContext *vmaf;
    atomic_uint accepted;
    atomic_int done;
    int last_error;
} Streamer;

/* Reads frames 0, 1, ... until one is refused. */
static void *read_until_refused(void *arg)
{
    Streamer *s = arg;
    for (unsigned i = 0; i < SENT * 50; i++) {
        VmafPicture ref, dist;
        if (marked_pair(i % SENT, &ref, &dist)) break;
        const int err = vmaf_read_pictures(s->vmaf, &ref, &dist, i);
        /* Taken, accepted or not: nothing is left to unref. */
        if (ref.ref || dist.ref) s->last_error = 1;
        if (err) {
            if (!s->last_error) s->last_error = err;
            break;
        }
        atomic_fetch_add(&s->accepted, 1);
    }
    atomic_store(&s->done, 1);
    return NULL;
}

/*
 * The flush, then vmaf_close(), while another thread reads frames: the
 * flush waits for the frame being read and scores every frame taken
 * before it; frames after it are refused; a close waits for the call in
 * progress, and the calls after it are refused, their pictures taken.
 */
static void end_while_reading(void)
{
    for (unsigned round = 0; round < 8; round++) {
        const bool close_first = round % 2;
        VmafContext *vmaf = open_marked();
        Streamer s = { .vmaf = vmaf };
        atomic_init(&s.accepted, 0);
        atomic_init(&s.done, 0);
        pthread_t id;
        CHECK(pthread_create(&id, NULL, read_until_refused, &s) == 0);
        while (atomic_load(&s.accepted) < 10 + round && !atomic_load(&s.done)) sched_yield();
        if (close_first) {
            CHECK(vmaf_close(vmaf) == 0);
            pthread_join(id, NULL);
            CHECK(s.last_error == -EINVAL);
            continue;
        }
        CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) == 0);
        pthread_join(id, NULL);
        CHECK(s.last_error == -EINVAL);
        const unsigned accepted = atomic_load(&s.accepted);
        unsigned scored = 0;
        double v;
        for (unsigned i = 0; i <= accepted; i++)
            scored += vmaf_feature_score_at_index(vmaf, "psnr_y", &v, i) == 0;
        CHECK(accepted >= 10 + round && scored == accepted);
        CHECK(vmaf_close(vmaf) == 0);
    }
}

int main(void)
{
    scores_agree();
    misuse();
    cuda_misuse();
    collections();
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch_dir, sizeof(scratch_dir), "%s/quale_libvmaf_XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(scratch_dir) != NULL);
    write_output_files();
    import_scores();
    model_paths_with_colons();
    rmdir(scratch_dir);
    concurrent_reads();
    end_while_reading();
    return test_summary();
}
