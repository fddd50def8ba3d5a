/*
 * libvmaf's feature option dictionary, as libquale provides it (the
 * libvmaf 3.x API; see docs/libvmaf.md).
 */
#ifndef __VMAF_FEATURE_H__
#define __VMAF_FEATURE_H__

#ifdef __cplusplus
extern "C" {
#endif

/* Option name -> value text, for one feature extractor. */
typedef struct VmafFeatureDictionary VmafFeatureDictionary;

/* Sets key to val, making *dict when it is NULL; a key set again takes the
 * new value. */
int vmaf_feature_dictionary_set(VmafFeatureDictionary **dict, const char *key,
                                const char *val);

/* Frees *dict and sets it to NULL. */
int vmaf_feature_dictionary_free(VmafFeatureDictionary **dict);

#ifdef __cplusplus
}
#endif

#endif /* __VMAF_FEATURE_H__ */
