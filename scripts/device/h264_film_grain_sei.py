#!/usr/bin/env python3
"""Copies an H.264 Annex B stream with an H.274 film grain characteristics
SEI (H.264 D.1.21, payload type 19) before the first slice of every
picture: FFmpeg's software decoder then adds grain to every picture, its
NVDEC hwaccel does not (scripts/device/codec_clips.sh's h264_fgc.mp4).

    h264_film_grain_sei.py IN.h264 OUT.h264
"""
import re
import sys


class BitWriter:
    def __init__(self):
        self.bits = []

    def u(self, n, v):
        self.bits += [(v >> (n - 1 - i)) & 1 for i in range(n)]

    def ue(self, v):
        v += 1
        n = v.bit_length()
        self.u(n - 1, 0)
        self.u(n, v)

    def se(self, v):
        self.ue(2 * v - 1 if v > 0 else -2 * v)

    def payload(self):
        """The bits with the payload's stop bit, to a whole byte."""
        b = self.bits + [1]
        b += [0] * (-len(b) % 8)
        return bytes(int("".join(map(str, b[i:i + 8])), 2) for i in range(0, len(b), 8))


def film_grain_sei():
    w = BitWriter()
    w.u(1, 0)  # film_grain_characteristics_cancel_flag
    w.u(2, 0)  # film_grain_model_id: frequency filtering
    w.u(1, 0)  # separate_colour_description_present_flag
    w.u(2, 0)  # blending_mode_id: additive
    w.u(4, 3)  # log2_scale_factor
    w.u(1, 1)  # comp_model_present_flag: luma only
    w.u(1, 0)
    w.u(1, 0)
    w.u(8, 0)  # num_intensity_intervals_minus1
    w.u(3, 1)  # num_model_values_minus1
    w.u(8, 0)  # intensity_interval_lower_bound
    w.u(8, 255)  # intensity_interval_upper_bound
    w.se(60)  # comp_model_value: strength
    w.se(8)  # comp_model_value: cut-off frequency
    w.ue(1)  # film_grain_characteristics_repetition_period
    payload = w.payload()
    sei = bytes([19, len(payload)]) + payload + b"\x80"  # rbsp_trailing_bits
    out, zeros = bytearray(), 0
    for x in sei:  # emulation prevention
        if zeros >= 2 and x <= 3:
            out.append(3)
            zeros = 0
        out.append(x)
        zeros = zeros + 1 if x == 0 else 0
    return b"\x00\x00\x00\x01\x06" + bytes(out)


def main():
    src, dst = sys.argv[1:]
    nal = film_grain_sei()
    with open(src, "rb") as f:
        data = f.read()
    out, prev = bytearray(), 0
    for m in re.finditer(b"\x00\x00\x01", data):
        p = m.start()
        # a slice (types 1, 5) whose first_mb_in_slice is 0 starts a picture
        if p + 4 < len(data) and data[p + 3] & 0x1F in (1, 5) and data[p + 4] & 0x80:
            q = p - 1 if p > 0 and data[p - 1] == 0 else p
            out += data[prev:q] + nal
            prev = q
    out += data[prev:]
    with open(dst, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
