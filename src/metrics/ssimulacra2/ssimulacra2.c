/*
 * SSIMULACRA2 (Jon Sneyers, Cloudinary; libjxl's tools/ssimulacra2.cc) of
 * each frame pair: both pictures to 8-bit RGB as FFmpeg's swscale makes
 * rgb24 with accurate_rnd+bitexact (ssimulacra2_rgb.c; BT.709 limited
 * range unless the options say otherwise), then the score of the two RGB
 * pictures as the tool computes it for two PNG files holding them
 * (ssimulacra2_score.c).  Higher is better: 100 for identical pictures,
 * about 90 for differences invisible at 1:1, 30 for low quality.
 */
#include <errno.h>
#include <stdlib.h>

#include "common.h"
#include "metric.h"
#include "ssimulacra2.h"

static const char *const matrix_names[] = {
    "bt709", "bt601", "bt2020", "fcc", "smpte240m", NULL,
};

static const MetricOption ssimulacra2_options[] = {
    { .name = "matrix", .choices = matrix_names,
      .help = "the YUV matrix of the input (swscale's coefficients)",
      .offset = offsetof(Ssimulacra2State, matrix), .type = QUALE_OPTION_CHOICE,
      .default_value.i = SSIM2_MATRIX_BT709 },
    { .name = "full_range", .help = "the input is full range (else limited: 16-235, 16-240)",
      .offset = offsetof(Ssimulacra2State, full_range), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { 0 },
};

static const char *const ssimulacra2_keys[] = { "ssimulacra2", NULL };

static int ssimulacra2_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    Ssimulacra2State *s = state;
    if (f->chroma == QUALE_CHROMA_400) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "ssimulacra2: 4:0:0 pictures have no colour to convert to RGB; "
                         "it needs 4:2:0, 4:2:2 or 4:4:4");
        return -EINVAL;
    }
    if (f->width < 8 || f->height < 8) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "ssimulacra2: %ux%u is too small; pictures need at least 8x8 samples",
                         f->width, f->height);
        return -EINVAL;
    }
    s->score = ssim2_score_pick(feature_sink_cpu_flags(sink));
    int err = ssim2_rgb_init(&s->rgb, f, (enum Ssim2Matrix)s->matrix, s->full_range);
    if (err) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "ssimulacra2: out of memory setting up %ux%u",
                         f->width, f->height);
        return err;
    }
    return feature_sink_declare(sink, ssimulacra2_keys[0], &s->key);
}

typedef struct Ssimulacra2Scratch {
    uint8_t *rgb[2];
    int16_t *rows;
} Ssimulacra2Scratch;

static void ssimulacra2_scratch_free(void *scratch)
{
    Ssimulacra2Scratch *sc = scratch;
    if (!sc) return;
    free(sc->rgb[0]);
    free(sc->rgb[1]);
    free(sc->rows);
    free(sc);
}

static int ssimulacra2_scratch_alloc(const void *state, void **scratch)
{
    const Ssimulacra2State *s = state;
    Ssimulacra2Scratch *sc = calloc(1, sizeof(*sc));
    if (!sc) return -ENOMEM;
    const size_t bytes = (size_t)s->rgb.width * s->rgb.height * 3;
    sc->rgb[0] = malloc(bytes);
    sc->rgb[1] = malloc(bytes);
    sc->rows = malloc(ssim2_rgb_scratch_samples(&s->rgb) * sizeof(int16_t));
    if (!sc->rgb[0] || !sc->rgb[1] || !sc->rows) {
        ssimulacra2_scratch_free(sc);
        return -ENOMEM;
    }
    *scratch = sc;
    return 0;
}

static int ssimulacra2_extract(const void *state, void *scratch, const MetricFrame *frame,
                               FeatureSink *sink)
{
    const Ssimulacra2State *s = state;
    Ssimulacra2Scratch *sc = scratch;
    ssim2_rgb_convert(&s->rgb, frame->ref, sc->rgb[0], sc->rows);
    ssim2_rgb_convert(&s->rgb, frame->dist, sc->rgb[1], sc->rows);
    double score;
    int err = s->score(sc->rgb[0], sc->rgb[1], s->rgb.width, s->rgb.height, &score);
    if (err) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "ssimulacra2: out of memory at frame %u",
                         frame->index);
        return err;
    }
    return feature_sink_put(sink, s->key, frame->index, score);
}

static int ssimulacra2_flush(void *state, FeatureSink *sink, unsigned frame_count)
{
    (void)state;
    (void)sink;
    (void)frame_count;
    return 0;
}

static void ssimulacra2_close(void *state)
{
    Ssimulacra2State *s = state;
    ssim2_rgb_free(&s->rgb);
}

const Metric metric_ssimulacra2 = {
    .name = "ssimulacra2",
    .keys = ssimulacra2_keys,
    .options = ssimulacra2_options,
    .state_size = sizeof(Ssimulacra2State),
    .init = ssimulacra2_init,
    .scratch_alloc = ssimulacra2_scratch_alloc,
    .scratch_free = ssimulacra2_scratch_free,
    .extract = ssimulacra2_extract,
    .flush = ssimulacra2_flush,
    .close = ssimulacra2_close,
};
