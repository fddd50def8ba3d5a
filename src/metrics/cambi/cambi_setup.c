/*
 * cambi's visibility thresholds, the geometry of its scales and windows,
 * and its heatmap files (cambi.c is the metric).
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

/* ---- sizes and contrast steps ------------------------------------------- */

/* The encoding and source sizes (the picture's where not given, the
 * encoding no larger than the picture): 0, or -EINVAL said. */
int cambi_sizes(const CambiState *s, const QualeVideoFormat *f, unsigned *enc_w_out,
                       unsigned *enc_h_out, unsigned *src_w_out, unsigned *src_h_out,
                       FeatureSink *sink)
{
    const unsigned w = f->width, h = f->height;
    unsigned enc_w = (unsigned)s->enc_width, enc_h = (unsigned)s->enc_height;
    if (!enc_w || !enc_h) {
        enc_w = w;
        enc_h = h;
    }
    unsigned src_w = (unsigned)s->src_width, src_h = (unsigned)s->src_height;
    if (!src_w || !src_h) {
        src_w = w;
        src_h = h;
    }
    /* A downscaled encode is not scored back at its encoding size. */
    if (enc_w > w || enc_h > h) {
        enc_w = w;
        enc_h = h;
    }

    if (enc_w < CAMBI_MIN_SIDE && enc_h < CAMBI_MIN_SIDE) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: a %ux%u encode is too small: cambi needs %u samples "
                         "in width or height", enc_w, enc_h, CAMBI_MIN_SIDE);
        return -EINVAL;
    }
    if (src_w < CAMBI_MIN_SIDE && src_h < CAMBI_MIN_SIDE) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: a %ux%u source is too small: cambi needs %u samples "
                         "in width or height", src_w, src_h, CAMBI_MIN_SIDE);
        return -EINVAL;
    }
    if ((src_w > enc_w && src_h < enc_h) || (src_w < enc_w && src_h > enc_h)) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: the source size %ux%u and the encoding size %ux%u "
                         "must not be larger each in one direction", src_w, src_h,
                         enc_w, enc_h);
        return -EINVAL;
    }

    *enc_w_out = enc_w;
    *enc_h_out = enc_h;
    *src_w_out = src_w;
    *src_h_out = src_h;
    return 0;
}

/* The visibility thresholds of every contrast step, and the band of
 * values whose counts a c-value reads: 0, or -EINVAL said. */
int cambi_contrast(CambiState *s, FeatureSink *sink)
{
    CambiContrast *k = &s->contrast;
    k->num_diffs = 1 << s->max_log_contrast;
    int band_top = 0;
    for (int d = 0; d < k->num_diffs; d++) {
        const int tvi = cambi_tvi_for_diff(d + 1, s->tvi_threshold, s->eotf);
        if (tvi < 0) {
            feature_sink_log(sink, QUALE_LOG_ERROR,
                             "cambi: no visibility threshold for a step of %d codes "
                             "with tvi_threshold %g", d + 1, s->tvi_threshold);
            return -EINVAL;
        }
        k->tvi[d] = tvi + k->num_diffs;
        band_top = QUALE_MAX(band_top, k->tvi[d]);
    }
    k->vlt_luma = cambi_vlt_luma(s->vis_lum_threshold, s->eotf);
    if (k->vlt_luma < 0) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: cambi_vis_lum_threshold %g is above the peak luminance",
                         s->vis_lum_threshold);
        return -EINVAL;
    }
    /* A c-value reads the counts of values v - num_diffs .. v + num_diffs
     * for v with v + num_diffs <= tvi[d] and v + num_diffs + d + 1 >
     * vlt_luma: these bounds keep every count it can read (and no other),
     * as libvmaf's. */
    k->band_base = QUALE_MAX(0, k->vlt_luma - 3 * k->num_diffs + 1);
    k->band_size = QUALE_MAX(0, band_top + 1 - k->band_base);
    return 0;
}

/* ---- visibility thresholds ---------------------------------------------- */

static double cambi_bt1886_eotf(double v)
{
    const double gamma = 2.4, lw = 300.0, lb = 0.01;
    const double a = pow(pow(lw, 1.0 / gamma) - pow(lb, 1.0 / gamma), gamma);
    const double b = pow(lb, 1.0 / gamma) / (pow(lw, 1.0 / gamma) - pow(lb, 1.0 / gamma));
    const double x = v + b;
    return a * pow(x > 0 ? x : 0, gamma);
}

static double cambi_pq_eotf(double v)
{
    const double m1 = 0.1593017578125, m2 = 78.84375;
    const double c1 = 0.8359375, c2 = 18.8515625, c3 = 18.6875;
    const double num = pow(v, 1.0 / m2) - c1;
    const double den = c2 - c3 * pow(v, 1.0 / m2);
    return 10000 * pow((num > 0 ? num : 0) / den, 1.0 / m1);
}

/* The luminance of a 10-bit limited-range sample (clipped to the range). */
static double cambi_luminance(int sample, enum CambiEotf eotf)
{
    const int clipped = QUALE_MIN(QUALE_MAX(sample, CAMBI_LUMA_FOOT), CAMBI_LUMA_HEAD);
    const double v = (double)(clipped - CAMBI_LUMA_FOOT) / (CAMBI_LUMA_HEAD - CAMBI_LUMA_FOOT);
    return eotf == CAMBI_EOTF_PQ ? cambi_pq_eotf(v) : cambi_bt1886_eotf(v);
}

/* Whether a step of diff codes above sample is visible. */
static bool cambi_step_visible(int sample, int diff, double threshold, enum CambiEotf eotf)
{
    const double base = cambi_luminance(sample, eotf);
    const double stepped = cambi_luminance(sample + diff, eotf);
    return stepped - base > threshold * base;
}

/* Where sample stands against the last sample at which the step is
 * visible: below it (-1), at it (0) or above it (1). */
static int cambi_tvi_side(int sample, int diff, double threshold, enum CambiEotf eotf)
{
    if (!cambi_step_visible(sample, diff, threshold, eotf)) return 1;
    if (cambi_step_visible(sample + 1, diff, threshold, eotf)) return -1;
    return 0;
}

/* The largest 10-bit sample at which a step of diff codes is visible, by
 * bisection over the limited range, as libvmaf: 0 when none is, 1023 when
 * all are.  -EDOM if the visibility is not monotonic in the sample. */
int cambi_tvi_for_diff(int diff, double threshold, enum CambiEotf eotf)
{
    int lo = CAMBI_LUMA_FOOT, hi = CAMBI_LUMA_HEAD - diff - 1;

    int side = cambi_tvi_side(lo, diff, threshold, eotf);
    if (side > 0) return 0;
    if (side == 0) return lo;
    side = cambi_tvi_side(hi, diff, threshold, eotf);
    if (side < 0) return CAMBI_LUMA_MAX;
    if (side == 0) return hi;

    /* lo is below the answer and hi above it: 10 halvings of the range
     * find it when the visibility is monotonic. */
    for (unsigned step = 0; step < 64; step++) {
        const int mid = lo + (hi - lo) / 2;
        side = cambi_tvi_side(mid, diff, threshold, eotf);
        if (side == 0) return mid;
        if (side > 0) hi = mid;
        else lo = mid;
    }
    return -EDOM;
}

/* The smallest sample at or above the luminance threshold (0 when the
 * foot of the range already is); -EDOM if no sample of the range is. */
int cambi_vlt_luma(double threshold, enum CambiEotf eotf)
{
    for (int sample = CAMBI_LUMA_FOOT; sample <= CAMBI_LUMA_HEAD; sample++) {
        if (cambi_luminance(sample, eotf) >= threshold)
            return sample == CAMBI_LUMA_FOOT ? 0 : sample;
    }
    return -EDOM;
}

/* ---- geometry ----------------------------------------------------------- */

/* window_size scaled by (w + h) / (3840 + 2160) = (w + h) / 375 / 16, in
 * libvmaf's integer steps (16-bit result), halved with the speed-up, odd. */
unsigned cambi_window(int window_size, unsigned w, unsigned h, bool speedup)
{
    unsigned win = (uint16_t)(((unsigned)window_size * (w + h) / 375) >> 4);
    if (speedup) win = (win + 1) >> 1;
    return win | 1;
}

static unsigned cambi_ceil_log2(uint32_t n)
{
    unsigned bits = 0;
    for (uint32_t t = n ? n - 1 : 0; t; t >>= 1) bits++;
    return bits;
}

static uint16_t cambi_mask_index(unsigned w, unsigned h)
{
    const uint32_t blocks = (w >> 6) * (h >> 6);
    const int side2 = CAMBI_MASK_SIDE * CAMBI_MASK_SIDE;
    return (uint16_t)((side2 + 3 * ((int)cambi_ceil_log2(blocks) - 11) - 1) >> 1);
}

int cambi_geometry(const CambiState *s, CambiGeometry *g, unsigned w, unsigned h,
                          const char *what, FeatureSink *sink)
{
    g->width = w;
    g->height = h;
    g->window = cambi_window(s->window_size, w, h, s->speedup);
    g->mask_index = cambi_mask_index(w, h);

    /* libvmaf's histogram loops read the first window / 2 columns and rows
     * of every scale, inside the picture or not. */
    unsigned sw = w, sh = h;
    const unsigned halvings = CAMBI_SCALES - 1 + (s->speedup ? 1 : 0);
    for (unsigned k = 0; k < halvings; k++) {
        sw = cambi_halve(sw);
        sh = cambi_halve(sh);
    }
    const unsigned pad = g->window / 2;
    if (sw < pad || sh < pad) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: a %ux%u %s is too thin: its smallest scale (%ux%u) "
                         "is narrower or lower than half the %u-sample window, where "
                         "libvmaf reads outside the picture", w, h, what, sw, sh,
                         g->window);
        return -EINVAL;
    }
    return 0;
}

/* ---- heatmaps ----------------------------------------------------------- */

/* A heatmap's path: the directory (up to PATH_MAX) and the file name. */
#define CAMBI_PATH_SIZE 4160

/* The file of a scale: its name carries the encoding size halved scale
 * times, as libvmaf names it (also with the speed-up). */
static int cambi_heatmap_path(const CambiState *s, unsigned scale, char *out, size_t size)
{
    unsigned w = s->dist.width, h = s->dist.height;
    for (unsigned k = 0; k < scale; k++) {
        w = cambi_halve(w);
        h = cambi_halve(h);
    }
    const int n = snprintf(out, size, "%s/cambi_heatmap_scale_%u_%ux%u_16b.gray",
                           s->heatmaps_path, scale, w, h);
    return n >= 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

/* Logs a failure on the file of a scale, by its path. */
void cambi_heatmap_error(const CambiState *s, unsigned scale, const char *what, int err,
                                FeatureSink *sink)
{
    char path[CAMBI_PATH_SIZE];
    if (cambi_heatmap_path(s, scale, path, sizeof(path))) snprintf(path, sizeof(path), "(too long)");
    feature_sink_log(sink, QUALE_LOG_ERROR, "cambi: cannot %s the heatmap %s: %s", what, path,
                     strerror(-err));
}

/* Makes dir and its missing parents with mode 0770, as libvmaf's mkdirp
 * (an existing file of that name is left for the open to report). */
static int cambi_make_directories(const char *dir, FeatureSink *sink)
{
    if (!*dir) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "cambi: heatmaps_path is empty");
        return -EINVAL;
    }
    char *path = strdup(dir);
    if (!path) return -ENOMEM;
    int err = 0;
    for (size_t i = 1; !err; i++) {
        const char c = path[i];
        if (c == '/' || c == '\0') {
            /* Every prefix that ends a component (runs of '/' once). */
            if (path[i - 1] != '/') {
                path[i] = '\0';
                if (mkdir(path, 0770) && errno != EEXIST) {
                    err = -errno;
                    feature_sink_log(sink, QUALE_LOG_ERROR,
                                     "cambi: cannot create the heatmaps directory %s: %s",
                                     path, strerror(errno));
                }
                path[i] = c;
            }
            if (c == '\0') break;
        }
    }
    free(path);
    return err;
}

void cambi_close_heatmaps(CambiState *s)
{
    for (unsigned scale = 0; scale < CAMBI_SCALES; scale++) {
        if (s->heatmap_fd[scale] >= 0) close(s->heatmap_fd[scale]);
        s->heatmap_fd[scale] = -1;
    }
}

/* Creates (or truncates) the file of every scale. */
int cambi_open_heatmaps(CambiState *s, FeatureSink *sink)
{
    /* libvmaf scales c-values by the largest one a window can give:
     * max weight * window^2 / 4, in integers. */
    static const int weights[CAMBI_MAX_DIFFS] = { CAMBI_CONTRAST_WEIGHTS };
    int max_weight = 0;
    for (int d = 0; d < s->contrast.num_diffs; d++) max_weight = QUALE_MAX(max_weight, weights[d]);
    const int max_c = max_weight * (int)(s->dist.window * s->dist.window) / 4;
    /* max_c is 0 with a window of 1: libvmaf divides by it too. */
    s->heatmap_scale = max_c ? 65535.0 / max_c : INFINITY;

    int err = cambi_make_directories(s->heatmaps_path, sink);
    if (err) return err;
    char path[CAMBI_PATH_SIZE];
    for (unsigned scale = 0; scale < CAMBI_SCALES && !err; scale++) {
        err = cambi_heatmap_path(s, scale, path, sizeof(path));
        if (!err) {
            s->heatmap_fd[scale] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
            if (s->heatmap_fd[scale] < 0) err = -errno;
        }
        if (err) cambi_heatmap_error(s, scale, "open", err, sink);
    }
    if (err) cambi_close_heatmaps(s);
    return err;
}

/* libvmaf's conversion, (uint16_t) of a double, as x86-64 makes it: the
 * low 16 bits of the 32-bit truncation, and 0 where that has no value
 * (NaN, infinite, 2^31 and above: 0x80000000).  A c-value a little above
 * max_c (the maximum rounds down) thus wraps, as in libvmaf's files. */
uint16_t cambi_heatmap_code(double scale, float c)
{
    const double v = scale * (double)c;
    if (!(v >= 0.0 && v < 2147483648.0)) return 0;
    return (uint16_t)(uint32_t)v;
}

/* The c-values of one scale of frame, in its place in the file. */
int cambi_write_heatmap(const CambiState *s, unsigned scale, unsigned frame,
                               const float *c_values, unsigned w, unsigned h, uint8_t *bytes,
                               FeatureSink *sink)
{
    const size_t count = (size_t)w * h, size = 2 * count;
    for (size_t i = 0; i < count; i++) {
        const uint16_t code = cambi_heatmap_code(s->heatmap_scale, c_values[i]);
        bytes[2 * i] = (uint8_t)(code & 0xff);
        bytes[2 * i + 1] = (uint8_t)(code >> 8);
    }
    int err = 0;
    if ((uint64_t)frame > (uint64_t)INT64_MAX / size) {
        err = -EFBIG;
    } else {
        off_t offset = (off_t)((uint64_t)frame * size);
        for (size_t done = 0; done < size;) {
            const ssize_t n = pwrite(s->heatmap_fd[scale], bytes + done, size - done, offset);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                err = n < 0 ? -errno : -EIO;
                break;
            }
            done += (size_t)n;
            offset += n;
        }
    }
    if (err) cambi_heatmap_error(s, scale, "write a frame to", err, sink);
    return err;
}
