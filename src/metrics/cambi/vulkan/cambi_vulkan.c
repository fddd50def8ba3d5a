/*
 * CAMBI on Vulkan: the CUDA twin's decomposition (src/cuda/cambi.cu,
 * cambi_cuda.c).  The device preprocesses, masks, filters and scores every
 * sample of the five scales of the distorted picture (and with full_ref of
 * the reference, side by side); the host reads back the statistics of each
 * scale's non-zero c-values (count, smallest, largest, exact sum; a partial
 * per c-value block) and pools them through cambi_pool_picture(), the C
 * reference's cambi_pool() and cambi_combine(), then writes the keys
 * through cambi_write() (src/metrics/cambi.h), as its extract() does.
 *
 * Per frame, in rounds with a barrier between them (the backend shares
 * them with the other twins' rounds), each picture a dispatch of its own:
 *   cambi_preprocess.comp   the picture at 10 bits, resampled and
 *           anti-dithered, and its spatial mask; without the speed-up also
 *           scale 0's mode filter (it reads the samples the tile has);
 *   cambi_scale.comp        each further scale, decimated from the one
 *           before and mode-filtered (scale 0 too with the speed-up);
 *   cambi_c_values.comp     the c-values of the five scales, in blocks of
 *           S columns by a chunk of rows sliding a window of counters in
 *           shared memory: one partial of statistics per block.
 * So 6 rounds, 7 with cambi_high_res_speedup.
 *
 * Pooling in libvmaf's order: cambi_pool() needs the c-values themselves
 * only where the k largest are not all the non-zero ones or their sum may
 * round differently in another order (cambi_pool_needs_values(); never on
 * the corpus, seen on strongly banded synthetic pictures).  The CUDA twin
 * then copies that scale's c-values back from the slot.  A Vulkan twin's
 * collect() cannot record or submit work (the queues belong to the
 * submitting thread), and keeping every slot's c-values where the host can
 * read them would take slots x 1.33 x 4 bytes a sample of host-visible
 * memory, past the largest storage buffer some devices bind (128 MiB on
 * lavapipe) at 4K.  So such a picture is scored again on the CPU by the C
 * reference (cambi_score(), on the collecting worker), which is its score
 * by definition; the device writes no c-values at all.  On the way, each
 * scale's c-values are checked against what the device found of them
 * (count, smallest, largest, exact sum): a device that computes them
 * otherwise fails the run rather than score the other frames wrong.
 *
 * The plan's memory: per picture and lane (lanes run frames side by side)
 * a buffer of the preprocessed picture (with the speed-up) and the five
 * filtered scales, one 32-bit word a sample (cambi.glsl), bound by
 * descriptor set `picture`, the shaders taking where the frame's region
 * starts as a base in words (0 in a lane's own buffer); constant buffers for the reciprocals, the source
 * positions of a resampled picture and the run's parameters; per slot the
 * partials, host-visible.
 *
 * The counters take band_size x S x 2 bytes of shared memory: S (64, 32,
 * 16 or 8 columns a block) is the widest the device allows, and a device
 * that allows not even 8 leaves cambi to the CPU.  With the defaults S is
 * 32 on NVIDIA (48 KiB) and 16 on lavapipe (32 KiB).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "metrics/common/bitcast.h"
#include "metrics/cambi/cambi.h"
#include "metrics/cambi/cambi_tables.h"
#include "gpu/vulkan/vulkan_twin.h"

VULKAN_SHADER(cambi_preprocess);
VULKAN_SHADER(cambi_scale);
VULKAN_SHADER(cambi_c_values);

enum {
    BINDINGS = 6,        /* cambi.glsl's buffers and cambi_c_values.comp's partials */
    TILE_W = 32,         /* cambi_preprocess.comp: TW, TH */
    TILE_H = 16,
    SCALE_GROUP_W = 64,  /* cambi_scale.comp: its local size */
    SCALE_GROUP_H = 4,
    PARTIAL_WORDS = 6,   /* count, smallest, largest, sum (3 words) */
    SUM_UNIT_EXP = -36,  /* cambi_c_values.comp: the sum's unit, 2^-FIX_UNIT */
    MAX_GROUPS = 65535,  /* dispatch sizes every device takes */
    NONE = -1,
};

/* How many c-value blocks run at once, for cambi_chunk_rows(): Vulkan does
 * not say how many multiprocessors a GPU has, so this guesses one of the
 * large ones the twins are timed on (an H100 or H200: 132 of them, 228 KiB
 * of shared memory each, 1 KiB of it kept per block), whose blocks the
 * counters' shared memory limits.  On a CPU device (lavapipe) a strip's
 * rows are one chunk, which restarts no window. */
#define GPU_MULTIPROCESSORS 132u
#define GPU_SHARED_PER_MULTIPROCESSOR (228u * 1024u)
#define GPU_SHARED_KEPT_PER_BLOCK 1024u

/* Mirrors of cambi.glsl's CambiScale, CambiPicture and the Params buffer. */
typedef struct CambiVkScale {
    uint32_t plane;
    uint32_t sw, sh;
    uint32_t strips;
    uint32_t first_block;
    uint32_t pad[3];
} CambiVkScale;

typedef struct CambiVkPicture {
    CambiVkScale scale[CAMBI_SCALES];
    uint32_t w, h;
    uint32_t window;
    uint32_t chunk_rows;
    uint32_t src_x, src_y;
    uint32_t image;
    uint32_t mask_index;
    uint32_t first_partial;
    uint32_t blocks;
    uint32_t pad[2];
} CambiVkPicture;

typedef struct CambiVkParams {
    int32_t num_diffs, vlt_luma, band_base, band_size;
    uint32_t bitdepth, bytes_per_sample;
    uint32_t anti_dither;
    uint32_t speedup;
    int32_t tvi[CAMBI_MAX_DIFFS];
    int32_t weights[CAMBI_MAX_DIFFS];
    CambiVkPicture pic[2];
} CambiVkParams;

_Static_assert(sizeof(CambiVkScale) == 32, "CambiVkScale: keep cambi.glsl in step");
_Static_assert(sizeof(CambiVkPicture) == 208, "CambiVkPicture: keep cambi.glsl in step");
_Static_assert(offsetof(CambiVkParams, tvi) == 32 && offsetof(CambiVkParams, pic) == 288 &&
                   sizeof(CambiVkParams) == 704,
               "CambiVkParams: keep cambi.glsl in step");

/* The push constants of the three shaders. */
typedef struct PreprocessPush {
    uint32_t src_offset, src_stride, from_ring, picture, mode_filter, out_plane;
} PreprocessPush;

typedef struct ScalePush {
    uint32_t picture, scale, in_plane, in_w, base;
} ScalePush;

typedef struct CValuesPush {
    uint32_t picture, partial_base, plane_base;
} CValuesPush;

/* The plan's buffers (PLANES0 + k: picture k's, bound by set k) and
 * pipelines. */
enum { PARTIALS, TABLE, PARAMS, PLANES0, BUFFERS = PLANES0 + 2 };
enum { PREPROCESS, SCALE, C_VALUES, PIPELINES };

typedef struct CambiVkPicturePlan {
    const CambiGeometry *g;
    unsigned sw[CAMBI_SCALES], sh[CAMBI_SCALES];
    unsigned strips[CAMBI_SCALES], chunks[CAMBI_SCALES], first_block[CAMBI_SCALES];
    unsigned chunk_rows, blocks, first_partial;
    uint32_t image, plane[CAMBI_SCALES]; /* words in the picture's planes */
    size_t words;
} CambiVkPicturePlan;

/* The plan's own: the pictures' layout and the constants' contents. */
typedef struct CambiTwin {
    const CambiState *metric;
    unsigned pictures; /* 1, or 2 with full_ref */
    unsigned strip;
    CambiVkPicturePlan pic[2];
    unsigned per_slot; /* partials */
    uint32_t *table;
    size_t table_words;
    CambiVkParams params;
} CambiTwin;

static unsigned ceil_div(size_t n, unsigned d)
{
    return (unsigned)((n + d - 1) / d);
}

/* The shared memory of a c-value block of strip columns: cambi_c_values.comp's
 * arrays (the 96-bit sums as 16 bytes each, as a device may pad them). */
static size_t c_values_shared_bytes(const CambiState *s, unsigned strip)
{
    const size_t span = strip + 64, span_words = (span + 31) / 32 + 1;
    const size_t bin_rows = (size_t)QUALE_MAX(1, (s->contrast.band_size + 1) / 2);
    return 4 * (bin_rows * strip + 4 * span + 3 * (2 * span_words + 1) + 3 * strip) + 16 * strip;
}

/* The widest block the device allows (0: none). */
static unsigned choose_strip(const VulkanDevice *dev, const CambiState *s)
{
    static const unsigned strips[] = { 64, 32, 16, 8 };
    const size_t limit = dev->properties.limits.maxComputeSharedMemorySize;
    for (unsigned i = 0; i < QUALE_ARRAY_SIZE(strips); i++)
        if (c_values_shared_bytes(s, strips[i]) <= limit) return strips[i];
    return 0;
}

/* Words of one picture's planes: the preprocessed picture (with the
 * speed-up) and the five scales. */
static size_t picture_words(const CambiState *s, const CambiGeometry *g)
{
    unsigned sw[CAMBI_SCALES], sh[CAMBI_SCALES];
    cambi_scale_sizes(s, g, sw, sh);
    size_t words = s->speedup ? (size_t)g->width * g->height : 0;
    for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) words += (size_t)sw[sc] * sh[sc];
    return words;
}

static bool cambi_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    /* every option but heatmaps_path: the heatmap files are written by the
     * C reference, on the CPU (as with CUDA) */
    const CambiState *s = state;
    if (s->heatmaps_path || !choose_strip(dev, s)) return false;
    /* Each picture's planes are one storage buffer. */
    const size_t range = dev->properties.limits.maxStorageBufferRange;
    if (picture_words(s, &s->dist) * 4 > range) return false;
    return !s->full_ref || picture_words(s, &s->ref) * 4 <= range;
}

static void cambi_twin_free(void *own)
{
    CambiTwin *t = own;
    free(t->table);
    free(t);
}

/* The c-value blocks of a picture with chunks of pp->chunk_rows rows. */
static void place_blocks(CambiVkPicturePlan *pp, unsigned strip)
{
    pp->blocks = 0;
    for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) {
        pp->strips[sc] = ceil_div(pp->sw[sc], strip);
        pp->chunks[sc] = ceil_div(pp->sh[sc], pp->chunk_rows);
        pp->first_block[sc] = pp->blocks;
        pp->blocks += pp->strips[sc] * pp->chunks[sc];
    }
}

/* The plan of each picture: scales, blocks, where its planes are. */
static int place_pictures(CambiTwin *t, const VulkanDevice *dev, char *error, size_t error_size)
{
    const CambiState *s = t->metric;
    unsigned resident = 0;
    if (dev->properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) {
        const size_t block = c_values_shared_bytes(s, t->strip) + GPU_SHARED_KEPT_PER_BLOCK;
        const unsigned per = (unsigned)(GPU_SHARED_PER_MULTIPROCESSOR / block);
        resident = GPU_MULTIPROCESSORS * QUALE_MAX(per, 1u);
    }
    /* QUALE_VULKAN_CAMBI_BLOCKS sets it (0: a chunk a strip), so that the
     * chunked windows can be tested on any device. */
    const char *text = getenv("QUALE_VULKAN_CAMBI_BLOCKS");
    if (text && *text) resident = (unsigned)strtoul(text, NULL, 10);
    for (unsigned k = 0; k < t->pictures; k++) {
        CambiVkPicturePlan *pp = &t->pic[k];
        pp->g = k == 0 ? &s->dist : &s->ref;
        cambi_scale_sizes(s, pp->g, pp->sw, pp->sh);
        size_t words = 0;
        if (s->speedup) {
            pp->image = 0;
            words = (size_t)pp->g->width * pp->g->height;
        }
        for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) {
            pp->plane[sc] = (uint32_t)words;
            words += (size_t)pp->sw[sc] * pp->sh[sc];
        }
        pp->words = words;
        /* Longer chunks where a dispatch would not take the blocks. */
        pp->chunk_rows = cambi_chunk_rows(pp->sw, pp->sh, pp->g->window, t->strip, resident);
        place_blocks(pp, t->strip);
        while (pp->blocks > MAX_GROUPS && pp->chunk_rows < pp->sh[0]) {
            pp->chunk_rows = QUALE_MIN(2 * pp->chunk_rows, pp->sh[0]);
            place_blocks(pp, t->strip);
        }
        if (pp->blocks > MAX_GROUPS) {
            snprintf(error, error_size, "cambi: %u c-value blocks are more than a dispatch takes",
                     pp->blocks);
            return -E2BIG;
        }
        pp->first_partial = t->per_slot;
        t->per_slot += pp->blocks;
    }
    return 0;
}

/* The reciprocals, then each resampled picture's source columns and rows
 * (table words: src_x[k], src_y[k], or NONE). */
static int make_table(CambiTwin *t, const QualeVideoFormat *format, int32_t src_x[2],
                      int32_t src_y[2])
{
    size_t words = CAMBI_RECIPROCAL_SIZE;
    for (unsigned k = 0; k < t->pictures; k++) {
        const CambiGeometry *g = t->pic[k].g;
        src_x[k] = src_y[k] = NONE;
        if (g->width == format->width && g->height == format->height) continue;
        src_x[k] = (int32_t)words;
        src_y[k] = (int32_t)(words + g->width);
        words += (size_t)g->width + g->height;
    }
    uint32_t *table = malloc(words * sizeof(uint32_t));
    if (!table) return -ENOMEM;
    memcpy(table, cambi_reciprocal, sizeof(cambi_reciprocal));
    for (unsigned k = 0; k < t->pictures; k++) {
        if (src_x[k] == NONE) continue;
        cambi_source_positions(table + src_x[k], format->width, t->pic[k].g->width);
        cambi_source_positions(table + src_y[k], format->height, t->pic[k].g->height);
    }
    t->table = table;
    t->table_words = words;
    return 0;
}

static void make_params(CambiTwin *t, const QualeVideoFormat *format, const int32_t src_x[2],
                        const int32_t src_y[2])
{
    const CambiState *s = t->metric;
    static const int weights[CAMBI_MAX_DIFFS] = { CAMBI_CONTRAST_WEIGHTS };
    CambiVkParams *p = &t->params;
    memset(p, 0, sizeof(*p));
    p->num_diffs = s->contrast.num_diffs;
    p->vlt_luma = s->contrast.vlt_luma;
    p->band_base = s->contrast.band_base;
    p->band_size = s->contrast.band_size;
    p->bitdepth = format->bitdepth;
    p->bytes_per_sample = format->bitdepth > 8 ? 2 : 1;
    p->anti_dither = s->anti_dither;
    p->speedup = s->speedup;
    for (unsigned d = 0; d < CAMBI_MAX_DIFFS; d++) {
        p->tvi[d] = s->contrast.tvi[d];
        p->weights[d] = weights[d];
    }
    for (unsigned k = 0; k < t->pictures; k++) {
        const CambiVkPicturePlan *pp = &t->pic[k];
        CambiVkPicture *pic = &p->pic[k];
        for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) {
            pic->scale[sc] = (CambiVkScale){
                .plane = pp->plane[sc], .sw = pp->sw[sc], .sh = pp->sh[sc],
                .strips = pp->strips[sc], .first_block = pp->first_block[sc],
            };
        }
        pic->w = pp->g->width;
        pic->h = pp->g->height;
        pic->window = pp->g->window;
        pic->chunk_rows = pp->chunk_rows;
        pic->src_x = (uint32_t)src_x[k];
        pic->src_y = (uint32_t)src_y[k];
        pic->image = pp->image;
        pic->mask_index = pp->g->mask_index;
        pic->first_partial = pp->first_partial;
        pic->blocks = pp->blocks;
    }
}

static int cambi_vulkan_plan(const VulkanDevice *dev, const void *metric_state,
                             const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                             size_t error_size)
{
    const CambiState *s = metric_state;
    /* The exact sums count in units of 2^-36: every c-value (at least the
     * smallest reciprocal) must be a multiple of it, as it is of libvmaf's
     * table (1 / 4225 > 2^-13). */
    for (unsigned n = 1; n < CAMBI_RECIPROCAL_SIZE; n++) {
        if (cambi_reciprocal[n] < ldexpf(1.0f, SUM_UNIT_EXP + 23)) {
            snprintf(error, error_size, "cambi: reciprocal %u is below the exact sums' range", n);
            return -EINVAL;
        }
    }
    CambiTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    plan->own = t;
    plan->free_own = cambi_twin_free;
    t->metric = s;
    t->pictures = s->full_ref ? 2 : 1;
    t->strip = choose_strip(dev, s);
    if (!t->strip) {
        snprintf(error, error_size, "cambi: the device's shared memory cannot hold the counters "
                 "of %d band rows", s->contrast.band_size);
        return -ENOTSUP;
    }
    int32_t src_x[2], src_y[2];
    int err = place_pictures(t, dev, error, error_size);
    if (!err) err = make_table(t, format, src_x, src_y);
    if (err) return err;
    make_params(t, format, src_x, src_y);

    vulkan_plan_results(plan, PARTIALS, "the cambi statistics",
                        (VkDeviceSize)t->per_slot * PARTIAL_WORDS * sizeof(uint32_t));
    plan->buffers[TABLE] = (VulkanPlanBuffer){
        .what = "the cambi tables", .bytes = t->table_words * sizeof(uint32_t),
        .scope = VULKAN_PER_RUN, .data = t->table,
    };
    plan->buffers[PARAMS] = (VulkanPlanBuffer){
        .what = "the cambi parameters", .bytes = sizeof(t->params), .scope = VULKAN_PER_RUN,
        .data = &t->params,
    };
    for (unsigned k = 0; k < t->pictures; k++)
        plan->buffers[PLANES0 + k] = (VulkanPlanBuffer){
            .what = "the cambi scales", .bytes = t->pic[k].words * sizeof(uint32_t),
            .scope = VULKAN_PER_LANE,
        };
    plan->buffer_count = PLANES0 + t->pictures;

    const VulkanPlanPipeline common = {
        VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, VULKAN_BIND_PER_SET(PLANES0), TABLE,
                        PARAMS, PARTIALS),
        .sets = t->pictures,
        .constants = { t->strip, (uint32_t)QUALE_MAX(1, (s->contrast.band_size + 1) / 2) },
    };
    plan->pipelines[PREPROCESS] = common;
    plan->pipelines[PREPROCESS].spirv = vulkan_shader_cambi_preprocess;
    plan->pipelines[PREPROCESS].spirv_size = vulkan_shader_cambi_preprocess_size;
    plan->pipelines[PREPROCESS].what = "the cambi preprocessing shader";
    plan->pipelines[PREPROCESS].push = *VULKAN_PUSH(PreprocessPush, src_offset, src_stride,
                                                    from_ring, picture, mode_filter, out_plane);
    plan->pipelines[SCALE] = common;
    plan->pipelines[SCALE].spirv = vulkan_shader_cambi_scale;
    plan->pipelines[SCALE].spirv_size = vulkan_shader_cambi_scale_size;
    plan->pipelines[SCALE].what = "the cambi scale shader";
    plan->pipelines[SCALE].push = *VULKAN_PUSH(ScalePush, picture, scale, in_plane, in_w, base);
    plan->pipelines[C_VALUES] = common;
    plan->pipelines[C_VALUES].spirv = vulkan_shader_cambi_c_values;
    plan->pipelines[C_VALUES].spirv_size = vulkan_shader_cambi_c_values_size;
    plan->pipelines[C_VALUES].what = "the cambi c-value shader";
    plan->pipelines[C_VALUES].push = *VULKAN_PUSH(CValuesPush, picture, partial_base, plane_base);
    plan->pipelines[C_VALUES].constant_count = 2;
    plan->pipeline_count = PIPELINES;
    /* preprocessing, the scales (1 .. 4, or 0 .. 4 with the speed-up), the
     * c-values */
    plan->rounds = 1 + (s->speedup ? CAMBI_SCALES : CAMBI_SCALES - 1) + 1;
    return 0;
}

/* Round 0 preprocesses, the next ones make the scales (1 .. 4, or 0 .. 4
 * with the speed-up), the last computes the c-values: a step per picture. */
static int cambi_vulkan_round(const VulkanPlan *plan, unsigned round, const VulkanPlanMemory *m,
                              VulkanStep steps[VULKAN_PLAN_MAX_STEPS], char *error,
                              size_t error_size)
{
    (void)error;
    (void)error_size;
    const CambiTwin *t = plan->own;
    const bool speedup = t->metric->speedup;
    const unsigned scale_rounds = speedup ? CAMBI_SCALES : CAMBI_SCALES - 1;
    const VulkanFrame *frame = m->frame;
    for (unsigned k = 0; k < t->pictures; k++) {
        const CambiVkPicturePlan *pp = &t->pic[k];
        const uint32_t base = vulkan_plan_words(m, PLANES0 + k);
        if (round == 0) {
            const PreprocessPush push = {
                .src_offset = (uint32_t)(k == 0 ? frame->dist_offset[0] : frame->ref_offset[0]),
                .src_stride = frame->stride[0],
                .from_ring = k == 1,
                .picture = k,
                .mode_filter = !speedup,
                .out_plane = base + (speedup ? pp->image : pp->plane[0]),
            };
            VULKAN_STEP_SET_IN(&steps[k], PREPROCESS, k, ceil_div(pp->g->width, TILE_W),
                               ceil_div(pp->g->height, TILE_H), push);
        } else if (round <= scale_rounds) {
            const unsigned sc = speedup ? round - 1 : round;
            const ScalePush push = {
                .picture = k,
                .scale = sc,
                .in_plane = base + (sc == 0 ? pp->image : pp->plane[sc - 1]),
                .in_w = sc == 0 ? pp->g->width : pp->sw[sc - 1],
                .base = base,
            };
            VULKAN_STEP_SET_IN(&steps[k], SCALE, k, ceil_div(pp->sw[sc], SCALE_GROUP_W),
                               ceil_div(pp->sh[sc], SCALE_GROUP_H), push);
        } else {
            const CValuesPush push = {
                .picture = k,
                .partial_base = vulkan_plan_words(m, PARTIALS),
                .plane_base = base,
            };
            VULKAN_STEP_SET_IN(&steps[k], C_VALUES, k, pp->blocks, 1, push);
        }
    }
    return (int)t->pictures;
}

/* What the device found of a scale's non-zero c-values: their count, the
 * bits of the smallest and largest (a positive float's order is its bits'
 * order), and their sum, exactly: an integer of 2^-36 units, in 128 bits. */
typedef struct ScaleStats {
    unsigned count;
    uint32_t smallest, largest; /* +inf and 0 without any */
    uint64_t sum_low, sum_high;
} ScaleStats;

static void scale_stats_add(ScaleStats *st, float c)
{
    const uint32_t bits = bitcast_float_bits(c);
    st->count++;
    st->smallest = QUALE_MIN(st->smallest, bits);
    st->largest = QUALE_MAX(st->largest, bits);
    /* c = m 2^(e - 23) with e >= -13 (init checks the bound). */
    const int e = (int)(bits >> 23) - 127;
    const uint64_t units = (uint64_t)((bits & 0x7fffffu) | 0x800000u) << (e - 23 - SUM_UNIT_EXP);
    st->sum_low += units;
    st->sum_high += st->sum_low < units;
}

/* A picture's statistics from its blocks' partials. */
static void scale_statistics(const CambiTwin *t, const uint32_t *partials, unsigned k,
                             ScaleStats stats[CAMBI_SCALES])
{
    const CambiVkPicturePlan *pp = &t->pic[k];
    for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) {
        ScaleStats *st = &stats[sc];
        *st = (ScaleStats){ .smallest = 0x7f800000u };
        uint64_t words[3] = { 0, 0, 0 };
        const unsigned blocks = pp->strips[sc] * pp->chunks[sc];
        for (unsigned b = 0; b < blocks; b++) {
            const uint32_t *p = partials + (size_t)(pp->first_partial + pp->first_block[sc] + b) *
                                               PARTIAL_WORDS;
            st->count += p[0];
            st->smallest = QUALE_MIN(st->smallest, p[1]);
            st->largest = QUALE_MAX(st->largest, p[2]);
            for (unsigned w = 0; w < 3; w++) words[w] += p[3 + w];
        }
        /* The sums of each 32-bit word, carried. */
        const uint64_t t1 = words[1] + (words[0] >> 32);
        st->sum_low = (words[0] & 0xffffffffu) | t1 << 32;
        st->sum_high = words[2] + (t1 >> 32);
    }
}

/* What pooling reads: the sum made double, exactly where it fits one
 * (which is where pooling uses it: cambi_pool_needs_values()). */
static CambiNonZero non_zero(const ScaleStats *st)
{
    return (CambiNonZero){
        .sum = ldexp(ldexp((double)st->sum_high, 64) + (double)st->sum_low, SUM_UNIT_EXP),
        .count = st->count,
        .smallest = bitcast_bits_float(st->smallest),
        .largest = bitcast_bits_float(st->largest),
    };
}

/* The C reference's run of a picture that pooling needs the c-values of:
 * on the way, each scale's c-values are checked against the device's
 * statistics (the same count, smallest, largest and exact sum), so that a
 * device that computes them differently says so rather than scoring the
 * other frames wrong. */
typedef struct CpuCheck {
    const ScaleStats *device;
    int mismatch; /* the first scale that differs, or -1 */
} CpuCheck;

static void check_scale(void *cookie, unsigned scale, const uint16_t *image, const uint8_t *mask,
                        const float *c_values, unsigned w, unsigned h, const CambiNonZero *nz)
{
    (void)image;
    (void)mask;
    (void)nz;
    CpuCheck *check = cookie;
    ScaleStats st = { .smallest = 0x7f800000u };
    for (size_t i = 0; i < (size_t)w * h; i++)
        if (c_values[i] > 0.0f) scale_stats_add(&st, c_values[i]);
    const ScaleStats *d = &check->device[scale];
    const bool same = st.count == d->count && st.smallest == d->smallest &&
                      st.largest == d->largest && st.sum_low == d->sum_low &&
                      st.sum_high == d->sum_high;
    if (!same && check->mismatch < 0) check->mismatch = (int)scale;
}

static int score_on_cpu(const CambiState *s, const CambiGeometry *g, const QualePicture *pic,
                        const ScaleStats device[CAMBI_SCALES], double *score, char *error,
                        size_t error_size)
{
    void *scratch = NULL;
    if (metric_cambi.scratch_alloc(s, &scratch)) {
        snprintf(error, error_size, "out of memory to pool from c-values");
        return -ENOMEM;
    }
    CpuCheck check = { device, -1 };
    const CambiObserver observer = { &check, NULL, check_scale };
    *score = cambi_score(s, g, pic, scratch, &observer);
    metric_cambi.scratch_free(scratch);
    if (check.mismatch >= 0) {
        snprintf(error, error_size, "the device's c-values of scale %d differ from the C "
                 "reference's", check.mismatch);
        return -EIO;
    }
    return 0;
}

static int cambi_vulkan_collect(const VulkanPlan *plan, const void *results,
                                const MetricFrame *frame, FeatureSink *sink)
{
    const CambiTwin *t = plan->own;
    const CambiState *s = t->metric;
    const uint32_t *partials = results;
    double score[2] = { 0.0, 0.0 };
    for (unsigned k = 0; k < t->pictures; k++) {
        const CambiVkPicturePlan *pp = &t->pic[k];
        ScaleStats stats[CAMBI_SCALES];
        CambiNonZero nz[CAMBI_SCALES];
        scale_statistics(t, partials, k, stats);
        for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) nz[sc] = non_zero(&stats[sc]);
        char error[256] = "";
        int err = cambi_pool_picture(s, pp->g, pp->sw, pp->sh, nz, NULL, NULL, &score[k], error,
                                     sizeof(error));
        if (err == -EAGAIN) {
            feature_sink_log(sink, QUALE_LOG_DEBUG, "cambi, frame %u: the %s is pooled from its "
                             "c-values (%s): scored on the CPU", frame->index,
                             k == 0 ? "picture" : "reference", error);
            err = score_on_cpu(s, pp->g, k == 0 ? frame->dist : frame->ref, stats, &score[k],
                               error, sizeof(error));
        }
        if (err) {
            feature_sink_log(sink, QUALE_LOG_ERROR, "cambi, frame %u: %s", frame->index, error);
            return err;
        }
    }
    return cambi_write(s, sink, frame->index, score[0], score[1]);
}

const VulkanTwin vulkan_twin_cambi = {
    VULKAN_TWIN_OF(cambi),
    .concurrent = true, /* planes per lane, partials per slot */
    .supports = cambi_vulkan_supports,
};
