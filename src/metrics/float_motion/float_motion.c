/*
 * Float motion: libvmaf's "float_motion" extractor (motion, motion2,
 * motion3), the floating-point twin of the integer motion.
 *
 * Per frame i >= 1, from the luma of the reference only:
 *   score[i] = SAD(blur(ref[i - 1]), blur(ref[i])) / (w * h)
 * with the samples on the 8-bit scale less 128 (picture_float.h), the blur
 * a separable 5-tap Gaussian (motion_filter_size picks a 3-tap one, or a
 * 5-tap identity at 1) mirrored at the edges, the SAD summed in float row
 * by row.  motion_add_scale1 adds the same score of the two blurred
 * pictures shrunk to half size with libvmaf's bilinear scaler.
 *   motion[i]  = min(score[i] * motion_fps_weight, motion_max_val)  (debug,
 *                on by default), 0 at frame 0;
 *   motion2[i] = the same of min(score[i], score[i + 1]), score[i] for the
 *                last frame, 0 for frame 0;
 *   motion3[i] = min(blend(motion2 before clipping), motion_max_val), and
 *                at frame 0 that of score[1] (0 for a one-frame stream);
 *   blend(m)   = m * factor + (1 - factor) * min(offset, m).
 * motion_force_zero writes 0 for all three and filters nothing.
 *
 * libvmaf keeps three blurred pictures and writes frame i - 1's motion2
 * and motion3 while extracting frame i, the last frame's in its flush.
 * Here extract() of frame i blurs ref[i], ref[i - 1] and ref[i - 2] from
 * its history (each worker keeps its last blurred pictures, so a worker
 * given consecutive frames blurs each picture once) and writes the same
 * values for the same frames; flush() writes the last frame's from the
 * score of the highest frame, kept in one atomic word.  libvmaf runs the
 * extractor on every frame whatever --subsample says; so does this one.
 *
 * Every float operation is libvmaf's, in its order: the blur sums its taps
 * from the first, the vertical pass before the horizontal one (libvmaf's
 * AVX2 convolution does the same operations as its C one), the SAD adds
 * fabs() of each difference through double into a float row sum.
 *
 * float_motion.h holds what the CUDA twin (src/cuda/float_motion.cu) shares
 * with this file: the state, the filters, the size check, the keys from a
 * frame's scores.
 *
 * Sizes: the mirror of a 5-tap blur stays in the picture from 3x3 up (2x2
 * for the 3-tap one); libvmaf reads outside its buffers below that.  A
 * smaller picture scores only where nothing is filtered (frame 0, or
 * motion_force_zero) and is an error otherwise; with motion_add_uv the
 * same holds of the chroma planes.
 *
 * motion_add_uv adds the same score of the U and V planes (each blurred,
 * summed and shrunk as the luma, at its own size) to the luma's, in
 * double as libvmaf does: score = ((double)y + u) + v.  The metric then
 * reads the chroma planes (motion_planes()); 4:0:0 has none and is
 * refused, as libvmaf does.  With motion_add_scale1 too, libvmaf shrinks
 * the chroma planes reading them at the wrong stride (memory it never
 * wrote): that combination is refused.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "metric.h"
#include "float_motion.h"
#include "metrics/common/picture_float.h"
#include "metrics/common/scratch.h"

#define MOTION_MAX_VAL_DEFAULT 10000.0
#define MOTION_FILTER_SIZE_DEFAULT 5
#define MOTION_MAX_TAPS FLOAT_MOTION_MAX_TAPS

/* libvmaf's motion_tools.h filters */
static const float motion_filter5[5] = { FLOAT_MOTION_FILTER5 };
static const float motion_filter3[3] = { FLOAT_MOTION_FILTER3 };
static const float motion_filter5_identity[5] = { FLOAT_MOTION_FILTER5_IDENTITY };

enum {
    KEY_MOTION = FLOAT_MOTION_KEY_MOTION,
    KEY_MOTION2 = FLOAT_MOTION_KEY_MOTION2,
    KEY_MOTION3 = FLOAT_MOTION_KEY_MOTION3,
    KEY_COUNT = FLOAT_MOTION_KEY_COUNT,
};

static const char *const motion_keys[KEY_COUNT + 1] = {
    "motion", "motion2", "motion3", NULL,
};

/* struct FloatMotionState: float_motion.h */

static const MetricOption motion_options[] = {
    { .name = "debug", .help = "debug mode: enable additional output",
      .offset = offsetof(FloatMotionState, debug), .type = QUALE_OPTION_BOOL,
      .default_value.b = true },
    { .name = "motion_force_zero", .alias = "force_0", .help = "forcing motion score to zero",
      .offset = offsetof(FloatMotionState, force_zero), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_fps_weight", .alias = "mfw",
      .help = "fps-aware multiplicative weight/correction",
      .offset = offsetof(FloatMotionState, fps_weight), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1.0, .min = 0.0, .max = 5.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_blend_factor", .alias = "mbf",
      .help = "blend motion score given an offset",
      .offset = offsetof(FloatMotionState, blend_factor), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1.0, .min = 0.0, .max = 1.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_blend_offset", .alias = "mbo",
      .help = "blend motion score starting from this offset",
      .offset = offsetof(FloatMotionState, blend_offset), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 40.0, .min = 0.0, .max = 1000.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_add_scale1", .alias = "mdc", .help = "add motion score from scale1",
      .offset = offsetof(FloatMotionState, add_scale1), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_filter_size", .alias = "mfs",
      .help = "filtering size (3: 3-tap blur, 1: none, else the 5-tap blur)",
      .offset = offsetof(FloatMotionState, filter_size), .type = QUALE_OPTION_INT,
      .default_value.i = MOTION_FILTER_SIZE_DEFAULT, .min = 0, .max = 9,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_add_uv", .alias = "mau", .help = "include U and V terms",
      .offset = offsetof(FloatMotionState, add_uv), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_max_val", .alias = "mmxv",
      .help = "maximum value allowed; larger values will be clipped to this value",
      .offset = offsetof(FloatMotionState, max_val), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = MOTION_MAX_VAL_DEFAULT, .min = 0.0, .max = 10000.0,
      .flags = OPTION_FEATURE_PARAM },
    { 0 },
};

/* ---- per worker ------------------------------------------------------------ */

#define MOTION_SLOTS 3

typedef struct FloatMotionScratch {
    size_t stride;                   /* floats, of every plane */
    size_t offset[3];                /* of each plane in a slot */
    float *source;                   /* one plane as floats */
    float *row;                      /* one vertical-pass row, padded */
    float *scaled[2];                /* motion_add_scale1 */
    struct {
        long long index;             /* frame of the blurred picture, -1: none */
        float *plane;
    } slot[MOTION_SLOTS];
    long long score_index;           /* the frame whose score[] is score, -1: none */
    double score;
} FloatMotionScratch;

static void motion_scratch_free(void *scratch)
{
    _Static_assert(MOTION_SLOTS == 3, "motion_scratch_free() names each slot");
    FloatMotionScratch *t = scratch;
    SCRATCH_FREE(t, t->source, t->row, t->scaled[0], t->scaled[1], t->slot[0].plane,
                 t->slot[1].plane, t->slot[2].plane);
}

static int motion_scratch_alloc(const void *state, void **scratch)
{
    const FloatMotionState *s = state;
    FloatMotionScratch *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->stride = quale_align((size_t)s->w, QUALE_ALIGNMENT / sizeof(float));
    const size_t plane = t->stride * (size_t)s->h * sizeof(float);
    size_t rows = 0;
    for (int p = 0; p < s->planes; p++) {
        t->offset[p] = t->stride * rows;
        rows += (size_t)s->ph[p];
    }
    t->score_index = -1;
    bool ok = (t->source = quale_aligned_alloc(plane)) != NULL;
    ok = ok && (t->row = quale_aligned_alloc(((size_t)s->w + 2 * MOTION_MAX_TAPS) *
                                             sizeof(float))) != NULL;
    for (int i = 0; ok && i < MOTION_SLOTS; i++) {
        t->slot[i].index = -1;
        ok = (t->slot[i].plane = quale_aligned_alloc(t->stride * rows * sizeof(float))) != NULL;
    }
    if (ok && s->add_scale1) {
        const size_t scaled = quale_align((size_t)s->scaled_w, QUALE_ALIGNMENT / sizeof(float)) *
                              (size_t)s->scaled_h * sizeof(float);
        ok = (t->scaled[0] = quale_aligned_alloc(scaled)) != NULL &&
             (t->scaled[1] = quale_aligned_alloc(scaled)) != NULL;
    }
    return scratch_hand_over(scratch, t, ok, motion_scratch_free);
}

/* ---- the blur ---------------------------------------------------------------- */

/* libvmaf's reflection at the edges: float_motion_mirror() (float_motion.h). */
#define motion_mirror float_motion_mirror

/* Blurs plane p of pic into out (its size, stride t->stride).  Each output
 * sample is libvmaf's: the vertical taps summed from 0.0f in order into a
 * row, that row mirrored, then the horizontal taps summed the same way. */
static void motion_blur_plane(const FloatMotionState *s, FloatMotionScratch *t,
                              const QualePicture *pic, int p, float *out)
{
    const int w = s->pw[p], h = s->ph[p], taps = s->taps, radius = taps / 2;
    const float *f = s->filter;
    const size_t stride = t->stride;

    for (int y = 0; y < h; y++)
        picture_float_row(pic, (unsigned)p, (unsigned)y, -128.0f, t->source + (size_t)y * stride);

    float *row = t->row + radius;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) row[x] = 0.0f;
        for (int k = 0; k < taps; k++) {
            const float fk = f[k];
            const float *src = t->source + (size_t)motion_mirror(y - radius + k, h) * stride;
            for (int x = 0; x < w; x++) row[x] += fk * src[x];
        }
        for (int k = 1; k <= radius; k++) {
            row[-k] = row[k];
            row[w - 1 + k] = row[w - 1 - k];
        }
        float *dst = out + (size_t)y * stride;
        for (int x = 0; x < w; x++) dst[x] = 0.0f;
        for (int k = 0; k < taps; k++) {
            const float fk = f[k];
            const float *src = row - radius + k;
            for (int x = 0; x < w; x++) dst[x] += fk * src[x];
        }
    }
}

/* Blurs every plane the metric reads into a slot. */
static void motion_blur(const FloatMotionState *s, FloatMotionScratch *t,
                        const QualePicture *pic, float *slot)
{
    for (int p = 0; p < s->planes; p++) motion_blur_plane(s, t, pic, p, slot + t->offset[p]);
}

/* The blurred picture of frame index, from this worker's slots or made in
 * a slot that holds none of the frames in keep[0..2]. */
static const float *motion_blurred(const FloatMotionState *s, FloatMotionScratch *t,
                                   const QualePicture *pic, long long index,
                                   const long long keep[3])
{
    for (int i = 0; i < MOTION_SLOTS; i++)
        if (t->slot[i].index == index) return t->slot[i].plane;
    int victim = 0;
    for (int i = 0; i < MOTION_SLOTS; i++) {
        const long long held = t->slot[i].index;
        if (held < 0 || (held != keep[0] && held != keep[1] && held != keep[2])) {
            victim = i;
            break;
        }
    }
    t->slot[victim].index = -1;
    motion_blur(s, t, pic, t->slot[victim].plane);
    t->slot[victim].index = index;
    return t->slot[victim].plane;
}

/* ---- the score ----------------------------------------------------------------- */

static float plane_sad(const float *a, const float *b, int w, int h, size_t stride)
{
    float accum = 0.0f;
    for (int y = 0; y < h; y++) {
        const float *ra = a + (size_t)y * stride, *rb = b + (size_t)y * stride;
        float line = 0.0f;
        /* libvmaf: float += fabs(float difference), through double */
        for (int x = 0; x < w; x++) line += fabs(ra[x] - rb[x]);
        accum += line;
    }
    return float_motion_mean(accum, w, h);
}

/* plane_sad() of a and b and of a and c at once: two independent sums. */
static void plane_sad2(const float *a, const float *b, const float *c, int w, int h,
                       size_t stride, float *ab, float *ac)
{
    float accum_b = 0.0f, accum_c = 0.0f;
    for (int y = 0; y < h; y++) {
        const float *ra = a + (size_t)y * stride, *rb = b + (size_t)y * stride;
        const float *rc = c + (size_t)y * stride;
        float line_b = 0.0f, line_c = 0.0f;
        for (int x = 0; x < w; x++) {
            line_b += fabs(ra[x] - rb[x]);
            line_c += fabs(ra[x] - rc[x]);
        }
        accum_b += line_b;
        accum_c += line_c;
    }
    *ab = float_motion_mean(accum_b, w, h);
    *ac = float_motion_mean(accum_c, w, h);
}

/* libvmaf's bilinear scaler (vif_scale_frame_s), float in its order;
 * mirror() there works on floats. */
static float mirror_f(float i, float left, float right)
{
    return i < left ? -i : i > right ? 2 * right - i : i;
}

static void scale_bilinear(const float *src, int src_w, int src_h, size_t src_stride, float *dst,
                           int dst_w, int dst_h, size_t dst_stride)
{
    if (src_w == dst_w && src_h == dst_h) {
        for (int y = 0; y < dst_h; y++)
            memcpy(dst + (size_t)y * dst_stride, src + (size_t)y * src_stride,
                   (size_t)dst_w * sizeof(float));
        return;
    }
    const float ratio_x = (float)src_w / dst_w, ratio_y = (float)src_h / dst_h;
    for (int y = 0; y < dst_h; y++) {
        const float yy = (y + 0.5) * ratio_y - 0.5;
        const int y1 = (int)mirror_f((float)floor(yy), 0, (float)(src_h - 1));
        const int y2 = (int)mirror_f((float)ceil(yy), 0, (float)(src_h - 1));
        const float dy = yy - y1;
        const float *r1 = src + (size_t)y1 * src_stride, *r2 = src + (size_t)y2 * src_stride;
        float *out = dst + (size_t)y * dst_stride;
        for (int x = 0; x < dst_w; x++) {
            const float xx = (x + 0.5) * ratio_x - 0.5;
            const int x1 = (int)mirror_f((float)floor(xx), 0, (float)(src_w - 1));
            const int x2 = (int)mirror_f((float)ceil(xx), 0, (float)(src_w - 1));
            const float dx = xx - x1;
            out[x] = (1 - dy) * (1 - dx) * r1[x1] + (1 - dy) * dx * r1[x2] +
                     dy * (1 - dx) * r2[x1] + dy * dx * r2[x2];
        }
    }
}

/* libvmaf's vmaf_image_sad_c() of plane p: the mean absolute difference
 * of two blurred planes, plus that of their half-size versions with
 * motion_add_scale1. */
static float plane_score(const FloatMotionState *s, FloatMotionScratch *t, int p,
                         const float *a, const float *b)
{
    const int w = s->pw[p], h = s->ph[p];
    a += t->offset[p];
    b += t->offset[p];
    const float scale0 = plane_sad(a, b, w, h, t->stride);
    if (!s->add_scale1) return scale0;
    const int sw = (int)(w * 0.5 + 0.5), sh = (int)(h * 0.5 + 0.5);
    const size_t stride = quale_align((size_t)sw, QUALE_ALIGNMENT / sizeof(float));
    scale_bilinear(a, w, h, t->stride, t->scaled[0], sw, sh, stride);
    scale_bilinear(b, w, h, t->stride, t->scaled[1], sw, sh, stride);
    const float scale1 = plane_sad(t->scaled[0], t->scaled[1], sw, sh, stride);
    return scale0 + scale1;
}

/* The score of two blurred slots: the luma's, plus U's and V's in double
 * with motion_add_uv (libvmaf's score += score_u; score += score_v). */
static double motion_score(const FloatMotionState *s, FloatMotionScratch *t, const float *a,
                           const float *b)
{
    double score = plane_score(s, t, 0, a, b);
    for (int p = 1; p < s->planes; p++) score += plane_score(s, t, p, a, b);
    return score;
}

/* motion_score() of a and b and of a and c, sharing the reads of a
 * (without motion_add_scale1). */
static void motion_score2(const FloatMotionState *s, FloatMotionScratch *t, const float *a,
                          const float *b, const float *c, double *ab, double *ac)
{
    double sum_b = 0.0, sum_c = 0.0;
    for (int p = 0; p < s->planes; p++) {
        float pb, pc;
        const size_t o = t->offset[p];
        plane_sad2(a + o, b + o, c + o, s->pw[p], s->ph[p], t->stride, &pb, &pc);
        sum_b = p ? sum_b + pb : pb;
        sum_c = p ? sum_c + pc : pc;
    }
    *ab = sum_b;
    *ac = sum_c;
}

static double motion_blend(double score, double factor, double offset)
{
    return score * factor + (1 - factor) * QUALE_MIN(offset, score);
}

/* motion2 and motion3 from a raw score (libvmaf's order: weight, clip). */
static int put_motion23(const FloatMotionState *s, FeatureSink *sink, unsigned frame,
                        double score)
{
    const double weighted = score * s->fps_weight;
    int err = feature_sink_put(sink, s->key[KEY_MOTION2], frame,
                               QUALE_MIN(weighted, s->max_val));
    if (!err)
        err = feature_sink_put(sink, s->key[KEY_MOTION3], frame,
                               QUALE_MIN(motion_blend(weighted, s->blend_factor,
                                                      s->blend_offset), s->max_val));
    return err;
}

static void remember_score(FloatMotionState *s, unsigned index, double score)
{
    while (atomic_flag_test_and_set_explicit(&s->last_lock, memory_order_acquire)) {
    }
    if (s->last_index < (uint64_t)index + 1) {
        s->last_index = (uint64_t)index + 1;
        s->last_score = score;
    }
    atomic_flag_clear_explicit(&s->last_lock, memory_order_release);
}

/* ---- the metric -------------------------------------------------------------------- */

static int motion_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    FloatMotionState *s = state;
    int err = picture_float_check(f, "float_motion", sink);
    if (err) return err;
    if (s->add_uv && f->chroma == QUALE_CHROMA_400) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "float_motion: motion_add_uv needs chroma planes, and 4:0:0 video "
                         "has none (libvmaf refuses it too)");
        return -EINVAL;
    }
    if (s->add_uv && s->add_scale1) {
        /* vmaf_image_sad_c() shrinks a plane read at the stride of its own
         * width, but libvmaf's chroma planes lie at the luma's stride: it
         * reads rows out of place and samples it never wrote */
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "float_motion: motion_add_uv with motion_add_scale1 is not "
                         "supported: libvmaf's scale-1 chroma score reads its planes at the "
                         "wrong stride (uninitialised memory), so it has no defined value");
        return -ENOTSUP;
    }

    s->w = (int)f->width;
    s->h = (int)f->height;
    s->planes = s->add_uv ? 3 : 1;
    const int ss_x = f->chroma == QUALE_CHROMA_420 || f->chroma == QUALE_CHROMA_422;
    const int ss_y = f->chroma == QUALE_CHROMA_420;
    for (int p = 0; p < 3; p++) {
        s->pw[p] = p ? (s->w + ss_x) >> ss_x : s->w;
        s->ph[p] = p ? (s->h + ss_y) >> ss_y : s->h;
    }
    switch (s->filter_size) {
    case 1: s->filter = motion_filter5_identity; s->taps = 5; break;
    case 3: s->filter = motion_filter3; s->taps = 3; break;
    default: s->filter = motion_filter5; s->taps = 5; break;
    }
    s->scaled_w = (int)(s->w * 0.5 + 0.5);
    s->scaled_h = (int)(s->h * 0.5 + 0.5);
    atomic_flag_clear(&s->last_lock);
    s->last_index = 0;
    s->last_score = 0.0;

    /* In libvmaf's order of first values: motion2 and motion at frame 0,
     * motion3 (frame 0's) at frame 1. */
    err = feature_sink_declare(sink, motion_keys[KEY_MOTION2], &s->key[KEY_MOTION2]);
    if (!err && s->debug) err = feature_sink_declare(sink, motion_keys[KEY_MOTION], &s->key[KEY_MOTION]);
    if (!err) err = feature_sink_declare_later(sink, motion_keys[KEY_MOTION3], &s->key[KEY_MOTION3]);
    return err;
}

bool float_motion_scored(const FloatMotionState *s, unsigned index)
{
    return !s->force_zero && index > 0;
}

int float_motion_check_size(const FloatMotionState *s, FeatureSink *sink)
{
    const int radius = s->taps / 2;
    const int planes = s->add_uv ? 3 : 1;
    for (int p = 0; p < planes; p++) {
        const int w = p ? s->pw[p] : s->w, h = p ? s->ph[p] : s->h;
        if (w <= radius || h <= radius) {
            feature_sink_log(sink, QUALE_LOG_ERROR,
                             "float_motion: a %dx%d %s plane is too small for its %d-tap blur "
                             "(libvmaf reads outside the plane below %dx%d)",
                             w, h, p ? "chroma" : "luma", s->taps, radius + 1, radius + 1);
            return -EINVAL;
        }
    }
    return 0;
}

float float_motion_mean(float accum, int w, int h)
{
    return (float)(accum / (w * h));
}

int float_motion_put(FloatMotionState *s, FeatureSink *sink, unsigned i, double score,
                     double score2)
{
    int err = 0;
    if (s->force_zero) {
        err = feature_sink_put(sink, s->key[KEY_MOTION2], i, 0.);
        if (!err) err = feature_sink_put(sink, s->key[KEY_MOTION3], i, 0.);
        if (!err && s->debug) err = feature_sink_put(sink, s->key[KEY_MOTION], i, 0.);
        return err;
    }
    if (i == 0) {
        err = feature_sink_put(sink, s->key[KEY_MOTION2], 0, 0.);
        if (!err && s->debug) err = feature_sink_put(sink, s->key[KEY_MOTION], 0, 0.);
        return err;
    }

    remember_score(s, i, score);

    if (s->debug)
        err = feature_sink_put(sink, s->key[KEY_MOTION], i,
                               QUALE_MIN(score * s->fps_weight, s->max_val));
    if (err) return err;

    if (i == 1) {
        /* frame 0's motion3 looks at frame 1; its motion2 stays 0 */
        return feature_sink_put(sink, s->key[KEY_MOTION3], 0,
                                QUALE_MIN(motion_blend(score * s->fps_weight, s->blend_factor,
                                                       s->blend_offset), s->max_val));
    }

    return put_motion23(s, sink, i - 1, score2 < score ? score2 : score);
}

int float_motion_put_rows(FloatMotionState *s, FeatureSink *sink, unsigned index,
                          const float *rows)
{
    if (!float_motion_scored(s, index)) return float_motion_put(s, sink, index, 0.0f, 0.0f);
    const int err = float_motion_check_size(s, sink);
    if (err) return err;
    float accum = 0.0f, accum2 = 0.0f;
    for (int y = 0; y < s->h; y++) {
        accum += rows[2 * y];
        accum2 += index >= 2 ? rows[2 * y + 1] : 0.0f;
    }
    const float score = float_motion_mean(accum, s->w, s->h);
    const float score2 = index >= 2 ? float_motion_mean(accum2, s->w, s->h) : 0.0f;
    return float_motion_put(s, sink, index, score, score2);
}

static int motion_extract(const void *state, void *scratch, const MetricFrame *frame,
                          FeatureSink *sink)
{
    FloatMotionState *s = (FloatMotionState *)state; /* only last_score is written */
    FloatMotionScratch *t = scratch;
    const unsigned i = frame->index;

    if (!float_motion_scored(s, i)) return float_motion_put(s, sink, i, 0.0f, 0.0f);

    int err = float_motion_check_size(s, sink);
    if (err) return err;
    if (!frame->prev_ref[0] || (i >= 2 && !frame->prev_ref[1])) return -EINVAL;

    /* score[i - 1] (from i >= 2 on) is this worker's if it made frame i - 1 */
    const long long keep[3] = { i, (long long)i - 1, (long long)i - 2 };
    const bool have_prev_score = t->score_index == (long long)i - 1;
    const float *cur = motion_blurred(s, t, frame->ref, i, keep);
    const float *prev = motion_blurred(s, t, frame->prev_ref[0], i - 1, keep);
    const float *prev2 = i >= 2 && !have_prev_score
                       ? motion_blurred(s, t, frame->prev_ref[1], i - 2, keep) : NULL;
    double score, score2 = have_prev_score ? t->score : 0.0;
    if (prev2 && !s->add_scale1) {
        /* libvmaf's score2 is SAD(prev, prev2): |a - b| = |b - a| exactly */
        motion_score2(s, t, prev, cur, prev2, &score, &score2);
    } else {
        score = motion_score(s, t, prev, cur);
        if (prev2) score2 = motion_score(s, t, prev, prev2);
    }
    t->score_index = i;
    t->score = score;
    return float_motion_put(s, sink, i, score, score2);
}

static int motion_flush(void *state, FeatureSink *sink, unsigned frame_count)
{
    FloatMotionState *s = state;
    if (s->force_zero || frame_count == 0) return 0;
    if (frame_count == 1) return feature_sink_put(sink, s->key[KEY_MOTION3], 0, 0.);

    while (atomic_flag_test_and_set_explicit(&s->last_lock, memory_order_acquire)) {
    }
    const uint64_t held = s->last_index;
    const double score = s->last_score;
    atomic_flag_clear_explicit(&s->last_lock, memory_order_release);
    if (held != frame_count) return -EINVAL; /* the last frame was not extracted */
    return put_motion23(s, sink, frame_count - 1, score);
}

static int motion_restart(void *state, FeatureSink *sink)
{
    FloatMotionState *s = state;
    atomic_flag_clear(&s->last_lock);
    s->last_index = 0;
    s->last_score = 0.0;
    return 0;
}

/* The luma, and the chroma planes with motion_add_uv. */
static unsigned motion_planes(const void *state)
{
    const FloatMotionState *s = state;
    return s->add_uv ? 7u : 1u;
}

static const MetricModelFeature float_motion_model_features[] = {
    { "VMAF_feature_motion_score", "motion" },
    { "VMAF_feature_motion2_score", "motion2" },
    { "VMAF_feature_motion3_score", "motion3" },
    { NULL, NULL },
};

const Metric metric_float_motion = {
    .name = "float_motion",
    .keys = motion_keys,
    .model_features = float_motion_model_features,
    .options = motion_options,
    .state_size = sizeof(FloatMotionState),
    /* libvmaf runs its temporal extractors on every frame, subsampled or
     * not; frame i writes frame i - 1's motion2 from ref[i - 2]. */
    .flags = METRIC_EVERY_FRAME | METRIC_LUMA_ONLY | METRIC_WRITES_FIRST,
    .history = 2,
    .planes = motion_planes,
    .init = motion_init,
    .scratch_alloc = motion_scratch_alloc,
    .scratch_free = motion_scratch_free,
    .extract = motion_extract,
    .flush = motion_flush,
    .restart = motion_restart,
};
