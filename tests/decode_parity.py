#!/usr/bin/env python3
"""Compressed input: quale reading the corpus bitstreams (mkv, mp4) through
FFmpeg's libraries gives, key by key and frame by frame, the numbers of
the same run on the raw frames that decode.sh writes with the ffmpeg tool
(which golden_parity holds against libvmaf).  Also: a Matroska file
through a pipe, an MP4 whose index is at its end through a pipe (refused,
saying why), --score-bitdepth on decoded 10-bit video, and the note when
raw flags are given for a compressed file, and decoding in several
sessions over a file's chunks (open GOPs).  Ends with "N passed, M
failed"; exits 77 when quale was built without a decoder.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus as shared_corpus  # noqa: E402
from tally import check, finish  # noqa: E402

FEATURES = ["--feature", "psnr", "--feature", "float_ssim", "--feature", "cambi"]


def scores(quale, *args, stdin=None):
    p = subprocess.run([quale, *args, "-q", "--threads", "2", "--json", "-o", "-"],
                       capture_output=True, stdin=stdin if stdin is not None else subprocess.DEVNULL)
    if p.returncode:
        return None, p.stderr.decode(errors="replace")
    d = json.loads(p.stdout)
    return {"frames": d["frames"], "pooled": d["pooled_metrics"]}, p.stderr.decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quale", required=True)
    ap.add_argument("--shared", default=shared_corpus.default_shared())
    ap.add_argument("--cache", default=shared_corpus.default_cache())
    args = ap.parse_args()
    corpus = os.path.join(args.shared, "corpus")
    if not os.path.isdir(corpus):
        print(f"skip: no corpus at {corpus}")
        return 77
    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = json.load(f)
    probe = subprocess.run([args.quale, "-r", os.path.join(corpus, manifest[0]["ref"]),
                            "-d", os.path.join(corpus, manifest[0]["ref"]), "-n", "--feature",
                            "psnr", "--frame_cnt", "1", "-q"], capture_output=True, text=True)
    if "has no decoder" in probe.stderr:
        print("skip: this build of quale has no decoder (FFmpeg's libraries were not found)")
        return 77
    shared_corpus.ensure_decoded(args.shared, args.cache)

    for pair in manifest:
        raw = ["-w", str(pair["width"]), "-h", str(pair["height"]),
               "-p", pair["vmaf_pixel_format"], "-b", str(pair["bitdepth"])]
        want, err = scores(args.quale, "-r", os.path.join(args.cache, pair["ref_yuv"]),
                           "-d", os.path.join(args.cache, pair["dis_yuv"]), *raw, *FEATURES)
        check(want is not None, f"{pair['name']}: raw run: {err}")
        got, err = scores(args.quale, "-r", os.path.join(corpus, pair["ref"]),
                          "-d", os.path.join(corpus, pair["dis"]), *FEATURES)
        check(got is not None, f"{pair['name']}: decoded run: {err}")
        if want and got:
            check(got == want, f"{pair['name']}: decoded and raw runs differ")
            print(f"{pair['name']}: {pair['ref']} and {pair['dis']}: {len(got['frames'])} "
                  f"frames, {len(got['frames'][0]['metrics'])} keys, identical", flush=True)

    # Raw inputs read as they are: the output is libvmaf's layout, no notes
    # (the provenance, docs/output.md, is written for every run).
    first = manifest[0]
    p = subprocess.run([args.quale, "-r", os.path.join(args.cache, first["ref_yuv"]),
                        "-d", os.path.join(args.cache, first["dis_yuv"]), "-w", str(first["width"]),
                        "-h", str(first["height"]), "-p", first["vmaf_pixel_format"], "-b",
                        str(first["bitdepth"]), "-n", "--feature", "psnr", "--frame_cnt", "2",
                        "--json", "-o", "-", "-q"], capture_output=True, text=True)
    check(p.returncode == 0 and list(json.loads(p.stdout)) ==
          ["version", "fps", "provenance", "frames", "pooled_metrics", "aggregate_metrics"],
          f"raw inputs: the output's top-level keys: {p.stdout[:200]!r}")

    dune = next(p for p in manifest if p["name"] == "dune_576x324_noise")
    ref = os.path.join(corpus, dune["ref"])
    want, _ = scores(args.quale, "-r", ref, "-d", os.path.join(corpus, dune["dis"]))
    with open(os.path.join(corpus, dune["dis"]), "rb") as f:
        got, err = scores(args.quale, "-r", ref, "-d", "-", stdin=f)
    check(want is not None and got == want, f"Matroska through a pipe: {err}")

    mp4 = next(p for p in manifest if p["dis"].endswith(".mp4"))
    with open(os.path.join(corpus, mp4["dis"]), "rb") as f:
        data = f.read()
    p = subprocess.run([args.quale, "-r", os.path.join(corpus, mp4["ref"]), "-d", "-", "-q"],
                       input=data, capture_output=True)
    at_end = data.find(b"moov") > data.find(b"mdat")
    err = p.stderr.decode(errors="replace")
    if at_end:
        check(p.returncode == 1 and "-movflags +faststart" in err,
              f"an MP4 with its index at the end, through a pipe: {err!r}")
    else:
        check(p.returncode == 0, f"an MP4 with its index first, through a pipe: {err!r}")
    # The same bytes as standard input from the file itself: it can seek.
    with open(os.path.join(corpus, mp4["dis"]), "rb") as f:
        got, err = scores(args.quale, "-r", os.path.join(corpus, mp4["ref"]), "-d", "-", stdin=f)
    want, _ = scores(args.quale, "-r", os.path.join(corpus, mp4["ref"]),
                     "-d", os.path.join(corpus, mp4["dis"]))
    check(want is not None and got == want, f"an MP4 as standard input from its file: {err}")

    storm = next(p for p in manifest if p["name"] == "storm_720p10_x265crf28")
    deep = ["--score-bitdepth", "12", "-m", "version=vmaf_v1.0.16_3d0h"]
    raw = ["-w", "1280", "-h", "720", "-p", "420", "-b", "10"]
    want, _ = scores(args.quale, "-r", os.path.join(args.cache, storm["ref_yuv"]),
                     "-d", os.path.join(args.cache, storm["dis_yuv"]), *raw, *deep)
    got, err = scores(args.quale, "-r", os.path.join(corpus, storm["ref"]),
                      "-d", os.path.join(corpus, storm["dis"]), *deep)
    check(want is not None and got == want, f"--score-bitdepth 12 on decoded 10-bit video: {err}")

    p = subprocess.run([args.quale, "-r", os.path.join(corpus, storm["ref"]),
                        "-d", os.path.join(corpus, storm["dis"]), *raw, "-n", "--feature", "psnr"],
                       capture_output=True, text=True)
    check(p.returncode == 0 and "is compressed video (hevc in mov,mp4" in p.stderr and
          "-w/-h/-p/-b are for raw video" in p.stderr, f"raw flags for compressed input: {p.stderr!r}")

    # Decoding in several sessions over a file's chunks
    # (QUALE_DECODE_SESSIONS): the frames of one session, in its order.  Open GOPs whose leading pictures refer to the
    # chunk before (x264 open-gop with a B-pyramid, x265's CRA with RASL
    # pictures), in MP4 and Matroska, 240 different frames (five of the
    # corpus's 48-frame clips, one after the other) in five chunks.
    with tempfile.TemporaryDirectory() as tmp:
        whole = os.path.join(tmp, "five.yuv")
        with open(whole, "wb") as out:
            for name in ("dune_576x324_ref.yuv", "dune_576x324_noise.yuv",
                         "dune_576x324_scale2x.yuv", "dune_576x324_x264crf28.yuv",
                         "dune_576x324_x264crf42.yuv"):
                with open(os.path.join(args.cache, name), "rb") as f:
                    out.write(f.read())
        raw = ["-w", "576", "-h", "324", "-p", "420", "-b", "8"]
        encodes = {
            "h264_open_gop.mp4": ["-c:v", "libx264", "-preset", "fast", "-crf", "30", "-x264-params",
                                  "keyint=24:min-keyint=24:open-gop=1:bframes=3:b-pyramid=normal:"
                                  "scenecut=0"],
            "hevc_cra.mp4": ["-c:v", "libx265", "-preset", "fast", "-crf", "30", "-x265-params",
                             "keyint=24:min-keyint=24:open-gop=1:bframes=4:scenecut=0:log-level=error"],
        }
        made_files = []
        for name, codec in encodes.items():
            path = os.path.join(tmp, name)
            made = subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt",
                                   "yuv420p", "-s", "576x324", "-r", "24", "-i", whole, *codec, path],
                                  capture_output=True)
            check(made.returncode == 0, f"encoding {name}: {made.stderr[-300:]!r}")
            made_files.append(path)
        mkv = os.path.join(tmp, "hevc_cra.mkv")
        made = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", made_files[-1], "-c", "copy", mkv],
                              capture_output=True)
        check(made.returncode == 0, f"remuxing to Matroska: {made.stderr[-300:]!r}")
        made_files.append(mkv)
        for path in made_files:
            runs = {}
            for sessions in (1, 2, 3, 8):
                p = subprocess.run([args.quale, "-r", whole, *raw, "-d", path, "-n", "--feature",
                                    "psnr", "-q", "--json", "-o", "-"], capture_output=True,
                                   env=dict(os.environ, QUALE_DECODE_SESSIONS=str(sessions)))
                runs[sessions] = json.loads(p.stdout)["frames"] if p.returncode == 0 else None
                check(p.returncode == 0, f"{os.path.basename(path)} in {sessions} sessions: "
                      f"{p.stderr[-300:]!r}")
            one = runs[1]
            check(one is not None and len(one) == 240 and
                  len({f["metrics"]["psnr_y"] for f in one}) > 200,
                  f"{os.path.basename(path)}: 240 different frames in one session")
            for sessions, frames in runs.items():
                check(frames == one, f"{os.path.basename(path)}: {sessions} sessions give "
                      f"the frames of one")
            print(f"{os.path.basename(path)}: 240 frames in 1, 2, 3 and 8 sessions, identical",
                  flush=True)

    # A distorted video of half the size: scaled to the reference's with
    # swscale, giving the frames `ffmpeg -vf
    # scale=W:H:flags=NAME+accurate_rnd+bitexact` gives (the raw path on
    # those frames is the golden here).
    with tempfile.TemporaryDirectory() as tmp:
        half = os.path.join(tmp, "half.mkv")
        made = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i",
                               os.path.join(corpus, "dune_576x324_x264crf28.mp4"), "-vf",
                               "scale=288:162", "-c:v", "ffv1", half], capture_output=True)
        check(made.returncode == 0, f"making a half-size clip: {made.stderr[-300:]!r}")
        for scaler in ("bicubic", "lanczos"):
            up = os.path.join(tmp, f"up_{scaler}.yuv")
            made = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", half, "-vf",
                                   f"scale=576:324:flags={scaler}+accurate_rnd+bitexact", "-f", "rawvideo",
                                   "-pix_fmt", "yuv420p", up], capture_output=True)
            ref = os.path.join(corpus, "dune_576x324_ref.mkv")
            want, _ = scores(args.quale, "-r", ref, "-d", up, "-w", "576", "-h", "324",
                             "-p", "420", "-b", "8", *FEATURES)
            extra = [] if scaler == "bicubic" else ["--scaler", scaler]
            p = subprocess.run([args.quale, "-r", ref, "-d", half, *FEATURES, *extra,
                                "--threads", "2", "--json", "-o", "-"], capture_output=True,
                               text=True)
            out = json.loads(p.stdout) if p.returncode == 0 else {}
            got = out.get("frames")
            check(made.returncode == 0 and want is not None and got == want["frames"] and
                  f"288x162 4:2:0: converted to the reference's 576x324 4:2:0 ({scaler}" in p.stderr,
                  f"half size scaled with {scaler}: {p.stderr[-300:]!r}")
            # The output says how the inputs were read, so that the score can
            # be reproduced.
            # the distorted file's bitrate and frame rate, which the
            # container gives, are noted too
            notes = dict(out.get("input") or {})
            check(re.fullmatch(r"\d+\.\d kb/s", notes.pop("distorted_bitrate", "")) is not None
                  and notes.pop("distorted_frame_rate", None) == "24/1",
                  f"half size, {scaler}: the bitrate and frame rate notes: {out.get('input')!r}")
            check(notes == {
                "reference_decoder": "h264 in matroska,webm, decoded in software (FFmpeg)",
                "distorted_decoder": "ffv1 in matroska,webm, decoded in software (FFmpeg)",
                "distorted_scaled": f"288x162 4:2:0 to 576x324 4:2:0, {scaler} (swscale, "
                                    "accurate_rnd+bitexact)"},
                f"half size, {scaler}: the output's input notes: {out.get('input')!r}")
        p = subprocess.run([args.quale, "-r", os.path.join(corpus, "dune_576x324_ref.mkv"),
                            "-d", half, "-n", "--feature", "psnr", "--frame_cnt", "2", "--xml",
                            "-o", "-", "-q"], capture_output=True, text=True)
        xml = re.sub(r' distorted_bitrate="\d+\.\d kb/s" distorted_frame_rate="24/1"', "", p.stdout)
        check(p.returncode == 0 and '  <input reference_decoder="h264 in matroska,webm, decoded in software (FFmpeg)" '
              'distorted_decoder="ffv1 in matroska,webm, decoded in software (FFmpeg)" '
              'distorted_scaled="288x162 4:2:0 to '
              '576x324 4:2:0, bicubic (swscale, accurate_rnd+bitexact)" />' in xml, f"XML input notes: {p.stdout[:600]!r}")

        # Another chroma format: converted to the reference's by the same one
        # swscale context `ffmpeg -vf
        # scale=flags=bicubic+accurate_rnd+bitexact,format=...` makes.
        rain = next(q for q in manifest if q["name"] == "raindrops_444_x264crf30")
        d420 = os.path.join(tmp, "d420.mkv")
        up444 = os.path.join(tmp, "up444.yuv")
        made = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", os.path.join(corpus, rain["dis"]),
                               "-pix_fmt", "yuv420p", "-c:v", "ffv1", d420], capture_output=True)
        made2 = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", d420, "-vf",
                                "scale=flags=bicubic+accurate_rnd+bitexact,format=yuv444p", "-f",
                                "rawvideo", up444],
                               capture_output=True)
        rain_raw = ["-w", str(rain["width"]), "-h", str(rain["height"]), "-p", "444", "-b", "8"]
        want, _ = scores(args.quale, "-r", os.path.join(args.cache, rain["ref_yuv"]), "-d", up444,
                         *rain_raw, *FEATURES)
        p = subprocess.run([args.quale, "-r", os.path.join(corpus, rain["ref"]), "-d", d420,
                            *FEATURES, "--threads", "2", "--json", "-o", "-"], capture_output=True,
                           text=True)
        out = json.loads(p.stdout) if p.returncode == 0 else {}
        check(made.returncode == 0 and made2.returncode == 0 and want is not None and
              out.get("frames") == want["frames"] and "4:2:0: converted to the reference's" in p.stderr
              and out.get("input", {}).get("distorted_scaled", "").startswith(
                  f"{rain['width']}x{rain['height']} 4:2:0 to {rain['width']}x{rain['height']} 4:4:4"),
              f"4:2:0 distorted of a 4:4:4 reference: {p.stderr[-400:]!r} {out.get('input')!r}")

        # Another bit depth: the shallower video is shifted up to the deeper
        # one's depth, as `ffmpeg -pix_fmt yuv420p10le` converts 8-bit video.
        raw10 = ["-w", "1280", "-h", "720", "-p", "420", "-b", "10"]
        storm8 = os.path.join(tmp, "storm8.mkv")
        storm8up = os.path.join(tmp, "storm8up.yuv")
        made = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", os.path.join(corpus, storm["dis"]),
                               "-pix_fmt", "yuv420p", "-c:v", "ffv1", storm8], capture_output=True)
        made2 = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", storm8, "-pix_fmt",
                                "yuv420p10le", "-f", "rawvideo", storm8up], capture_output=True)
        check(made.returncode == 0 and made2.returncode == 0, "making an 8-bit copy of a 10-bit clip")
        for label, ref_file, dist_file, want_args, note in (
                ("an 8-bit distorted of a 10-bit reference", os.path.join(corpus, storm["ref"]),
                 storm8, ("-r", os.path.join(args.cache, storm["ref_yuv"]), "-d", storm8up),
                 ("distorted_bitdepth", "8, shifted left by 2 to 10")),
                ("an 8-bit reference of a 10-bit distorted", storm8, os.path.join(corpus, storm["ref"]),
                 ("-r", storm8up, "-d", os.path.join(args.cache, storm["ref_yuv"])),
                 ("reference_bitdepth", "8, shifted left by 2 to 10"))):
            want, _ = scores(args.quale, *want_args, *raw10, *FEATURES)
            p = subprocess.run([args.quale, "-r", ref_file, "-d", dist_file, *FEATURES, "--threads",
                                "2", "--json", "-o", "-"], capture_output=True, text=True)
            out = json.loads(p.stdout) if p.returncode == 0 else {}
            check(want is not None and out.get("frames") == want["frames"] and
                  out.get("input", {}).get(note[0]) == note[1] and
                  "is 8-bit: scored at the 10 bits of" in p.stderr,
                  f"{label}: {p.stderr[-400:]!r} {out.get('input')!r}")

    # Bad input: a clear message or warning, never a crash or a hang.
    with tempfile.TemporaryDirectory() as tmp:
        dune_ref = os.path.join(corpus, "dune_576x324_ref.mkv")
        with open(os.path.join(corpus, "dune_576x324_x264crf28.mp4"), "rb") as f:
            mp4_bytes = f.read()
        with open(os.path.join(corpus, "dune_576x324_noise.mkv"), "rb") as f:
            mkv_bytes = bytearray(f.read())
        cases = []
        path = os.path.join(tmp, "truncated.mp4")
        with open(path, "wb") as f:
            f.write(mp4_bytes[:30000])
        cases.append(("a truncated mp4", path, 1, "an MP4/MOV file (compressed video) that "
                      "cannot be decoded"))
        path = os.path.join(tmp, "cut.mkv")
        with open(path, "wb") as f:
            f.write(mkv_bytes[:200000])
        cases.append(("a cut mkv", path, 0, "cut.mkv ended after"))
        corrupt = bytearray(mkv_bytes)
        for i in range(len(corrupt) // 3, len(corrupt) // 3 + 2000):
            corrupt[i] ^= 0x5A
        path = os.path.join(tmp, "corrupt.mkv")
        with open(path, "wb") as f:
            f.write(corrupt)
        cases.append(("a corrupt bitstream in the middle", path, 0, "damaged frame"))
        path = os.path.join(tmp, "empty.mp4")
        open(path, "wb").close()
        cases.append(("a 0-byte file", path, 1, "empty file"))
        cases.append(("a directory", tmp, 1, "Is a directory"))
        audio = os.path.join(tmp, "audio.m4a")
        made = subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                               "sine=frequency=440:duration=1", "-c:a", "aac", audio],
                              capture_output=True)
        if made.returncode == 0:
            cases.append(("an audio-only file", audio, 1, "it has no video stream"))
        else:
            print("skip: no audio-only file (ffmpeg could not make one)", flush=True)
        for what, path, code, message in cases:
            try:
                p = subprocess.run([args.quale, "-r", dune_ref, "-d", path, "-q"],
                                   capture_output=True, text=True, timeout=120)
                check(p.returncode == code and message in p.stderr,
                      f"{what}: exit {p.returncode}, wanted {code}: {p.stderr!r}")
            except subprocess.TimeoutExpired:
                check(False, f"{what}: hung")

    return finish()


if __name__ == "__main__":
    sys.exit(main())
