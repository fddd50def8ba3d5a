/*
 * CIEDE2000 on CUDA: the device computes every pixel's deltaE and one
 * double sum per block (ciede.cu); the host reads the partial sums back
 * (8 bytes per block of 128 columns x ROWS rows: about 16 KiB at 1080p),
 * adds them in block order and finishes through the C reference's own
 * ciede_write(), as its extract() does.
 *
 * Device memory: the reference's chroma indexing tables (5 bytes per luma
 * column, from the metric's state, uploaded once), the colour tables of
 * ciede.cu (256 MiB at 8 bits, 16 MiB at 9 and 10) and, per slot, the
 * partial sums.
 *
 * The plan and the launch of a frame are functions without side effects,
 * so that tests/test_psnr_hvs_ciede_cuda_host.cpp drives the kernel's
 * element code on the CPU through exactly what the plan's steps launch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_twin.h"
#include "ciede_args.h"
#include "metrics/ciede/ciede.h"

extern const unsigned char cuda_module_ciede[];

/* THREADS: the kernel's launch bounds */
enum { THREADS = CIEDE_THREADS, ROWS = 8 };

/* Every colour is tabulated up to MAX_COLOUR_BITS (2^24 float4s, 256 MiB,
 * at 8 bits); above, R and B up to MAX_TABLE_BITS (2 x 8 MiB of doubles at
 * 10). */
enum { MAX_COLOUR_BITS = 8, MAX_TABLE_BITS = 10 };

/* ---- the plan ------------------------------------------------------------- */

typedef struct CiedePlan {
    const CiedeState *s;
    unsigned chroma_height;
    unsigned grid[2];
    unsigned partial_count;
} CiedePlan;

/* Not static: the host test calls them (it declares them itself). */
CiedePlan *ciede_cuda_plan_new(const CiedeState *s, const QualeVideoFormat *format);
unsigned ciede_cuda_partial_count(const CiedePlan *p);
double ciede_cuda_sum(const CiedePlan *p, const double *partials);
const char *ciede_cuda_launch(const CiedePlan *p, uint64_t partials, uint64_t chroma_col,
                              uint64_t chroma_row, uint64_t linear, uint64_t colours,
                              const uint64_t ref[3], const uint64_t dist[3],
                              const uint64_t stride[3], unsigned launch[3], void *args);
unsigned ciede_cuda_table_bits(const CiedePlan *p);
unsigned ciede_cuda_colour_bits(const CiedePlan *p);

CiedePlan *ciede_cuda_plan_new(const CiedeState *s, const QualeVideoFormat *f)
{
    CiedePlan *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    p->s = s;
    /* the picture's chroma height (picture.c) */
    p->chroma_height = f->chroma == QUALE_CHROMA_420 ? (f->height + 1) / 2 : f->height;
    p->grid[0] = (s->width + THREADS - 1) / THREADS;
    p->grid[1] = (s->height + ROWS - 1) / ROWS;
    p->partial_count = p->grid[0] * p->grid[1];
    return p;
}

unsigned ciede_cuda_partial_count(const CiedePlan *p)
{
    return p->partial_count;
}

/* The frame's sum: the partials in block order. */
double ciede_cuda_sum(const CiedePlan *p, const double *partials)
{
    double sum = 0.;
    for (unsigned i = 0; i < p->partial_count; i++) sum += partials[i];
    return sum;
}

/* The bits of a sample in the colour table's index (ciede_colour_table of
 * ciede.cu), 0 for none. */
unsigned ciede_cuda_colour_bits(const CiedePlan *p)
{
    return p->s->bitdepth <= MAX_COLOUR_BITS ? p->s->bitdepth : 0;
}

/* The bits of the R and B tables' indices (ciede_table of ciede.cu), 0 for
 * no tables: with a colour table, or above MAX_TABLE_BITS, where a pixel
 * decodes its colours itself. */
unsigned ciede_cuda_table_bits(const CiedePlan *p)
{
    const unsigned bits = p->s->bitdepth;
    return bits > MAX_COLOUR_BITS && bits <= MAX_TABLE_BITS ? bits : 0;
}

/* The frame's one launch: the kernel's name, its grid and block (launch)
 * and its arguments (args: a struct CiedeArgs); linear and colours are the
 * tables, 0 without.  Device addresses; the host test passes host
 * addresses. */
const char *ciede_cuda_launch(const CiedePlan *p, uint64_t partials, uint64_t chroma_col,
                              uint64_t chroma_row, uint64_t linear, uint64_t colours,
                              const uint64_t ref[3], const uint64_t dist[3],
                              const uint64_t stride[3], unsigned launch[3], void *args)
{
    const CiedeState *s = p->s;
    CiedeArgs a;
    memset(&a, 0, sizeof(a));
    for (unsigned k = 0; k < 3; k++) {
        a.ref[k] = ref[k];
        a.dist[k] = dist[k];
        a.stride[k] = stride[k];
    }
    a.chroma_col = chroma_col;
    a.chroma_row = chroma_row;
    a.partials = partials;
    a.convert = s->convert;
    a.width = s->width;
    a.height = s->height;
    a.chroma_height = p->chroma_height;
    a.row_shift = s->row_shift;
    a.rows = ROWS;
    a.linear = linear;
    a.linear_bits = linear ? ciede_cuda_table_bits(p) : 0;
    a.colours = colours;
    a.colour_bits = colours ? ciede_cuda_colour_bits(p) : 0;
    memcpy(args, &a, sizeof(a));
    launch[0] = p->grid[0];
    launch[1] = p->grid[1];
    launch[2] = THREADS;
    return s->bitdepth > 8 ? "ciede_rows_16" : "ciede_rows_8";
}

/* ---- the twin ------------------------------------------------------------- */

/* The plan of a run: the layout, and where the constants hold the chroma
 * indexing (column table, then row table) and the colour tables. */
typedef struct CiedeRun {
    CiedePlan *plan;
    size_t chroma_col, chroma_row, linear, colours; /* offsets in the constants */
    unsigned setup_kernels[2];                      /* 0: ciede_table, 1: colour */
} CiedeRun;

static void ciede_run_free(void *own)
{
    CiedeRun *r = own;
    free(r->plan);
    free(r);
}

/* Constants: the chroma indexing (uploaded), then the colour tables the
 * bit depth takes (filled by setup steps).  Per slot: a partial per block,
 * all read back. */
static int ciede_cuda_twin_plan(const void *state, const QualeVideoFormat *format, CudaPlan *plan,
                                char *error, size_t error_size)
{
    const CiedeState *s = state;
    const int err = ciede_check_format(format, error, error_size);
    if (err) return err;
    CiedeRun *r = cuda_plan_new_own(plan, sizeof(*r), ciede_run_free);
    if (!r) return -ENOMEM;
    r->plan = ciede_cuda_plan_new(s, format);
    if (!r->plan) return -ENOMEM;
    const size_t col_bytes = (size_t)s->width * sizeof(uint32_t);
    size_t at = 0;
    r->chroma_col = cuda_plan_place(&at, col_bytes);
    r->chroma_row = cuda_plan_place(&at, s->width);
    plan->uploads[0] = (CudaPlanUpload){ r->chroma_col, s->chroma_col, col_bytes };
    plan->uploads[1] = (CudaPlanUpload){ r->chroma_row, s->chroma_row, s->width };
    plan->upload_count = 2;
    const unsigned bits = ciede_cuda_table_bits(r->plan);
    if (bits) {
        r->linear = cuda_plan_place(&at, ((size_t)2 << (2 * bits)) * sizeof(double));
        r->setup_kernels[plan->setup_steps++] = 0;
    }
    const unsigned colour_bits = ciede_cuda_colour_bits(r->plan);
    if (colour_bits) {
        r->colours = cuda_plan_place(&at, ((size_t)1 << 3 * colour_bits) * 4 * sizeof(float));
        r->setup_kernels[plan->setup_steps++] = 1;
    }
    plan->constant_bytes = at;
    return cuda_plan_one_step(plan, r->plan->partial_count * sizeof(double));
}

/* Fills a colour table: one thread per entry. */
static void ciede_cuda_setup_step(const CudaPlan *plan, unsigned index,
                                  const CudaPlanMemory *memory, CudaStep *step)
{
    const CiedeRun *r = plan->own;
    const CiedeState *s = plan->state;
    CiedeTableArgs a = { .convert = s->convert };
    if (r->setup_kernels[index] == 0) {
        a.bits = ciede_cuda_table_bits(r->plan);
        a.linear = memory->constants + r->linear;
        CUDA_STEP_SET(step, "ciede_table", cuda_blocks_for((size_t)2 << (2 * a.bits), THREADS), 1,
                      1, THREADS, 0, a);
    } else {
        a.bits = ciede_cuda_colour_bits(r->plan);
        a.colours = memory->constants + r->colours;
        CUDA_STEP_SET(step, "ciede_colour_table",
                      cuda_blocks_for((size_t)1 << 3 * a.bits, THREADS), 1, 1, THREADS, 0, a);
    }
}

static void ciede_cuda_twin_step(const CudaPlan *plan, unsigned index,
                                 const CudaPlanMemory *memory, CudaStep *step)
{
    const CiedeRun *r = plan->own;
    const CudaFrame *f = memory->frame;
    uint64_t ref[3], dist[3], stride[3];
    cuda_frame_planes(f, ref, dist, stride);
    const CUdeviceptr c = memory->constants;
    unsigned launch[3] = { 0, 0, 0 };
    const char *name = ciede_cuda_launch(r->plan, memory->slot, c + r->chroma_col,
                                         c + r->chroma_row, r->linear ? c + r->linear : 0,
                                         r->colours ? c + r->colours : 0, ref, dist, stride,
                                         launch, step->args);
    cuda_step_launch(step, name, launch, sizeof(CiedeArgs));
}

static int ciede_cuda_twin_collect(const CudaPlan *plan, const void *readback,
                                   const MetricFrame *frame, FeatureSink *sink)
{
    const CiedeRun *r = plan->own;
    return ciede_write(plan->state, sink, frame->index, ciede_cuda_sum(r->plan, readback));
}

const CudaTwin cuda_twin_ciede = { CUDA_TWIN_OF(ciede), .setup_step = ciede_cuda_setup_step };
