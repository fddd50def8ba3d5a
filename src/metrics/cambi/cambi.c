/*
 * CAMBI ("cambi"): libvmaf's Contrast Aware Multiscale Banding Index, a
 * no-reference banding score of the luma plane (0 = no visible banding),
 * bit for bit.  With full_ref the reference is scored too: cambi_source is
 * its score and cambi_full_reference = max(0, cambi - cambi_source).
 *
 * One picture is scored so:
 *
 *  1. Preprocessing.  The luma plane is brought to 10 bits (8 and 9 bits
 *     shifted up, 11 and more rounded down with (v + half) >> shift) and,
 *     when enc_width x enc_height is smaller than the picture, resampled to
 *     it by nearest neighbour with libvmaf's float source positions.  When
 *     the encode had fewer than 10 bits (enc_bitdepth, by default the
 *     input's), an anti-dithering filter replaces each sample by the mean
 *     (rounded down) of itself and its right, lower and lower-right
 *     neighbours (two of them on the last row and column).
 *
 *  2. The spatial mask, once, at the full encoding size: a sample is
 *     "flat" when it equals its right and its lower neighbour (a missing
 *     neighbour counts as equal); a sample is in the mask when more than
 *     mask_index of the samples of the 7x7 square around it (clipped to
 *     the picture) are flat, with
 *         mask_index = (49 + 3 (ceil_log2((w >> 6) (h >> 6)) - 11) - 1) / 2.
 *
 *  3. Five scales.  From the second on (from the first with
 *     cambi_high_res_speedup), picture and mask keep every other row and
 *     column, (n + 1) / 2 of each.  At each scale the picture goes through a
 *     3x3 mode filter (horizontal then vertical mode of three, the
 *     duplicate if two are equal, else the smallest; first and last rows
 *     and columns are left as they are, in place, so the next scale is
 *     decimated from the filtered picture), then every masked sample of
 *     value v gets the c-value
 *         c = max over d < num_diffs, where v + num_diffs <= tvi[d] and
 *                 v + num_diffs + d + 1 > vlt_luma, of
 *             weight[d] p0 p / (p0 + p)
 *     where p0 counts the masked samples equal to v in the window x window
 *     square around it (clipped), and p the larger count of v + d + 1 and
 *     v - d - 1 in the same square.  weight[] is the suprathreshold
 *     contrast response, tvi[d] the largest 10-bit value at which a step of
 *     d + 1 codes is still visible under BT.1886 (or PQ) with
 *     tvi_threshold, plus num_diffs.  The division is libvmaf's: the
 *     integer product in float times a float reciprocal table
 *     (cambi_tables.h).  Unmasked samples have c = 0.
 *     The window is window_size scaled by (w + h) / (3840 + 2160), odd.
 *
 *  4. Pooling: the score of a scale is the mean of its largest
 *     k = topk * (w h) c-values (topk when set, else cambi_topk), which
 *     libvmaf finds with a quickselect and sums, in double, in the order
 *     the quickselect leaves them.  Another order could change the last
 *     bits of that sum, so where they could differ we run the same
 *     quickselect.  Usually they cannot: at most k c-values are non-zero
 *     (banding is rare; most samples are masked out), so the k largest are
 *     all of them, and when every partial sum of them is exact in double
 *     (checked from their count, largest value and smallest ulp), their
 *     sum in picture order is libvmaf's to the bit.  The picture's score is
 *     sum(scale score * {16, 8, 4, 2, 1}) / window^2, capped at
 *     cambi_max_val.
 *
 * The window counts come from libvmaf's sliding histograms: one row of
 * counters per 10-bit value in the band of values a c-value can read, one
 * counter per column.  Moving down a row subtracts the row that leaves the
 * window and adds the row that enters it, each sample adding one to the
 * window-wide range of columns around it in its value's row.  A run of
 * samples with the same values leaving and entering (banded areas are long
 * runs of one value) adds to each column in one pass the number of its
 * samples within reach (integer counts: the order does not matter);
 * chunks of columns masked out in both rows are skipped at once.
 *
 * The row loops are the kernels of a CambiDsp (cambi.h): this file's C
 * ones, built from cambi_tmpl.c, or src/metrics/x86/cambi_<isa>.c's, which
 * give every output the same bits; the steps between rows (the order of
 * the rows, the statistics of the non-zero c-values, pooling) stay here.
 *
 * Limits, as libvmaf's: the encoding size must reach 216 samples in width
 * or height, and window^2 must stay inside the reciprocal table (window
 * <= 65, i.e. about w + h <= 6092 at the default window_size).  Beyond
 * libvmaf: its histogram loops read outside the picture (rows and columns
 * left over from the previous scale, or past the buffer) when the smallest
 * scale is narrower or lower than half the window; such sizes (very thin
 * pictures, e.g. 1920x100) are refused rather than scored on stale data.
 *
 * Where libvmaf crashes, with cambi_vis_lum_threshold so high that no
 * value can be both visible and above it (its band size wraps around),
 * every c-value is 0 here, and so is the score.
 *
 * Heatmaps (heatmaps_path, a directory, made with its parents as
 * libvmaf's mkdirp does, mode 0770): one file per scale,
 * cambi_heatmap_scale_<s>_<w>x<h>_16b.gray, truncated at init, where w x h
 * is the encoding size halved s times (named so even with the high-res
 * speed-up, whose scales are half that).  Each scored frame of the
 * distorted video (never the source) writes the c-values of every scale,
 * before pooling, as 16-bit little-endian codes at frame_index * plane
 * bytes: code = (uint16_t)(65535.0 / max_c * c), with
 * max_c = max weight * window^2 / 4 in integers, converted as x86-64
 * converts it (see cambi_heatmap_code).  Written in place with pwrite, so
 * the worker threads may score frames in any order and the file is
 * libvmaf's single-threaded one (with several threads libvmaf gives each
 * its own extractor, and each opens and truncates the files: its files
 * then change from run to run), skipped frames (--subsample) left as
 * holes.  Beyond libvmaf: an error to write (a full disk) fails the run
 * with a message, and offsets are 64-bit (libvmaf counts samples in an
 * int, which overflows past 2^31 samples, 4 GiB, per file).
 *
 * eotf and cambi_eotf are choices (bt1886, pq); cambi_eotf wins when it is
 * not at its default, as in libvmaf.  libvmaf appends the suffixes of
 * non-default options to "cambi" only, not to cambi_source and
 * cambi_full_reference, and so do we.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cambi.h"
#include "cambi_tables.h"
#include "common.h"
#include "cpu.h"
#include "metric.h"

#include "cambi_private.h"


static const int cambi_scale_weight[CAMBI_SCALES] = { 16, 8, 4, 2, 1 };

static const char *const cambi_keys[CAMBI_KEY_COUNT + 1] = {
    "cambi", "cambi_source", "cambi_full_reference", NULL,
};

/* In enum CambiEotf order. */
static const char *const cambi_eotf_names[] = { "bt1886", "pq", NULL };

static const MetricOption cambi_options[] = {
    { .name = "cambi_max_val", .alias = "cmxv",
      .help = "maximum value allowed; larger values are clipped to it",
      .offset = offsetof(CambiState, max_val), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1000.0, .min = 0.0, .max = 1000.0,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "enc_width", .alias = "encw",
      .help = "encoding width: the picture is scored at this width when smaller (0: its own)",
      .offset = offsetof(CambiState, enc_width), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 180, .max = 7680, .flags = OPTION_FEATURE_PARAM },
    { .name = "enc_height", .alias = "ench",
      .help = "encoding height: the picture is scored at this height when smaller (0: its own)",
      .offset = offsetof(CambiState, enc_height), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 150, .max = 7680, .flags = OPTION_FEATURE_PARAM },
    { .name = "enc_bitdepth", .alias = "encbd",
      .help = "encoding bit depth; below 10 an anti-dithering filter runs first (0: the input's)",
      .offset = offsetof(CambiState, enc_bitdepth), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 6, .max = 16, .flags = OPTION_FEATURE_PARAM },
    { .name = "src_width", .alias = "srcw",
      .help = "source width, with full_ref only (0: the picture's)",
      .offset = offsetof(CambiState, src_width), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 320, .max = 7680, .flags = OPTION_FEATURE_PARAM },
    { .name = "src_height", .alias = "srch",
      .help = "source height, with full_ref only (0: the picture's)",
      .offset = offsetof(CambiState, src_height), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 200, .max = 4320, .flags = OPTION_FEATURE_PARAM },
    { .name = "window_size", .alias = "ws",
      .help = "window size of the c-values at 4K (65 is about 1 degree), scaled to the picture",
      .offset = offsetof(CambiState, window_size), .type = QUALE_OPTION_INT,
      .default_value.i = CAMBI_DEFAULT_WINDOW, .min = 15, .max = 127,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "topk",
      .help = "ratio of the largest c-values pooled, 0 < topk <= 1 "
              "(used when not at its default, else cambi_topk)",
      .offset = offsetof(CambiState, topk), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = CAMBI_DEFAULT_TOPK, .min = 0.0001, .max = 1.0,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "cambi_topk", .alias = "ctpk",
      .help = "ratio of the largest c-values pooled, 0 < cambi_topk <= 1",
      .offset = offsetof(CambiState, cambi_topk), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = CAMBI_DEFAULT_TOPK, .min = 0.0001, .max = 1.0,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "tvi_threshold", .alias = "tvit",
      .help = "visibility threshold of a luminance step: dL < tvi_threshold * L",
      .offset = offsetof(CambiState, tvi_threshold), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.019, .min = 0.0001, .max = 1.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "cambi_vis_lum_threshold", .alias = "vlt",
      .help = "luminance (cd/m2) below which banding is taken as invisible",
      .offset = offsetof(CambiState, vis_lum_threshold), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.0, .min = 0.0, .max = 300.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "max_log_contrast", .alias = "mlc",
      .help = "largest contrast step, log2 of 10-bit codes (2: 4 codes at 10 bits, 1 at 8)",
      .offset = offsetof(CambiState, max_log_contrast), .type = QUALE_OPTION_INT,
      .default_value.i = 2, .min = 0, .max = 5, .flags = OPTION_FEATURE_PARAM },
    { .name = "eotf", .choices = cambi_eotf_names,
      .help = "the EOTF of the visibility thresholds",
      .offset = offsetof(CambiState, eotf_option), .type = QUALE_OPTION_CHOICE,
      .default_value.i = CAMBI_EOTF_BT1886, .flags = OPTION_FEATURE_PARAM },
    { .name = "cambi_eotf", .alias = "ceot", .choices = cambi_eotf_names,
      .help = "the EOTF of the visibility thresholds; wins over eotf when set",
      .offset = offsetof(CambiState, cambi_eotf_option), .type = QUALE_OPTION_CHOICE,
      .default_value.i = CAMBI_EOTF_BT1886, .flags = OPTION_FEATURE_PARAM },
    { .name = "heatmaps_path",
      .help = "a directory (created if missing) where the c-values of every scale are written, "
              "per frame, as 16-bit little-endian planes: "
              "cambi_heatmap_scale_<s>_<w>x<h>_16b.gray",
      .offset = offsetof(CambiState, heatmaps_path), .type = QUALE_OPTION_STRING },
    { .name = "full_ref",
      .help = "also score the reference: cambi_source and cambi_full_reference",
      .offset = offsetof(CambiState, full_ref), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { .name = "cambi_high_res_speedup", .alias = "hrs",
      .help = "1080, 1440 or 2160: from encodes of that many samples (1920x1080, ...) on, "
              "score a half-size picture after the spatial mask (faster, less exact); "
              "0 or another value: never",
      .offset = offsetof(CambiState, high_res_speedup), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 0, .max = 2160, .flags = OPTION_FEATURE_PARAM },
    { 0 },
};

/* ---- init --------------------------------------------------------------- */

static int cambi_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    CambiState *s = state;
    for (unsigned scale = 0; scale < CAMBI_SCALES; scale++) s->heatmap_fd[scale] = -1;
    s->eotf = (enum CambiEotf)(s->cambi_eotf_option != CAMBI_EOTF_BT1886 ? s->cambi_eotf_option
                                                                          : s->eotf_option);
    unsigned enc_w, enc_h, src_w, src_h;
    int err = cambi_sizes(s, f, &enc_w, &enc_h, &src_w, &src_h, sink);
    if (err) return err;
    const uint64_t enc_pixels = (uint64_t)enc_w * enc_h;
    switch (s->high_res_speedup) {
    case 1080: s->speedup = enc_pixels >= 1920u * 1080u; break;
    case 1440: s->speedup = enc_pixels >= 2560u * 1440u; break;
    case 2160: s->speedup = enc_pixels >= 3840u * 2160u; break;
    default: s->speedup = false; break;
    }

    err = cambi_geometry(s, &s->dist, enc_w, enc_h, "picture", sink);
    if (err) return err;
    /* libvmaf sizes the source window whether full_ref is set or not. */
    const unsigned src_window = cambi_window(s->window_size, src_w, src_h, s->speedup);
    const unsigned max_window = QUALE_MAX(s->dist.window, src_window);
    if (max_window * max_window >= CAMBI_RECIPROCAL_SIZE) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: the %u-sample window of a %ux%u picture is too large "
                         "for libvmaf's reciprocal table (at most 65: lower window_size, "
                         "or set enc_width and enc_height)", max_window,
                         s->dist.window == max_window ? enc_w : src_w,
                         s->dist.window == max_window ? enc_h : src_h);
        return -EINVAL;
    }
    if (s->full_ref) {
        err = cambi_geometry(s, &s->ref, src_w, src_h, "source", sink);
        if (err) return err;
    }

    s->anti_dither = (s->enc_bitdepth ? (unsigned)s->enc_bitdepth : f->bitdepth) < 10;
    /* topk wins when set, else cambi_topk. */
    s->pool_topk = s->topk != CAMBI_DEFAULT_TOPK ? s->topk : s->cambi_topk;

    if ((err = cambi_contrast(s, sink))) return err;
    cambi_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));

    s->alloc_w = s->dist.width;
    s->alloc_h = s->dist.height;
    if (s->full_ref) {
        s->alloc_w = QUALE_MAX(s->alloc_w, s->ref.width);
        s->alloc_h = QUALE_MAX(s->alloc_h, s->ref.height);
    }

    err = feature_sink_declare(sink, cambi_keys[CAMBI_KEY_SCORE], &s->key[CAMBI_KEY_SCORE]);
    if (!err && s->full_ref) {
        err = feature_sink_declare_plain(sink, cambi_keys[CAMBI_KEY_SOURCE],
                                         &s->key[CAMBI_KEY_SOURCE]);
        if (!err)
            err = feature_sink_declare_plain(sink, cambi_keys[CAMBI_KEY_FULL_REFERENCE],
                                             &s->key[CAMBI_KEY_FULL_REFERENCE]);
    }
    /* Last, so that a failure before leaves no file open (close() runs
     * only after a successful init). */
    if (!err && s->heatmaps_path) err = cambi_open_heatmaps(s, sink);
    return err;
}

/* ---- per-thread buffers ------------------------------------------------- */

typedef struct CambiScratch {
    uint16_t *image;      /* the picture of the current scale, rows packed */
    uint8_t *mask;        /* its mask, same layout */
    float *c_values;      /* same layout */
    uint16_t *histograms; /* band_size rows of one counter per column */
    uint16_t *mode_rows;  /* 3 horizontally filtered rows */
    uint32_t *src_x;      /* resampling: source column of each column */
    uint8_t *flat;        /* CAMBI_FLAT_ROWS rows of flat flags */
    uint8_t *flat_count;  /* flat samples of each column in the mask's rows */
    uint8_t *heatmap;     /* one scale's 16-bit codes, with heatmaps_path */
} CambiScratch;

static int cambi_scratch_alloc(const void *state, void **scratch)
{
    const CambiState *s = state;
    const size_t w = s->alloc_w, plane = (size_t)s->alloc_w * s->alloc_h;
    const size_t sizes[] = {
        plane * sizeof(uint16_t),
        plane,
        plane * sizeof(float),
        (size_t)QUALE_MAX(s->contrast.band_size, 1) * w * sizeof(uint16_t) +
            CAMBI_HISTOGRAM_SLACK,
        3 * w * sizeof(uint16_t),
        w * sizeof(uint32_t),
        CAMBI_FLAT_ROWS * w,
        w + 2 * CAMBI_MASK_PAD,
        s->heatmaps_path ? (size_t)s->dist.width * s->dist.height * sizeof(uint16_t) : 0,
    };
    size_t total = quale_align(sizeof(CambiScratch), QUALE_ALIGNMENT);
    for (unsigned i = 0; i < QUALE_ARRAY_SIZE(sizes); i++)
        total += quale_align(sizes[i], QUALE_ALIGNMENT);

    uint8_t *base = quale_aligned_alloc(total);
    if (!base) return -ENOMEM;
    CambiScratch *t = (CambiScratch *)base;
    uint8_t *p = base + quale_align(sizeof(CambiScratch), QUALE_ALIGNMENT);
    void **slots[] = {
        (void **)&t->image, (void **)&t->mask, (void **)&t->c_values,
        (void **)&t->histograms, (void **)&t->mode_rows, (void **)&t->src_x,
        (void **)&t->flat, (void **)&t->flat_count, (void **)&t->heatmap,
    };
    for (unsigned i = 0; i < QUALE_ARRAY_SIZE(sizes); i++) {
        *slots[i] = p;
        p += quale_align(sizes[i], QUALE_ALIGNMENT);
    }
    *scratch = t;
    return 0;
}

static void cambi_scratch_free(void *scratch)
{
    quale_aligned_free(scratch);
}

/* ---- preprocessing ------------------------------------------------------ */

/* libvmaf's nearest-neighbour positions: a float walk from
 * ratio / 2 - 0.5 in steps of ratio = in / out, each rounded half up. */
void cambi_source_positions(uint32_t *pos, unsigned in, unsigned out)
{
    const float ratio = (float)in / (float)out;
    float x = (float)((double)(ratio / 2) - 0.5);
    for (unsigned i = 0; i < out; i++) {
        const unsigned p = (unsigned)(int)((double)x + 0.5);
        pos[i] = QUALE_MIN(p, in - 1);
        x += ratio;
    }
}

/* ---- the row kernels ------------------------------------------------------ */

#define CAMBI_FN(name) cambi_##name##_c
#include "cambi_tmpl.c"
#undef CAMBI_FN

/* The dsp of one instruction set's kernels. */
#define CAMBI_KERNELS(isa)                                                                        \
    (CambiDsp){ .load_row = cambi_load_row_##isa, .anti_dither_row = cambi_anti_dither_row_##isa, \
                .flat_row = cambi_flat_row_##isa, .mask_row = cambi_mask_row_##isa,               \
                .decimate_row16 = cambi_decimate_row16_##isa,                                     \
                .decimate_row8 = cambi_decimate_row8_##isa, .mode_row = cambi_mode_row_##isa,     \
                .mode_column = cambi_mode_column_##isa, .slide_row = cambi_slide_row_##isa,       \
                .c_values_row = cambi_c_values_row_##isa }

void cambi_dsp_init(CambiDsp *dsp, unsigned cpu_flags)
{
    CPU_PICK_KERNELS(*dsp, CAMBI_KERNELS, cpu_flags);
}

/* The luma plane, at 10 bits and the scored size, into image (rows of w). */
static void cambi_load(const CambiState *s, const QualePicture *pic, uint16_t *image, unsigned w,
                       unsigned h, uint32_t *src_x)
{
    const unsigned in_w = pic->plane_width[0], in_h = pic->plane_height[0];
    const uint8_t *data = pic->data[0];
    const ptrdiff_t stride = pic->stride[0];
    const bool resample = in_w != w || in_h != h;

    if (resample) cambi_source_positions(src_x, in_w, w);
    const float ratio_y = (float)in_h / (float)h;
    float y = (float)((double)(ratio_y / 2) - 0.5);

    for (unsigned i = 0; i < h; i++) {
        unsigned row = i;
        if (resample) {
            row = QUALE_MIN((unsigned)(int)((double)y + 0.5), in_h - 1);
            y += ratio_y;
        }
        s->dsp.load_row(data + (ptrdiff_t)row * stride, pic->format.bitdepth,
                        resample ? src_x : NULL, image + (size_t)i * w, w);
    }
}

/* Each sample becomes the mean, rounded down, of itself and its right,
 * lower and lower-right neighbours (those that exist), in place: every
 * sample read is still the original. */
static void cambi_anti_dither(const CambiState *s, uint16_t *image, unsigned w, unsigned h)
{
    for (unsigned i = 0; i + 1 < h; i++)
        s->dsp.anti_dither_row(image + (size_t)i * w, image + (size_t)(i + 1) * w, w);
    s->dsp.anti_dither_row(image + (size_t)(h - 1) * w, NULL, w);
}

/* ---- spatial mask ------------------------------------------------------- */

/* flat[j] = sample (r, j) equals its right and lower neighbours. */
static void cambi_flat_row(const CambiState *s, const uint16_t *image, unsigned w, unsigned h,
                           unsigned r, uint8_t *flat)
{
    const uint16_t *a = image + (size_t)r * w;
    s->dsp.flat_row(a, r + 1 < h ? a + w : NULL, flat, w);
}

/* mask = more than mask_index flat samples in the 7x7 square (clipped).
 * count holds, for each column, the flat samples of the square's rows,
 * with CAMBI_MASK_PAD zero columns on each side; each row of flat flags is
 * computed once, into a ring of CAMBI_FLAT_ROWS rows. */
static void cambi_spatial_mask(const CambiState *s, const uint16_t *image, uint8_t *mask,
                               unsigned w, unsigned h, unsigned mask_index, uint8_t *flat_ring,
                               uint8_t *count_buf)
{
    const unsigned pad = CAMBI_MASK_PAD;
    uint8_t *count = count_buf + pad;
    memset(count_buf, 0, w + 2 * pad);
    for (unsigned r = 0; r < pad && r < h; r++) {
        uint8_t *flat = flat_ring + (size_t)(r % CAMBI_FLAT_ROWS) * w;
        cambi_flat_row(s, image, w, h, r, flat);
        for (unsigned j = 0; j < w; j++) count[j] += flat[j];
    }
    for (unsigned i = 0; i < h; i++) {
        uint8_t *add = NULL;
        const uint8_t *sub = NULL;
        if (i + pad < h) {
            add = flat_ring + (size_t)((i + pad) % CAMBI_FLAT_ROWS) * w;
            cambi_flat_row(s, image, w, h, i + pad, add);
        }
        if (i > pad) sub = flat_ring + (size_t)((i - pad - 1) % CAMBI_FLAT_ROWS) * w;
        s->dsp.mask_row(count, add, sub, mask + (size_t)i * w, w, mask_index);
    }
}

/* ---- scales ------------------------------------------------------------- */

/* Keeps every other row and column, in place: rows of w become rows of
 * (w + 1) / 2, and every read is at or after the write it feeds (row 0
 * onto itself, the others into rows already read). */
static void cambi_decimate16(const CambiState *s, uint16_t *p, unsigned w, unsigned h)
{
    const unsigned dw = cambi_halve(w), dh = cambi_halve(h);
    for (unsigned j = 0; j < dw; j++) p[j] = p[2 * j];
    for (unsigned i = 1; i < dh; i++)
        s->dsp.decimate_row16(p + (size_t)2 * i * w, p + (size_t)i * dw, dw);
}

static void cambi_decimate8(const CambiState *s, uint8_t *p, unsigned w, unsigned h)
{
    const unsigned dw = cambi_halve(w), dh = cambi_halve(h);
    for (unsigned j = 0; j < dw; j++) p[j] = p[2 * j];
    for (unsigned i = 1; i < dh; i++)
        s->dsp.decimate_row8(p + (size_t)2 * i * w, p + (size_t)i * dw, dw);
}

/* 3x3 mode filter in place, separable: the vertical mode of three
 * horizontally filtered rows; first and last rows stay. */
static void cambi_mode_filter(const CambiState *s, uint16_t *image, unsigned w, unsigned h,
                              uint16_t *rows)
{
    if (h < 3) return;
    s->dsp.mode_row(image, rows, w);
    s->dsp.mode_row(image + w, rows + w, w);
    for (unsigned i = 2; i < h; i++) {
        /* Row i is read before row i - 1 is written. */
        s->dsp.mode_row(image + (size_t)i * w, rows + (size_t)(i % 3) * w, w);
        s->dsp.mode_column(rows, rows + w, rows + 2 * w, image + (size_t)(i - 1) * w, w);
    }
}

/* ---- c-values ----------------------------------------------------------- */

/* Adds a row's non-zero c-values to nz in picture order.  c-values are
 * never negative (0.0f or above), so a run of 16 whose bits are all zero
 * has none: those are skipped at once. */
static void cambi_nonzero_row(const float *c_values, unsigned w, CambiNonZero *nz)
{
    for (unsigned j0 = 0; j0 < w; j0 += 16) {
        const unsigned n = QUALE_MIN(16u, w - j0);
        uint32_t bits = 0;
        for (unsigned j = 0; j < n; j++) {
            uint32_t word;
            memcpy(&word, c_values + j0 + j, sizeof(word));
            bits |= word;
        }
        if (!bits) continue;
        for (unsigned j = j0; j < j0 + n; j++) cambi_nonzero_add(nz, c_values[j]);
    }
}

static void cambi_c_values(const CambiState *s, CambiScratch *t, unsigned w, unsigned h,
                           unsigned window, CambiNonZero *nz)
{
    const CambiContrast *k = &s->contrast;
    const unsigned pad = window / 2;
    *nz = (CambiNonZero){ .sum = 0.0, .count = 0, .smallest = INFINITY, .largest = 0.0f };
    if (k->band_size == 0) {
        memset(t->c_values, 0, sizeof(float) * w * h);
        return;
    }
    memset(t->histograms, 0, sizeof(uint16_t) * w * (size_t)k->band_size);

    /* The window of row i holds rows i - pad .. i + pad. */
    for (unsigned r = 0; r < pad && r < h; r++)
        s->dsp.slide_row(t->histograms, k, NULL, NULL, t->image + (size_t)r * w,
                         t->mask + (size_t)r * w, w, pad);
    for (unsigned i = 0; i < h; i++) {
        const bool leaves = i > pad, enters = i + pad < h;
        const size_t leave = leaves ? (size_t)(i - pad - 1) * w : 0;
        const size_t enter = enters ? (size_t)(i + pad) * w : 0;
        if (leaves || enters)
            s->dsp.slide_row(t->histograms, k, leaves ? t->image + leave : NULL,
                             leaves ? t->mask + leave : NULL, enters ? t->image + enter : NULL,
                             enters ? t->mask + enter : NULL, w, pad);
        const size_t row = (size_t)i * w;
        if (s->dsp.c_values_row(k, cambi_reciprocal, t->histograms, t->image + row,
                                t->mask + row, t->c_values + row, w))
            cambi_nonzero_row(t->c_values + row, w, nz);
    }
}

/* ---- pooling ------------------------------------------------------------ */

/* libvmaf's quickselect (Hoare partitions, descending): afterwards the k
 * largest values are v[0 .. k-1], in an order the sum depends on. */
static void cambi_quickselect(float *v, int n, int k)
{
    if (n == k) return;
    int left = 0, right = n - 1;
    while (left < right) {
        const float pivot = v[k];
        int i = left, j = right;
        do {
            while (v[i] > pivot) i++;
            while (v[j] < pivot) j--;
            if (i <= j) {
                const float tmp = v[i];
                v[i] = v[j];
                v[j] = tmp;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < k) left = i;
        if (k < i) right = j;
    }
}

/* Whether every partial sum of the non-zero values, in any order, is exact
 * in double: all are multiples of the ulp of the smallest, 2^(e - 24), and
 * no sum exceeds count * largest; below 2^52 such ulps, a double holds
 * them all (the one bit to spare covers the rounding of the product). */
static bool cambi_sum_is_exact(const CambiNonZero *nz)
{
    if (!nz->count) return true;
    int e;
    frexpf(nz->smallest, &e);
    return (double)nz->count * nz->largest < ldexp(1.0, e - 24 + 52);
}

/* How many values libvmaf pools: topk * n converted to int, then clamped
 * to 1 .. n. */
static int cambi_pool_count(unsigned w, unsigned h, double topk)
{
    const int n = (int)(w * h);
    const int k = (int)(topk * n);
    return QUALE_MIN(QUALE_MAX(k, 1), n);
}

/* libvmaf averages the k largest values in the order its quickselect
 * leaves them.  When they are all the non-zero values and zeros, and their
 * sum is exact whatever the order (the usual case: banding leaves most
 * c-values at 0), that sum is the one already made, in any order. */
bool cambi_pool_needs_values(unsigned w, unsigned h, double topk, const CambiNonZero *nz)
{
    const int k = cambi_pool_count(w, h, topk);
    return !(nz->count <= (unsigned)k && cambi_sum_is_exact(nz));
}

double cambi_pool(float *c_values, unsigned w, unsigned h, double topk, const CambiNonZero *nz)
{
    const int n = (int)(w * h), k = cambi_pool_count(w, h, topk);
    if (!cambi_pool_needs_values(w, h, topk, nz)) return nz->sum / k;

    cambi_quickselect(c_values, n, k);
    double sum = 0;
    for (int i = 0; i < k; i++) sum += c_values[i];
    return sum / k;
}

/* ---- scoring ------------------------------------------------------------ */

double cambi_combine(const CambiGeometry *g, const double scale_score[CAMBI_SCALES])
{
    double score = 0.0;
    for (unsigned scale = 0; scale < CAMBI_SCALES; scale++)
        score += scale_score[scale] * cambi_scale_weight[scale];
    /* libvmaf's window area is a 16-bit count. */
    const uint16_t area = (uint16_t)(g->window * g->window);
    return score / area;
}

/* ---- for the GPU twins -------------------------------------------------- */

void cambi_scale_sizes(const CambiState *s, const CambiGeometry *g, unsigned sw[CAMBI_SCALES],
                       unsigned sh[CAMBI_SCALES])
{
    unsigned w = g->width, h = g->height;
    for (unsigned scale = 0; scale < CAMBI_SCALES; scale++) {
        if (scale > 0 || s->speedup) {
            w = cambi_halve(w);
            h = cambi_halve(h);
        }
        sw[scale] = w;
        sh[scale] = h;
    }
}

static unsigned cambi_ceil_div(unsigned n, unsigned d)
{
    return (n + d - 1) / d;
}

/* A block runs up to rows + window - 1 steps (the first window - 1 only
 * fill its window), and `resident` blocks run at once: the launch takes
 * about as long as the longest block times the waves of blocks, and at
 * least all the steps spread over the resident blocks.  Fewer rows
 * shorten a block but add starts and blocks. */
unsigned cambi_chunk_rows(const unsigned sw[CAMBI_SCALES], const unsigned sh[CAMBI_SCALES],
                          unsigned window, unsigned strip, unsigned resident)
{
    const unsigned pad = window / 2, h0 = sh[0];
    if (!resident) return h0;
    unsigned best = h0;
    double best_cost = INFINITY;
    for (unsigned rows = h0; rows >= 1; rows--) {
        double steps = 0;
        unsigned blocks = 0;
        for (unsigned s = 0; s < CAMBI_SCALES; s++) {
            const unsigned strips = cambi_ceil_div(sw[s], strip);
            const unsigned chunks = cambi_ceil_div(sh[s], rows);
            blocks += strips * chunks;
            steps += (double)strips * (sh[s] + (double)chunks * 2 * pad);
        }
        const double waves = cambi_ceil_div(blocks, resident);
        const double longest = waves * (rows + 2.0 * pad), spread = steps / resident;
        const double cost = longest > spread ? longest : spread;
        if (cost < best_cost) {
            best_cost = cost;
            best = rows;
        }
    }
    return best;
}

int cambi_pool_picture(const CambiState *s, const CambiGeometry *g,
                       const unsigned sw[CAMBI_SCALES], const unsigned sh[CAMBI_SCALES],
                       const CambiNonZero nz[CAMBI_SCALES], CambiValuesFn values, void *cookie,
                       double *score, char *error, size_t error_size)
{
    double scale_score[CAMBI_SCALES];
    float *buffer = NULL; /* the largest scale's size, on first need */
    int err = 0;
    for (unsigned scale = 0; scale < CAMBI_SCALES && !err; scale++) {
        const unsigned w = sw[scale], h = sh[scale];
        float *v = NULL;
        if (cambi_pool_needs_values(w, h, s->pool_topk, &nz[scale])) {
            if (!values) {
                snprintf(error, error_size, "scale %u is pooled from its c-values", scale);
                err = -EAGAIN;
                break;
            }
            if (!buffer) buffer = malloc((size_t)sw[0] * sh[0] * sizeof(float));
            if (!buffer) {
                snprintf(error, error_size, "out of memory for the c-values of a scale");
                err = -ENOMEM;
                break;
            }
            err = values(cookie, scale, buffer, error, error_size);
            v = buffer;
        }
        if (!err) scale_score[scale] = cambi_pool(v, w, h, s->pool_topk, &nz[scale]);
    }
    free(buffer);
    if (!err) *score = cambi_combine(g, scale_score);
    return err;
}

double cambi_score(const CambiState *s, const CambiGeometry *g, const QualePicture *pic,
                   void *scratch, const CambiObserver *observer)
{
    CambiScratch *t = scratch;
    unsigned w = g->width, h = g->height;
    cambi_load(s, pic, t->image, w, h, t->src_x);
    if (s->anti_dither) cambi_anti_dither(s, t->image, w, h);
    cambi_spatial_mask(s, t->image, t->mask, w, h, g->mask_index, t->flat, t->flat_count);
    if (observer && observer->preprocessed)
        observer->preprocessed(observer->cookie, t->image, t->mask, w, h);

    double scale_score[CAMBI_SCALES];
    for (unsigned scale = 0; scale < CAMBI_SCALES; scale++) {
        if (scale > 0 || s->speedup) {
            cambi_decimate16(s, t->image, w, h);
            cambi_decimate8(s, t->mask, w, h);
            w = cambi_halve(w);
            h = cambi_halve(h);
        }
        cambi_mode_filter(s, t->image, w, h, t->mode_rows);
        CambiNonZero nz;
        cambi_c_values(s, t, w, h, g->window, &nz);
        if (observer && observer->scale)
            observer->scale(observer->cookie, scale, t->image, t->mask, t->c_values, w, h, &nz);
        scale_score[scale] = cambi_pool(t->c_values, w, h, s->pool_topk, &nz);
    }
    return cambi_combine(g, scale_score);
}

int cambi_write(const CambiState *s, FeatureSink *sink, unsigned index, double dist, double src)
{
    int err = feature_sink_put(sink, s->key[CAMBI_KEY_SCORE], index, QUALE_MIN(dist, s->max_val));
    if (err || !s->full_ref) return err;
    err = feature_sink_put(sink, s->key[CAMBI_KEY_SOURCE], index, QUALE_MIN(src, s->max_val));
    if (err) return err;
    const double combined = QUALE_MAX(0.0, dist - src);
    return feature_sink_put(sink, s->key[CAMBI_KEY_FULL_REFERENCE], index,
                            QUALE_MIN(combined, s->max_val));
}

/* Heatmaps are written from each scale's c-values as cambi_score() sees
 * them, before pooling reorders them. */
typedef struct CambiHeatmapWriter {
    const CambiState *s;
    unsigned frame;
    uint8_t *bytes;
    FeatureSink *sink;
    int err;
} CambiHeatmapWriter;

static void cambi_heatmap_scale(void *cookie, unsigned scale, const uint16_t *image,
                                const uint8_t *mask, const float *c_values, unsigned w, unsigned h,
                                const CambiNonZero *nz)
{
    (void)image;
    (void)mask;
    (void)nz;
    CambiHeatmapWriter *hw = cookie;
    if (!hw->err)
        hw->err = cambi_write_heatmap(hw->s, scale, hw->frame, c_values, w, h, hw->bytes, hw->sink);
}

static int cambi_extract(const void *state, void *scratch, const MetricFrame *frame,
                         FeatureSink *sink)
{
    const CambiState *s = state;
    CambiScratch *t = scratch;
    /* Heatmaps are of the distorted picture only, as libvmaf's. */
    CambiHeatmapWriter writer = { s, frame->index, t->heatmap, sink, 0 };
    const CambiObserver heatmaps = { &writer, NULL, cambi_heatmap_scale };
    const double dist =
        cambi_score(s, &s->dist, frame->dist, scratch, s->heatmaps_path ? &heatmaps : NULL);
    if (writer.err) return writer.err;
    const double src = s->full_ref ? cambi_score(s, &s->ref, frame->ref, scratch, NULL) : 0.0;
    return cambi_write(s, sink, frame->index, dist, src);
}

/* The heatmaps are complete: close them, reporting what close() finds
 * (a write the file system deferred). */
static int cambi_flush(void *state, FeatureSink *sink, unsigned frame_count)
{
    (void)frame_count;
    CambiState *s = state;
    int err = 0;
    for (unsigned scale = 0; scale < CAMBI_SCALES; scale++) {
        if (s->heatmap_fd[scale] < 0) continue;
        if (close(s->heatmap_fd[scale]) && !err) {
            err = -errno;
            cambi_heatmap_error(s, scale, "finish", err, sink);
        }
        s->heatmap_fd[scale] = -1;
    }
    return err;
}

/* The heatmaps are the files of one run: a context keeping cambi with them
 * is not reset for another pair (it would write over the first's). */
static int cambi_restart(void *state, FeatureSink *sink)
{
    const CambiState *s = state;
    if (!s->heatmaps_path || !s->heatmaps_path[0]) return 0;
    feature_sink_log(sink, QUALE_LOG_ERROR, "cambi: its heatmaps (heatmaps_path) are the files "
                     "of one run; a context that writes them cannot be reset for another pair");
    return -ENOTSUP;
}

static void cambi_close(void *state)
{
    cambi_close_heatmaps(state);
}

static const MetricModelFeature cambi_model_features[] = {
    { "Cambi_feature_cambi_score", "cambi" },
    { NULL, NULL },
};

const Metric metric_cambi = {
    .name = "cambi",
    .keys = cambi_keys,
    .model_features = cambi_model_features,
    .options = cambi_options,
    .state_size = sizeof(CambiState),
    .flags = METRIC_LUMA_ONLY,
    .init = cambi_init,
    .scratch_alloc = cambi_scratch_alloc,
    .scratch_free = cambi_scratch_free,
    .extract = cambi_extract,
    .flush = cambi_flush,
    .restart = cambi_restart,
    .close = cambi_close,
};
