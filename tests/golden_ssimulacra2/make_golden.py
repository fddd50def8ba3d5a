#!/usr/bin/env python3
"""Makes the golden SSIMULACRA2 files (COMMANDS.txt says with what).

For every pair of the shared corpus: FFmpeg's rgb24 of both decoded
videos (swscale, accurate_rnd+bitexact, BT.709 limited range), each
frame's two pictures as PNG files without colour chunks (sRGB to libjxl),
scored by libjxl's ssimulacra2 tool (patched to print %.17g); writes
OUT/<pair>.txt: frame, score, sha256 of the reference's and the distorted
picture's rgb24 bytes.
"""
import argparse
import hashlib
import json
import os
import struct
import subprocess
import tempfile
import time
import zlib

SCALE = "scale=flags=accurate_rnd+bitexact:in_color_matrix=bt709:in_range=tv,format=rgb24"


def write_png(path, w, h, data):
    """8-bit RGB, no colour chunks, filter 0 on every row."""
    raw = b"".join(b"\0" + data[y * w * 3:(y + 1) * w * 3] for y in range(h))

    def chunk(kind, body):
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))


def to_rgb(ffmpeg, yuv, w, h, pix_fmt, out):
    subprocess.run([ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error",
                    "-sws_flags", "accurate_rnd+bitexact", "-f", "rawvideo", "-pix_fmt", pix_fmt,
                    "-s", f"{w}x{h}", "-i", yuv, "-vf", SCALE, "-f", "rawvideo",
                    "-pix_fmt", "rgb24", "-y", out], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ffmpeg", required=True, help="FFmpeg 7.1.5's ffmpeg")
    ap.add_argument("--ssimulacra2", required=True, help="libjxl 0.11.2's ssimulacra2 tool")
    ap.add_argument("--shared", required=True, help="the shared folder (corpus/manifest.json)")
    ap.add_argument("--cache", required=True, help="the corpus decoded by decode.sh")
    ap.add_argument("--out", required=True)
    ap.add_argument("pairs", nargs="*", help="only these pairs")
    args = ap.parse_args()
    with open(os.path.join(args.shared, "corpus", "manifest.json")) as f:
        manifest = json.load(f)
    with tempfile.TemporaryDirectory() as work:
        for pair in manifest:
            name = pair["name"]
            if args.pairs and name not in args.pairs:
                continue
            w, h, frames = pair["width"], pair["height"], pair["frames"]
            rgb = [os.path.join(work, f"{name}.{role}.rgb") for role in ("ref", "dis")]
            for yuv, out in zip((pair["ref_yuv"], pair["dis_yuv"]), rgb):
                to_rgb(args.ffmpeg, os.path.join(args.cache, yuv), w, h, pair["pix_fmt"], out)
            size = w * h * 3
            lines = []
            start = time.time()
            with open(rgb[0], "rb") as fr, open(rgb[1], "rb") as fd:
                for n in range(frames):
                    a, b = fr.read(size), fd.read(size)
                    if len(a) != size or len(b) != size:
                        raise SystemExit(f"{name}: frame {n} missing")
                    pa, pb = os.path.join(work, "a.png"), os.path.join(work, "b.png")
                    write_png(pa, w, h, a)
                    write_png(pb, w, h, b)
                    score = subprocess.run([args.ssimulacra2, pa, pb], check=True,
                                           capture_output=True, text=True).stdout.strip()
                    lines.append(f"{n} {score} {hashlib.sha256(a).hexdigest()} "
                                 f"{hashlib.sha256(b).hexdigest()}")
            with open(os.path.join(args.out, name + ".txt"), "w") as f:
                f.write(f"# {name}: {w}x{h} {pair['pix_fmt']}, {frames} frames; frame, "
                        "ssimulacra2, sha256 of the reference's and the distorted picture's "
                        "rgb24 bytes\n")
                f.write("\n".join(lines) + "\n")
            print(name, frames, "frames", f"{time.time() - start:.1f}s", flush=True)


if __name__ == "__main__":
    main()
