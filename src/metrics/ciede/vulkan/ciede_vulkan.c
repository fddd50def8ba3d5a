/*
 * CIEDE2000 on Vulkan: the device computes every pixel's deltaE and one
 * double sum per workgroup (ciede.comp: 128 columns x ROWS rows, so about
 * 16 KiB of partial sums at 1080p, written to host-visible memory); the
 * host adds them in workgroup order and finishes through the C reference's
 * own ciede_write(), as its extract() does.  The CUDA twin's decomposition.
 *
 * Device memory: the reference's chroma indexing (its chroma_col and
 * chroma_row tables, one word per luma column, uploaded once).  The shader
 * needs shaderFloat64 (fp64.glsl).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/ciede/ciede.h"
#include "gpu/vulkan/vulkan_twin.h"

VULKAN_SHADER(ciede);

/* THREADS is CIEDE_THREADS of ciede.comp. */
enum { THREADS = 128, ROWS = 8, BINDINGS = 4 };

/* Mirrors the push constants of ciede.comp. */
typedef struct CiedePush {
    double y_offset, y_scale, c_offset, c_scale;
    uint32_t ref_offset[3], dist_offset[3], stride[3];
    uint32_t width, height, chroma_height, row_shift, rows, bytes_per_sample, out_offset;
    float powf_25_7;
} CiedePush;

_Static_assert(sizeof(CiedePush) == 104, "CiedePush: keep ciede.comp in step");

/* The plan of a run: the grid, and the chroma indexing uploaded as
 * constants (per luma column: chroma column | rows ahead << 30). */
typedef struct CiedeRun {
    unsigned chroma_height;
    unsigned groups_x, groups_y;
    uint32_t columns[];
} CiedeRun;

static bool ciede_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    (void)state; /* every format the C reference accepts */
    return dev->features.shaderFloat64;
}

/* The plan's buffers. */
enum { RESULTS, CONSTANTS, BUFFERS };


/* One pipeline over the ring, the frames, the constants and the results:
 * per slot a double per workgroup. */
static int ciede_vulkan_plan(const VulkanDevice *dev, const void *state,
                             const QualeVideoFormat *format, VulkanPlan *plan, char *error,
                             size_t error_size)
{
    const CiedeState *s = state;
    const int err = ciede_check_format(format, error, error_size);
    if (err) return err;
    CiedeRun *r = malloc(sizeof(*r) + (size_t)s->width * sizeof(uint32_t));
    if (!r) return -ENOMEM;
    plan->own = r;
    /* the picture's chroma height (picture.c) */
    r->chroma_height =
        format->chroma == QUALE_CHROMA_420 ? (format->height + 1) / 2 : format->height;
    r->groups_x = (s->width + THREADS - 1) / THREADS;
    r->groups_y = (s->height + ROWS - 1) / ROWS;
    for (unsigned x = 0; x < s->width; x++)
        r->columns[x] = s->chroma_col[x] | (uint32_t)s->chroma_row[x] << 30;
    plan->buffers[CONSTANTS] = (VulkanPlanBuffer){
        .what = "the CIEDE2000 chroma indexing",
        .bytes = (size_t)s->width * sizeof(uint32_t),
        .scope = VULKAN_PER_RUN,
        .data = r->columns,
    };
    const VulkanPlanPipeline shader = {
        VULKAN_SPIRV(ciede), .what = "the CIEDE2000 shader",
        .push = *VULKAN_PUSH(CiedePush, y_offset, y_scale, c_offset, c_scale, ref_offset,
                             dist_offset, stride, width, height, chroma_height, row_shift, rows,
                             bytes_per_sample, out_offset, powf_25_7),
        VULKAN_BINDINGS(VULKAN_BIND_RING, VULKAN_BIND_FRAMES, CONSTANTS, RESULTS),
    };
    return vulkan_plan_one_shader(plan, &shader, RESULTS, "CIEDE2000 partial sums",
                                  (size_t)r->groups_x * r->groups_y * sizeof(double), BUFFERS);
}

static int ciede_vulkan_round(const VulkanPlan *plan, unsigned round,
                              const VulkanPlanMemory *memory, VulkanStep *steps, char *error,
                              size_t error_size)
{
    const CiedeRun *r = plan->own;
    const CiedeState *s = plan->state;
    const VulkanFrame *frame = memory->frame;
    CiedePush push;
    memset(&push, 0, sizeof(push));
    push.y_offset = s->convert.y_offset;
    push.y_scale = s->convert.y_scale;
    push.c_offset = s->convert.c_offset;
    push.c_scale = s->convert.c_scale;
    vulkan_push_planes(frame, 3, push.ref_offset, push.dist_offset, push.stride, NULL, NULL);
    push.width = s->width;
    push.height = s->height;
    push.chroma_height = r->chroma_height;
    push.row_shift = s->row_shift;
    push.rows = ROWS;
    push.bytes_per_sample = s->bitdepth > 8 ? 2 : 1;
    push.out_offset = (uint32_t)(memory->offset[RESULTS] / sizeof(double));
    /* powf(25, 7) as the reference adds it per pixel */
    push.powf_25_7 = CIEDE_POWF_25_7;
    VULKAN_STEP_SET(&steps[0], 0, r->groups_x, r->groups_y, push);
    return 1;
}

static int ciede_vulkan_collect(const VulkanPlan *plan, const void *results,
                                const MetricFrame *frame, FeatureSink *sink)
{
    const CiedeRun *r = plan->own;
    const double *partials = results;
    double sum = 0.;
    for (unsigned i = 0; i < r->groups_x * r->groups_y; i++) sum += partials[i];
    return ciede_write(plan->state, sink, frame->index, sum);
}

const VulkanTwin vulkan_twin_ciede = {
    VULKAN_TWIN_OF(ciede),
    .concurrent = true, /* per slot, or constant */
    .supports = ciede_vulkan_supports,
};
