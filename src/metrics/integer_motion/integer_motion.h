/*
 * Integer motion's state and the steps the C reference and its GPU twins
 * share: which frames need a SAD, the size check, and the score.
 */
#ifndef QUALE_SRC_METRICS_INTEGER_MOTION_H
#define QUALE_SRC_METRICS_INTEGER_MOTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

#define MOTION_TAP0 3571
#define MOTION_TAP1 16004
#define MOTION_TAP2 26386

#define MOTION_MAX_VAL_DEFAULT 10000.0

/* libvmaf's reflection at the edges: one step only, valid for size >= 3. */
static inline unsigned motion_mirror(int i, unsigned size)
{
    if (i < 0) return (unsigned)-i;
    if ((unsigned)i >= size) return 2 * size - (unsigned)i - 2;
    return (unsigned)i;
}

/* The bytes of the row buffer a SAD kernel is handed for a width w: the C
 * kernel's w + 4 filtered samples, or the SIMD kernels' 16-bit rows (two
 * padded rows of the vertical pass, five of differences). */
#define MOTION_ROW_BUFFER_BYTES(w) (16 * ((size_t)(w) + 64))

/*
 * The kernels (C in integer_motion.c, SIMD in src/metrics/x86/): the sum
 * over the picture of |blur(a - b)| (integer_motion_tmpl.h says exactly
 * what), for pictures of w x h (both >= 3) at bitdepth; [0] reads uint8_t
 * samples, [1] uint16_t.
 */
typedef uint64_t (*MotionSadFn)(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                                ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                                void *row_buffer);

typedef struct MotionDsp {
    MotionSadFn sad[2];
} MotionDsp;

/* The C kernels, then those of every level in cpu_flags (QUALE_CPU_*). */
void motion_dsp_init(MotionDsp *dsp, unsigned cpu_flags);
void motion_dsp_init_avx2(MotionDsp *dsp);
void motion_dsp_init_avx512(MotionDsp *dsp);

/* The C kernels, which the SIMD ones hand pictures narrower than a vector. */
uint64_t motion_sad_c_8(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                        ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                        void *row_buffer);
uint64_t motion_sad_c_16(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                         ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                         void *row_buffer);

typedef struct MotionState {
    /* options */
    bool force_zero;
    double blend_factor;
    double blend_offset;
    double fps_weight;
    double max_val;
    bool five_frame_window;
    bool moving_average;
    bool debug;

    /* set by init */
    unsigned width, height, bitdepth;
    unsigned sad_key, motion_key, motion2_key, motion3_key;
    MotionDsp dsp;
} MotionState;

/* The first frame that has a frame to compare with (1, or 2 with the
 * five-frame window). */
unsigned motion_first(const MotionState *s);

/* Whether frame index needs the SAD against its earlier frame. */
bool motion_needs_sad(const MotionState *s, unsigned index);

/* The blur needs 3x3: an error with a message below that. */
int motion_check_size(const MotionState *s, FeatureSink *sink);

/* Writes the frame's SAD score (0 where no SAD is needed). */
int motion_write_sad(const MotionState *s, FeatureSink *sink, unsigned index, uint64_t sad);

/* The GPU twins' collect(): the frame's SAD from its read-back partials,
 * per_row 32-bit partials a row (the row's sum wraps at 32 bits, as the
 * partials do), then motion_write_sad().  The partials are read only where
 * the frame needs a SAD. */
int motion_write_sad_partials(const MotionState *s, FeatureSink *sink, unsigned index,
                              const uint32_t *partials, unsigned per_row);

extern const Metric metric_integer_motion;

#endif /* QUALE_SRC_METRICS_INTEGER_MOTION_H */
