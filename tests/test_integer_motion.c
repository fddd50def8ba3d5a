/*
 * Tests of integer motion ("motion") through the public API, against a
 * reference written straight from libvmaf's definition: every tap of the
 * 5x5 blur read through libvmaf's mirror, floor divisions instead of
 * shifts, 64-bit sums, and the end-of-stream rules of its flush.
 *
 * Covers awkward sizes (3x3 up), every bit depth, samples above the bit
 * depth, the thread count, every option and its key suffix, --subsample,
 * and pictures too small for the blur.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quale/quale.h"
#include "test.h"

#define MAX_FRAMES 12
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static const int64_t taps[5] = { 3571, 16004, 26386, 16004, 3571 };

/* ---- pictures ------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

enum Pattern { PATTERN_NOISE, PATTERN_EXTREME, PATTERN_DRIFT, PATTERN_WIDE };

static unsigned sample_at(const QualePicture *p, unsigned x, unsigned y)
{
    const uint8_t *row = (const uint8_t *)p->data[0] + (ptrdiff_t)y * p->stride[0];
    return p->format.bitdepth > 8 ? ((const uint16_t *)row)[x] : row[x];
}

static void fill(QualePicture *p, enum Pattern pattern, unsigned frame)
{
    const unsigned max = (1u << p->format.bitdepth) - 1;
    for (unsigned plane = 0; plane < p->plane_count; plane++) {
        for (unsigned y = 0; y < p->plane_height[plane]; y++) {
            uint8_t *row = (uint8_t *)p->data[plane] + (ptrdiff_t)y * p->stride[plane];
            for (unsigned x = 0; x < p->plane_width[plane]; x++) {
                unsigned v;
                switch (pattern) {
                case PATTERN_EXTREME: v = (rng() & 1) ? max : 0; break;
                case PATTERN_DRIFT: v = ((x + 3 * frame) * 37 + y * 11 + (rng() % 5)) % (max + 1); break;
                /* above the bit depth: what the API does not forbid */
                case PATTERN_WIDE: v = rng() & 0xffff; break;
                default: v = rng() % (max + 1); break;
                }
                if (p->format.bitdepth > 8) ((uint16_t *)row)[x] = (uint16_t)v;
                else row[x] = (uint8_t)v;
            }
        }
    }
}

typedef struct Video {
    QualeVideoFormat format;
    unsigned frames;
    QualePicture ref[MAX_FRAMES], dist[MAX_FRAMES];
} Video;

static int video_make(Video *v, unsigned w, unsigned h, unsigned bitdepth, unsigned frames,
                      enum Pattern pattern)
{
    memset(v, 0, sizeof(*v));
    v->format = (QualeVideoFormat){
        .chroma = (w % 2 || h % 2) ? QUALE_CHROMA_444 : QUALE_CHROMA_420,
        .bitdepth = bitdepth, .width = w, .height = h,
    };
    v->frames = frames;
    for (unsigned i = 0; i < frames; i++) {
        if (quale_picture_alloc(&v->ref[i], &v->format) ||
            quale_picture_alloc(&v->dist[i], &v->format))
            return -ENOMEM;
        fill(&v->ref[i], pattern, i);
        fill(&v->dist[i], PATTERN_NOISE, i);
    }
    return 0;
}

static void video_free(Video *v)
{
    for (unsigned i = 0; i < v->frames; i++) {
        quale_picture_unref(&v->ref[i]);
        quale_picture_unref(&v->dist[i]);
    }
}

/* ---- the reference ------------------------------------------------------- */

static int mirror(int i, int n)
{
    if (i < 0) return -i;
    if (i >= n) return 2 * n - i - 2;
    return i;
}

static int64_t floor_div(int64_t a, int64_t d)
{
    return a >= 0 ? a / d : -((-a + d - 1) / d);
}

static uint64_t reference_sad(const QualePicture *a, const QualePicture *b)
{
    const int w = (int)a->format.width, h = (int)a->format.height;
    const unsigned bd = a->format.bitdepth;
    int64_t *v = malloc(sizeof(*v) * (size_t)w * h);
    if (!v) return 0;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            int64_t acc = 0;
            for (int k = 0; k < 5; k++) {
                const int r = mirror(y - 2 + k, h);
                acc += taps[k] * ((int64_t)sample_at(a, (unsigned)x, (unsigned)r) -
                                  sample_at(b, (unsigned)x, (unsigned)r));
            }
            v[(size_t)y * w + x] = floor_div(acc + ((int64_t)1 << (bd - 1)), (int64_t)1 << bd);
        }
    }
    uint64_t sad = 0;
    for (int y = 0; y < h; y++) {
        uint32_t row = 0; /* libvmaf's 32-bit row sum */
        for (int x = 0; x < w; x++) {
            int64_t acc = 0;
            for (int k = 0; k < 5; k++) acc += taps[k] * v[(size_t)y * w + mirror(x - 2 + k, w)];
            const int64_t u = floor_div(acc + 32768, 65536);
            row += (uint32_t)(u < 0 ? -u : u);
        }
        sad += row;
    }
    free(v);
    return sad;
}

typedef struct Options {
    bool force_zero, five_frame_window, moving_average, debug;
    double blend_factor, blend_offset, fps_weight, max_val;
} Options;

static const Options defaults = {
    .blend_factor = 1.0, .blend_offset = 40.0, .fps_weight = 1.0, .max_val = 10000.0,
};

static double min2(double a, double b)
{
    return a < b ? a : b;
}

static double blend(double m, const Options *o)
{
    return m * o->blend_factor + (1 - o->blend_factor) * min2(o->blend_offset, m);
}

typedef struct Expected {
    double sad[MAX_FRAMES], motion2[MAX_FRAMES], motion3[MAX_FRAMES];
} Expected;

static void reference_scores(const Video *v, const Options *o, Expected *e)
{
    const unsigned first = o->five_frame_window ? 2 : 1, n = v->frames;
    const unsigned w = v->format.width, h = v->format.height;
    for (unsigned i = 0; i < n; i++) {
        e->sad[i] = 0.;
        if (o->force_zero || i < first) continue;
        const uint64_t sad = reference_sad(&v->ref[i - first], &v->ref[i]);
        e->sad[i] = min2((double)sad / 256. / (w * h) * o->fps_weight, o->max_val);
    }
    const double stamp = n > first ? min2(blend(e->sad[first], o), o->max_val) : 0.;
    double prev = 0.;
    for (unsigned i = 0; i < n; i++) {
        if (i < first) {
            e->motion2[i] = 0.;
            e->motion3[i] = prev = stamp;
            continue;
        }
        if (i + 1 == n) e->motion2[i] = e->sad[i];
        else if (!o->five_frame_window) e->motion2[i] = min2(e->sad[i], e->sad[i + 1]);
        else if (i >= 3) e->motion2[i] = min2(e->sad[i - 1], e->sad[i + 1]);
        else e->motion2[i] = e->sad[i + 1];
        const double processed = min2(blend(e->motion2[i], o), o->max_val);
        e->motion3[i] = o->moving_average ? (processed + prev) / 2.0 : processed;
        prev = processed;
    }
}

/* ---- running quale ------------------------------------------------------- */

static char last_error[256];

static void keep_errors(void *cookie, enum QualeLogLevel level, const char *message)
{
    (void)cookie;
    /* the first error: the metric's own, before the context's summary */
    if (level == QUALE_LOG_ERROR && !last_error[0])
        snprintf(last_error, sizeof(last_error), "%s", message);
}

/* Scores the video; returns the first error of send or flush. */
static int run(QualeContext **ctx, const Video *v, const char *spec, unsigned threads,
               unsigned subsample)
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = threads;
    s.subsample = subsample;
    s.log = keep_errors;
    last_error[0] = '\0';
    int err = quale_open(ctx, &s);
    if (err) return err;
    if ((err = quale_use_metric(*ctx, spec))) return err;
    for (unsigned i = 0; i < v->frames && !err; i++) {
        QualePicture r, d;
        quale_picture_ref(&r, &v->ref[i]);
        quale_picture_ref(&d, &v->dist[i]);
        err = quale_send_pictures(*ctx, &r, &d);
    }
    const int flush_err = quale_flush(*ctx);
    return err ? err : flush_err;
}

static bool same(const QualeContext *ctx, const char *key, unsigned frame, double want)
{
    double got;
    if (quale_feature_value(ctx, key, frame, &got)) {
        fprintf(stderr, "  %s missing at frame %u\n", key, frame);
        return false;
    }
    if (got != want) {
        fprintf(stderr, "  %s frame %u: %.17g, expected %.17g\n", key, frame, got, want);
        return false;
    }
    return true;
}

/* Runs spec with 1 and 3 threads; every key of every frame must be the
 * reference's, to the bit.  suffix: the key suffix that spec's options give. */
static void check_run(const Video *v, const char *spec, const Options *o, const char *suffix,
                      const char *label)
{
    Expected e;
    reference_scores(v, o, &e);
    char sad_key[128], motion_key[128], motion2_key[128], motion3_key[128];
    snprintf(sad_key, sizeof(sad_key), "VMAF_integer_feature_motion_sad_score%s", suffix);
    snprintf(motion_key, sizeof(motion_key), "integer_motion%s", suffix);
    snprintf(motion2_key, sizeof(motion2_key), "integer_motion2%s", suffix);
    snprintf(motion3_key, sizeof(motion3_key), "integer_motion3%s", suffix);

    static const unsigned thread_counts[] = { 1, 3 };
    for (unsigned t = 0; t < 2; t++) {
        QualeContext *ctx = NULL;
        const int err = run(&ctx, v, spec, thread_counts[t], 0);
        bool ok = !err;
        for (unsigned i = 0; ok && i < v->frames; i++) {
            ok = same(ctx, sad_key, i, e.sad[i]) && same(ctx, motion2_key, i, e.motion2[i]) &&
                 same(ctx, motion3_key, i, e.motion3[i]);
            if (ok && o->debug) ok = same(ctx, motion_key, i, e.sad[i]);
        }
        double unused;
        if (ok && !o->debug) ok = quale_feature_value(ctx, motion_key, 0, &unused) != 0;
        if (!ok)
            fprintf(stderr, "  %s, %s, %u threads: err %d %s\n", label, spec,
                    thread_counts[t], err, last_error);
        CHECK(ok);
        quale_close(&ctx);
    }
}

/* ---- tests --------------------------------------------------------------- */

static void test_sizes_and_depths(void)
{
    static const unsigned sizes[][2] = {
        { 3, 3 }, { 4, 5 }, { 5, 3 }, { 3, 8 }, { 17, 9 }, { 33, 17 }, { 70, 40 },
    };
    static const unsigned depths[] = { 8, 9, 10, 12, 16 };
    static const enum Pattern patterns[] = { PATTERN_NOISE, PATTERN_EXTREME, PATTERN_DRIFT };
    for (unsigned s = 0; s < COUNT_OF(sizes); s++)
        for (unsigned d = 0; d < COUNT_OF(depths); d++)
            for (unsigned p = 0; p < COUNT_OF(patterns); p++) {
                Video v;
                CHECK(video_make(&v, sizes[s][0], sizes[s][1], depths[d], 5, patterns[p]) == 0);
                char label[64];
                snprintf(label, sizeof(label), "%ux%u %u-bit pattern %u", sizes[s][0],
                         sizes[s][1], depths[d], p);
                check_run(&v, "motion", &defaults, "", label);
                video_free(&v);
            }
}

static void test_samples_above_the_bit_depth(void)
{
    /* libvmaf's 64-bit sums give every uint16_t sample a defined score. */
    static const unsigned depths[] = { 9, 10, 12, 15 };
    for (unsigned d = 0; d < COUNT_OF(depths); d++) {
        Video v;
        CHECK(video_make(&v, 37, 11, depths[d], 4, PATTERN_WIDE) == 0);
        check_run(&v, "motion", &defaults, "", "wide samples");
        video_free(&v);
    }
}

static void test_options(void)
{
    Video v;
    CHECK(video_make(&v, 24, 14, 8, 9, PATTERN_DRIFT) == 0);

    Options o = defaults;
    o.debug = true; /* not a feature parameter: no suffix */
    check_run(&v, "motion=debug=true", &o, "", "debug");

    o = defaults;
    o.force_zero = true;
    check_run(&v, "motion=motion_force_zero=true", &o, "_force_0", "force_zero");

    o = defaults;
    o.five_frame_window = true;
    check_run(&v, "motion=motion_five_frame_window=true", &o, "_mffw", "five-frame window");

    o.moving_average = true;
    check_run(&v, "motion=motion_five_frame_window=true:motion_moving_average=true", &o,
              "_mffw_mma", "five-frame window, moving average");

    o = defaults;
    o.moving_average = true;
    o.blend_factor = 0.5;
    o.blend_offset = 1.0;
    check_run(&v, "motion=motion_moving_average=true:motion_blend_factor=0.5:motion_blend_offset=1",
              &o, "_mbf_0.5_mbo_1_mma", "blend, moving average");

    o = defaults;
    o.fps_weight = 2.5;
    o.max_val = 3.0;
    o.debug = true;
    check_run(&v, "motion=motion_fps_weight=2.5:motion_max_val=3:debug=true", &o,
              "_mfw_2.5_mmxv_3", "fps weight, max value");
    video_free(&v);

    /* A stream that stops at the first scored frame, or before it. */
    for (unsigned frames = 1; frames <= 4; frames++) {
        CHECK(video_make(&v, 9, 7, 10, frames, PATTERN_NOISE) == 0);
        check_run(&v, "motion", &defaults, "", "short stream");
        o = defaults;
        o.five_frame_window = true;
        check_run(&v, "motion=motion_five_frame_window=true", &o, "_mffw", "short stream, mffw");
        video_free(&v);
    }

    /* Out-of-range values are refused by name. */
    QualeContext *ctx = NULL;
    QualeSettings s;
    quale_settings_default(&s);
    s.log = keep_errors;
    CHECK(quale_open(&ctx, &s) == 0);
    CHECK(quale_use_metric(ctx, "motion=motion_blend_factor=1.5") != 0);
    CHECK(quale_use_metric(ctx, "motion=motion_fps_weight=-1") != 0);
    CHECK(quale_use_metric(ctx, "motion=motion_max_val=20000") != 0);
    CHECK(quale_use_metric(ctx, "motion=motion_five_frame_window=maybe") != 0);
    quale_close(&ctx);
}

static void test_subsample(void)
{
    /* libvmaf runs motion on every frame whatever the subsampling: every
     * frame has its scores, and motion2 looks at the very next frame. */
    Video v;
    CHECK(video_make(&v, 20, 12, 8, 7, PATTERN_DRIFT) == 0);
    Expected e;
    reference_scores(&v, &defaults, &e);
    for (unsigned sub = 2; sub <= 3; sub++) {
        QualeContext *ctx = NULL;
        CHECK(run(&ctx, &v, "motion", 2, sub) == 0);
        bool ok = true;
        for (unsigned i = 0; i < v.frames; i++)
            ok &= same(ctx, "VMAF_integer_feature_motion_sad_score", i, e.sad[i]) &&
                  same(ctx, "integer_motion2", i, e.motion2[i]) &&
                  same(ctx, "integer_motion3", i, e.motion3[i]);
        CHECK(ok);
        /* pooling counts the subsampled frames only */
        double mean = 0., want = 0.;
        unsigned count = 0;
        for (unsigned i = 0; i < v.frames; i += sub, count++) want += e.motion2[i];
        want /= count;
        CHECK(quale_feature_pooled(ctx, "integer_motion2", QUALE_POOL_MEAN, &mean) == 0);
        CHECK(mean == want);
        quale_close(&ctx);
    }
    video_free(&v);
}

static void test_tiny_pictures(void)
{
    static const unsigned sizes[][2] = { { 1, 1 }, { 2, 2 }, { 1, 7 }, { 7, 2 }, { 2, 9 } };
    for (unsigned s = 0; s < COUNT_OF(sizes); s++) {
        const unsigned w = sizes[s][0], h = sizes[s][1];
        Video v;
        QualeContext *ctx = NULL;

        /* One frame: libvmaf never filters it, every score is 0. */
        CHECK(video_make(&v, w, h, 8, 1, PATTERN_NOISE) == 0);
        check_run(&v, "motion", &defaults, "", "tiny, one frame");
        video_free(&v);

        /* Two frames: the blur would read outside the picture. */
        CHECK(video_make(&v, w, h, 10, 2, PATTERN_NOISE) == 0);
        CHECK(run(&ctx, &v, "motion", 2, 0) == -EINVAL);
        CHECK(strstr(last_error, "too small") != NULL);
        quale_close(&ctx);

        /* ... unless nothing is filtered. */
        Options o = defaults;
        o.five_frame_window = true;
        check_run(&v, "motion=motion_five_frame_window=true", &o, "_mffw", "tiny, mffw");
        video_free(&v);

        CHECK(video_make(&v, w, h, 8, 4, PATTERN_NOISE) == 0);
        o = defaults;
        o.force_zero = true;
        check_run(&v, "motion=motion_force_zero=true", &o, "_force_0", "tiny, force_zero");
        video_free(&v);
    }
}

static void test_description(void)
{
    bool found = false;
    for (unsigned i = 0; i < quale_metric_count(); i++) {
        QualeMetricInfo info;
        if (quale_metric_info(i, &info) || strcmp(info.name, "motion")) continue;
        found = true;
        CHECK_STR(info.keys[0], "VMAF_integer_feature_motion_sad_score");
        CHECK_STR(info.keys[1], "integer_motion");
        CHECK_STR(info.keys[2], "integer_motion2");
        CHECK_STR(info.keys[3], "integer_motion3");
        CHECK(info.keys[4] == NULL);
        CHECK(info.option_count == 8);
    }
    CHECK(found);
}

int main(void)
{
    test_description();
    test_sizes_and_depths();
    test_samples_above_the_bit_depth();
    test_options();
    test_subsample();
    test_tiny_pictures();
    return test_summary();
}
