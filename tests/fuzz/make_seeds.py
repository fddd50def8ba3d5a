#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into tests/fuzz/corpus/.

    tests/fuzz/make_seeds.py [--quale build/tools/quale]

The seeds are committed; run this again only to change them.  With
--quale, the cli seeds also get one --feature per metric with every option
set away from its default (from `quale --list-features --json`), so a new
metric or option is seeded too.  Seeds are small: libFuzzer mutates them,
and the replay test (tests/fuzz_replay.c) runs every one of them on every
test run.
"""
import argparse
import json
import os
import struct
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def frame_size(w, h, chroma, depth):
    bps = 2 if depth > 8 else 1
    cw = {"400": 0, "420": (w + 1) // 2, "422": (w + 1) // 2, "444": w}[chroma]
    ch = {"400": 0, "420": (h + 1) // 2, "422": h, "444": h}[chroma]
    return (w * h + 2 * cw * ch) * bps


def samples(n, depth, seed, over=False):
    """n samples, little-endian above 8 bits; some above the depth if over."""
    out = bytearray()
    x = seed
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        v = x >> 8
        if depth > 8:
            v = 0xFFFF if over and i % 3 == 0 else v & ((1 << depth) - 1)
            out += struct.pack("<H", v)
        else:
            out.append(v & 0xFF)
    return bytes(out)


def payload(w, h, chroma, depth, seed, over=False):
    bps = 2 if depth > 8 else 1
    return samples(frame_size(w, h, chroma, depth) // bps, depth, seed, over)


def y4m_seeds():
    def y4m(header, frames, marker=b"FRAME\n"):
        return header.encode() + b"".join(marker + f for f in frames)

    write("y4m", "420jpeg_4x2_2frames", y4m("YUV4MPEG2 W4 H2 F25:1 Ip A1:1 C420jpeg\n",
                                         [payload(4, 2, "420", 8, s) for s in (1, 2)]))
    write("y4m", "444p10_3x3_clamped", y4m("YUV4MPEG2 W3 H3 F30000:1001 C444p10\n",
                                        [payload(3, 3, "444", 10, 3, over=True)]))
    write("y4m", "mono_5x1_frame_params", y4m("YUV4MPEG2 W5 H1 Cmono\n",
                                           [payload(5, 1, "400", 8, 4)] * 2,
                                           marker=b"FRAME Ib XFOO=1\n"))
    write("y4m", "xyscss_420p12_2x2", y4m("YUV4MPEG2 W2 H2 XYSCSS=420P12 XCOLORRANGE=LIMITED\n",
                                       [payload(2, 2, "420", 12, 5)]))
    write("y4m", "422_crlf_odd", y4m("YUV4MPEG2 W3 H2 C422\r\n", [payload(3, 2, "422", 8, 6)]))
    write("y4m", "444alpha_2x2", b"YUV4MPEG2 W2 H2 C444alpha\nFRAME\n" + bytes(range(16)))
    write("y4m", "mono16_1x1", y4m("YUV4MPEG2 W1 H1 Cmono16\n", [b"\xff\xff", b"\x01\x00"]))
    write("y4m", "420p9_3x3", y4m("YUV4MPEG2 H3 W3 C420p9 It\n", [payload(3, 3, "420", 9, 7, over=True)]))
    write("y4m", "truncated_last_frame", y4m("YUV4MPEG2 W4 H2 C420\n", [payload(4, 2, "420", 8, 8)])
          + b"FRAME\n\x01\x02\x03")
    write("y4m", "missing_frame_marker", y4m("YUV4MPEG2 W4 H2 C420\n", [payload(4, 2, "420", 8, 9)])
          + b"FRAMX\n" + payload(4, 2, "420", 8, 9))
    write("y4m", "ends_after_marker", y4m("YUV4MPEG2 W2 H2\n", [payload(2, 2, "420", 8, 10)]) + b"FRAME\n")
    write("y4m", "header_only", b"YUV4MPEG2 W16 H16 C420mpeg2\n")
    write("y4m", "empty", b"")
    write("y4m", "unsupported_411", b"YUV4MPEG2 W4 H4 C411\nFRAME\n" + bytes(24))
    write("y4m", "huge_frame_skipped", b"YUV4MPEG2 W32768 H32768 C444p16\nFRAME\n" + bytes(64))


def yuv_seeds():
    chroma_code = {"400": 1, "420": 2, "422": 3, "444": 4}

    def yuv(chroma, depth, w, h, mask, data):
        return struct.pack("<BBHHBB", chroma_code.get(chroma, chroma), depth, w, h, mask, 0) + data

    write("yuv", "420_8bit_4x2_2frames", yuv("420", 8, 4, 2, 7, payload(4, 2, "420", 8, 1) * 2))
    write("yuv", "444_10bit_3x1_over", yuv("444", 10, 3, 1, 7, payload(3, 1, "444", 10, 2, over=True)))
    write("yuv", "400_16bit_2x2", yuv("400", 16, 2, 2, 1, payload(2, 2, "400", 16, 3) * 3))
    write("yuv", "422_12bit_3x3_truncated", yuv("422", 12, 3, 3, 7, payload(3, 3, "422", 12, 4)[:-5]))
    write("yuv", "420_9bit_5x3_luma_only", yuv("420", 9, 5, 3, 1, payload(5, 3, "420", 9, 5, over=True) * 2))
    write("yuv", "bad_depth_7", yuv("420", 7, 4, 4, 7, bytes(24)))
    write("yuv", "bad_chroma", yuv(5, 8, 4, 4, 7, bytes(24)))
    write("yuv", "width_0", yuv("420", 8, 0, 4, 7, bytes(24)))
    write("yuv", "32768x32768_skip_only", yuv("444", 16, 32768, 32768, 7, bytes(100)))
    write("yuv", "empty_file", yuv("420", 8, 16, 16, 7, b""))


MODEL_TEXT = ("svm_type nu_svr\nkernel_type rbf\ngamma 0.04\nnr_class 2\ntotal_sv 3\n"
              "rho -1.5\nSV\n"
              "4 1:0.65 2:0.99 3:0.5\n"
              "-4 1:-0.2 3:0.01\n"
              "0.5 2:0.3\n")


def model_dict(**extra):
    d = {
        "model_type": "LIBSVMNUSVR",
        "norm_type": "linear_rescale",
        "feature_names": ["VMAF_integer_feature_adm2_score",
                          "VMAF_integer_feature_motion2_score",
                          "VMAF_integer_feature_vif_scale0_score"],
        "slopes": [0.0122, 2.8, 0.0479, 2.3],
        "intercepts": [-0.31, -1.8, -0.05, -0.1],
        "score_clip": [0.0, 100.0],
        "score_transform": {"enabled": False, "p0": 1.7, "p1": 1.07, "p2": -0.0017,
                            "knots": [[0.0, 0.0], [50.0, 55.0], [100.0, 100.0]],
                            "out_lte_in": "false", "out_gte_in": "true"},
        "model": MODEL_TEXT,
    }
    d.update(extra)
    return d


def model_seeds():
    write("model", "model_dict", json.dumps({"model_dict": model_dict()}, indent=1))
    write("model", "feature_opts", json.dumps({"model_dict": model_dict(
        feature_opts_dicts=[{"adm_enhn_gain_limit": 1.2}, {"motion_force_zero": True}, {"debug": "false"}])}))
    write("model", "norm_none", json.dumps({"model_dict": model_dict(
        norm_type="none", score_transform={"enabled": True, "knots": None, "p0": None})}))
    boot = {str(i): {"model_dict": model_dict(model_type="BOOTSTRAP_LIBSVMNUSVR" if i else "LIBSVMNUSVR")}
            for i in range(3)}
    write("model", "bootstrap", json.dumps(boot))
    write("model", "float_features", json.dumps({"model_dict": model_dict(
        feature_names=["VMAF_feature_adm2_score", "VMAF_feature_motion2_score", "psnr_y"])}))
    write("model", "escapes_and_numbers",
          '\ufeff{"a": [1, -0, 0.5e-3, 1E+2, "\\u00e9\\ud83d\\ude00\\n", true, false, null], '
          '"b": {"c": {}}, "d": []}')
    write("model", "bad_libsvm", json.dumps({"model_dict": model_dict(model="svm_type c_svc\nSV\n")}))
    write("model", "truncated", json.dumps({"model_dict": model_dict()})[:200])


def cli_seeds(quale):
    def cli(name, *args):
        write("cli", name, b"\0".join(a.encode() for a in args))

    cli("default_vmaf", "-r", "ref.y4m", "-d", "dist.y4m")
    cli("raw_10bit_psnr", "-r", "r.yuv", "-d", "d.yuv", "-w", "64", "-h", "48", "-p", "420", "-b",
        "10", "-n", "--feature", "psnr=enable_chroma=true:min_sse=0.5:enable_apsnr=true", "--json", "-o", "-")
    cli("raw_444_odd", "-r", "r", "-d", "d", "--width", "33", "--height", "17", "--pixel_format", "444",
        "--bitdepth", "12", "--feature", "ciede", "--feature", "float_psnr", "--csv", "--precision", "6")
    cli("aom_ctc", "--aom_ctc", "v6.0", "-r", "a", "-d", "b", "--sub")
    cli("nflx_ctc", "--nflx_ctc", "v1.0", "-r", "a", "-d", "b", "--threads", "2", "--subsample", "2",
        "--xml", "--precision", "max")
    cli("models", "-m", "version=vmaf_v0.6.1neg:name=neg:disable_clip", "-m",
        "version=vmaf_b_v0.6.3:enable_transform", "-r", "a", "-d", "b", "-q")
    cli("model_overloads", "--model", "version=vmaf_v0.6.1:adm.adm_enhn_gain_limit=1.2:"
        "vif.vif_enhn_gain_limit=1.0:motion.motion_force_zero=true", "-r", "a", "-d", "b")
    cli("model_v1", "-m", "version=vmaf_v1.0.16_5d0h:cambi.enc_width=1280:cambi.enc_height=720",
        "-r", "a", "-d", "b", "-w", "352", "-h", "288", "-p", "420", "-b", "8",
        "--feature", "speed_temporal=speed_use_ref_diff=true", "--score-bitdepth", "10", "--json")
    cli("list", "--list-features", "--json")
    cli("bad_flag", "-r", "a", "-d", "b", "--bogus", "-w", "0")
    cli("frames", "-r", "a", "-d", "b", "--frame_cnt", "3", "--frame_skip_ref", "1",
        "--frame_skip_dist", "0x2", "--cpumask", "0xffffffff", "--gpumask", "1",
        "--backend", "cpu", "--gpu_device", "0")
    if not quale:
        return
    listing = json.loads(subprocess.run([quale, "--list-features", "--json"], check=True,
                                        capture_output=True, text=True).stdout)
    # A y4m pair to try option values on: the first value the metric takes.
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        clip = os.path.join(tmp, "c.y4m")
        with open(clip, "wb") as f:
            f.write(b"YUV4MPEG2 W224 H224 C420\n" + b"FRAME\n" + payload(224, 224, "420", 8, 1))

        def accepted(metric, option, value):
            p = subprocess.run([quale, "-r", clip, "-d", clip, "-n", "-q", "--feature",
                                f"{metric}={option}={value}"], capture_output=True, text=True)
            return f"option '{option}'" not in p.stderr

        for m in listing:
            opts = []
            for o in m["options"]:
                d = o["default"]
                if o["type"] == "bool":
                    opts.append(f"{o['name']}={'false' if d else 'true'}")
                    continue
                if o["type"] == "choice":
                    opts += [f"{o['name']}={c}" for c in o["choices"] if c != d][:1]
                    continue
                if o["type"] == "string":
                    continue  # paths of files the metric writes: none in a seed
                if o["type"] == "int":
                    tries = [int(d) + 1, int(d) - 1, int(d) * 2, 1]
                else:
                    tries = [f"{v:g}" for v in (d * 0.5 + 0.25, d * 1.5 + 0.25, d * 0.5, d + 1, 0.5)]
                for v in tries:
                    if str(v) != str(d) and accepted(m["name"], o["name"], v):
                        opts.append(f"{o['name']}={v}")
                        break
            spec = m["name"] + ("=" + ":".join(opts) if opts else "")
            # One request: the plain metric beside it would write the same
            # keys where no option names them, which is refused.
            cli("metric_" + m["name"], "-r", "a", "-d", "b", "-w", "224", "-h", "176", "-p", "420", "-b",
                "8", "-n", "--feature", spec, "--json")


def pictures_seeds():
    """Byte programs for fuzz_pictures.c: a format, then frames of two
    pictures, each described field by field (see build() there)."""
    def u16(v):
        return struct.pack("<H", v)

    def program(chroma, depth, w, h, frames, threads=2):
        # chroma index into chromas[] (420, 422, 444, 400, unknown, 7), depth
        # byte (6 + b % 12), sizes, no 40000, threads, frame count.
        return bytes([chroma, depth - 6]) + u16(w) + u16(h) + bytes([0, threads - 1, frames - 1])

    def picture(owned, changes=(0, 0, 0), count_change=None, nulls=(1, 1, 1), extra=b""):
        out = bytes([1 if owned else 0])
        for c in changes:
            out += bytes([c]) if isinstance(c, int) else c
        out += bytes([1, count_change]) if count_change is not None else bytes([0])
        if not owned:
            out += bytes(nulls)
        return out + extra

    pair = lambda a, b: a + bytes([1]) + b        # two pictures
    same = lambda a: a + bytes([0])               # one picture as both
    good = picture(True)
    write("pictures", "owned_420_8bit_2frames",
          program(0, 8, 16, 16, 2) + pair(good, good) + pair(good, good))
    borrowed = picture(False)
    write("pictures", "borrowed_422_10bit", program(1, 10, 17, 9, 2) + pair(borrowed, borrowed) * 2)
    write("pictures", "same_picture_444_12bit", program(2, 12, 8, 8, 3) + same(good) * 3)
    write("pictures", "borrowed_mono_16bit", program(3, 16, 5, 7, 1) + pair(borrowed, borrowed))
    # Strides: padded, negative (bottom up), zero, short, huge.
    for name, kind, arg in (("padded", 2, 17), ("bottom_up", 3, 2), ("zero", 4, None),
                            ("short", 5, 1), ("huge", 6, 0)):
        change = bytes([8, kind]) + (bytes([arg]) if arg is not None else b"")
        bad = picture(False, changes=(change, 0, 0))
        write("pictures", f"stride_{name}", program(0, 8, 32, 8, 2) + pair(good, good) + pair(bad, good))
    write("pictures", "owned_plane_moved",
          program(0, 10, 24, 12, 2) + pair(good, good) + pair(picture(True, changes=(0, bytes([16]) + u16(32768 + 200), 0)), good))
    write("pictures", "owned_null_chroma",
          program(0, 8, 24, 12, 1) + pair(picture(True, changes=(0, 32, 0)), good))
    write("pictures", "plane_count_one", program(0, 8, 24, 12, 1) + pair(picture(True, count_change=1), good))
    write("pictures", "wide_plane", program(0, 8, 24, 12, 1) + pair(picture(False, changes=(3, 0, 0)), good))
    write("pictures", "bad_format", program(4, 7, 0, 12, 1) + pair(good, good))


def output_seeds():
    """NUL-separated names for fuzz_output.c (the first few tried as model
    names), then value bytes."""
    def seed(name, strings, values):
        write("output", name, b"\0".join(strings) + b"\0" + bytes(values))
    seed("plain_keys", [b"integer_vif_scale0", b"psnr_cb", b"cambi_cmxv_5"], [0, 4, 5, 6, 7, 8, 9, 10])
    seed("model_names", [b"vmaf_4k", b"a\"b<c>&d", b"psnr_hvs"], [2, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    seed("escapes", [b"key with spaces", b'quote"d', b"back\\slash", b"comma,key", b"new\nline",
                     b"tab\tkey", b"pipe|key", b"{brace}", b"frameNum", b"1st"],
         list(range(40)))
    seed("not_utf8", [b"caf\xc3\xa9", b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80x"], [0, 3, 1, 2, 3, 4, 5, 6])
    seed("non_finite", [b"a", b"b", b"c", b"d"], [0, 0, 0, 1, 0, 2, 0, 3, 4, 1, 4, 2])
    seed("exponent_key", [b"x_1e+06", b"x-1", b"x.5"], [1, 6, 6, 6])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quale", help="the quale tool, for per-metric cli seeds")
    args = ap.parse_args()
    y4m_seeds()
    yuv_seeds()
    model_seeds()
    cli_seeds(args.quale)
    pictures_seeds()
    output_seeds()


if __name__ == "__main__":
    main()
