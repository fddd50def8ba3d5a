/*
 * Tests of cambi's heatmaps (heatmaps_path) through the public API: the
 * files libvmaf names, their sizes, the frame order whatever the thread
 * count, what the c-values say about flat and banded pictures, and the
 * errors of a directory that cannot be made or a file that cannot grow.
 *
 * The bytes themselves were compared with the files of libvmaf's vmaf
 * tool (one thread) on corpus pairs of 8, 10 and 12 bits, with full_ref,
 * enc_width / enc_height, --subsample, cambi_high_res_speedup and the
 * conversion's edge cases (a window of 1, codes past 65535): identical.
 * Here we check what can fail without libvmaf.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log_capture.h"
#include "quale/quale.h"
#include "test.h"

#define SCALES 5
#define WIDTH 256u
#define HEIGHT 224u

/* ---- pictures ----------------------------------------------------------- */

enum Pattern {
    PATTERN_FLAT,   /* one value: no banding anywhere */
    PATTERN_BANDS,  /* vertical bands one 8-bit code apart, moving per frame */
};

/* The bands' edges: columns x where band(x) != band(x - 1). */
static unsigned band_of(unsigned x, unsigned frame)
{
    return (x + 5 * frame) / 24;
}

static void fill(QualePicture *p, enum Pattern pattern, unsigned frame)
{
    for (unsigned y = 0; y < p->plane_height[0]; y++) {
        uint8_t *row = (uint8_t *)p->data[0] + (ptrdiff_t)y * p->stride[0];
        for (unsigned x = 0; x < p->plane_width[0]; x++)
            row[x] = (uint8_t)(pattern == PATTERN_FLAT ? 100 : 40 + band_of(x, frame));
    }
    for (unsigned c = 1; c < p->plane_count; c++)
        for (unsigned y = 0; y < p->plane_height[c]; y++)
            memset((uint8_t *)p->data[c] + (ptrdiff_t)y * p->stride[c], 128, p->plane_width[c]);
}

/* ---- runs --------------------------------------------------------------- */

typedef struct Run {
    unsigned threads, subsample, frames;
    unsigned width, height;
    enum Pattern ref, dist;
    const char *options;   /* cambi's, after heatmaps_path */
} Run;

/* Scores run with heatmaps in dir; returns the first error, and the cambi
 * score of the last frame in *score when it succeeds. */
static int run_cambi(const Run *r, const char *dir, LogCapture *cap, double *score)
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = r->threads;
    s.subsample = r->subsample;
    s.log = capture_log;
    s.log_cookie = cap;
    QualeContext *ctx = NULL;
    int err = quale_open(&ctx, &s);
    if (err) return err;

    char spec[512];
    snprintf(spec, sizeof(spec), "cambi=heatmaps_path=%s%s%s", dir, r->options ? ":" : "",
             r->options ? r->options : "");
    err = quale_use_metric(ctx, spec);
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, r->width, r->height };
    for (unsigned i = 0; !err && i < r->frames; i++) {
        QualePicture ref, dist;
        if (quale_picture_alloc(&ref, &f) || quale_picture_alloc(&dist, &f)) {
            err = -ENOMEM;
            break;
        }
        fill(&ref, r->ref, i);
        fill(&dist, r->dist, i);
        err = quale_send_pictures(ctx, &ref, &dist);
    }
    if (!err) err = quale_flush(ctx);
    if (!err && score) err = quale_feature_value(ctx, "cambi", r->frames - 1, score);
    quale_close(&ctx);
    return err;
}

/* ---- files -------------------------------------------------------------- */

static char temp_root[256];

static void make_temp_root(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(temp_root, sizeof(temp_root), "%s/quale-cambi-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(temp_root) != NULL);
}

static void scale_size(unsigned scale, unsigned *w, unsigned *h)
{
    *w = WIDTH;
    *h = HEIGHT;
    for (unsigned k = 0; k < scale; k++) {
        *w = (*w + 1) / 2;
        *h = (*h + 1) / 2;
    }
}

static void heatmap_path(char *out, size_t size, const char *dir, unsigned scale, unsigned w,
                         unsigned h)
{
    snprintf(out, size, "%s/cambi_heatmap_scale_%u_%ux%u_16b.gray", dir, scale, w, h);
}

/* Reads a whole file; NULL if it is not there. */
static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(n > 0 ? (size_t)n : 1);
    *size = data && n >= 0 && fread(data, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    return data;
}

static unsigned code_at(const uint8_t *bytes, size_t i)
{
    return bytes[2 * i] | (unsigned)bytes[2 * i + 1] << 8; /* little-endian */
}

static void remove_heatmaps(const char *dir)
{
    char path[512];
    for (unsigned scale = 0; scale < SCALES; scale++) {
        unsigned w, h;
        scale_size(scale, &w, &h);
        heatmap_path(path, sizeof(path), dir, scale, w, h);
        unlink(path);
    }
    rmdir(dir);
}

/* ---- tests -------------------------------------------------------------- */

/* Names, sizes, and the same bytes with one thread and with three (frames
 * finish out of order), where every frame's heatmap differs. */
static void test_files_and_threads(void)
{
    char one[300], three[300];
    snprintf(one, sizeof(one), "%s/one", temp_root);
    /* Parents are made as libvmaf's mkdirp makes them. */
    snprintf(three, sizeof(three), "%s/a/b//three", temp_root);
    const unsigned frames = 7;
    Run r = { 1, 0, frames, WIDTH, HEIGHT, PATTERN_BANDS, PATTERN_BANDS, NULL };
    LogCapture cap = { 0 };
    double score = 0;
    CHECK(run_cambi(&r, one, &cap, &score) == 0);
    CHECK(score > 0); /* the bands are seen */
    r.threads = 3;
    CHECK(run_cambi(&r, three, &cap, NULL) == 0);

    for (unsigned scale = 0; scale < SCALES; scale++) {
        unsigned w, h;
        scale_size(scale, &w, &h);
        char a_path[512], b_path[512];
        heatmap_path(a_path, sizeof(a_path), one, scale, w, h);
        heatmap_path(b_path, sizeof(b_path), three, scale, w, h);
        size_t a_size = 0, b_size = 0;
        uint8_t *a = read_file(a_path, &a_size), *b = read_file(b_path, &b_size);
        CHECK(a && b);
        const size_t plane = (size_t)w * h * 2;
        CHECK(a_size == frames * plane && b_size == a_size);
        if (a && b && a_size == b_size) CHECK(!memcmp(a, b, a_size));
        /* Frames differ, so frames written in the wrong place would show. */
        if (a && a_size == frames * plane && scale == 0) {
            for (unsigned i = 1; i < frames; i++)
                CHECK(memcmp(a + (i - 1) * plane, a + i * plane, plane) != 0);
        }
        free(a);
        free(b);
    }
    remove_heatmaps(one);
    remove_heatmaps(three);
    char parent[300];
    snprintf(parent, sizeof(parent), "%s/a/b", temp_root);
    rmdir(parent);
    snprintf(parent, sizeof(parent), "%s/a", temp_root);
    rmdir(parent);
}

/* Flat pictures have no banding: every code is 0.  The bands of the
 * banded picture give codes above 0, and only near their edges: a c-value
 * reads the samples of a window (5 samples here) around it. */
static void test_flat_and_bands(void)
{
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/flat", temp_root);
    Run r = { 2, 0, 2, WIDTH, HEIGHT, PATTERN_FLAT, PATTERN_FLAT, NULL };
    LogCapture cap = { 0 };
    double score = -1;
    CHECK(run_cambi(&r, dir, &cap, &score) == 0 && score == 0);
    for (unsigned scale = 0; scale < SCALES; scale++) {
        unsigned w, h;
        scale_size(scale, &w, &h);
        char path[512];
        heatmap_path(path, sizeof(path), dir, scale, w, h);
        size_t size = 0, nonzero = 0;
        uint8_t *bytes = read_file(path, &size);
        CHECK(bytes && size == 2 * (size_t)w * h * 2);
        for (size_t i = 0; bytes && i < size; i++) nonzero += bytes[i] != 0;
        CHECK(nonzero == 0);
        free(bytes);
    }
    remove_heatmaps(dir);

    snprintf(dir, sizeof(dir), "%s/bands", temp_root);
    r = (Run){ 2, 0, 1, WIDTH, HEIGHT, PATTERN_FLAT, PATTERN_BANDS, NULL };
    CHECK(run_cambi(&r, dir, &cap, &score) == 0 && score > 0);
    char path[512];
    heatmap_path(path, sizeof(path), dir, 0, WIDTH, HEIGHT);
    size_t size = 0;
    uint8_t *bytes = read_file(path, &size);
    CHECK(bytes && size == (size_t)WIDTH * HEIGHT * 2);
    if (bytes && size == (size_t)WIDTH * HEIGHT * 2) {
        const unsigned reach = 5; /* the window at 256x224 */
        unsigned far_nonzero = 0, edges = 0, edges_seen = 0;
        for (unsigned x = 1; x < WIDTH; x++) {
            if (band_of(x, 0) == band_of(x - 1, 0)) continue;
            edges++;
            /* Some code above 0 by each edge, on a middle row. */
            bool seen = false;
            for (unsigned dx = 0; dx < 2 * reach; dx++) {
                const unsigned col = x - reach + dx;
                if (col < WIDTH && code_at(bytes, (size_t)(HEIGHT / 2) * WIDTH + col)) seen = true;
            }
            edges_seen += seen;
        }
        for (unsigned y = 0; y < HEIGHT; y++) {
            for (unsigned x = 0; x < WIDTH; x++) {
                if (!code_at(bytes, (size_t)y * WIDTH + x)) continue;
                unsigned distance = WIDTH;
                for (unsigned e = 1; e < WIDTH; e++) {
                    if (band_of(e, 0) == band_of(e - 1, 0)) continue;
                    const unsigned d = x >= e ? x - e : e - x;
                    if (d < distance) distance = d;
                }
                far_nonzero += distance > reach;
            }
        }
        CHECK(edges == 10 && edges_seen == edges);
        CHECK(far_nonzero == 0);
    }

    /* Pooling only a few of the c-values reorders them (a quickselect):
     * the heatmap is of the c-values as computed, the same whatever topk. */
    char topk_dir[300];
    snprintf(topk_dir, sizeof(topk_dir), "%s/bands_topk", temp_root);
    r.options = "cambi_topk=0.01";
    CHECK(run_cambi(&r, topk_dir, &cap, NULL) == 0);
    char topk_path[512];
    heatmap_path(topk_path, sizeof(topk_path), topk_dir, 0, WIDTH, HEIGHT);
    size_t topk_size = 0;
    uint8_t *topk_bytes = read_file(topk_path, &topk_size);
    CHECK(bytes && topk_bytes && topk_size == size && !memcmp(bytes, topk_bytes, size));
    free(topk_bytes);
    remove_heatmaps(topk_dir);
    free(bytes);
    remove_heatmaps(dir);
}

/* Heatmaps are of the distorted picture only: a banded source with a flat
 * distorted picture writes zeros.  Frames --subsample skips are left as
 * holes (zeros), and the file ends with the last frame scored. */
static void test_source_and_subsample(void)
{
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/source", temp_root);
    Run r = { 2, 2, 4, WIDTH, HEIGHT, PATTERN_BANDS, PATTERN_BANDS, "full_ref=true" };
    r.dist = PATTERN_FLAT;
    LogCapture cap = { 0 };
    CHECK(run_cambi(&r, dir, &cap, NULL) == 0);
    char path[512];
    heatmap_path(path, sizeof(path), dir, 0, WIDTH, HEIGHT);
    size_t size = 0, nonzero = 0;
    uint8_t *bytes = read_file(path, &size);
    const size_t plane = (size_t)WIDTH * HEIGHT * 2;
    CHECK(bytes && size == 3 * plane); /* frames 0 and 2 scored, 1 a hole */
    for (size_t i = 0; bytes && i < size; i++) nonzero += bytes[i] != 0;
    CHECK(nonzero == 0);
    free(bytes);
    remove_heatmaps(dir);

    r.dist = PATTERN_BANDS;
    CHECK(run_cambi(&r, dir, &cap, NULL) == 0);
    bytes = read_file(path, &size);
    CHECK(bytes && size == 3 * plane);
    if (bytes && size == 3 * plane) {
        size_t in_frame[3] = { 0, 0, 0 };
        for (size_t i = 0; i < size; i++) in_frame[i / plane] += bytes[i] != 0;
        CHECK(in_frame[0] > 0 && in_frame[1] == 0 && in_frame[2] > 0);
    }
    free(bytes);
    remove_heatmaps(dir);
}

/* With cambi_high_res_speedup the first scale is already half size, but
 * the files keep libvmaf's names, from the encoding size. */
static void test_speedup_names(void)
{
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/speedup", temp_root);
    Run r = { 2, 0, 1, 1920, 1080, PATTERN_FLAT, PATTERN_FLAT, "cambi_high_res_speedup=1080" };
    LogCapture cap = { 0 };
    CHECK(run_cambi(&r, dir, &cap, NULL) == 0);
    unsigned name_w = 1920, name_h = 1080, w = 960, h = 540;
    for (unsigned scale = 0; scale < SCALES; scale++) {
        char path[512];
        heatmap_path(path, sizeof(path), dir, scale, name_w, name_h);
        struct stat st;
        CHECK(stat(path, &st) == 0 && (size_t)st.st_size == (size_t)w * h * 2);
        unlink(path);
        name_w = (name_w + 1) / 2;
        name_h = (name_h + 1) / 2;
        w = (w + 1) / 2;
        h = (h + 1) / 2;
    }
    rmdir(dir);
}

/* A directory that cannot be made, and a file that cannot grow (the
 * file-size limit stands for a full disk): the run fails with an error
 * code and a message naming the path, never a crash. */
static void test_write_errors(void)
{
    char file[300], dir[320];
    snprintf(file, sizeof(file), "%s/plain_file", temp_root);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    snprintf(dir, sizeof(dir), "%s/heatmaps", file);
    Run r = { 2, 0, 2, WIDTH, HEIGHT, PATTERN_BANDS, PATTERN_BANDS, NULL };
    LogCapture cap = { 0 };
    CHECK(run_cambi(&r, dir, &cap, NULL) == -ENOTDIR);
    CHECK(strstr(cap.text, "cannot create the heatmaps directory") != NULL &&
          strstr(cap.text, "plain_file/heatmaps") != NULL);
    unlink(file);

    /* The first scale of a frame is 114688 bytes: the limit stops the
     * first write part way. */
    snprintf(dir, sizeof(dir), "%s/limited", temp_root);
    struct rlimit before;
    CHECK(getrlimit(RLIMIT_FSIZE, &before) == 0);
    struct rlimit limited = before;
    limited.rlim_cur = 65536;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &limited) == 0);
    cap = (LogCapture){ 0 };
    const int err = run_cambi(&r, dir, &cap, NULL);
    CHECK(setrlimit(RLIMIT_FSIZE, &before) == 0);
    signal(SIGXFSZ, old_handler);
    CHECK(err == -EFBIG);
    CHECK(strstr(cap.text, "cannot write a frame to the heatmap") != NULL &&
          strstr(cap.text, "limited/cambi_heatmap_scale_0_256x224_16b.gray") != NULL &&
          strstr(cap.text, strerror(EFBIG)) != NULL);
    remove_heatmaps(dir);
}

int main(void)
{
    make_temp_root();
    test_files_and_threads();
    test_flat_and_bands();
    test_source_and_subsample();
    test_speedup_names();
    test_write_errors();
    CHECK(rmdir(temp_root) == 0); /* every test cleaned up after itself */
    return test_summary();
}
