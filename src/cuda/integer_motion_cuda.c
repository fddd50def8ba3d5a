/* Integer motion on CUDA: the device computes each row's SAD, the host adds
 * the rows and writes the score through the C reference's own step
 * (motion_write_sad); motion2 and motion3 come from the metric's flush. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twin.h"
#include "metrics/integer_motion.h"

extern const unsigned char cuda_module_integer_motion[];

enum { SEGMENT = 256, THREADS = 128 };

typedef struct MotionTwin {
    const CudaDevice *dev;
    const MotionState *metric;
    CUfunction kernel;
    unsigned rows;
    CUdeviceptr row_sad; /* slots x rows */
    uint32_t *host;      /* pinned, same layout */
    size_t bytes;
} MotionTwin;

static void motion_cuda_close(void *twin)
{
    MotionTwin *t = twin;
    if (!t) return;
    cuda_free(t->dev, t->row_sad, t->bytes);
    if (t->host) t->dev->api.MemFreeHost(t->host);
    free(t);
}

static int motion_cuda_init(const CudaDevice *dev, CUmodule module, const void *metric_state,
                            const QualeVideoFormat *format, unsigned slots, void **out,
                            char *error, size_t error_size)
{
    MotionTwin *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->dev = dev;
    t->metric = metric_state;
    t->rows = format->height;
    t->bytes = (size_t)slots * t->rows * sizeof(uint32_t);
    int err = cuda_function(dev, module, format->bitdepth > 8 ? "motion_sad_16bit" : "motion_sad_8bit",
                            &t->kernel, error, error_size);
    if (!err) err = cuda_alloc(dev, &t->row_sad, t->bytes, "motion row sums", error, error_size);
    if (!err) err = cuda_alloc_host(dev, (void **)&t->host, t->bytes, "motion readback", error, error_size);
    if (err) {
        motion_cuda_close(t);
        return err;
    }
    *out = t;
    return 0;
}

static int motion_cuda_enqueue(void *twin, unsigned slot, const CudaFrame *frame, CUstream stream,
                               char *error, size_t error_size)
{
    MotionTwin *t = twin;
    const MotionState *s = t->metric;
    /* Nothing to do where the C reference computes nothing, or refuses. */
    if (!motion_needs_sad(s, frame->index) || s->width < 3 || s->height < 3) return 0;
    CUdeviceptr prev = frame->prev_ref[s->five_frame_window ? 1 : 0];
    if (!prev) {
        snprintf(error, error_size, "motion: frame %u has no earlier frame on the device", frame->index);
        return -EINVAL;
    }
    CUdeviceptr cur = frame->ref[0];
    CUdeviceptr rows = t->row_sad + (size_t)slot * t->rows * sizeof(uint32_t);
    const size_t bytes = (size_t)t->rows * sizeof(uint32_t);
    CUresult r = t->dev->api.MemsetD8Async(rows, 0, bytes, stream);
    if (r != CUDA_SUCCESS) {
        snprintf(error, error_size, "clearing motion sums failed: %s", cuda_error_text(&t->dev->api, r));
        return -EIO;
    }
    unsigned long long stride = frame->stride[0];
    int w = (int)s->width, h = (int)s->height, depth = (int)s->bitdepth;
    void *params_8[] = { &prev, &cur, &stride, &w, &h, &rows };
    void *params_16[] = { &prev, &cur, &stride, &w, &h, &depth, &rows };
    int err = cuda_launch(t->dev, t->kernel, "motion_sad", (s->width + SEGMENT - 1) / SEGMENT,
                          s->height, THREADS, 0, stream, depth > 8 ? params_16 : params_8, error,
                          error_size);
    if (err) return err;
    return cuda_read_back(t->dev, t->host + (size_t)slot * t->rows, rows, bytes, stream,
                          "motion sums", error, error_size);
}

static int motion_cuda_collect(void *twin, unsigned slot, const MetricFrame *frame, FeatureSink *sink)
{
    MotionTwin *t = twin;
    const MotionState *s = t->metric;
    uint64_t sad = 0;
    if (motion_needs_sad(s, frame->index)) {
        int err = motion_check_size(s, sink);
        if (err) return err;
        const uint32_t *rows = t->host + (size_t)slot * t->rows;
        for (unsigned y = 0; y < t->rows; y++) sad += rows[y];
    }
    return motion_write_sad(s, sink, frame->index, sad);
}

const CudaTwin cuda_twin_integer_motion = {
    .metric = &metric_integer_motion,
    .module_image = cuda_module_integer_motion,
    .history = 2,
    .init = motion_cuda_init,
    .enqueue = motion_cuda_enqueue,
    .collect = motion_cuda_collect,
    .close = motion_cuda_close,
};
