/*
 * Integer motion: libvmaf's "motion" extractor (VMAF_integer_feature_*),
 * the temporal feature of the VMAF models.
 *
 * Per frame i (extract), from the luma of the reference only:
 *   sad_score[i] = min(SAD(blur(ref[i - s] - ref[i])) / 256 / (w * h)
 *                      * motion_fps_weight, motion_max_val)
 * with s = 1, or 2 with motion_five_frame_window; frames before s score 0.
 * The blur is the 5-tap fixed-point filter of integer_motion_tmpl.h; it is
 * linear, so libvmaf filters the difference of the two pictures rather than
 * each picture.  Here every frame filters from its own pictures, so frames
 * are independent of each other and run on any worker.
 *
 * At the end of the stream (flush), from the per-frame SAD scores:
 *   motion2[i] = min(sad[i], sad[i + 1]), sad[i] for the last frame, 0 for
 *                the first s frames; with the five-frame window
 *                min(sad[i - 1], sad[i + 1]), or sad[i + 1] at i = 2;
 *   motion3[i] = min(blend(motion2[i]), motion_max_val), averaged with the
 *                previous frame's value under motion_moving_average; the
 *                first s frames take min(blend(sad[s]), motion_max_val)
 *                (0 if the stream stops at frame s);
 *   blend(m)   = m * factor + (1 - factor) * min(offset, m).
 *
 * libvmaf runs this extractor on every frame whatever --subsample says (it
 * is a PREV_REF extractor), so motion2 always looks at the very next frame;
 * the output only lists the subsampled frames.
 *
 * Sizes: the mirror of the blur reaches two samples past each edge and
 * reflects them one sample inside it, which stays in the picture only from
 * 3x3 up.  libvmaf reads outside its buffers below that; here a picture
 * under 3x3 scores only where libvmaf never filters (frames before s, or
 * motion_force_zero) and is an error otherwise.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "cpu.h"
#include "integer_motion.h"
#include "metric.h"

/* The filters shift negative sums right and expect the sign to stay. */
_Static_assert((-3 >> 1) == -2, "arithmetic right shift of negative values");


static const MetricOption motion_options[] = {
    { .name = "motion_force_zero", .alias = "force_0",
      .help = "write 0 for every motion score",
      .offset = offsetof(MotionState, force_zero), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_blend_factor", .alias = "mbf",
      .help = "weight of the raw motion2 score in motion3; the rest goes to min(score, motion_blend_offset)",
      .offset = offsetof(MotionState, blend_factor), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1.0, .min = 0.0, .max = 1.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_blend_offset", .alias = "mbo",
      .help = "the score above which motion3 blends (see motion_blend_factor)",
      .offset = offsetof(MotionState, blend_offset), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 40.0, .min = 0.0, .max = 1000.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_fps_weight", .alias = "mfw",
      .help = "multiplies every per-frame score (a frame-rate correction)",
      .offset = offsetof(MotionState, fps_weight), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1.0, .min = 0.0, .max = 5.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_max_val", .alias = "mmxv",
      .help = "the largest score; larger ones are clipped to it",
      .offset = offsetof(MotionState, max_val), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = MOTION_MAX_VAL_DEFAULT, .min = 0.0, .max = 10000.0,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_five_frame_window", .alias = "mffw",
      .help = "compare each frame with the one two frames back (five-frame window)",
      .offset = offsetof(MotionState, five_frame_window), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { .name = "motion_moving_average", .alias = "mma",
      .help = "average each motion3 score with the previous frame's",
      .offset = offsetof(MotionState, moving_average), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { .name = "debug", .help = "also write the per-frame score as integer_motion",
      .offset = offsetof(MotionState, debug), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { 0 },
};

/* Output names as libvmaf writes them: the SAD score has no alias. */
static const char *const motion_keys[] = {
    "VMAF_integer_feature_motion_sad_score",
    "integer_motion",
    "integer_motion2",
    "integer_motion3",
    NULL,
};

#define MOTION_PIXEL uint8_t
#define MOTION_ACC int32_t
#define MOTION_NAME motion_sad_c_8
#include "integer_motion_tmpl.h"
#undef MOTION_PIXEL
#undef MOTION_ACC
#undef MOTION_NAME

/* 64-bit sums above 8 bits, as in libvmaf: exact for any uint16_t sample,
 * even one above the bit depth that an API caller might send. */
#define MOTION_PIXEL uint16_t
#define MOTION_ACC int64_t
#define MOTION_NAME motion_sad_c_16
#include "integer_motion_tmpl.h"
#undef MOTION_PIXEL
#undef MOTION_ACC
#undef MOTION_NAME

void motion_dsp_init(MotionDsp *dsp, unsigned cpu_flags)
{
    dsp->sad[0] = motion_sad_c_8;
    dsp->sad[1] = motion_sad_c_16;
#if QUALE_X86_SIMD
    /* each level needs the ones below it: --cpumask 24 means C */
    if (!(cpu_flags & QUALE_CPU_AVX2)) return;
    motion_dsp_init_avx2(dsp);
    if (!(cpu_flags & QUALE_CPU_AVX512)) return;
    motion_dsp_init_avx512(dsp);
#else
    (void)cpu_flags;
#endif
}

static double motion_blend(double score, double factor, double offset)
{
    return score * factor + (1 - factor) * QUALE_MIN(offset, score);
}

/* The first frame that has a frame to compare with. */
unsigned motion_first(const MotionState *s)
{
    return s->five_frame_window ? 2 : 1;
}

static int motion_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    MotionState *s = state;
    s->width = f->width;
    s->height = f->height;
    s->bitdepth = f->bitdepth;
    motion_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));

    int err = feature_sink_declare(sink, motion_keys[0], &s->sad_key);
    if (!err && s->debug) err = feature_sink_declare(sink, motion_keys[1], &s->motion_key);
    /* motion2 and motion3 come from the flush, as in libvmaf */
    if (!err) err = feature_sink_declare_at_flush(sink, motion_keys[2], &s->motion2_key);
    if (!err) err = feature_sink_declare_at_flush(sink, motion_keys[3], &s->motion3_key);
    return err;
}

static int motion_scratch_alloc(const void *state, void **scratch)
{
    const MotionState *s = state;
    /* one filtered row and its two mirrored samples on either side (the
     * SIMD kernels read past them into lanes they drop: zeroed, not left
     * uninitialised) */
    *scratch = quale_aligned_alloc(MOTION_ROW_BUFFER_BYTES(s->width));
    if (!*scratch) return -ENOMEM;
    memset(*scratch, 0, MOTION_ROW_BUFFER_BYTES(s->width));
    return 0;
}

static void motion_scratch_free(void *scratch)
{
    quale_aligned_free(scratch);
}

bool motion_needs_sad(const MotionState *s, unsigned index)
{
    return !s->force_zero && index >= motion_first(s);
}

int motion_check_size(const MotionState *s, FeatureSink *sink)
{
    if (s->width >= 3 && s->height >= 3) return 0;
    feature_sink_log(sink, QUALE_LOG_ERROR,
                     "motion: a %ux%u picture is too small for its 5-tap blur "
                     "(libvmaf reads outside the picture below 3x3)", s->width, s->height);
    return -EINVAL;
}

int motion_write_sad(const MotionState *s, FeatureSink *sink, unsigned index, uint64_t sad)
{
    double score = 0.;
    if (motion_needs_sad(s, index)) {
        /* libvmaf's expression, in its order; w * h is an unsigned product */
        score = QUALE_MIN((double)sad / 256. / (s->width * s->height) * s->fps_weight, s->max_val);
    }
    int err = feature_sink_put(sink, s->sad_key, index, score);
    if (!err && s->debug) err = feature_sink_put(sink, s->motion_key, index, score);
    return err;
}

int motion_write_sad_partials(const MotionState *s, FeatureSink *sink, unsigned index,
                              const uint32_t *partials, unsigned per_row)
{
    uint64_t sad = 0;
    if (motion_needs_sad(s, index)) {
        const int err = motion_check_size(s, sink);
        if (err) return err;
        for (unsigned y = 0; y < s->height; y++) {
            uint32_t row = 0;
            for (unsigned g = 0; g < per_row; g++) row += partials[(size_t)y * per_row + g];
            sad += row;
        }
    }
    return motion_write_sad(s, sink, index, sad);
}

static int motion_extract(const void *state, void *scratch, const MetricFrame *frame,
                          FeatureSink *sink)
{
    const MotionState *s = state;
    uint64_t sad = 0;
    if (motion_needs_sad(s, frame->index)) {
        const QualePicture *prev = frame->prev_ref[s->five_frame_window ? 1 : 0];
        const QualePicture *cur = frame->ref;
        if (!prev) return -EINVAL;
        int err = motion_check_size(s, sink);
        if (err) return err;
        sad = s->dsp.sad[s->bitdepth > 8](prev->data[0], prev->stride[0], cur->data[0],
                                          cur->stride[0], s->width, s->height, s->bitdepth,
                                          scratch);
    }
    return motion_write_sad(s, sink, frame->index, sad);
}

static int motion_flush(void *state, FeatureSink *sink, unsigned frame_count)
{
    const MotionState *s = state;
    const unsigned first = motion_first(s);
    /* motion2 compares frame i + 1 with i, or with i - 1 in the five-frame
     * window (i - 1 only from frame 3 on, the first that has a score). */
    const unsigned back = s->five_frame_window ? 1 : 0;

    /* libvmaf reads back the run of scores from frame 0. */
    unsigned n = 0;
    double value;
    while (n < frame_count && !feature_sink_get(sink, s->sad_key, n, &value)) n++;
    if (n == 0) return 0;

    double stamp = 0.;
    if (n > first && !feature_sink_get(sink, s->sad_key, first, &value))
        stamp = QUALE_MIN(motion_blend(value, s->blend_factor, s->blend_offset), s->max_val);

    double prev_processed = 0.;
    for (unsigned i = 0; i < n; i++) {
        double sad = 0.;
        int err = feature_sink_get(sink, s->sad_key, i, &sad);
        if (err) return err;

        double motion2 = 0.;
        if (i >= first) {
            if (i + 1 >= n) {
                motion2 = sad;
            } else {
                double next = 0.;
                if ((err = feature_sink_get(sink, s->sad_key, i + 1, &next))) return err;
                if (i - back >= first) {
                    double lo = 0.;
                    if ((err = feature_sink_get(sink, s->sad_key, i - back, &lo))) return err;
                    motion2 = lo < next ? lo : next;
                } else {
                    motion2 = next;
                }
            }
        }

        double motion3;
        if (i < first) {
            motion3 = stamp;
            prev_processed = stamp;
        } else {
            const double processed = QUALE_MIN(
                motion_blend(motion2, s->blend_factor, s->blend_offset), s->max_val);
            motion3 = s->moving_average ? (processed + prev_processed) / 2.0 : processed;
            prev_processed = processed;
        }

        if ((err = feature_sink_put(sink, s->motion2_key, i, motion2))) return err;
        if ((err = feature_sink_put(sink, s->motion3_key, i, motion3))) return err;
    }
    return 0;
}

static const MetricModelFeature integer_motion_model_features[] = {
    { "VMAF_integer_feature_motion_sad_score", "VMAF_integer_feature_motion_sad_score" },
    { "VMAF_integer_feature_motion_score", "integer_motion" },
    { "VMAF_integer_feature_motion2_score", "integer_motion2" },
    { "VMAF_integer_feature_motion3_score", "integer_motion3" },
    { NULL, NULL },
};

const Metric metric_integer_motion = {
    .name = "motion",
    .keys = motion_keys,
    .model_features = integer_motion_model_features,
    .options = motion_options,
    .state_size = sizeof(MotionState),
    /* libvmaf runs its PREV_REF extractors on every frame, subsampled or
     * not; the five-frame window looks two frames back. */
    .flags = METRIC_EVERY_FRAME | METRIC_LUMA_ONLY,
    .history = 2,
    .init = motion_init,
    .scratch_alloc = motion_scratch_alloc,
    .scratch_free = motion_scratch_free,
    .extract = motion_extract,
    .flush = motion_flush,
};
