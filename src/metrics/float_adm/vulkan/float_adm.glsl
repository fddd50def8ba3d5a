// Float ADM's Vulkan twin: where its shaders (float_adm_dwt.comp,
// float_adm_decouple.comp, float_adm_rows.comp) find a level's planes.
// Each level has two device buffers of w2 x h2 float planes (dense, rows of
// w2), plane p at p * plane_words (float_adm_vulkan.c makes them):
//
// Bands: the DWT of both pictures.
#define BAND_A_REF 0u  // the approximations: the next level's input
#define BAND_A_DIS 1u
#define BAND_REF 2u    // the reference's details h, v, d: 2, 3, 4
#define BAND_DIS 5u    // the distorted picture's: 5, 6, 7
// Masks: the decoupled parts weighted by the CSF, and their |x| / 30 that
// the masking window reads around its centre.
#define MASK_CSF_R 0u  // csf * restored part h, v, d: 0, 1, 2
#define MASK_CSF_A 3u  // csf * additive impairment: 3, 4, 5
#define MASK_FLT_R 6u  // |csf * restored| / 30: 6, 7, 8
#define MASK_FLT_A 9u  // |csf * additive| / 30: 9, 10, 11
