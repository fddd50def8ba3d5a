/*
 * Integer motion's state and the steps the C reference and its GPU twins
 * share: which frames need a SAD, the size check, and the score.
 */
#ifndef QUALE_SRC_METRICS_INTEGER_MOTION_H
#define QUALE_SRC_METRICS_INTEGER_MOTION_H

#include <stdbool.h>
#include <stdint.h>

#include "metric.h"

#define MOTION_TAP0 3571
#define MOTION_TAP1 16004
#define MOTION_TAP2 26386

#define MOTION_MAX_VAL_DEFAULT 10000.0

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

extern const Metric metric_integer_motion;

#endif /* QUALE_SRC_METRICS_INTEGER_MOTION_H */
