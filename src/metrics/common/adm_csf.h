/*
 * ADM's contrast sensitivity functions at the nominal frequency of DWT
 * level `lambda` (0..3), for a display of `display_height` rows seen from
 * `view_dist` times its height, as libvmaf computes them.
 */
#ifndef QUALE_SRC_METRICS_ADM_CSF_H
#define QUALE_SRC_METRICS_ADM_CSF_H

/* Watson et al. 1997's quantisation step; theta 1 = h and v, 2 = d. */
float adm_csf_watson_quant_step(int lambda, int theta, double view_dist, int display_height);

/* The DLM paper's CSF; theta 0 = h and v, 45 = d. */
float adm_csf_dlm(int lambda, double view_dist, int display_height, int theta);

/* Barten's CSF at luminance lum (cd/m2), times scale. */
float adm_csf_barten(int lambda, double view_dist, int display_height, double lum, double scale);

#endif /* QUALE_SRC_METRICS_ADM_CSF_H */
