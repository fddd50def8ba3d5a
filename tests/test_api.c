/*
 * The public API used the way callers use it, and misused: pictures in any
 * layout a caller may hand over (borrowed memory, padded, odd or negative
 * strides), the same picture as both inputs, pictures that do not match
 * their format, results asked for before the flush, and two requests that
 * would write one key; and several threads sending to one context at once.
 * scripts/sanitize.sh runs it under ASan and UBSan.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_capture.h"
#include "quale/quale.h"
#include "synth.h"
#include "test.h"

/* Every metric that reads pictures in a different way: luma and chroma,
 * the previous frame (motion keeps pictures for the next frame), 8x8
 * blocks, colour. */
static const char *const metrics[] = {
    "psnr=enable_chroma=true", "motion", "float_ssim", "ciede", "psnr_hvs", "float_motion",
};

static QualeContext *open_context_for(LogCapture *cap, unsigned threads, const QualeVideoFormat *f)
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = threads;
    s.log = capture_log;
    s.log_cookie = cap;
    s.log_level = QUALE_LOG_DEBUG;
    QualeContext *ctx = NULL;
    CHECK(quale_open(&ctx, &s) == 0);
    for (unsigned i = 0; ctx && i < sizeof(metrics) / sizeof(metrics[0]); i++) {
        /* ciede needs colour, psnr_hvs at most 12 bits. */
        if (f && f->chroma == QUALE_CHROMA_400 && !strcmp(metrics[i], "ciede")) continue;
        if (f && f->bitdepth > 12 && !strcmp(metrics[i], "psnr_hvs")) continue;
        CHECK(quale_use_metric(ctx, metrics[i]) == 0);
    }
    return ctx;
}

static QualeContext *open_context(LogCapture *cap, unsigned threads)
{
    return open_context_for(cap, threads, NULL);
}

/* Every value of every key, in order, as one array (for bitwise compares). */
typedef struct Scores {
    unsigned count;
    double values[512];
    char names[64][64];
    unsigned keys;
} Scores;

static void collect(const QualeContext *ctx, unsigned frames, Scores *out)
{
    memset(out, 0, sizeof(*out));
    out->keys = quale_feature_count(ctx);
    CHECK(out->keys > 0 && out->keys <= 64);
    for (unsigned k = 0; k < out->keys && k < 64; k++) {
        const char *key = quale_feature_name(ctx, k);
        snprintf(out->names[k], sizeof(out->names[k]), "%s", key);
        for (unsigned f = 0; f < frames && out->count < 512; f++) {
            double v = -1;
            CHECK(quale_feature_value(ctx, key, f, &v) == 0);
            out->values[out->count++] = v;
        }
    }
}

static int same_scores(const Scores *a, const Scores *b)
{
    if (a->count != b->count || a->keys != b->keys) return 0;
    for (unsigned k = 0; k < a->keys; k++)
        if (strcmp(a->names[k], b->names[k])) return 0;
    return !memcmp(a->values, b->values, sizeof(double) * a->count);
}

static void make_pair(const QualeVideoFormat *f, unsigned index, QualePicture *ref,
                      QualePicture *dist)
{
    CHECK(quale_picture_alloc(ref, f) == 0);
    CHECK(quale_picture_alloc(dist, f) == 0);
    synth_reference(ref, index);
    synth_distort(ref, dist, index, 2);
}

enum { FRAMES = 4 };

/* The scores of FRAMES synthetic pairs sent as quale_picture_alloc() makes
 * them: what every other way of sending them must give. */
static void reference_scores(const QualeVideoFormat *f, Scores *out)
{
    LogCapture cap = { 0 };
    QualeContext *ctx = open_context_for(&cap, 2, f);
    for (unsigned i = 0; i < FRAMES; i++) {
        QualePicture ref, dist;
        make_pair(f, i, &ref, &dist);
        CHECK(quale_send_pictures(ctx, &ref, &dist) == 0);
    }
    CHECK(quale_flush(ctx) == 0);
    collect(ctx, FRAMES, out);
    quale_close(&ctx);
}

/* ---- borrowed pictures in other layouts ----------------------------------- */

enum Layout { PADDED_ODD, BOTTOM_UP, OWNED_OFFSET };

/*
 * A borrowed copy of src in memory the test owns: rows `extra` bytes longer
 * than needed (an odd count: 16-bit rows then start at odd addresses), top
 * down, or bottom up (negative strides).  The memory is scribbled over once
 * quale_send_pictures() returns, as a caller reusing its buffer would.
 */
static uint8_t *borrowed_copy(const QualePicture *src, QualePicture *out, enum Layout layout)
{
    const size_t bps = src->format.bitdepth > 8 ? 2 : 1, extra = 13;
    size_t total = 0, offset[3];
    for (unsigned p = 0; p < src->plane_count; p++) {
        offset[p] = total + 1; /* 1: odd start */
        total += (src->plane_width[p] * bps + extra) * src->plane_height[p] + 1;
    }
    uint8_t *memory = malloc(total);
    CHECK(memory != NULL);
    if (!memory) return NULL;
    *out = *src;
    out->buffer = NULL;
    for (unsigned p = 0; p < src->plane_count; p++) {
        const ptrdiff_t stride = (ptrdiff_t)(src->plane_width[p] * bps + extra);
        uint8_t *first = memory + offset[p];
        if (layout == BOTTOM_UP) {
            first += (size_t)stride * (src->plane_height[p] - 1);
            out->stride[p] = -stride;
        } else {
            out->stride[p] = stride;
        }
        out->data[p] = first;
        for (unsigned y = 0; y < src->plane_height[p]; y++)
            memcpy(first + (ptrdiff_t)y * out->stride[p],
                   (const uint8_t *)src->data[p] + (ptrdiff_t)y * src->stride[p],
                   src->plane_width[p] * bps);
    }
    return memory;
}

static void test_layouts(const QualeVideoFormat *f)
{
    Scores expected, got;
    reference_scores(f, &expected);
    for (int layout = PADDED_ODD; layout <= OWNED_OFFSET; layout++) {
        LogCapture cap = { 0 };
        QualeContext *ctx = open_context_for(&cap, 2, f);
        for (unsigned i = 0; i < FRAMES; i++) {
            QualePicture ref, dist;
            make_pair(f, i, &ref, &dist);
            if (layout == OWNED_OFFSET) {
                /* A picture that owns its memory but is not laid out as
                 * quale_picture_alloc() lays it out: its planes swapped. */
                if (ref.plane_count == 3) {
                    void *d = ref.data[1];
                    ref.data[1] = ref.data[2];
                    ref.data[2] = d;
                    /* Swap the samples too, so that the picture is the same. */
                    const size_t bytes = (size_t)ref.stride[1] * ref.plane_height[1];
                    uint8_t *tmp = malloc(bytes);
                    CHECK(tmp != NULL);
                    if (tmp) {
                        memcpy(tmp, ref.data[1], bytes);
                        memcpy(ref.data[1], ref.data[2], bytes);
                        memcpy(ref.data[2], tmp, bytes);
                        free(tmp);
                    }
                }
                CHECK(quale_send_pictures(ctx, &ref, &dist) == 0);
                continue;
            }
            QualePicture bref, bdist;
            uint8_t *mref = borrowed_copy(&ref, &bref, (enum Layout)layout);
            uint8_t *mdist = borrowed_copy(&dist, &bdist, (enum Layout)layout);
            quale_picture_unref(&ref);
            quale_picture_unref(&dist);
            if (mref && mdist) CHECK(quale_send_pictures(ctx, &bref, &bdist) == 0);
            /* The memory is the caller's again: the scores must not see this. */
            if (mref) memset(mref, 0x5a, 16);
            free(mref);
            free(mdist);
        }
        CHECK(quale_flush(ctx) == 0);
        collect(ctx, FRAMES, &got);
        CHECK(same_scores(&expected, &got));
        if (!same_scores(&expected, &got))
            fprintf(stderr, "  layout %d of %ux%u %s %u-bit gave other scores\n", layout,
                    f->width, f->height, quale_chroma_name(f->chroma), f->bitdepth);
        CHECK(cap.errors == 0);
        quale_close(&ctx);
    }
}

/* ---- one picture as both inputs ------------------------------------------ */

static void test_same_picture(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 64, 48 };
    /* Expected: each frame sent as two separate copies of one picture. */
    Scores expected, got;
    for (int same = 0; same < 2; same++) {
        LogCapture cap = { 0 };
        QualeContext *ctx = open_context(&cap, 3);
        for (unsigned i = 0; i < FRAMES; i++) {
            QualePicture a, b;
            CHECK(quale_picture_alloc(&a, &f) == 0);
            synth_reference(&a, i);
            if (same) {
                CHECK(quale_send_pictures(ctx, &a, &a) == 0);
            } else {
                CHECK(quale_picture_alloc(&b, &f) == 0);
                synth_reference(&b, i);
                CHECK(quale_send_pictures(ctx, &a, &b) == 0);
            }
            CHECK(a.buffer == NULL && a.data[0] == NULL); /* the caller's reference was taken */
        }
        CHECK(quale_flush(ctx) == 0);
        collect(ctx, FRAMES, same ? &got : &expected);
        quale_close(&ctx);
    }
    CHECK(same_scores(&expected, &got));

    /* A borrowed picture as both. */
    LogCapture cap = { 0 };
    QualeContext *ctx = open_context(&cap, 2);
    for (unsigned i = 0; i < FRAMES; i++) {
        QualePicture a, borrowed;
        CHECK(quale_picture_alloc(&a, &f) == 0);
        synth_reference(&a, i);
        uint8_t *memory = borrowed_copy(&a, &borrowed, PADDED_ODD);
        quale_picture_unref(&a);
        if (memory) CHECK(quale_send_pictures(ctx, &borrowed, &borrowed) == 0);
        free(memory);
    }
    CHECK(quale_flush(ctx) == 0);
    collect(ctx, FRAMES, &got);
    CHECK(same_scores(&expected, &got));
    quale_close(&ctx);
}

/* ---- pictures that do not describe their format ---------------------------- */

typedef void (*Breakage)(QualePicture *pic);

static void null_chroma(QualePicture *p) { p->data[1] = NULL; }
static void one_plane(QualePicture *p) { p->plane_count = 1; }
static void zero_stride(QualePicture *p) { p->stride[0] = 0; }
static void short_stride(QualePicture *p) { p->stride[0] = 8; }
static void negative_stride(QualePicture *p) { p->stride[0] = -p->stride[0]; }
static void huge_stride(QualePicture *p) { p->stride[0] = PTRDIFF_MAX / 2; }
static void wide_plane(QualePicture *p) { p->plane_width[0] = 5000; }
static void tall_chroma(QualePicture *p) { p->plane_height[1] = p->plane_height[0]; }
static void other_width(QualePicture *p) { p->format.width = 320; }
static void bad_depth(QualePicture *p) { p->format.bitdepth = 7; }
static void bad_chroma(QualePicture *p) { p->format.chroma = (enum QualeChroma)9; }
static void past_the_end(QualePicture *p) { p->data[2] = (uint8_t *)p->data[2] + 4096; }
static void before_start(QualePicture *p) { p->data[0] = (uint8_t *)p->data[0] - 64; }
static void chroma_stride(QualePicture *p) { p->stride[2] = 4 * p->stride[2]; }

static const struct {
    const char *what;
    Breakage fn;
    const char *message; /* a part of the error */
} breakages[] = {
    { "NULL data[1]", null_chroma, "plane 1 has no data" },
    { "plane_count 1 on 4:2:0", one_plane, "plane_count is 1" },
    { "zero stride", zero_stride, "stride is 0 bytes" },
    { "stride 8 for 320 samples", short_stride, "less than its rows" },
    { "negative stride on owned memory", negative_stride, "outside the picture's buffer" },
    { "huge stride", huge_stride, "stride" },
    { "plane_width 5000", wide_plane, "plane 0 is 5000x240" },
    { "chroma as tall as luma", tall_chroma, "plane 1 is 160x240" },
    { "format width 320 on 64-wide planes", other_width, "plane 0 is" },
    { "bit depth 7", bad_depth, "bit depth" },
    { "unknown chroma", bad_chroma, "chroma" },
    { "chroma past the buffer", past_the_end, "outside the picture's buffer" },
    { "luma before the buffer", before_start, "outside the picture's buffer" },
    { "chroma stride past the buffer", chroma_stride, "outside the picture's buffer" },
};

static void test_bad_pictures(void)
{
    const unsigned n = sizeof(breakages) / sizeof(breakages[0]);
    for (unsigned b = 0; b < n; b++) {
        for (int role = 0; role < 2; role++) {
            const QualeVideoFormat f = { QUALE_CHROMA_420, b == 8 ? 8 : 10, b == 8 ? 64 : 320,
                                         b == 8 ? 48 : 240 };
            LogCapture cap = { 0 };
            QualeContext *ctx = open_context(&cap, 2);
            QualePicture ref, dist;
            make_pair(&f, 0, &ref, &dist);
            /* A frame that is right first: the bad one is frame 1. */
            QualePicture r0, d0;
            make_pair(&f, 0, &r0, &d0);
            CHECK(quale_send_pictures(ctx, &r0, &d0) == 0);
            breakages[b].fn(role ? &dist : &ref);
            const int err = quale_send_pictures(ctx, &ref, &dist);
            const int ok = err == -EINVAL && strstr(cap.text, breakages[b].message) &&
                           strstr(cap.text, role ? "distorted picture" : "reference picture");
            CHECK(ok);
            if (!ok)
                fprintf(stderr, "  %s (%s): %d, log: %s\n", breakages[b].what,
                        role ? "distorted" : "reference", err, cap.text);
            CHECK(ref.buffer == NULL && dist.buffer == NULL); /* both references dropped */
            /* A refused frame is not sent: the frame before it is scored. */
            CHECK(quale_flush(ctx) == 0 && quale_frame_count(ctx) == 1);
            quale_close(&ctx);
        }
    }
    /* A picture that is no picture. */
    LogCapture cap = { 0 };
    QualeContext *ctx = open_context(&cap, 1);
    QualePicture pic;
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 64, 48 };
    CHECK(quale_picture_alloc(&pic, &f) == 0);
    CHECK(quale_send_pictures(ctx, &pic, NULL) == -EINVAL && strstr(cap.text, "NULL"));
    CHECK(pic.buffer == NULL);
    CHECK(quale_send_pictures(ctx, NULL, NULL) == -EINVAL);
    quale_close(&ctx);
}

/* ---- results before the flush -------------------------------------------- */

static void test_results_before_flush(void)
{
    LogCapture cap = { 0 };
    QualeContext *ctx = open_context(&cap, 2);
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 64, 48 };
    for (unsigned i = 0; i < 3; i++) {
        QualePicture ref, dist;
        make_pair(&f, i, &ref, &dist);
        CHECK(quale_send_pictures(ctx, &ref, &dist) == 0);
    }
    char *text = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&text, &size);
    CHECK(stream != NULL);
    if (!stream) return;
    CHECK(quale_write_output(ctx, stream, QUALE_OUTPUT_JSON, NULL) == -EBUSY);
    CHECK(strstr(cap.text, "quale_write_output() before quale_flush()") != NULL);
    fflush(stream);
    CHECK(size == 0); /* nothing written */
    double v;
    CHECK(quale_feature_pooled(ctx, "psnr_y", QUALE_POOL_MEAN, &v) == -EBUSY);
    CHECK(quale_flush(ctx) == 0);
    CHECK(quale_write_output(ctx, stream, QUALE_OUTPUT_JSON, NULL) == 0);
    fflush(stream);
    CHECK(size > 0 && strstr(text, "\"psnr_y\"") != NULL && !strstr(text, "\"input\""));
    CHECK(quale_feature_pooled(ctx, "psnr_y", QUALE_POOL_MEAN, &v) == 0);
    fclose(stream);
    free(text);

    /* Notes on the inputs: an "input" object in JSON, an <input> element in
     * XML, escaped; a name that is not an XML name is refused before
     * anything is written. */
    const QualeOutputNote notes[] = { { "distorted_scaled", "a \"b\" <c> & d" }, { "x", "1" } };
    QualeOutputOptions options = { .precision = 6, .notes = notes, .note_count = 2 };
    stream = open_memstream(&text, &size);
    CHECK(quale_write_output(ctx, stream, QUALE_OUTPUT_JSON, &options) == 0);
    fflush(stream);
    CHECK(strstr(text, "\"input\": {\n    \"distorted_scaled\": \"a \\\"b\\\" <c> & d\",\n    \"x\": \"1\"\n  },") != NULL);
    fclose(stream);
    free(text);
    stream = open_memstream(&text, &size);
    CHECK(quale_write_output(ctx, stream, QUALE_OUTPUT_XML, &options) == 0);
    fflush(stream);
    CHECK(strstr(text, "<input distorted_scaled=\"a &quot;b&quot; &lt;c&gt; &amp; d\" x=\"1\" />") != NULL);
    fclose(stream);
    free(text);
    const QualeOutputNote bad[] = { { "1st", "x" } };
    options.notes = bad;
    options.note_count = 1;
    stream = open_memstream(&text, &size);
    CHECK(quale_write_output(ctx, stream, QUALE_OUTPUT_JSON, &options) == -EINVAL);
    fflush(stream);
    CHECK(size == 0);
    fclose(stream);
    free(text);
    quale_close(&ctx);

    /* A run that failed has no results to write. */
    cap = (LogCapture){ 0 };
    ctx = open_context(&cap, 1);
    CHECK(quale_use_metric(ctx, "adm") == 0);
    const QualeVideoFormat tiny = { QUALE_CHROMA_420, 8, 16, 16 }; /* too small for adm */
    QualePicture ref, dist;
    make_pair(&tiny, 0, &ref, &dist);
    CHECK(quale_send_pictures(ctx, &ref, &dist) == -EINVAL);
    CHECK(quale_flush(ctx) == -EINVAL);
    stream = open_memstream(&text, &size);
    CHECK(stream != NULL);
    if (!stream) return;
    CHECK(quale_write_output(ctx, stream, QUALE_OUTPUT_XML, NULL) == -EINVAL);
    CHECK(strstr(cap.text, "the run failed") != NULL);
    fflush(stream);
    CHECK(size == 0);
    fclose(stream);
    free(text);
    quale_close(&ctx);
}

/* ---- two requests, one key ----------------------------------------------- */

static void test_key_clashes(void)
{
    static const struct {
        const char *first, *second;
        const char *key;
    } clashes[] = {
        { "float_ssim", "float_ssim=enable_db=true", "'float_ssim'" },
        { "psnr", "psnr=reduced_hbd_peak=true", "'psnr_y'" },
        { "float_ms_ssim", "float_ms_ssim=enable_db=true", "'float_ms_ssim'" },
        { "float_ssim", "float_ssim=scale=1", "'float_ssim'" },
        /* Two values that print alike in a key ("%g") are one key. */
        { "vif=vif_enhn_gain_limit=1.0000001", "vif=vif_enhn_gain_limit=1.0000002",
          "'integer_vif_scale0_egl_1'" },
    };
    for (unsigned i = 0; i < sizeof(clashes) / sizeof(clashes[0]); i++) {
        QualeSettings s;
        quale_settings_default(&s);
        LogCapture cap = { 0 };
        s.log = capture_log;
        s.log_cookie = &cap;
        QualeContext *ctx = NULL;
        CHECK(quale_open(&ctx, &s) == 0);
        CHECK(quale_use_metric(ctx, clashes[i].first) == 0);
        CHECK(quale_use_metric(ctx, clashes[i].second) == -EEXIST);
        CHECK(strstr(cap.text, clashes[i].key) && strstr(cap.text, clashes[i].second));
        quale_close(&ctx);
    }
    /* Options that name their keys keep two requests apart. */
    QualeSettings s;
    quale_settings_default(&s);
    LogCapture cap = { 0 };
    s.log = capture_log;
    s.log_cookie = &cap;
    QualeContext *ctx = NULL;
    CHECK(quale_open(&ctx, &s) == 0);
    CHECK(quale_use_metric(ctx, "vif") == 0);
    CHECK(quale_use_metric(ctx, "vif=vif_enhn_gain_limit=1.5") == 0);
    /* A model named like a key of a metric of the run. */
    CHECK(quale_use_metric(ctx, "psnr") == 0);
    CHECK(quale_use_model(ctx, "version=vmaf_v0.6.1:name=psnr_y") == -EEXIST);
    CHECK(strstr(cap.text, "'psnr_y'") != NULL);
    CHECK(quale_use_model(ctx, "version=vmaf_v0.6.1:name=vmaf_1") == 0);
    CHECK(quale_use_metric(ctx, "float_ssim") == 0);
    quale_close(&ctx);

    /* Keys a metric names without its options' suffix (cambi_source with
     * full_ref) clash when the first frame sets the metrics up. */
    cap = (LogCapture){ 0 };
    CHECK(quale_open(&ctx, &s) == 0);
    CHECK(quale_use_metric(ctx, "cambi=full_ref=true") == 0);
    CHECK(quale_use_metric(ctx, "cambi=full_ref=true:cambi_max_val=4") == 0);
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 256, 256 };
    QualePicture ref, dist;
    make_pair(&f, 0, &ref, &dist);
    CHECK(quale_send_pictures(ctx, &ref, &dist) == -EEXIST);
    CHECK(strstr(cap.text, "'cambi_source'") != NULL);
    quale_close(&ctx);
}

/* ---- threads -------------------------------------------------------------- */

static void test_thread_cap(void)
{
    QualeSettings s;
    quale_settings_default(&s);
    LogCapture cap = { 0 };
    s.log = capture_log;
    s.log_cookie = &cap;
    s.threads = 100000;
    QualeContext *ctx = NULL;
    CHECK(quale_open(&ctx, &s) == 0);
    CHECK(strstr(cap.last, "100000 threads asked for") != NULL);
    /* It still scores. */
    CHECK(quale_use_metric(ctx, "psnr") == 0);
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 64, 48 };
    QualePicture ref, dist;
    make_pair(&f, 0, &ref, &dist);
    CHECK(quale_send_pictures(ctx, &ref, &dist) == 0);
    CHECK(quale_flush(ctx) == 0);
    quale_close(&ctx);
}

/* ---- provenance ------------------------------------------------------------ */

/* The record of section whose fact name is value, or NULL. */
static const QualeProvenanceRecord *find_record(const QualeResults *r, const char *section,
                                                const char *name, const char *value)
{
    for (unsigned i = 0; quale_results_provenance(r, i); i++) {
        const QualeProvenanceRecord *rec = quale_results_provenance(r, i);
        if (strcmp(rec->section, section)) continue;
        for (unsigned k = 0; k < rec->fact_count; k++)
            if (!strcmp(rec->facts[k].name, name) && !strcmp(rec->facts[k].value, value))
                return rec;
    }
    return NULL;
}

/* The results written as JSON into memory (free()), or NULL. */
static char *written_json(const QualeContext *ctx, const QualeOutputOptions *o, size_t *size,
                          int *err)
{
    char *text = NULL;
    FILE *m = open_memstream(&text, size);
    *err = m ? quale_write_output(ctx, m, QUALE_OUTPUT_JSON, o) : -ENOMEM;
    if (m) fclose(m);
    return text;
}

/* describe_run: the library's records (its version, the backend, the model
 * and the metrics with their options), then the caller's, read back as
 * written; none asked: libvmaf's layout; a record no layout can carry
 * refused. */
static void test_provenance(void)
{
    LogCapture cap = { 0 };
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = 2;
    s.log = capture_log;
    s.log_cookie = &cap;
    QualeContext *ctx = NULL;
    CHECK(quale_open(&ctx, &s) == 0);
    CHECK(quale_use_model(ctx, "version=vmaf_v0.6.1") == 0);
    CHECK(quale_use_metric(ctx, "psnr=enable_chroma=false") == 0);
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 64, 48 };
    for (unsigned i = 0; i < 2; i++) {
        QualePicture ref, dist;
        make_pair(&f, i, &ref, &dist);
        CHECK(quale_send_pictures(ctx, &ref, &dist) == 0);
    }
    CHECK(quale_flush(ctx) == 0);

    const QualeOutputNote facts[] = { { "name", "clip.y4m" }, { "bytes", "1234" } };
    const QualeProvenanceRecord mine = { "input", facts, 2 };
    QualeOutputOptions o = { .precision = -1, .describe_run = 1, .provenance = &mine,
                             .provenance_count = 1 };
    size_t size = 0;
    int err = 0;
    char *text = written_json(ctx, &o, &size, &err);
    CHECK(err == 0);
    QualeResults *r = NULL;
    char error[256] = "";
    CHECK(text && quale_results_read(&r, text, size, "provenance", error, sizeof(error)) == 0);
    CHECK(find_record(r, "quale", "version", quale_version()) != NULL);
    CHECK(find_record(r, "backend", "name", "cpu") && find_record(r, "backend", "threads", "2"));
    const QualeProvenanceRecord *model = find_record(r, "model", "name", "vmaf");
    CHECK(model && find_record(r, "model", "version", "vmaf_v0.6.1") == model);
    CHECK(find_record(r, "feature", "options", "enable_chroma=false") ==
          find_record(r, "feature", "name", "psnr"));
    const QualeProvenanceRecord *input = find_record(r, "input", "name", "clip.y4m");
    CHECK(input && input->fact_count == 2 && !strcmp(input->facts[1].value, "1234"));
    /* written again from the results: the same records */
    char *again = NULL;
    size_t again_size = 0;
    FILE *m = open_memstream(&again, &again_size);
    CHECK(m && quale_results_write(r, m, QUALE_OUTPUT_JSON, NULL, error, sizeof(error)) == 0);
    if (m) fclose(m);
    CHECK(again && text && strstr(again, "\"provenance\"") &&
          !strcmp(strstr(again, "\"provenance\""), strstr(text, "\"provenance\"")));
    free(again);
    quale_results_close(&r);
    free(text);

    /* none asked: no provenance */
    const QualeOutputOptions plain = { .precision = -1 };
    text = written_json(ctx, &plain, &size, &err);
    CHECK(err == 0 && text && !strstr(text, "provenance"));
    free(text);

    /* a section that is no XML name, a fact named twice: refused */
    const QualeProvenanceRecord bad_section = { "1st", facts, 2 };
    const QualeOutputNote twice[] = { { "name", "a" }, { "name", "b" } };
    const QualeProvenanceRecord bad_facts = { "input", twice, 2 };
    const QualeProvenanceRecord *bad[] = { &bad_section, &bad_facts };
    for (unsigned i = 0; i < 2; i++) {
        o.provenance = bad[i];
        text = written_json(ctx, &o, &size, &err);
        CHECK(err == -EINVAL && strstr(cap.last, "provenance record"));
        free(text);
    }
    o.provenance = NULL;
    text = written_json(ctx, &o, &size, &err);
    CHECK(err == -EINVAL);
    free(text);
    quale_close(&ctx);
}

/* ---- several threads on one context --------------------------------------- */

enum { SENT = 200 };

static const QualeVideoFormat marked_format = { QUALE_CHROMA_420, 8, 64, 48 };

/*
 * Pair k of a run: flat pictures whose distorted luma differs in k + 1
 * samples, by 16 (a psnr_y under libvmaf's 60 dB cap), so that psnr_y
 * tells each k from every other: the scores of a run say which pairs were
 * scored, and how often.
 */
static void marked_pair(QualeContext *ctx, unsigned k, QualePicture *ref, QualePicture *dist)
{
    const QualePicture *pics[2] = { ref, dist };
    quale_context_alloc_picture(ctx, ref, &marked_format);
    quale_context_alloc_picture(ctx, dist, &marked_format);
    for (unsigned i = 0; i < 2; i++) {
        const QualePicture *p = pics[i];
        for (unsigned plane = 0; p->buffer && plane < p->plane_count; plane++)
            for (unsigned y = 0; y < p->plane_height[plane]; y++)
                memset((uint8_t *)p->data[plane] + (ptrdiff_t)y * p->stride[plane], 128,
                       p->plane_width[plane]);
    }
    for (unsigned j = 0; dist->buffer && j <= k; j++) {
        uint8_t *row = (uint8_t *)dist->data[0] + (ptrdiff_t)(j / 64) * dist->stride[0];
        row[j % 64] = 144;
    }
}

static QualeContext *open_marked(LogCapture *cap)
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = 2;
    s.log = capture_log;
    s.log_cookie = cap;
    QualeContext *ctx = NULL;
    CHECK(quale_open(&ctx, &s) == 0);
    /* motion keeps the previous pictures: the history is shifted once a
     * frame, by whichever thread sends it. */
    CHECK(ctx && quale_use_metric(ctx, "psnr") == 0 && quale_use_metric(ctx, "motion") == 0);
    return ctx;
}

typedef struct Sender {
    QualeContext *ctx;
    unsigned first, step; /* sends pairs first, first + step, ... below SENT */
    pthread_barrier_t *start;
    unsigned refused;
} Sender;

/* Makes its pairs, then (at the barrier, all threads at once) sends them
 * as fast as it can. */
static void *send_marked(void *arg)
{
    Sender *s = arg;
    QualePicture refs[SENT], dists[SENT];
    unsigned n = 0;
    for (unsigned k = s->first; k < SENT; k += s->step, n++)
        marked_pair(s->ctx, k, &refs[n], &dists[n]);
    if (s->start) pthread_barrier_wait(s->start);
    for (unsigned i = 0; i < n; i++)
        if (quale_send_pictures(s->ctx, &refs[i], &dists[i])) s->refused++;
    return NULL;
}

/* Asks what a progress display asks, while the others send. */
typedef struct Watcher {
    QualeContext *ctx;
    atomic_int stop;
    unsigned wrong; /* counts that went down or past what was sent */
} Watcher;

static void *watch(void *arg)
{
    Watcher *w = arg;
    unsigned last = 0;
    while (!atomic_load(&w->stop)) {
        const unsigned done = quale_frames_done(w->ctx), sent = quale_frame_count(w->ctx);
        if (done > sent || sent > SENT || sent < last) w->wrong++;
        last = sent;
    }
    return NULL;
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* psnr_y of frames 0 .. SENT-1, sorted; 0 where a frame has none. */
static void sorted_psnr(const QualeContext *ctx, double *out)
{
    for (unsigned f = 0; f < SENT; f++) {
        out[f] = 0;
        quale_feature_value(ctx, "psnr_y", f, &out[f]);
    }
    qsort(out, SENT, sizeof(*out), compare_doubles);
}

/*
 * quale_send_pictures() from 2, 3 and 4 threads at once on one context,
 * several times: every pair sent is scored once (SENT frames, the
 * single-thread run's psnr values, each once), whatever the interleaving;
 * quale_frames_done() and quale_frame_count() may be asked meanwhile.
 * Then quale_flush() while another thread sends: the flush waits for the
 * frame being taken, the frames before it are all scored, those after it
 * refused.
 */
static void test_concurrent_sends(void)
{
    LogCapture cap = { 0 };
    QualeContext *ctx = open_marked(&cap);
    Sender one = { ctx, 0, 1, NULL, 0 };
    send_marked(&one);
    CHECK(one.refused == 0 && quale_flush(ctx) == 0);
    double expected[SENT], got[SENT];
    sorted_psnr(ctx, expected);
    CHECK(expected[0] > 0 && expected[0] < expected[1] && expected[SENT - 1] < 60);
    quale_close(&ctx);

    for (unsigned threads = 2; threads <= 4; threads++) {
        for (unsigned round = 0; round < 4; round++) {
            cap = (LogCapture){ 0 };
            ctx = open_marked(&cap);
            Sender senders[4];
            pthread_t ids[4], watcher_id;
            pthread_barrier_t start;
            pthread_barrier_init(&start, NULL, threads);
            Watcher watcher = { .ctx = ctx };
            atomic_init(&watcher.stop, 0);
            CHECK(pthread_create(&watcher_id, NULL, watch, &watcher) == 0);
            for (unsigned t = 0; t < threads; t++) {
                senders[t] = (Sender){ ctx, t, threads, &start, 0 };
                CHECK(pthread_create(&ids[t], NULL, send_marked, &senders[t]) == 0);
            }
            unsigned refused = 0;
            for (unsigned t = 0; t < threads; t++) {
                pthread_join(ids[t], NULL);
                refused += senders[t].refused;
            }
            atomic_store(&watcher.stop, 1);
            pthread_join(watcher_id, NULL);
            pthread_barrier_destroy(&start);
            CHECK(refused == 0 && watcher.wrong == 0 && cap.errors == 0);
            CHECK(quale_flush(ctx) == 0);
            CHECK(quale_frame_count(ctx) == SENT && quale_frames_done(ctx) == SENT);
            sorted_psnr(ctx, got);
            CHECK(!memcmp(got, expected, sizeof(got)));
            unsigned with_motion = 0;
            double v;
            for (unsigned f = 0; f < SENT; f++)
                with_motion += quale_feature_value(ctx, "integer_motion2", f, &v) == 0;
            CHECK(with_motion == SENT);
            CHECK(quale_feature_value(ctx, "psnr_y", SENT, &v) == -ENOENT);
            quale_close(&ctx);
        }
    }
}

typedef struct Streamer {
    QualeContext *ctx;
    atomic_uint accepted;
    atomic_int done;
    int last_error;
} Streamer;

/* Sends until a pair is refused (or SENT * 50 of them). */
static void *send_until_refused(void *arg)
{
    Streamer *s = arg;
    for (unsigned k = 0; k < SENT * 50; k++) {
        QualePicture ref, dist;
        marked_pair(s->ctx, k % SENT, &ref, &dist);
        const int err = quale_send_pictures(s->ctx, &ref, &dist);
        if (err) {
            s->last_error = err;
            break;
        }
        atomic_fetch_add(&s->accepted, 1);
    }
    atomic_store(&s->done, 1);
    return NULL;
}

static void test_flush_while_sending(void)
{
    for (unsigned round = 0; round < 12; round++) {
        LogCapture cap = { 0 };
        QualeContext *ctx = open_marked(&cap);
        Streamer s = { .ctx = ctx };
        atomic_init(&s.accepted, 0);
        atomic_init(&s.done, 0);
        pthread_t id;
        CHECK(pthread_create(&id, NULL, send_until_refused, &s) == 0);
        while (atomic_load(&s.accepted) < 10 + round && !atomic_load(&s.done)) sched_yield();
        CHECK(quale_flush(ctx) == 0);
        pthread_join(id, NULL);
        /* Every frame taken before the flush is scored, and none after. */
        const unsigned accepted = atomic_load(&s.accepted);
        CHECK(s.last_error == -EINVAL && strstr(cap.text, "after quale_flush()"));
        CHECK(quale_frame_count(ctx) == accepted);
        unsigned scored = 0;
        double v;
        for (unsigned f = 0; f <= accepted; f++)
            scored += quale_feature_value(ctx, "psnr_y", f, &v) == 0;
        CHECK(scored == accepted);
        quale_close(&ctx);
    }
}

/* ---- a context reset for its next pair ------------------------------------ */

/* FRAMES pairs made from synthetic frames first .. first + FRAMES - 1. */
static int send_pairs(QualeContext *ctx, const QualeVideoFormat *f, unsigned first)
{
    int err = 0;
    for (unsigned i = 0; i < FRAMES && !err; i++) {
        QualePicture ref, dist;
        make_pair(f, first + i, &ref, &dist);
        err = quale_send_pictures(ctx, &ref, &dist);
    }
    return err ? err : quale_flush(ctx);
}

static QualeContext *open_scoring(LogCapture *cap, enum QualeBackend backend)
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = 2;
    s.backend = backend;
    s.log = capture_log;
    s.log_cookie = cap;
    QualeContext *ctx = NULL;
    if (quale_open(&ctx, &s)) return NULL;
    CHECK(quale_use_model(ctx, "version=vmaf_v0.6.1") == 0);
    /* metrics that keep something of a run besides its values: psnr's
     * aggregate, float_motion's last frame */
    CHECK(quale_use_metric(ctx, "psnr=enable_apsnr=true") == 0);
    CHECK(quale_use_metric(ctx, "float_motion") == 0);
    CHECK(quale_use_metric(ctx, "float_ssim") == 0);
    /* twins with history of their own, and cambi */
    CHECK(quale_use_metric(ctx, "speed_temporal") == 0);
    CHECK(quale_use_metric(ctx, "cambi") == 0);
    return ctx;
}

/* The context's results as the JSON layout writes them (free()). */
static char *results_json(const QualeContext *ctx)
{
    char *text = NULL;
    size_t length = 0;
    FILE *f = open_memstream(&text, &length);
    if (!f) return NULL;
    const QualeOutputOptions options = { .precision = -1 };
    const int err = quale_write_output(ctx, f, QUALE_OUTPUT_JSON, &options);
    fclose(f);
    if (err) {
        free(text);
        return NULL;
    }
    return text;
}

/* A context reset after each pair scores the next one as a new context
 * does, key for key and bit for bit, on the backend given (the GPU's kept
 * state included); what it refuses. */
static void test_reset(enum QualeBackend backend)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 224, 96 }; /* cambi and SpEED take it */
    const QualeVideoFormat other = { QUALE_CHROMA_420, 8, 64, 48 };
    LogCapture cap = { 0 };
    QualeContext *kept = open_scoring(&cap, backend);
    if (!kept) {
        printf("reset: the %s backend does not open here: not checked on it\n",
               quale_backend_name(backend));
        return;
    }
    CHECK(quale_reset(kept) == 0); /* before any frame: nothing to forget */
    for (unsigned pair = 0; pair < 3; pair++) {
        LogCapture fresh_cap = { 0 };
        QualeContext *fresh = open_scoring(&fresh_cap, backend);
        CHECK(fresh != NULL);
        if (!fresh) break;
        Scores a, b;
        CHECK(send_pairs(fresh, &f, 10 * pair) == 0);
        collect(fresh, FRAMES, &a);
        CHECK(send_pairs(kept, &f, 10 * pair) == 0);
        collect(kept, FRAMES, &b);
        CHECK(quale_frame_count(kept) == FRAMES);
        CHECK(same_scores(&a, &b));
        for (unsigned k = 0; k < a.keys && getenv("QUALE_TEST_DEBUG"); k++)
            for (unsigned i = 0; i < FRAMES; i++)
                if (a.values[k * FRAMES + i] != b.values[k * FRAMES + i])
                    printf("%s pair %u %s frame %u: %.17g != %.17g\n", quale_backend_name(backend),
                           pair, a.names[k], i, a.values[k * FRAMES + i], b.values[k * FRAMES + i]);
        /* the whole results file: pooled values and aggregates too */
        char *fresh_json = results_json(fresh), *kept_json = results_json(kept);
        CHECK(fresh_json && kept_json && !strcmp(fresh_json, kept_json));
        CHECK(kept_json && strstr(kept_json, "apsnr_y") && strstr(kept_json, "\"motion3\""));
        free(fresh_json);
        free(kept_json);
        quale_close(&fresh);
        CHECK(quale_reset(kept) == 0);
        double v;
        CHECK(quale_frame_count(kept) == 0);
        CHECK(quale_feature_value(kept, "psnr_y", 0, &v) != 0);
    }
    /* Before the flush, with frames sent: refused. */
    QualePicture ref, dist;
    make_pair(&f, 0, &ref, &dist);
    CHECK(quale_send_pictures(kept, &ref, &dist) == 0);
    CHECK(quale_reset(kept) == -EINVAL && strstr(cap.text, "after quale_flush()"));
    CHECK(quale_flush(kept) == 0 && quale_reset(kept) == 0);
    /* Another format: refused, the context's format stays. */
    make_pair(&other, 0, &ref, &dist);
    CHECK(quale_send_pictures(kept, &ref, &dist) == -EINVAL);
    quale_close(&kept);
    CHECK(quale_reset(NULL) == -EINVAL);
    if (backend != QUALE_BACKEND_CPU) return;
    /* cambi's heatmaps are the files of one run: no reset. */
    LogCapture heat_cap = { 0 };
    QualeSettings s;
    quale_settings_default(&s);
    s.log = capture_log;
    s.log_cookie = &heat_cap;
    QualeContext *heat = NULL;
    CHECK(quale_open(&heat, &s) == 0);
    char dir[] = "/tmp/quale-test-api-XXXXXX", spec[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(spec, sizeof(spec), "cambi=heatmaps_path=%s", dir);
    CHECK(quale_use_metric(heat, spec) == 0);
    const QualeVideoFormat wide = { QUALE_CHROMA_420, 8, 256, 64 }; /* cambi's smallest */
    CHECK(send_pairs(heat, &wide, 0) == 0);
    CHECK(quale_reset(heat) == -ENOTSUP && strstr(heat_cap.text, "heatmaps"));
    quale_close(&heat);
    char command[128];
    snprintf(command, sizeof(command), "rm -rf '%s'", dir);
    CHECK(system(command) == 0);
}

/* The line a Vulkan context logs about its device (debug level). */
static void note_device(void *cookie, enum QualeLogLevel level, const char *message)
{
    (void)level;
    if (strstr(message, "Vulkan device:")) snprintf(cookie, 256, "%s", message);
}

static QualeContext *open_vulkan(char note[256])
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = 2;
    s.backend = QUALE_BACKEND_VULKAN;
    s.log_level = QUALE_LOG_DEBUG;
    s.log = note_device;
    s.log_cookie = note;
    note[0] = '\0';
    QualeContext *ctx = NULL;
    if (quale_open(&ctx, &s)) return NULL;
    CHECK(quale_use_model(ctx, "version=vmaf_v0.6.1") == 0);
    return ctx;
}

/* A Vulkan device outlives its last context, for the process's next one
 * (the driver's open and close cost half a second on an H200), unless
 * QUALE_KEEP_DEVICES=0; both give the same scores. */
/* A fresh Vulkan context scores the same pairs and closes: its device
 * line in `note` (empty where it did not open). */
static void score_on_vulkan(const QualeVideoFormat *f, char note[256], Scores *out)
{
    QualeContext *ctx = open_vulkan(note);
    CHECK(ctx && send_pairs(ctx, f, 3) == 0);
    if (ctx) collect(ctx, FRAMES, out);
    quale_close(&ctx);
}

static void test_vulkan_device_kept(void)
{
    const QualeVideoFormat f = { QUALE_CHROMA_420, 8, 64, 48 };
    char note[256];
    QualeContext *probe = open_vulkan(note);
    if (!probe) {
        printf("kept device: no Vulkan device here: not checked\n");
        return;
    }
    quale_close(&probe);
    Scores before = { 0 }, kept = { 0 }, closed = { 0 };
    score_on_vulkan(&f, note, &before);
    score_on_vulkan(&f, note, &kept);
    CHECK(strstr(note, "kept from an earlier context"));
    CHECK(same_scores(&before, &kept));

    setenv("QUALE_KEEP_DEVICES", "0", 1);
    QualeContext *third = open_vulkan(note); /* takes the kept one, closes it */
    quale_close(&third);
    score_on_vulkan(&f, note, &closed);
    CHECK(strstr(note, "opened"));
    CHECK(same_scores(&before, &closed));
    unsetenv("QUALE_KEEP_DEVICES");
}

int main(void)
{
    const QualeVideoFormat formats[] = {
        { QUALE_CHROMA_420, 8, 64, 48 },
        { QUALE_CHROMA_422, 10, 67, 37 },
        { QUALE_CHROMA_444, 12, 40, 33 },
        { QUALE_CHROMA_400, 16, 41, 24 },
    };
    for (unsigned i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) test_layouts(&formats[i]);
    test_same_picture();
    test_bad_pictures();
    test_results_before_flush();
    test_key_clashes();
    test_thread_cap();
    test_provenance();
    test_concurrent_sends();
    test_flush_while_sending();
    test_reset(QUALE_BACKEND_CPU);
    test_reset(QUALE_BACKEND_VULKAN);
    test_reset(QUALE_BACKEND_CUDA);
    test_vulkan_device_kept();
    return test_summary();
}
