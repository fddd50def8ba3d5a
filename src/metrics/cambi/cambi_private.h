/*
 * What cambi.c and cambi_setup.c share besides cambi.h.
 */
#ifndef QUALE_SRC_METRICS_CAMBI_CAMBI_PRIVATE_H
#define QUALE_SRC_METRICS_CAMBI_CAMBI_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "cambi.h"
#include "metric.h"

/* Rows of flat flags kept for the mask: the square's 7 and the next. */
#define CAMBI_FLAT_ROWS (CAMBI_MASK_SIDE + 1)
/* The encoding size must reach this in width or height. */
#define CAMBI_MIN_SIDE 216u
#define CAMBI_DEFAULT_TOPK 0.6
#define CAMBI_DEFAULT_WINDOW 65
/* 10-bit limited range, where the EOTFs are evaluated. */
#define CAMBI_LUMA_FOOT 64
#define CAMBI_LUMA_HEAD 940
#define CAMBI_LUMA_MAX 1023

/* The encoding and source sizes a run scores at, and the contrast steps'
 * thresholds (s->contrast): 0, or -EINVAL said through sink. */
int cambi_sizes(const CambiState *s, const QualeVideoFormat *f, unsigned *enc_w_out,
                unsigned *enc_h_out, unsigned *src_w_out, unsigned *src_h_out, FeatureSink *sink);
int cambi_contrast(CambiState *s, FeatureSink *sink);

/* Visibility thresholds: the smallest visible step at a sample value
 * (the TVI), and the luma below which nothing counts (VLT). */
int cambi_tvi_for_diff(int diff, double threshold, enum CambiEotf eotf);
int cambi_vlt_luma(double threshold, enum CambiEotf eotf);

/* The window at a size, and the geometry of the scales of a w x h picture
 * (a message through sink when it cannot be scored). */
unsigned cambi_window(int window_size, unsigned w, unsigned h, bool speedup);
int cambi_geometry(const CambiState *s, CambiGeometry *g, unsigned w, unsigned h,
                   const char *what, FeatureSink *sink);

/* The heatmap files (heatmaps_path): opened in init, a scale's c-values of
 * a frame written at the frame's offset, closed at the end. */
void cambi_heatmap_error(const CambiState *s, unsigned scale, const char *what, int err,
                         FeatureSink *sink);
void cambi_close_heatmaps(CambiState *s);
int cambi_open_heatmaps(CambiState *s, FeatureSink *sink);
uint16_t cambi_heatmap_code(double scale, float c);
int cambi_write_heatmap(const CambiState *s, unsigned scale, unsigned frame,
                        const float *c_values, unsigned w, unsigned h, uint8_t *bytes,
                        FeatureSink *sink);

#endif /* QUALE_SRC_METRICS_CAMBI_CAMBI_PRIVATE_H */
