/*
 * CAMBI on CUDA: the device preprocesses, masks, filters and scores every
 * sample of the five scales (cambi.cu); the host reads back each scale's
 * c-value statistics (count, smallest, largest, sum: 120 bytes a picture)
 * and pools them through cambi_pool_picture() (the C reference's own
 * cambi_pool() and cambi_combine(), shared with the Vulkan twin), then
 * writes the keys through cambi_write() (src/metrics/cambi.h), as its
 * extract() does.
 *
 * Pooling in libvmaf's order: cambi_pool() needs the c-values themselves
 * only when the k largest of them are not all the non-zero ones or their
 * sum may round differently in another order (cambi_pool_needs_values();
 * rare: strongly banded pictures).  Then collect() reads that scale's
 * c-values back from the slot (the stream is finished and the slot is not
 * reused before collect() returns) and runs the C reference's quickselect
 * on them.
 *
 * Device memory: a table uploaded once (libvmaf's reciprocals and, when a
 * picture is resampled, its source columns and rows) and, per slot,
 *   the preprocessed picture (16-bit), its flat counts and mask (8-bit),
 *   the filtered samples and codes of the five scales (16-bit), reused by
 *   the reference after the distorted picture;
 *   per picture, the c-values of the five scales (float) and their
 *   statistics.
 *
 * The c-value kernel keeps a 16-bit counter per band row for each of its S
 * columns in shared memory: S = 64 where the device allows a block that
 * much (band_size x 128 bytes: 72 KB with the default options, 135 KB at
 * most), else 32.  Its rows are cut into chunks so that the blocks of the
 * five scales fill the device about once (cambi_cuda_plan_new()).
 *
 * The twin is a plan (cuda_plan.h) run by the executor: the table is its
 * constants (one upload), the statistics its readback; collect() reads
 * c-values through cuda_plan_read_slot().  The layout (sizes, offsets),
 * the launches of a frame (kernel, grid, shared memory, arguments) and the
 * pooling are functions without side effects but the read-back, so that
 * tests/test_cambi_cuda_host.cpp drives the kernels' element code on the
 * CPU through exactly what the executor launches and pools through what
 * collect() calls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cambi_args.h"
#include "cambi_cuda.h"
#include "common.h"
#include "gpu/cuda/cuda_twin.h"
#include "metrics/common/bitcast.h"
#include "metrics/cambi/cambi.h"
#include "metrics/cambi/cambi_tables.h"

extern const unsigned char cuda_module_cambi[];

/* THREADS: the element kernels' launch bounds; STEP_ROWS_BYTES the size of
 * cambi.cu's CambiStepRows. */
enum {
    THREADS = CAMBI_THREADS,
    VSUM_ROWS = CAMBI_VSUM_ROWS,
    STEP_ROWS_BYTES = 2 * 2 * 128 * 2 + 2 * 2 * 4 * 4,
    STEPS_PER_PICTURE = 3 + CAMBI_SCALES + 1,
};

/* ---- the plan ------------------------------------------------------------------- */

typedef struct CambiPicturePlan {
    const CambiGeometry *g;
    bool resample;
    unsigned sw[CAMBI_SCALES], sh[CAMBI_SCALES];
    unsigned strips[CAMBI_SCALES], chunks[CAMBI_SCALES], first_block[CAMBI_SCALES];
    unsigned chunk_rows, blocks;
    size_t c_values[CAMBI_SCALES]; /* slot offsets */
    size_t stats;
    size_t src_x, src_y;           /* table offsets */
} CambiPicturePlan;

struct CambiPlan {
    const CambiState *s;
    unsigned bitdepth, in_w, in_h;
    unsigned pictures;             /* 1, or 2 with full_ref */
    CambiPicturePlan pic[2];
    unsigned strip;                /* threads and columns of a c-value block */
    unsigned bins_bytes, shared_bytes;
    /* slot offsets, shared by the pictures */
    size_t image, vsum, mask;
    size_t scale_out[CAMBI_SCALES], codes[CAMBI_SCALES];
    size_t stats;                  /* both pictures' statistics, together */
    CudaSlotLayout slot;           /* the statistics read back */
    size_t table_bytes;
};

/* The shared memory of a c-value block of strip columns: the counters (a
 * multiple of 16 bytes) and the rows of two steps. */
static unsigned bins_bytes(const CambiState *s, unsigned strip)
{
    return (unsigned)cuda_align_up((size_t)s->contrast.band_size * strip * sizeof(uint16_t), 16);
}

unsigned cambi_cuda_shared_bytes(const CambiState *s, unsigned strip)
{
    return bins_bytes(s, strip) + STEP_ROWS_BYTES;
}

/* The steps and offsets follow from the state and format; without
 * resident blocks, a strip's rows are one chunk. */
CambiPlan *cambi_cuda_plan_new(const CambiState *s, const QualeVideoFormat *format,
                               unsigned strip, unsigned resident_blocks)
{
    if (strip != 64 && strip != 32) return NULL;
    CambiPlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->s = s;
    p->bitdepth = format->bitdepth;
    p->in_w = format->width;
    p->in_h = format->height;
    p->pictures = s->full_ref ? 2 : 1;
    p->strip = strip;
    p->bins_bytes = bins_bytes(s, strip);
    p->shared_bytes = cambi_cuda_shared_bytes(s, strip);

    size_t *at = &p->slot.bytes, table = 0;
    p->slot.readback_bytes = (size_t)p->pictures * CAMBI_SCALES * sizeof(CambiScaleStats);
    p->stats = p->slot.readback_offset = cuda_plan_place(at, p->slot.readback_bytes);
    p->slot.steps = p->pictures * STEPS_PER_PICTURE;

    size_t area = 0, scale_area[CAMBI_SCALES] = { 0 };
    cuda_plan_place(&table, CAMBI_RECIPROCAL_SIZE * sizeof(float));
    for (unsigned k = 0; k < p->pictures; k++) {
        CambiPicturePlan *pp = &p->pic[k];
        pp->g = k == 0 ? &s->dist : &s->ref;
        pp->stats = p->stats + (size_t)k * CAMBI_SCALES * sizeof(CambiScaleStats);
        pp->resample = p->in_w != pp->g->width || p->in_h != pp->g->height;
        if (pp->resample) {
            pp->src_x = cuda_plan_place(&table, pp->g->width * sizeof(uint32_t));
            pp->src_y = cuda_plan_place(&table, pp->g->height * sizeof(uint32_t));
        }
        const size_t a = (size_t)pp->g->width * pp->g->height;
        if (a > area) area = a;
        cambi_scale_sizes(s, pp->g, pp->sw, pp->sh);
        for (unsigned sc = 0; sc < CAMBI_SCALES; sc++)
            if ((size_t)pp->sw[sc] * pp->sh[sc] > scale_area[sc])
                scale_area[sc] = (size_t)pp->sw[sc] * pp->sh[sc];
        pp->chunk_rows = cambi_chunk_rows(pp->sw, pp->sh, pp->g->window, strip, resident_blocks);
        pp->blocks = 0;
        for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) {
            pp->strips[sc] = cuda_blocks_for(pp->sw[sc], strip);
            pp->chunks[sc] = cuda_blocks_for(pp->sh[sc], pp->chunk_rows);
            pp->first_block[sc] = pp->blocks;
            pp->blocks += pp->strips[sc] * pp->chunks[sc];
        }
    }
    p->table_bytes = table;

    p->image = cuda_plan_place(at, area * sizeof(uint16_t));
    p->vsum = cuda_plan_place(at, area);
    p->mask = cuda_plan_place(at, area);
    for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) {
        p->scale_out[sc] = cuda_plan_place(at, scale_area[sc] * sizeof(uint16_t));
        p->codes[sc] = cuda_plan_place(at, scale_area[sc] * sizeof(uint16_t));
    }
    for (unsigned k = 0; k < p->pictures; k++) {
        CambiPicturePlan *pp = &p->pic[k];
        for (unsigned sc = 0; sc < CAMBI_SCALES; sc++)
            pp->c_values[sc] = cuda_plan_place(at, (size_t)pp->sw[sc] * pp->sh[sc] * sizeof(float));
    }
    return p;
}

const CudaSlotLayout *cambi_cuda_slot(const CambiPlan *p)
{
    return &p->slot;
}

size_t cambi_cuda_table_bytes(const CambiPlan *p)
{
    return p->table_bytes;
}

/* The table's contents: the reciprocals, then each resampled picture's
 * source columns and rows. */
void cambi_cuda_table_fill(const CambiPlan *p, void *table)
{
    uint8_t *t = table;
    memset(t, 0, p->table_bytes);
    memcpy(t, cambi_reciprocal, sizeof(cambi_reciprocal));
    for (unsigned k = 0; k < p->pictures; k++) {
        const CambiPicturePlan *pp = &p->pic[k];
        if (!pp->resample) continue;
        cambi_source_positions((uint32_t *)(t + pp->src_x), p->in_w, pp->g->width);
        cambi_source_positions((uint32_t *)(t + pp->src_y), p->in_h, pp->g->height);
    }
}

/*
 * Step i of a frame in slot memory `slot`, with the table at `table`
 * (device addresses; the host test passes host addresses): the kernel's
 * name, its launch (grid x, grid y, threads per block, shared bytes) and
 * its arguments (args: a struct CambiPrepArgs, or for cambi_c_values_* a
 * struct CambiCArgs).  The steps, in stream order, for the distorted
 * picture, then with full_ref the reference: load, flat_vsum, mask, the
 * five scales, c_values.
 */
const char *cambi_cuda_step(const CambiPlan *p, unsigned i, uint64_t slot, uint64_t table,
                            uint64_t ref, uint64_t dist, uint64_t stride, unsigned launch[4],
                            void *args)
{
    if (i >= p->slot.steps) return NULL;
    const CambiState *s = p->s;
    const unsigned k = i / STEPS_PER_PICTURE, part = i % STEPS_PER_PICTURE;
    const CambiPicturePlan *pp = &p->pic[k];
    const CambiGeometry *g = pp->g;
    const CambiContrast *contrast = &s->contrast;

    if (part == STEPS_PER_PICTURE - 1) {
        CambiCArgs a;
        memset(&a, 0, sizeof(a));
        for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) {
            CambiScaleJob *job = &a.scale[sc];
            job->codes = slot + p->codes[sc];
            job->c_values = slot + pp->c_values[sc];
            job->stats = slot + pp->stats + sc * sizeof(CambiScaleStats);
            job->sw = pp->sw[sc];
            job->sh = pp->sh[sc];
            job->strips = pp->strips[sc];
            job->chunks = pp->chunks[sc];
            job->first_block = pp->first_block[sc];
        }
        a.reciprocal = table;
        a.contrast = *contrast;
        a.window = g->window;
        a.chunk_rows = pp->chunk_rows;
        a.bins_bytes = p->bins_bytes;
        launch[0] = pp->blocks;
        launch[1] = 1;
        launch[2] = p->strip;
        launch[3] = p->shared_bytes;
        memcpy(args, &a, sizeof(a));
        return p->strip == 64 ? "cambi_c_values_64" : "cambi_c_values_32";
    }

    CambiPrepArgs a;
    memset(&a, 0, sizeof(a));
    a.src = k == 0 ? dist : ref;
    a.src_stride = stride;
    if (pp->resample) {
        a.src_x = table + pp->src_x;
        a.src_y = table + pp->src_y;
    }
    a.image = slot + p->image;
    a.vsum = slot + p->vsum;
    a.mask = slot + p->mask;
    a.stats = slot + pp->stats;
    a.w = g->width;
    a.h = g->height;
    a.bitdepth = p->bitdepth;
    a.anti_dither = s->anti_dither;
    a.mask_index = g->mask_index;
    a.band_base = contrast->band_base;
    a.band_size = contrast->band_size;

    const char *name = NULL;
    launch[2] = THREADS;
    launch[3] = 0;
    if (part < 3) {
        launch[0] = cuda_blocks_for(g->width, THREADS);
        launch[1] = cuda_grid_rows(part == 1 ? cuda_blocks_for(g->height, VSUM_ROWS) : g->height);
        name = part == 0 ? (p->bitdepth > 8 ? "cambi_load_16" : "cambi_load_8")
             : part == 1 ? "cambi_flat_vsum" : "cambi_mask";
    } else {
        /* Scale sc is decimated from the one before (from the picture
         * with the speed-up at sc = 0) by keeping every other row and
         * column; its mask is the picture's at (x, y) << decimations. */
        const unsigned sc = part - 3;
        const bool decimated = sc > 0 || s->speedup;
        a.scale_in = sc == 0 ? slot + p->image : slot + p->scale_out[sc - 1];
        a.in_w = sc == 0 ? g->width : pp->sw[sc - 1];
        a.step = decimated ? 2 : 1;
        a.mask_shift = sc + (s->speedup ? 1 : 0);
        a.scale_out = slot + p->scale_out[sc];
        a.codes = slot + p->codes[sc];
        a.sw = pp->sw[sc];
        a.sh = pp->sh[sc];
        launch[0] = cuda_blocks_for(a.sw, THREADS);
        launch[1] = cuda_grid_rows(a.sh);
        name = "cambi_scale";
    }
    memcpy(args, &a, sizeof(a));
    return name;
}

/* cambi_pool_picture()'s reader of a scale's c-values: from the slot,
 * through the caller's fetch. */
typedef struct ScaleReader {
    const CambiPicturePlan *pp;
    CambiFetch fetch;
    void *cookie;
} ScaleReader;

static int read_scale(void *cookie, unsigned scale, float *values, char *error, size_t error_size)
{
    const ScaleReader *r = cookie;
    const size_t bytes = (size_t)r->pp->sw[scale] * r->pp->sh[scale] * sizeof(float);
    return r->fetch(r->cookie, r->pp->c_values[scale], values, bytes, error, error_size);
}

/*
 * The scores of the frame's pictures (score[1]: the reference's, with
 * full_ref) from the statistics the device wrote (stats: a copy of the
 * slot's, the slot's readback), through cambi_pool_picture(); fetch
 * reads a scale's c-values from the slot when pooling needs them.
 */
int cambi_cuda_scores(const CambiPlan *p, const void *stats, CambiFetch fetch, void *cookie,
                      double score[2], char *error, size_t error_size)
{
    score[0] = score[1] = 0.0;
    const CambiScaleStats *all = stats;
    int err = 0;
    for (unsigned k = 0; k < p->pictures && !err; k++) {
        const CambiPicturePlan *pp = &p->pic[k];
        CambiNonZero nz[CAMBI_SCALES];
        for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) {
            const CambiScaleStats *st = &all[k * CAMBI_SCALES + sc];
            nz[sc] = (CambiNonZero){ .sum = st->sum,
                                     .count = st->count,
                                     .smallest = bitcast_bits_float(st->smallest),
                                     .largest = bitcast_bits_float(st->largest) };
        }
        ScaleReader reader = { pp, fetch, cookie };
        err = cambi_pool_picture(p->s, pp->g, pp->sw, pp->sh, nz, read_scale, &reader, &score[k],
                                 error, error_size);
    }
    return err;
}

/* ---- the twin ------------------------------------------------------------------- */

static bool cambi_cuda_supports(const void *state)
{
    /* every option (tests/test_cambi_cuda_host.cpp) but heatmaps_path: the
     * heatmap files are written by the C reference, on the CPU */
    const CambiState *s = state;
    return !s->heatmaps_path;
}

static int device_attribute(const CudaDevice *dev, CUdevice_attribute attribute, int *value,
                            const char *what, char *error, size_t error_size)
{
    const CUresult r = dev->api.DeviceGetAttribute(value, attribute, dev->device);
    if (r != CUDA_SUCCESS) {
        snprintf(error, error_size, "reading the device's %s failed: %s", what,
                 cuda_error_text(&dev->api, r));
        return -EIO;
    }
    return 0;
}

/* The c-value blocks' width and how many run at once: shared memory (the
 * counters) is what limits them. */
static int cambi_cuda_layout(const CudaDevice *dev, const CambiState *s, unsigned *strip,
                             unsigned *resident, char *error, size_t error_size)
{
    int optin = 0, per_sm = 0, reserved = 0;
    int err = device_attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &optin,
                               "shared memory per block", error, error_size);
    if (!err)
        err = device_attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                               &per_sm, "shared memory per multiprocessor", error, error_size);
    if (err) return err;
    /* Only an estimate of what the driver keeps per block: drivers before
     * CUDA 11 do not say (and keep none). */
    if (dev->api.DeviceGetAttribute(&reserved, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
                                    dev->device) != CUDA_SUCCESS)
        reserved = 0;

    *strip = 64;
    if (cambi_cuda_shared_bytes(s, 64) > (unsigned)optin) *strip = 32;
    const unsigned bytes = cambi_cuda_shared_bytes(s, *strip);
    if (bytes > (unsigned)optin) {
        snprintf(error, error_size, "the cambi counters need %u bytes of shared memory per block "
                 "(%d band rows); %s allows %d", bytes, s->contrast.band_size, dev->name, optin);
        return -ENOTSUP;
    }
    unsigned per = (unsigned)per_sm / (bytes + (unsigned)reserved);
    if (per > 32) per = 32;
    *resident = per * (unsigned)(dev->multiprocessors > 0 ? dev->multiprocessors : 1);
    return 0;
}

/* The plan's own: the layout, and the table's host copy for the upload. */
typedef struct CambiRun {
    CambiPlan *plan;
    void *table;
} CambiRun;

static void cambi_run_free(void *own)
{
    CambiRun *run = own;
    free(run->plan);
    free(run->table);
    free(run);
}

static int cambi_cuda_twin_plan(const void *state, const QualeVideoFormat *format, CudaPlan *plan,
                                char *error, size_t error_size)
{
    const CambiState *s = state;
    unsigned strip = 64, resident = 0;
    const int err = cambi_cuda_layout(plan->device, s, &strip, &resident, error, error_size);
    if (err) return err;
    CambiRun *run = cuda_plan_new_own(plan, sizeof(*run), cambi_run_free);
    if (!run) return -ENOMEM;
    run->plan = cambi_cuda_plan_new(s, format, strip, resident);
    if (!run->plan) return -ENOMEM;
    const CambiPlan *p = run->plan;
    run->table = malloc(p->table_bytes);
    if (!run->table) return -ENOMEM;
    cambi_cuda_table_fill(p, run->table);

    cuda_plan_upload_constants(plan, run->table, p->table_bytes);
    cuda_plan_use_slot(plan, &p->slot);
    return 0;
}

static void cambi_cuda_twin_step(const CudaPlan *plan, unsigned i, const CudaPlanMemory *m,
                                 CudaStep *step)
{
    const CambiRun *run = plan->own;
    const CudaFrame *f = m->frame;
    unsigned launch[4];
    const char *name = cambi_cuda_step(run->plan, i, m->slot, m->constants, f->ref[0],
                                       f->dist[0], f->stride[0], launch, step->args);
    const bool c_values = i % STEPS_PER_PICTURE == STEPS_PER_PICTURE - 1;
    _Static_assert(sizeof(CambiCArgs) <= CUDA_STEP_MAX_ARGS &&
                   sizeof(CambiPrepArgs) <= CUDA_STEP_MAX_ARGS, "argument block too large");
    cuda_step_launch_shared(step, name, launch,
                            c_values ? sizeof(CambiCArgs) : sizeof(CambiPrepArgs));
}

/* cambi_cuda_scores()' reader of c-values: the frame's slot, on demand. */
typedef struct SlotReader {
    const CudaPlan *plan;
    const void *readback;
} SlotReader;

static int read_slot(void *cookie, size_t offset, void *dst, size_t bytes, char *error,
                     size_t error_size)
{
    const SlotReader *reader = cookie;
    return cuda_plan_read_slot(reader->plan, reader->readback, offset, dst, bytes, error,
                               error_size);
}

static int cambi_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                   const MetricFrame *frame, FeatureSink *sink)
{
    const CambiRun *run = plan->own;
    SlotReader reader = { plan, readback };
    double score[2];
    char error[256] = "";
    const int err = cambi_cuda_scores(run->plan, readback, read_slot, &reader, score, error,
                                      sizeof(error));
    if (err) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "cambi, frame %u: %s", frame->index, error);
        return err;
    }
    return cambi_write(plan->state, sink, frame->index, score[0], score[1]);
}

const CudaTwin cuda_twin_cambi = { CUDA_TWIN_OF(cambi), .supports = cambi_cuda_supports };
