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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/ciede.h"
#include "vulkan_twin.h"

extern const unsigned char vulkan_shader_ciede[];
extern const size_t vulkan_shader_ciede_size;

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

typedef struct CiedeTwin {
    const VulkanDevice *dev;
    const CiedeState *metric;
    unsigned chroma_height;
    unsigned groups_x, groups_y, partial_count;
    float powf_25_7;
    VulkanBuffer columns;  /* device: per luma column, chroma column | rows ahead << 30 */
    VulkanBuffer partials; /* host-visible: slots x partial_count doubles */
    VulkanPipeline pipeline;
} CiedeTwin;

static bool ciede_vulkan_supports(const VulkanDevice *dev, const void *state)
{
    (void)state; /* every format the C reference accepts */
    return dev->features.shaderFloat64;
}

static void ciede_vulkan_close(void *twin)
{
    CiedeTwin *t = twin;
    if (!t) return;
    vulkan_pipeline_destroy(t->dev, &t->pipeline);
    vulkan_buffer_destroy(t->dev, &t->columns);
    vulkan_buffer_destroy(t->dev, &t->partials);
    free(t);
}

static int ciede_vulkan_init(const VulkanDevice *dev, VkBuffer ring, VkBuffer frames,
                             const void *metric_state, const QualeVideoFormat *format, unsigned slots,
                             void **out, char *error, size_t error_size)
{
    const CiedeState *s = metric_state;
    int err = ciede_check_format(format, error, error_size);
    if (err) return err;
    CiedeTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = s;
    /* the picture's chroma height (picture.c) */
    t->chroma_height = format->chroma == QUALE_CHROMA_420 ? (format->height + 1) / 2 : format->height;
    t->groups_x = (s->width + THREADS - 1) / THREADS;
    t->groups_y = (s->height + ROWS - 1) / ROWS;
    t->partial_count = t->groups_x * t->groups_y;
    /* powf(25, 7) as the reference adds it per pixel */
    t->powf_25_7 = CIEDE_POWF_25_7;

    const size_t column_bytes = (size_t)s->width * sizeof(uint32_t);
    uint32_t *columns = malloc(column_bytes);
    if (!columns) err = -ENOMEM;
    for (unsigned x = 0; !err && x < s->width; x++)
        columns[x] = s->chroma_col[x] | (uint32_t)s->chroma_row[x] << 30;
    if (!err)
        err = vulkan_buffer_create_constant(dev, columns, column_bytes, &t->columns,
                                            "the CIEDE2000 chroma indexing", error, error_size);
    free(columns);
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)slots * t->partial_count * sizeof(double),
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &t->partials,
                                   "CIEDE2000 partial sums", error, error_size);
    if (!err) {
        const VkBuffer buffers[BINDINGS] = { ring, frames, t->columns.buffer, t->partials.buffer };
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_shader_ciede, vulkan_shader_ciede_size,
                                     buffers, BINDINGS, VULKAN_PUSH(CiedePush, y_offset, y_scale, c_offset, c_scale, ref_offset, dist_offset, stride, width, height, chroma_height, row_shift, rows, bytes_per_sample, out_offset, powf_25_7), &t->pipeline,
                                     "the CIEDE2000 shader", error, error_size);
    }
    if (err) {
        ciede_vulkan_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int ciede_vulkan_record(void *twin, unsigned slot, const VulkanFrame *frame, VkCommandBuffer cb,
                               char *error, size_t error_size)
{
    CiedeTwin *t = twin;
    const CiedeState *s = t->metric;
    if (frame->width[0] != s->width || frame->height[0] != s->height ||
        frame->height[1] != t->chroma_height) {
        snprintf(error, error_size, "ciede: the frame is %ux%u, the twin was set up for %ux%u",
                 frame->width[0], frame->height[0], s->width, s->height);
        return -EINVAL;
    }
    CiedePush push;
    memset(&push, 0, sizeof(push));
    push.y_offset = s->convert.y_offset;
    push.y_scale = s->convert.y_scale;
    push.c_offset = s->convert.c_offset;
    push.c_scale = s->convert.c_scale;
    for (unsigned p = 0; p < 3; p++) {
        push.ref_offset[p] = (uint32_t)frame->ref_offset[p];
        push.dist_offset[p] = (uint32_t)frame->dist_offset[p];
        push.stride[p] = frame->stride[p];
    }
    push.width = s->width;
    push.height = s->height;
    push.chroma_height = t->chroma_height;
    push.row_shift = s->row_shift;
    push.rows = ROWS;
    push.bytes_per_sample = s->bitdepth > 8 ? 2 : 1;
    push.out_offset = slot * t->partial_count;
    push.powf_25_7 = t->powf_25_7;
    vulkan_dispatch(t->dev, cb, &t->pipeline, &push, t->groups_x, t->groups_y);
    return 0;
}

static int ciede_vulkan_collect(void *twin, unsigned slot, const MetricFrame *frame,
                                FeatureSink *sink)
{
    CiedeTwin *t = twin;
    const double *partials = (const double *)t->partials.mapped + (size_t)slot * t->partial_count;
    double sum = 0.;
    for (unsigned i = 0; i < t->partial_count; i++) sum += partials[i];
    return ciede_write(t->metric, sink, frame->index, sum);
}

const VulkanTwin vulkan_twin_ciede = {
    .metric = &metric_ciede,
    .supports = ciede_vulkan_supports,
    .init = ciede_vulkan_init,
    .record = ciede_vulkan_record,
    .collect = ciede_vulkan_collect,
    .close = ciede_vulkan_close,
};
