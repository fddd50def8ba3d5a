/*
 * What float VIF (float_vif.c) and SpEED (speed.c) share, as libvmaf's
 * vif_tools.c shares it between them: the Gaussian filters and the kernel
 * scales that size them, and the scalers of their prescale options.
 */
#ifndef QUALE_SRC_METRICS_VIF_TOOLS_H
#define QUALE_SRC_METRICS_VIF_TOOLS_H

#include <stdbool.h>
#include <stddef.h>

/* The prescale methods, in the order of their names' table. */
enum VifPrescaleMethod {
    VIF_PRESCALE_NEAREST = 0,
    VIF_PRESCALE_BILINEAR,
    VIF_PRESCALE_BICUBIC,
    VIF_PRESCALE_LANCZOS4,
};

/* "nearest", "bilinear", "bicubic", "lanczos4", NULL: the choices of the
 * options vif_prescale_method and speed_prescale_method. */
extern const char *const vif_prescale_method_names[];

/* libvmaf's VIF_BILINEAR_MAX_WIDTH: its bilinear scaler's column tables. */
#define VIF_BILINEAR_MAX_WIDTH 7680

/* Whether libvmaf accepts a kernel scale: within 1e-3 of one of its 21
 * (float) values. */
bool vif_kernelscale_valid(float ks);

/* The message's list of those values. */
#define VIF_KERNELSCALES_TEXT                                                            \
    "1, 1/2, 3/2, 2, 2/3, 2.4, 360/97, 4/3, 3.5/3, 3.75/3, 4.25/3, 5/3, 3, 1/2.25, 1.4746, " \
    "1.54, 1.6, 1.06667, 0.711111, 0.74074 and 1.111111"

/* The taps of scale `scale`'s filter: 2^(4 - scale) + 1 times the kernel
 * scale (in float), rounded up to odd, at least 3. */
int vif_filter_taps(int scale, float ks);

/* libvmaf's get_1d_gaussian_kernel(): the density at -k..k (k = taps / 2)
 * in its float and double steps, normalised by its float sum.  VIF's
 * filters have stdev = taps / 5 (in float). */
void vif_gaussian_kernel(float *out, int taps, float stdev);

/*
 * libvmaf's vif_scale_frame_s(): src (sw x sh, ss floats a row) resized to
 * dw x dh into dst (ds floats a row) by the method; the same size is a
 * copy.  See vif_tools.c for the arithmetic.
 */
void vif_prescale(const float *src, int sw, int sh, size_t ss, float *dst, int dw, int dh,
                  size_t ds, int method);

#endif /* QUALE_SRC_METRICS_VIF_TOOLS_H */
