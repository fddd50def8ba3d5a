/*
 * The one fact of an AV1 sequence header that decides where a stream may
 * decode: whether its frames may carry film grain (AV1 spec 5.5,
 * sequence_header_obu(), whose last field is film_grain_params_present).
 * The synthesised grain is added to the decoded picture, and quale only
 * lets NVDEC decode streams whose pictures it knows to equal the CPU
 * decoder's; grain synthesis is not among them (decode.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "input/av1_header.h"

typedef struct Bits {
    const uint8_t *data;
    size_t size, at; /* in bits */
    bool overrun;
} Bits;

static uint32_t bits(Bits *b, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++) {
        if (b->at >= b->size) {
            b->overrun = true;
            return 0;
        }
        v = v << 1 | (uint32_t)(b->data[b->at >> 3] >> (7 - (b->at & 7)) & 1);
        b->at++;
    }
    return v;
}

/* uvlc() (4.10.3): a count of leading zeros, then as many bits. */
static void skip_uvlc(Bits *b)
{
    unsigned zeros = 0;
    while (!bits(b, 1) && !b->overrun)
        if (++zeros >= 32) {
            b->overrun = true;
            return;
        }
    if (zeros < 32) bits(b, zeros);
}

/* leb128() (4.10.5), at most 8 bytes. */
static bool leb128(const uint8_t *p, size_t size, size_t *used, uint64_t *value)
{
    *value = 0;
    for (size_t i = 0; i < 8 && i < size; i++) {
        *value |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *used = i + 1;
            return true;
        }
    }
    return false;
}

/* film_grain_params_present of a sequence header OBU's payload: 0 or 1, -1
 * when the payload ends early. */
static int sequence_header_grain(const uint8_t *p, size_t size)
{
    Bits b = { p, size * 8, 0, false };
    const uint32_t profile = bits(&b, 3);
    bits(&b, 1); /* still_picture */
    const bool reduced = bits(&b, 1);
    bool decoder_model = false, display_delay = false;
    unsigned buffer_delay_length = 0;
    if (reduced) {
        bits(&b, 5); /* seq_level_idx[0] */
    } else {
        if (bits(&b, 1)) { /* timing_info_present_flag */
            bits(&b, 32);  /* num_units_in_display_tick */
            bits(&b, 32);  /* time_scale */
            if (bits(&b, 1)) skip_uvlc(&b); /* equal_picture_interval */
            decoder_model = bits(&b, 1);
            if (decoder_model) {
                buffer_delay_length = bits(&b, 5) + 1;
                bits(&b, 32); /* num_units_in_decoding_tick */
                bits(&b, 5);  /* buffer_removal_time_length_minus_1 */
                bits(&b, 5);  /* frame_presentation_time_length_minus_1 */
            }
        }
        display_delay = bits(&b, 1);
        const unsigned points = bits(&b, 5) + 1;
        for (unsigned i = 0; i < points && !b.overrun; i++) {
            bits(&b, 12); /* operating_point_idc */
            if (bits(&b, 5) > 7) bits(&b, 1); /* seq_level_idx, seq_tier */
            if (decoder_model && bits(&b, 1)) {
                bits(&b, buffer_delay_length); /* decoder_buffer_delay */
                bits(&b, buffer_delay_length); /* encoder_buffer_delay */
                bits(&b, 1);                   /* low_delay_mode_flag */
            }
            if (display_delay && bits(&b, 1)) bits(&b, 4);
        }
    }
    const unsigned width_bits = bits(&b, 4) + 1, height_bits = bits(&b, 4) + 1;
    bits(&b, width_bits);
    bits(&b, height_bits);
    if (!reduced && bits(&b, 1)) { /* frame_id_numbers_present_flag */
        bits(&b, 4);
        bits(&b, 3);
    }
    bits(&b, 3); /* 128x128 superblocks, filter intra, intra edge filter */
    if (!reduced) {
        bits(&b, 4); /* interintra, masked compound, warped motion, dual filter */
        const bool order_hint = bits(&b, 1);
        if (order_hint) bits(&b, 2); /* jnt_comp, ref_frame_mvs */
        unsigned force_screen_content = 2;
        if (!bits(&b, 1)) force_screen_content = bits(&b, 1); /* seq_choose_screen_content_tools */
        if (force_screen_content > 0 && !bits(&b, 1)) bits(&b, 1); /* integer mv */
        if (order_hint) bits(&b, 3); /* order_hint_bits_minus_1 */
    }
    bits(&b, 3); /* superres, cdef, restoration */
    /* color_config() (5.5.2) */
    const bool high_bitdepth = bits(&b, 1);
    unsigned depth = high_bitdepth ? 10 : 8;
    if (profile == 2 && high_bitdepth && bits(&b, 1)) depth = 12;
    const bool mono = profile == 1 ? false : bits(&b, 1);
    uint32_t primaries = 2, transfer = 2, matrix = 2;
    if (bits(&b, 1)) { /* color_description_present_flag */
        primaries = bits(&b, 8);
        transfer = bits(&b, 8);
        matrix = bits(&b, 8);
    }
    if (mono) {
        bits(&b, 1); /* color_range */
    } else if (primaries == 1 && transfer == 13 && matrix == 0) {
        /* sRGB: 4:4:4, full range, nothing more coded */
    } else {
        bits(&b, 1); /* color_range */
        bool x = profile != 1, y = profile == 0;
        if (profile == 2) {
            if (depth == 12) {
                x = bits(&b, 1);
                y = x ? bits(&b, 1) : false;
            } else {
                x = true;
                y = false;
            }
        }
        if (x && y) bits(&b, 2); /* chroma_sample_position */
    }
    if (!mono) bits(&b, 1); /* separate_uv_delta_q */
    const int grain = (int)bits(&b, 1);
    return b.overrun ? -1 : grain;
}

int av1_film_grain_present(const uint8_t *data, size_t size)
{
    if (!data || size == 0) return -1;
    /* An AV1CodecConfigurationRecord (MP4's av1C, Matroska's CodecPrivate):
     * marker and version 1 (0x81), three bytes more, then configOBUs. */
    if (data[0] == 0x81) {
        if (size < 4) return -1;
        data += 4;
        size -= 4;
    }
    /* OBUs (5.3): a header byte (type in bits 6..3, extension flag, size
     * flag), maybe an extension byte, maybe a leb128 size. */
    while (size > 0) {
        const unsigned type = data[0] >> 3 & 15;
        const bool extension = data[0] >> 2 & 1, sized = data[0] >> 1 & 1;
        size_t header = 1 + extension;
        if (data[0] & 0x80 || header > size) return -1;
        uint64_t payload = size - header;
        if (sized) {
            size_t used;
            if (!leb128(data + header, size - header, &used, &payload)) return -1;
            header += used;
            if (payload > size - header) return -1;
        }
        if (type == 1) return sequence_header_grain(data + header, (size_t)payload);
        data += header + payload;
        size -= header + (size_t)payload;
    }
    return -1;
}
