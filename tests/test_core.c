/*
 * Unit tests of the core: option parsing and key naming, pooling, the
 * context's error paths, and results that do not depend on the thread
 * count.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "host_pages.h"
#include "option.h"
#include "log_capture.h"
#include "quale/quale.h"
#include "synth.h"
#include "test.h"
#include "thread_pool.h"

#include <stdatomic.h>

typedef struct FakeState {
    bool flag;
    int count;
    double gain;
    double plain;
} FakeState;

static const MetricOption fake_options[] = {
    { .name = "zz_flag", .alias = "f", .offset = offsetof(FakeState, flag),
      .type = QUALE_OPTION_BOOL, .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { .name = "count", .offset = offsetof(FakeState, count), .type = QUALE_OPTION_INT,
      .default_value.i = 3, .min = 0, .max = 10, .flags = OPTION_FEATURE_PARAM },
    { .name = "gain_limit", .alias = "egl", .offset = offsetof(FakeState, gain),
      .type = QUALE_OPTION_DOUBLE, .default_value.d = 100.0, .min = 1.0, .max = 1000.0,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "plain", .offset = offsetof(FakeState, plain), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.5, .min = 0, .max = 1 },
    { 0 },
};

static void test_options(void)
{
    FakeState s;
    char name[128], err[128];
    options_set_defaults(fake_options, &s);
    CHECK(!s.flag && s.count == 3 && s.gain == 100.0 && s.plain == 0.5);

    /* At defaults, keys keep their names. */
    CHECK(option_key_name(fake_options, &s, "integer_vif_scale0", name, sizeof(name)) == 0);
    CHECK_STR(name, "integer_vif_scale0");

    /* libvmaf's rule: "_alias_value" per changed feature parameter, sorted
     * by option name; bools as "_alias"; non-parameters never appear. */
    CHECK(option_set(option_find(fake_options, "gain_limit"), &s, "1.0", err, sizeof(err)) == 0);
    CHECK(option_key_name(fake_options, &s, "integer_vif_scale0", name, sizeof(name)) == 0);
    CHECK_STR(name, "integer_vif_scale0_egl_1");
    CHECK(option_set(option_find(fake_options, "zz_flag"), &s, "true", err, sizeof(err)) == 0);
    CHECK(option_set(option_find(fake_options, "count"), &s, "7", err, sizeof(err)) == 0);
    CHECK(option_set(option_find(fake_options, "plain"), &s, "0.25", err, sizeof(err)) == 0);
    CHECK(option_key_name(fake_options, &s, "adm2", name, sizeof(name)) == 0);
    CHECK_STR(name, "adm2_count_7_egl_1_f");
    CHECK(option_set(option_find(fake_options, "gain_limit"), &s, "1.2", err, sizeof(err)) == 0);
    CHECK(option_key_name(fake_options, &s, "adm2", name, sizeof(name)) == 0);
    CHECK_STR(name, "adm2_count_7_egl_1.2_f");

    /* Bad values name the option and leave the state alone. */
    CHECK(option_set(option_find(fake_options, "count"), &s, "11", err, sizeof(err)) == -ERANGE);
    CHECK(strstr(err, "count") != NULL && s.count == 7);
    CHECK(option_set(option_find(fake_options, "count"), &s, "seven", err, sizeof(err)) == -EINVAL);
    CHECK(option_set(option_find(fake_options, "zz_flag"), &s, "maybe", err, sizeof(err)) == -EINVAL);
    CHECK(option_set(option_find(fake_options, "gain_limit"), &s, "nan", err, sizeof(err)) == -EINVAL);
    CHECK(option_set(option_find(fake_options, "gain_limit"), &s, "", err, sizeof(err)) == -EINVAL);
    CHECK(option_find(fake_options, "nope") == NULL);
    CHECK(options_count(fake_options) == 4);

    FakeState t;
    options_set_defaults(fake_options, &t);
    CHECK(!options_equal(fake_options, &s, &t));
    options_set_defaults(fake_options, &s);
    CHECK(options_equal(fake_options, &s, &t));
}

typedef struct StringState {
    char *path;
    char *label;
    int level;
} StringState;

static const MetricOption string_options[] = {
    { .name = "path", .offset = offsetof(StringState, path), .type = QUALE_OPTION_STRING },
    { .name = "label", .alias = "lbl", .offset = offsetof(StringState, label),
      .type = QUALE_OPTION_STRING, .flags = OPTION_FEATURE_PARAM },
    { .name = "level", .alias = "lvl", .offset = offsetof(StringState, level),
      .type = QUALE_OPTION_INT, .default_value.i = 1, .min = 0, .max = 9,
      .flags = OPTION_FEATURE_PARAM },
    { 0 },
};

/* String options: the state owns a copy, replaced on a second set and
 * freed by options_free (ASan and valgrind see any leak or double free). */
static void test_string_options(void)
{
    StringState a, b;
    char name[128], err[128];
    options_set_defaults(string_options, &a);
    options_set_defaults(string_options, &b);
    CHECK(a.path == NULL && a.label == NULL && option_is_default(&string_options[0], &a));
    CHECK(options_equal(string_options, &a, &b));

    char value[] = "/some/dir";
    CHECK(option_set(option_find(string_options, "path"), &a, value, err, sizeof(err)) == 0);
    CHECK(a.path != NULL && a.path != value);
    value[1] = 'X'; /* the state kept its own copy */
    CHECK_STR(a.path, "/some/dir");
    CHECK(!option_is_default(&string_options[0], &a));
    CHECK(!options_equal(string_options, &a, &b));
    CHECK(option_set(option_find(string_options, "path"), &b, "/some/dir", err, sizeof(err)) == 0);
    CHECK(options_equal(string_options, &a, &b));
    CHECK(option_set(option_find(string_options, "path"), &b, "/other", err, sizeof(err)) == 0);
    CHECK_STR(b.path, "/other");
    CHECK(!options_equal(string_options, &a, &b));

    /* A string that is not a feature parameter never renames keys; one that
     * is appears as "_alias_value". */
    CHECK(option_key_name(string_options, &a, "k", name, sizeof(name)) == 0);
    CHECK_STR(name, "k");
    CHECK(option_set(option_find(string_options, "label"), &a, "x1", err, sizeof(err)) == 0);
    CHECK(option_set(option_find(string_options, "level"), &a, "3", err, sizeof(err)) == 0);
    CHECK(option_key_name(string_options, &a, "k", name, sizeof(name)) == 0);
    CHECK_STR(name, "k_lbl_x1_lvl_3");

    options_free(string_options, &a);
    options_free(string_options, &b);
    CHECK(a.path == NULL && a.label == NULL && b.path == NULL);
    CHECK(a.level == 3); /* other options are left as they are */
    options_free(string_options, &a); /* twice is harmless */

    /* Aliases name keys, not options: option_find does not take them, and
     * option_find_alias says whose they are. */
    CHECK(option_find(string_options, "lvl") == NULL);
    CHECK(option_find_alias(string_options, "lvl") == &string_options[2]);
    CHECK(option_find_alias(string_options, "level") == NULL);
    CHECK(option_find_alias(string_options, "path") == NULL);
}

static void test_pooling(void)
{
    Collector *c;
    unsigned id, other;
    double v;
    CHECK(collector_open(&c) == 0);
    CHECK(collector_declare(c, "k", NULL, KEY_PHASE_FRAME, &id) == 0);
    CHECK(collector_declare(c, "other", NULL, KEY_PHASE_FRAME, &other) == 0);
    unsigned again;
    CHECK(collector_declare(c, "k", NULL, KEY_PHASE_FRAME, &again) == 0 && again == id);
    const double x[5] = { 1.0, 2.0, 4.0, 8.0, 0.5 };
    for (unsigned i = 0; i < 5; i++) CHECK(collector_put(c, id, i, x[i]) == 0);

    CHECK(collector_pool(c, id, QUALE_POOL_MEAN, 5, 0, &v) == 0 && v == 15.5 / 5);
    CHECK(collector_pool(c, id, QUALE_POOL_MIN, 5, 0, &v) == 0 && v == 0.5);
    CHECK(collector_pool(c, id, QUALE_POOL_MAX, 5, 0, &v) == 0 && v == 8.0);
    double inv = 0;
    for (unsigned i = 0; i < 5; i++) inv += 1.0 / (x[i] + 1.0);
    CHECK(collector_pool(c, id, QUALE_POOL_HARMONIC_MEAN, 5, 0, &v) == 0 && v == 5 / inv - 1.0);
    /* --subsample 2 pools frames 0, 2 and 4. */
    CHECK(collector_pool(c, id, QUALE_POOL_MEAN, 5, 2, &v) == 0 && v == (1.0 + 4.0 + 0.5) / 3);
    CHECK(collector_pool(c, id, QUALE_POOL_MAX, 5, 2, &v) == 0 && v == 4.0);
    /* A range of frames: 1 to 3, then with --subsample 2 (frame 2 only). */
    CHECK(collector_pool_range(c, id, QUALE_POOL_MEAN, 1, 4, 0, &v) == 0 &&
          v == (2.0 + 4.0 + 8.0) / 3);
    CHECK(collector_pool_range(c, id, QUALE_POOL_MIN, 1, 4, 2, &v) == 0 && v == 4.0);
    CHECK(collector_pool_range(c, id, QUALE_POOL_MEAN, 3, 3, 0, &v) == -EINVAL);
    CHECK(collector_pool_range(c, id, QUALE_POOL_MEAN, 3, 4, 2, &v) == -ENOENT);
    /* A scored frame without the key: no pooled value. */
    CHECK(collector_pool(c, other, QUALE_POOL_MEAN, 5, 0, &v) == -ENOENT);
    CHECK(collector_get(c, id, 99, &v) == -ENOENT);
    /* Growth far past the first capacity keeps earlier values. */
    CHECK(collector_put(c, other, 5000, 3.0) == 0);
    CHECK(collector_get(c, id, 3, &v) == 0 && v == 8.0);
    CHECK(collector_get(c, other, 5000, &v) == 0 && v == 3.0);
    CHECK(collector_frame_span(c) == 5001);
    CHECK(collector_set_aggregate(c, "apsnr_y", 40.0) == 0);
    CHECK(collector_set_aggregate(c, "apsnr_y", 41.0) == 0);
    const char *name;
    CHECK(collector_aggregate_count(c) == 1);
    collector_aggregate(c, 0, &name, &v);
    CHECK(!strcmp(name, "apsnr_y") && v == 41.0);
    collector_close(&c);
    CHECK(c == NULL);
}

static QualeContext *open_quiet(unsigned threads, unsigned subsample, LogCapture *cap)
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = threads;
    s.subsample = subsample;
    s.log = capture_log;
    s.log_cookie = cap;
    QualeContext *ctx = NULL;
    CHECK(quale_open(&ctx, &s) == 0);
    return ctx;
}

static int send_synthetic(QualeContext *ctx, const QualeVideoFormat *f, unsigned index)
{
    QualePicture ref, dist;
    if (quale_picture_alloc(&ref, f) || quale_picture_alloc(&dist, f)) return -ENOMEM;
    synth_reference(&ref, index);
    synth_distort(&ref, &dist, index, 2);
    return quale_send_pictures(ctx, &ref, &dist);
}

static void test_errors(void)
{
    LogCapture cap = { 0 };
    QualeContext *ctx = open_quiet(2, 0, &cap);
    CHECK(quale_use_metric(ctx, "no_such_metric") == -ENOENT);
    CHECK(strstr(cap.last, "no_such_metric") != NULL);
    CHECK(quale_use_metric(ctx, "psnr=bogus=1") == -EINVAL);
    CHECK(strstr(cap.last, "bogus") != NULL && strstr(cap.last, "enable_chroma") != NULL);
    CHECK(quale_use_metric(ctx, "psnr=enable_chroma") == -EINVAL);
    CHECK(quale_use_metric(ctx, "psnr=min_sse=-1") == -ERANGE);
    CHECK(quale_use_metric(ctx, "=x") == -EINVAL);
    /* libvmaf sets options by name only (it skips "egl=1.5" and keeps the
     * default): an alias is refused, with the name to use. */
    CHECK(quale_use_metric(ctx, "vif=egl=1.5") == -EINVAL);
    CHECK(strstr(cap.last, "'egl'") != NULL && strstr(cap.last, "vif_enhn_gain_limit=1.5") != NULL);
    CHECK(quale_use_metric(ctx, "cambi=cmxv=5:cambi_max_val=3") == -EINVAL);
    CHECK(strstr(cap.last, "cambi_max_val") != NULL);
    CHECK(quale_use_metric(ctx, "cambi=cambi_max_val=3:cmxv=5") == -EINVAL);
    CHECK(quale_use_metric(ctx, "vif=vif_enhn_gain_limit=1.5") == 0);
    /* String options are copied into each request; the same path twice is
     * one instance, and nothing is written before the first frame. */
    CHECK(quale_use_metric(ctx, "cambi=heatmaps_path=/nonexistent/q") == 0);
    CHECK(quale_use_metric(ctx, "cambi=heatmaps_path=/nonexistent/q") == 0);
    CHECK(quale_use_metric(ctx, "cambi=heatmaps_path=/nonexistent/r:window_size=33") == 0);
    CHECK(quale_use_metric(ctx, "cambi=heatmaps_path=/nonexistent/s:window_size=1") == -ERANGE);
    /* Flushing before any frame is an error, with a message. */
    CHECK(quale_flush(ctx) == -ENODATA);
    quale_close(&ctx);
    CHECK(ctx == NULL);

    ctx = open_quiet(2, 0, &cap);
    CHECK(quale_use_metric(ctx, "psnr") == 0);
    const QualeVideoFormat a = { QUALE_CHROMA_420, 8, 64, 48 };
    const QualeVideoFormat b = { QUALE_CHROMA_420, 10, 64, 48 };
    QualePicture ref, dist;
    CHECK(quale_picture_alloc(&ref, &a) == 0 && quale_picture_alloc(&dist, &b) == 0);
    CHECK(quale_send_pictures(ctx, &ref, &dist) == -EINVAL);
    CHECK(strstr(cap.last, "differ") != NULL);
    CHECK(ref.buffer == NULL && dist.buffer == NULL); /* references were dropped */
    CHECK(send_synthetic(ctx, &a, 0) == 0);
    CHECK(send_synthetic(ctx, &b, 1) == -EINVAL); /* the first frame fixed the format */
    CHECK(strstr(cap.last, "first frame") != NULL);
    /* Metrics cannot be added once frames flow. */
    CHECK(quale_use_metric(ctx, "psnr=enable_mse=true") == -EBUSY);
    quale_close(&ctx);

    QualeVideoFormat bad = { QUALE_CHROMA_420, 17, 64, 48 };
    CHECK(quale_picture_alloc(&ref, &bad) == -EINVAL);
    bad.bitdepth = 8;
    bad.width = 0;
    CHECK(quale_picture_alloc(&ref, &bad) == -EINVAL);
    bad.width = 40000;
    CHECK(quale_picture_alloc(&ref, &bad) == -EINVAL);

    QualeSettings s;
    quale_settings_default(&s);
    s.backend = QUALE_BACKEND_CUDA;
    s.log = capture_log;
    s.log_cookie = &cap;
    if (!quale_backend_built(QUALE_BACKEND_CUDA)) {
        CHECK(quale_open(&ctx, &s) == -ENOSYS);
        CHECK(strstr(cap.last, "cuda") != NULL && strstr(cap.last, "not available") != NULL);
    }
}

static void test_picture_planes(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 10, 17, 9 };
    QualePicture p, q;
    CHECK(quale_picture_alloc(&p, &f) == 0);
    CHECK(p.plane_count == 3);
    CHECK(p.plane_width[1] == 9 && p.plane_height[1] == 5);
    CHECK(p.stride[0] % 64 == 0 && p.stride[0] >= 34);
    CHECK(quale_picture_ref(&q, &p) == 0 && q.data[0] == p.data[0]);
    quale_picture_unref(&p);
    CHECK(p.data[0] == NULL);
    ((uint16_t *)q.data[0])[0] = 1023; /* still alive through q */
    quale_picture_unref(&q);

    const QualeVideoFormat mono = { QUALE_CHROMA_400, 8, 5, 3 };
    CHECK(quale_picture_alloc(&p, &mono) == 0 && p.plane_count == 1 && p.data[1] == NULL);
    quale_picture_unref(&p);
    const QualeVideoFormat f422 = { QUALE_CHROMA_422, 8, 5, 3 };
    CHECK(quale_picture_alloc(&p, &f422) == 0);
    CHECK(p.plane_width[2] == 3 && p.plane_height[2] == 3);
    quale_picture_unref(&p);
}

/* Runs psnr (with its aggregate) over synthetic frames; returns the context. */
static QualeContext *run_psnr(unsigned threads, unsigned subsample, const QualeVideoFormat *f,
                              unsigned frames)
{
    LogCapture cap = { 0 };
    QualeContext *ctx = open_quiet(threads, subsample, &cap);
    CHECK(quale_use_metric(ctx, "psnr=enable_mse=true:enable_apsnr=true") == 0);
    for (unsigned i = 0; i < frames; i++) CHECK(send_synthetic(ctx, f, i) == 0);
    CHECK(quale_flush(ctx) == 0);
    return ctx;
}

static void test_thread_independence(void)
{
    const QualeVideoFormat formats[] = {
        { QUALE_CHROMA_420, 8, 97, 61 },
        { QUALE_CHROMA_444, 12, 64, 40 },
    };
    for (unsigned fi = 0; fi < 2; fi++) {
        QualeContext *one = run_psnr(1, 0, &formats[fi], 23);
        QualeContext *many = run_psnr(5, 0, &formats[fi], 23);
        CHECK(quale_feature_count(one) == 6 && quale_feature_count(many) == 6);
        unsigned same = 0;
        for (unsigned k = 0; k < quale_feature_count(one); k++) {
            const char *key = quale_feature_name(one, k);
            CHECK_STR(key, quale_feature_name(many, k)); /* same order too */
            for (unsigned i = 0; i < 23; i++) {
                double a, b;
                CHECK(quale_feature_value(one, key, i, &a) == 0);
                CHECK(quale_feature_value(many, key, i, &b) == 0);
                same += memcmp(&a, &b, sizeof(a)) == 0;
            }
        }
        CHECK(same == 6 * 23);
        quale_close(&one);
        quale_close(&many);
    }

    /* --subsample 3: psnr runs on every frame (as libvmaf's does), but only
     * frames 0, 3, 6, ... are pooled. */
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 32, 32 };
    QualeContext *ctx = run_psnr(3, 3, &f, 10);
    double v, sum = 0;
    for (unsigned i = 0; i < 10; i += 3) {
        CHECK(quale_feature_value(ctx, "psnr_y", i, &v) == 0);
        sum += v;
    }
    CHECK(quale_feature_pooled(ctx, "psnr_y", QUALE_POOL_MEAN, &v) == 0 && v == sum / 4);
    quale_close(&ctx);
}

static void test_picture_pool(void)
{
    LogCapture cap = { 0 };
    QualeContext *ctx = open_quiet(1, 0, &cap);
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 64, 36 };
    QualePicture a, b, c;
    CHECK(quale_context_alloc_picture(ctx, &a, &f) == 0);
    void *memory = a.data[0];
    quale_picture_unref(&a);
    /* Released memory is handed out again: no allocation per frame. */
    CHECK(quale_context_alloc_picture(ctx, &b, &f) == 0 && b.data[0] == memory);
    CHECK(quale_context_alloc_picture(ctx, &c, &f) == 0 && c.data[0] != memory);
    /* Another format gets its own memory. */
    const QualeVideoFormat g = { QUALE_CHROMA_444, 10, 64, 36 };
    quale_picture_unref(&c);
    CHECK(quale_context_alloc_picture(ctx, &c, &g) == 0 && c.plane_width[1] == 64);
    CHECK(quale_context_alloc_picture(ctx, &a, &(QualeVideoFormat){ QUALE_CHROMA_420, 8, 0, 36 }) == -EINVAL);
    /* Pictures outlive the context that made them. */
    quale_close(&ctx);
    memset(b.data[0], 7, (size_t)b.stride[0] * b.plane_height[0]);
    ((uint16_t *)c.data[2])[0] = 1023;
    quale_picture_unref(&b);
    quale_picture_unref(&c);
}

/* Host memory for GPU pictures (host_pages.h): aligned as asked, large
 * blocks on a huge page, whole pages, zeroed, writable; impossible asks
 * refused. */
static void test_host_pages(void)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t sizes[] = { 1, 4096, 64 * 36 * 3 / 2, HOST_PAGES_HUGE - 1, HOST_PAGES_HUGE,
                             3840 * 2160 * 3 / 2 };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (size_t alignment = 0; alignment <= 65536; alignment = alignment ? 16 * alignment : 4096) {
            size_t mapped = 0;
            uint8_t *p = host_pages_map(sizes[i], alignment, &mapped);
            const size_t unit = alignment > page ? alignment : page;
            const size_t start = mapped >= HOST_PAGES_HUGE ? HOST_PAGES_HUGE : unit;
            CHECK(p && mapped >= sizes[i] && mapped % unit == 0 && mapped - sizes[i] < unit &&
                  (uintptr_t)p % start == 0);
            if (!p) continue;
            CHECK(p[0] == 0 && p[mapped - 1] == 0);
            memset(p, 0x5a, mapped);
            CHECK(p[mapped / 2] == 0x5a);
            host_pages_unmap(p, mapped);
        }
    }
    size_t mapped = 0;
    CHECK(host_pages_map(0, 0, &mapped) == NULL);
    CHECK(host_pages_map(SIZE_MAX - 1, 0, &mapped) == NULL);
    CHECK(host_pages_map(4096, 3 * page, &mapped) == NULL);      /* not a divisor of a huge page */
    CHECK(host_pages_map(4096, 2 * HOST_PAGES_HUGE, &mapped) == NULL);
    host_pages_unmap(NULL, 0); /* nothing to do */
}

/* The catalogue lists a string option with its type and no default. */
static void test_catalogue(void)
{
    unsigned found = 0;
    for (unsigned m = 0; m < quale_metric_count(); m++) {
        QualeMetricInfo info;
        CHECK(quale_metric_info(m, &info) == 0);
        for (unsigned o = 0; o < info.option_count; o++) {
            QualeOptionInfo opt;
            CHECK(quale_metric_option(m, o, &opt) == 0);
            if (opt.type != QUALE_OPTION_STRING) continue;
            found++;
            CHECK_STR(info.name, "cambi");
            CHECK_STR(opt.name, "heatmaps_path");
            CHECK(opt.default_value == 0 && opt.choices == NULL && opt.help && *opt.help);
        }
    }
    CHECK(found == 1);
}

/* ---- task groups: every task exactly once, from frames and from tasks ---- */

enum { GROUP_TASKS = 37, GROUP_JOBS = 24 };

typedef struct GroupJob {
    ThreadPool *pool;
    atomic_uint runs[GROUP_TASKS][GROUP_TASKS]; /* [outer task][inner task] */
    atomic_uint outer[GROUP_TASKS];
    unsigned workers;
    atomic_uint bad_worker;
} GroupJob;

typedef struct InnerArg {
    GroupJob *job;
    unsigned outer;
} InnerArg;

static void inner_task(void *arg, unsigned task, unsigned worker)
{
    InnerArg *a = arg;
    if (worker >= a->job->workers) atomic_fetch_add(&a->job->bad_worker, 1);
    atomic_fetch_add(&a->job->runs[a->outer][task], 1);
}

static void outer_task(void *arg, unsigned task, unsigned worker)
{
    GroupJob *job = arg;
    atomic_fetch_add(&job->outer[task], 1);
    /* a group inside a group, as a metric's bands inside a frame's metrics */
    InnerArg a = { job, task };
    thread_pool_run_tasks(job->pool, worker, GROUP_TASKS, inner_task, &a,
                          task % 2 ? THREAD_TASKS_WHILE_WAITING : 0);
}

static void group_frame(void *arg, unsigned worker)
{
    GroupJob *job = arg;
    thread_pool_run_tasks(job->pool, worker, GROUP_TASKS, outer_task, job, 0);
}

static void test_task_groups(void)
{
    for (unsigned workers = 1; workers <= 5; workers += 2) {
        ThreadPool *pool = NULL;
        CHECK(thread_pool_open(&pool, workers) == 0);
        if (!pool) continue;
        GroupJob *jobs = calloc(GROUP_JOBS, sizeof(*jobs));
        CHECK(jobs != NULL);
        if (!jobs) {
            thread_pool_close(&pool);
            continue;
        }
        /* many frames at once, each a group of groups */
        for (unsigned j = 0; j < GROUP_JOBS; j++) {
            jobs[j].pool = pool;
            jobs[j].workers = workers;
            CHECK(thread_pool_submit(pool, group_frame, &jobs[j]) == 0);
        }
        thread_pool_wait(pool);
        bool once = true;
        for (unsigned j = 0; j < GROUP_JOBS; j++) {
            CHECK(atomic_load(&jobs[j].bad_worker) == 0);
            for (unsigned o = 0; o < GROUP_TASKS; o++) {
                once &= atomic_load(&jobs[j].outer[o]) == 1;
                for (unsigned i = 0; i < GROUP_TASKS; i++)
                    once &= atomic_load(&jobs[j].runs[o][i]) == 1;
            }
        }
        CHECK(once);
        free(jobs);
        thread_pool_close(&pool);
    }
}

/* A worker waiting on its group runs the tasks of another worker's group
 * that allows it (a metric's bands, on the worker whose other metric of
 * the frame is done), and never those of one that does not. */
typedef struct WaitingHelp {
    ThreadPool *pool;
    unsigned flags;
    atomic_uint outer_started;
    atomic_uint inner_worker[2];
    atomic_uint inner_ran;
} WaitingHelp;

/* Spins until *v reaches want, for at most about ms milliseconds. */
static bool wait_for(atomic_uint *v, unsigned want, unsigned ms)
{
    for (unsigned i = 0; i < ms * 10 && atomic_load(v) < want; i++) {
        struct timespec t = { 0, 100000 };
        nanosleep(&t, NULL);
    }
    return atomic_load(v) >= want;
}

static void help_inner(void *arg, unsigned task, unsigned worker)
{
    WaitingHelp *h = arg;
    atomic_store(&h->inner_worker[task], worker);
    atomic_fetch_add(&h->inner_ran, 1);
    /* task 0 waits for task 1 to be run by someone else meanwhile */
    if (task == 0) wait_for(&h->inner_ran, 2, h->flags ? 5000 : 200);
}

static void help_outer(void *arg, unsigned task, unsigned worker)
{
    WaitingHelp *h = arg;
    atomic_fetch_add(&h->outer_started, 1);
    /* both outer tasks on their own workers; then task 0's worker waits */
    if (task == 0) {
        wait_for(&h->outer_started, 2, 5000);
        return;
    }
    thread_pool_run_tasks(h->pool, worker, 2, help_inner, h, h->flags);
}

static void help_job(void *arg, unsigned worker)
{
    WaitingHelp *h = arg;
    thread_pool_run_tasks(h->pool, worker, 2, help_outer, h, 0);
}

static void test_help_while_waiting(void)
{
    static const unsigned flag_sets[] = { 0, THREAD_TASKS_WHILE_WAITING };
    for (unsigned i = 0; i < 2; i++) {
        const unsigned flags = flag_sets[i];
        ThreadPool *pool = NULL;
        CHECK(thread_pool_open(&pool, 2) == 0);
        if (!pool) continue;
        WaitingHelp h = { .pool = pool, .flags = flags };
        CHECK(thread_pool_submit(pool, help_job, &h) == 0);
        thread_pool_wait(pool);
        CHECK(atomic_load(&h.outer_started) == 2 && atomic_load(&h.inner_ran) == 2);
        /* with the flag, the inner group's two tasks ran on both workers */
        const bool shared = atomic_load(&h.inner_worker[0]) != atomic_load(&h.inner_worker[1]);
        CHECK(shared == (flags != 0));
        thread_pool_close(&pool);
    }
}

int main(void)
{
    test_options();
    test_string_options();
    test_catalogue();
    test_pooling();
    test_errors();
    test_picture_planes();
    test_picture_pool();
    test_host_pages();
    test_thread_independence();
    test_task_groups();
    test_help_while_waiting();
    return test_summary();
}
