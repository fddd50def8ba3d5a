/*
 * libvmaf's C API, as libquale provides it: a program written for libvmaf
 * 3.x (FFmpeg's libvmaf filter, VapourSynth plugins, ...) builds and runs
 * against libquale's libvmaf.so.3 unchanged.  The names, types and layouts
 * are libvmaf's; what each call does, and where quale is stricter, is in
 * docs/libvmaf.md.  Errors are negative errno values.
 */
#ifndef __VMAF_H__
#define __VMAF_H__

#include <stdint.h>
#include <stdio.h>

#include "libvmaf/feature.h"
#include "libvmaf/model.h"
#include "libvmaf/picture.h"

#ifdef __cplusplus
extern "C" {
#endif

enum VmafLogLevel {
    VMAF_LOG_LEVEL_NONE = 0,
    VMAF_LOG_LEVEL_ERROR,
    VMAF_LOG_LEVEL_WARNING,
    VMAF_LOG_LEVEL_INFO,
    VMAF_LOG_LEVEL_DEBUG,
};

enum VmafOutputFormat {
    VMAF_OUTPUT_FORMAT_NONE = 0,
    VMAF_OUTPUT_FORMAT_XML,
    VMAF_OUTPUT_FORMAT_JSON,
    VMAF_OUTPUT_FORMAT_CSV,
    VMAF_OUTPUT_FORMAT_SUB,
};

enum VmafPoolingMethod {
    VMAF_POOL_METHOD_UNKNOWN = 0,
    VMAF_POOL_METHOD_MIN,
    VMAF_POOL_METHOD_MAX,
    VMAF_POOL_METHOD_MEAN,
    VMAF_POOL_METHOD_HARMONIC_MEAN,
    VMAF_POOL_METHOD_NB
};

typedef struct VmafConfiguration {
    enum VmafLogLevel log_level;
    unsigned n_threads;   /* 0: the calling thread only, as in libvmaf */
    unsigned n_subsample; /* score every n-th frame; 0 and 1: all */
    uint64_t cpumask;     /* CPU features to leave unused */
    uint64_t gpumask;     /* non-zero: no GPU feature extractors */
} VmafConfiguration;

typedef struct VmafContext VmafContext;

/*
 * Threads: any call on a context may be made from any thread, also while
 * another thread is in a call on the same context: the calls take turns
 * (each holds the context from start to end).  Two vmaf_read_pictures()
 * with one index: one is taken, the other refused (-EINVAL).  The flush
 * (vmaf_read_pictures(vmaf, NULL, NULL, 0)) waits for a frame being read;
 * frames read after it are refused.  vmaf_close() waits for the call in
 * progress; every call after it is refused (-EINVAL), and
 * vmaf_read_pictures() still takes its pictures.  Frames must still come
 * in order: threads that read frames of one context must agree on which
 * index comes next.  Models, feature dictionaries and pictures have no
 * lock: a model may serve several contexts at once, but is not to be
 * changed (vmaf_model_feature_overload()) or destroyed meanwhile.
 */

int vmaf_init(VmafContext **vmaf, VmafConfiguration cfg);

int vmaf_use_features_from_model(VmafContext *vmaf, VmafModel *model);
int vmaf_use_features_from_model_collection(VmafContext *vmaf,
                                            VmafModelCollection *model_collection);

/* A feature extractor by libvmaf's name ("psnr", "float_ssim", ...) with
 * its options; takes opts_dict. */
int vmaf_use_feature(VmafContext *vmaf, const char *feature_name,
                     VmafFeatureDictionary *opts_dict);

/* A score computed elsewhere, stored under feature_name at index; a second
 * score for the same name and index is refused (-EINVAL), as in libvmaf. */
int vmaf_import_feature_score(VmafContext *vmaf, const char *feature_name,
                              double value, unsigned index);

/* Frame index's pictures (taking both references, whatever the call
 * returns); NULL, NULL ends the stream and computes what is left.  Indices
 * come in order from 0, each once. */
int vmaf_read_pictures(VmafContext *vmaf, VmafPicture *ref, VmafPicture *dist,
                       unsigned index);

int vmaf_score_at_index(VmafContext *vmaf, VmafModel *model, double *score,
                        unsigned index);
int vmaf_score_at_index_model_collection(VmafContext *vmaf,
                                         VmafModelCollection *model_collection,
                                         VmafModelCollectionScore *score,
                                         unsigned index);
int vmaf_feature_score_at_index(VmafContext *vmaf, const char *feature_name,
                                double *score, unsigned index);

/* Pooled over frames index_low to index_high, both included. */
int vmaf_score_pooled(VmafContext *vmaf, VmafModel *model,
                      enum VmafPoolingMethod pool_method, double *score,
                      unsigned index_low, unsigned index_high);
int vmaf_score_pooled_model_collection(VmafContext *vmaf,
                                       VmafModelCollection *model_collection,
                                       enum VmafPoolingMethod pool_method,
                                       VmafModelCollectionScore *score,
                                       unsigned index_low, unsigned index_high);
int vmaf_feature_score_pooled(VmafContext *vmaf, const char *feature_name,
                              enum VmafPoolingMethod pool_method, double *score,
                              unsigned index_low, unsigned index_high);

typedef struct VmafPictureConfiguration {
    struct {
        unsigned w, h;
        unsigned bpc;
        enum VmafPixelFormat pix_fmt;
    } pic_params;
    unsigned pic_cnt;
} VmafPictureConfiguration;

/* Pictures of one format from a pool the context recycles. */
int vmaf_preallocate_pictures(VmafContext *vmaf, VmafPictureConfiguration cfg);
int vmaf_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic);

int vmaf_close(VmafContext *vmaf);

/* The results in libvmaf's layouts (the quale tool's, at 6 decimals), after
 * the flush.  A call that fails (before the flush, after a run that failed)
 * leaves the file as it was: the results replace it whole, keeping its
 * mode; a device or a FIFO (/dev/stdout) is written into. */
int vmaf_write_output(VmafContext *vmaf, const char *output_path,
                      enum VmafOutputFormat fmt);

const char *vmaf_version(void);

#ifdef __cplusplus
}
#endif

#endif /* __VMAF_H__ */
