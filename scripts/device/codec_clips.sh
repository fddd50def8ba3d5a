#!/usr/bin/env bash
# Makes the clips of scripts/device/nvdec_codecs.sh, on a machine with
# Debian's ffmpeg (its encoders): one reference and the same 48 frames
# encoded in every codec NVDEC decodes, bit-exact ones and not.
#
#   scripts/device/codec_clips.sh CORPUS_DIR OUT_DIR
#
# CORPUS_DIR is the shared corpus (its dune_576x324_ref.mkv, lossless
# H.264 High 4:4:4 Predictive, which stays on the CPU, is the reference).
set -euo pipefail
corpus=${1:?usage: codec_clips.sh CORPUS_DIR OUT_DIR}
out=$(mkdir -p "${2:?usage: codec_clips.sh CORPUS_DIR OUT_DIR}" && cd "$2" && pwd)
ref=$corpus/dune_576x324_ref.mkv
enc() { ffmpeg -nostdin -v error -y -i "$ref" -frames:v 48 "$@"; }
cp "$ref" "$out/ref.mkv"
# open GOPs and B-frames where the encoder has them: leading pictures are
# where a decoder's order and references show
enc -c:v libx264 -crf 30 -bf 3 -x264-params open-gop=1:keyint=16 "$out/h264.mp4"
enc -c:v libx265 -crf 30 -x265-params keyint=16:open-gop=1:log-level=none "$out/hevc.mkv"
enc -pix_fmt yuv420p10le -c:v libx265 -crf 30 -x265-params keyint=16:log-level=none \
    "$out/hevc10.mp4"
enc -pix_fmt yuv420p12le -c:v libx265 -crf 30 -x265-params keyint=16:log-level=none \
    "$out/hevc12.mkv"
enc -c:v libvpx-vp9 -b:v 300k -g 16 "$out/vp9.webm"
enc -c:v libvpx -b:v 300k -g 16 -auto-alt-ref 1 "$out/vp8.webm"
enc -c:v libaom-av1 -cpu-used 8 -crf 40 -g 16 "$out/av1.mp4"
enc -pix_fmt yuv420p10le -c:v libaom-av1 -cpu-used 8 -crf 40 -g 16 "$out/av1_10.ivf"
# not bit-exact standards: they must stay on the CPU
enc -c:v mpeg2video -q:v 6 -bf 2 -g 12 "$out/mpeg2.ts"
enc -c:v mpeg4 -q:v 6 -bf 2 "$out/mpeg4.mp4"
# AV1 with film grain: stays on the CPU too
enc -c:v libaom-av1 -cpu-used 8 -crf 40 -denoise-noise-level 20 "$out/av1_grain.mkv"
# H.264 with an H.274 film grain SEI, which FFmpeg applies on the CPU only:
# on the GPU the run must fail, not score grain-free pictures
enc -c:v libx264 -crf 30 -bf 0 -g 16 -bsf:v h264_mp4toannexb -f h264 "$out/plain.h264"
python3 "$(dirname "${BASH_SOURCE[0]}")/h264_film_grain_sei.py" "$out/plain.h264" "$out/fgc.h264"
ffmpeg -nostdin -v error -y -r 24 -i "$out/fgc.h264" -c copy "$out/h264_fgc.mp4"
rm "$out/plain.h264" "$out/fgc.h264"
ls -la "$out" >&2
