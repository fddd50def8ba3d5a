/*
 * What quale reads of an AV1 stream's sequence header itself (av1_header.c).
 */
#ifndef QUALE_SRC_INPUT_AV1_HEADER_H
#define QUALE_SRC_INPUT_AV1_HEADER_H

#include <stddef.h>
#include <stdint.h>

/* Whether the frames of the AV1 stream whose configuration is `data` (an
 * AV1CodecConfigurationRecord, as MP4 and Matroska store it, or the OBUs
 * themselves, as FFmpeg extracts them from IVF and raw streams) may carry
 * film grain: 1 or 0 from its sequence header's
 * film_grain_params_present, -1 when no whole sequence header is found. */
int av1_film_grain_present(const uint8_t *data, size_t size);

#endif /* QUALE_SRC_INPUT_AV1_HEADER_H */
