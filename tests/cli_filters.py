#!/usr/bin/env python3
"""Filters before scoring (--vf, --ref-vf, --dist-vf): quale running an
FFmpeg filter graph over its inputs gives, frame by frame and key by key,
the scores of the same run on what `ffmpeg -i VIDEO -vf GRAPH -f
yuv4mpegpipe` writes, for yadif, crop, pad, fps, scale and a chain; on
y4m, raw yuv, compressed and 10-bit input, through a pipe, with the other
input of another size, and on interlaced input (bottom field first);
--align auto, --frames and --segment on the filtered videos.  Also the
refusals: a graph FFmpeg refuses, an output quale does not score, --vf
with --ref-vf (exit 2, saying why), and --vf without libavfilter on the
machine (exit 1; checked as root, in a mount namespace that hides it).
Ends with "N passed, M failed"; exits 77 when quale was built without
libavfilter or the ffmpeg tool is not installed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tally import check, finish  # noqa: E402

FEATURES = ["--feature", "psnr"]

# (what, the graph, frames the 12 of the sample become)
GRAPHS = [
    ("yadif", "yadif", 12),
    ("crop", "crop=128:96:24:16", 12),
    ("pad", "pad=192:160:8:8", 12),
    ("fps", "fps=20", 10),
    ("scale", "scale=112:96", 12),
    ("chain", "yadif,crop=160:128:4:6,scale=128:96:flags=lanczos", 12),
]


def ffmpeg(*args, stdout=None):
    """Runs the ffmpeg tool quietly; raises on failure."""
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", *args], check=True, stdout=stdout)


def filtered_y4m(src, graph, out):
    """What `ffmpeg -i SRC -vf GRAPH -f yuv4mpegpipe` writes, in out."""
    ffmpeg("-i", src, "-vf", graph, "-strict", "-1", "-f", "yuv4mpegpipe", out)
    return out


def frames(quale, *args, stdin=None):
    """The JSON frames of a run (None and the messages when it failed)."""
    p = subprocess.run([quale, *args, *FEATURES, "-q", "--threads", "2", "--json", "-o", "-"],
                       capture_output=True, stdin=stdin if stdin is not None else subprocess.DEVNULL)
    if p.returncode:
        return None, p.stderr.decode(errors="replace")
    return json.loads(p.stdout)["frames"], p.stderr.decode(errors="replace")


def same(got, want, what, count):
    """got equals want exactly and has count frames."""
    g, err_g = got
    w, err_w = want
    check(w is not None, f"{what}: the run on ffmpeg's output failed: {err_w}")
    check(g is not None, f"{what}: the filtered run failed: {err_g}")
    if g is None or w is None:
        return
    check(len(w) == count, f"{what}: ffmpeg's output has {len(w)} frames, not {count}")
    check(g == w, f"{what}: quale's filtered frames differ from ffmpeg's "
          f"({len(g)} and {len(w)} frames)")
    if g == w:
            print(f"{what}: {len(g)} frames, {len(g[0]['metrics']) if g else 0} keys, identical",
              flush=True)


def make_inputs(tmp):
    """A moving 176x144 reference of 12 frames (8 and 10 bits) and a noisy
    copy, as y4m, raw yuv and a compressed Matroska file."""
    ref = os.path.join(tmp, "ref.y4m")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=176x144:rate=25", "-frames:v", "12",
           "-pix_fmt", "yuv420p", ref)
    dist = os.path.join(tmp, "dist.y4m")
    ffmpeg("-i", ref, "-vf", "noise=alls=24:allf=t+u", dist)
    files = {"ref": ref, "dist": dist}
    files["ref10"] = os.path.join(tmp, "ref10.y4m")
    ffmpeg("-i", ref, "-pix_fmt", "yuv420p10le", "-strict", "-1", files["ref10"])
    files["dist10"] = os.path.join(tmp, "dist10.y4m")
    ffmpeg("-i", dist, "-pix_fmt", "yuv420p10le", "-strict", "-1", files["dist10"])
    files["dist_yuv"] = os.path.join(tmp, "dist.yuv")
    ffmpeg("-i", dist, "-f", "rawvideo", files["dist_yuv"])
    files["dist_mkv"] = os.path.join(tmp, "dist.mkv")
    ffmpeg("-i", dist, "-c:v", "mpeg2video", "-q:v", "4", files["dist_mkv"])
    # Interlaced, bottom field first: the y4m header says "Ib", the MPEG-2
    # stream's pictures are coded as fields.
    for name in ("ref", "dist"):
        files[name + "_bff"] = os.path.join(tmp, name + "_bff.y4m")
        ffmpeg("-i", files[name], "-vf", "setfield=bff", files[name + "_bff"])
    files["dist_bff_mkv"] = os.path.join(tmp, "dist_bff.mkv")
    ffmpeg("-i", files["dist_bff"], "-c:v", "mpeg2video", "-flags", "+ildct+ilme", "-q:v", "4",
           files["dist_bff_mkv"])
    return files


def test_graphs(quale, files, tmp):
    """Each graph on both videos (--vf) against both through ffmpeg."""
    for what, graph, count in GRAPHS:
        want = frames(quale, "-r", filtered_y4m(files["ref"], graph, os.path.join(tmp, "r.y4m")),
                      "-d", filtered_y4m(files["dist"], graph, os.path.join(tmp, "d.y4m")))
        got = frames(quale, "-r", files["ref"], "-d", files["dist"], "--vf", graph)
        same(got, want, f"--vf {graph}", count)
    # the output says which graphs the videos went through
    p = subprocess.run([quale, "-r", files["ref"], "-d", files["dist"], "--ref-vf", "yadif",
                        "--dist-vf", "yadif,crop=160:128", *FEATURES, "-q", "--json", "-o", "-"],
                       capture_output=True, text=True)
    notes = json.loads(p.stdout).get("input", {}) if p.returncode == 0 else {}
    check(notes.get("reference_filter") == "yadif" and
          notes.get("distorted_filter") == "yadif,crop=160:128",
          f"the output's notes of the graphs: {notes} {p.stderr[-300:]}")


def test_one_side(quale, files, tmp):
    """--ref-vf through a pipe (the distorted video then converted to the
    filtered reference's size), --dist-vf on raw yuv, on compressed video,
    and a graph at 10 bits."""
    with open(filtered_y4m(files["ref"], "pad=192:160:8:8", os.path.join(tmp, "r.y4m")),
              "rb") as piped:
        want = frames(quale, "-r", "-", "-d", files["dist"], stdin=piped)
    got = frames(quale, "-r", files["ref"], "-d", files["dist"], "--ref-vf", "pad=192:160:8:8")
    same(got, want, "--ref-vf pad (the distorted video scaled to it)", 12)

    raw = ["-w", "176", "-h", "144", "-p", "420", "-b", "8"]
    d = os.path.join(tmp, "d.y4m")
    ffmpeg("-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "176x144", "-i", files["dist_yuv"],
           "-vf", "yadif", "-f", "yuv4mpegpipe", d)
    want = frames(quale, "-r", files["ref"], "-d", d)
    got = frames(quale, "-r", files["ref"], "-d", files["dist_yuv"], *raw, "--dist-vf", "yadif")
    same(got, want, "--dist-vf yadif on raw yuv", 12)

    graph = "fps=20,crop=176:128:0:8,pad=176:144:0:8"
    want = frames(quale, "-r", filtered_y4m(files["ref"], "fps=20", os.path.join(tmp, "r.y4m")),
                  "-d", filtered_y4m(files["dist_mkv"], graph, d))
    got = frames(quale, "-r", files["ref"], "-d", files["dist_mkv"], "--ref-vf", "fps=20",
                 "--dist-vf", graph)
    same(got, want, f"--dist-vf {graph} on Matroska (MPEG-2)", 10)

    with open(filtered_y4m(files["dist"], "crop=160:128,yadif", d), "rb") as piped:
        want = frames(quale, "-r", files["ref"], "--ref-vf", "crop=160:128", "-d", "-",
                      "--score-bitdepth", "10", stdin=piped)
    got = frames(quale, "-r", files["ref"], "--ref-vf", "crop=160:128", "-d", files["dist"],
                 "--dist-vf", "crop=160:128,yadif", "--score-bitdepth", "10")
    same(got, want, "--dist-vf crop,yadif with --score-bitdepth 10", 12)

    graph = "scale=144:112,yadif"
    want = frames(quale, "-r", filtered_y4m(files["ref10"], graph, os.path.join(tmp, "r.y4m")),
                  "-d", filtered_y4m(files["dist10"], graph, d))
    got = frames(quale, "-r", files["ref10"], "-d", files["dist10"], "--vf", graph)
    same(got, want, f"--vf {graph} at 10 bits", 12)


def test_interlaced(quale, files, tmp):
    """yadif's parity as FFmpeg's readers give it: a y4m "Ib" header, an
    MPEG-2 stream's field pictures (bottom first), one frame per field."""
    want = frames(quale, "-r", files["ref"],
                  "-d", filtered_y4m(files["dist_bff"], "yadif", os.path.join(tmp, "d.y4m")))
    got = frames(quale, "-r", files["ref"], "-d", files["dist_bff"], "--dist-vf", "yadif")
    same(got, want, "--dist-vf yadif, bottom field first (y4m)", 12)
    graph = "yadif=mode=send_field"
    want = frames(quale, "-r", filtered_y4m(files["ref_bff"], graph, os.path.join(tmp, "r.y4m")),
                  "-d", filtered_y4m(files["dist_bff_mkv"], graph, os.path.join(tmp, "d.y4m")))
    got = frames(quale, "-r", files["ref_bff"], "-d", files["dist_bff_mkv"], "--vf", graph)
    same(got, want, f"--vf {graph}, bottom field first (y4m, interlaced MPEG-2)", 24)


def test_align(quale, files, tmp):
    """--align auto compares the videos as they will be scored: after their
    graphs (here one that drops the distorted video's first 2 frames)."""
    graph = "trim=start_frame=2,setpts=PTS-STARTPTS"
    p = subprocess.run([quale, "-r", files["ref"], "-d", files["dist"], "--dist-vf", graph,
                        "--align", "auto", "-q", *FEATURES, "--json", "-o", "-"],
                       capture_output=True, text=True)
    check(p.returncode == 0 and "--frame_skip_ref 2" in p.stderr,
          f"--align auto after --dist-vf {graph}: exit {p.returncode}: {p.stderr[-400:]}")
    want = frames(quale, "-r", files["ref"], "--frame_skip_ref", "2",
                  "-d", filtered_y4m(files["dist"], graph, os.path.join(tmp, "d.y4m")))
    got = (json.loads(p.stdout)["frames"] if p.returncode == 0 else None, p.stderr)
    same(got, want, f"--align auto with --dist-vf {graph}", 10)


def test_split(quale, files, tmp):
    """A range of the frames (--frames) and a part (--segment) of a filtered
    run are the whole filtered run's frames, numbered as there."""
    whole, err = frames(quale, "-r", files["ref"], "-d", files["dist"], "--vf", "fps=20")
    check(whole is not None and len(whole) == 10, f"--vf fps=20: the whole run: {err}")
    part, err = frames(quale, "-r", files["ref"], "-d", files["dist"], "--vf", "fps=20",
                       "--frames", "3:8")
    check(whole is not None and part == whole[3:8], f"--frames 3:8 of --vf fps=20: {err}")
    out = os.path.join(tmp, "part.json")
    p = subprocess.run([quale, "-r", files["ref"], "-d", files["dist"], "--vf", "fps=20",
                        *FEATURES, "-q", "--segment", "2/2", "--frames", "0:10", "-o", out],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"--segment 2/2 of --vf fps=20: {p.stderr[-400:]}")
    if p.returncode == 0:
        with open(out) as f:
            check(whole is not None and json.load(f)["frames"] == whole[5:10],
                  "--segment 2/2 of --vf fps=20: not the whole run's frames 5 to 9")
    # a part of a run with another graph is another run's
    other = os.path.join(tmp, "other.json")
    p = subprocess.run([quale, "-r", files["ref"], "-d", files["dist"], "--vf", "fps=25",
                        *FEATURES, "-q", "--segment", "1/2", "--frames", "0:10", "-o", other],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"--segment 1/2 of --vf fps=25: {p.stderr[-400:]}")
    p = subprocess.run([quale, "merge", "-o", "-", "--json", other, out], capture_output=True,
                       text=True)
    check(p.returncode != 0 and "vf=fps=" in p.stderr,
          f"merge of parts with other graphs: exit {p.returncode}: {p.stderr[-400:]}")


def refused(quale, files, what, args, words):
    p = subprocess.run([quale, "-r", files["ref"], "-d", files["dist"], "-q", *args],
                       capture_output=True, text=True)
    check(p.returncode == 2, f"{what}: exit {p.returncode}, not 2: {p.stderr[-400:]}")
    for w in words:
        check(w in p.stderr, f"{what}: the message lacks {w!r}: {p.stderr[-400:]}")


def test_refusals(quale, files):
    refused(quale, files, "an unknown filter", ["--ref-vf", "cropp=10:10"],
            ["reference video", "filter graph 'cropp=10:10'", "No such filter: 'cropp'"])
    refused(quale, files, "a crop larger than the video", ["--dist-vf", "crop=400:400"],
            ["distorted video", "FFmpeg refuses the filter graph 'crop=400:400'"])
    refused(quale, files, "a bad option", ["--vf", "scale=w=64:hieght=64"],
            ["FFmpeg refuses", "hieght"])
    refused(quale, files, "RGB out of the graph", ["--vf", "format=rgb24"],
            ["rgb24", "format=yuv420p"])
    refused(quale, files, "--vf with --ref-vf", ["--vf", "yadif", "--ref-vf", "yadif"],
            ["--vf filters both videos"])
    refused(quale, files, "an empty graph", ["--dist-vf", " "], ["--dist-vf takes"])
    refused(quale, files, "an unknown filter before --align", ["--vf", "cropx", "--align", "auto"],
            ["--align auto", "No such filter: 'cropx'"])


def libavfilter_path():
    """Where the dynamic linker finds libavfilter (ldconfig's cache), or None."""
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    except OSError:
        return None
    for line in out.splitlines():
        if line.strip().startswith("libavfilter.so.") and "=>" in line:
            return line.split("=>")[1].strip()
    return None


def test_without_libavfilter(quale, files):
    """With libavfilter hidden (an empty file mounted over it, in a mount
    namespace of the test's own: needs root), --vf fails with exit 1 naming
    the library, and runs without a graph are unchanged."""
    lib = libavfilter_path()
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True) if lib else None
    if not lib or probe.returncode:
        print("not checked: a machine without libavfilter (needs root's unshare -m)")
        return
    hidden = f"mount --bind /dev/null {lib} && exec \"$@\""
    def run(*args):
        return subprocess.run(["unshare", "-m", "sh", "-c", hidden, "sh", quale, "-r", files["ref"],
                               *args, *FEATURES, "-q", "--json", "-o", "-"],
                              capture_output=True, text=True)
    p = run("-d", files["dist"], "--vf", "yadif")
    check(p.returncode == 1 and "libavfilter.so" in p.stderr and "could not be loaded" in p.stderr,
          f"--vf without libavfilter: exit {p.returncode}: {p.stderr[-400:]}")
    p = run("-d", files["dist_mkv"])
    check(p.returncode == 0, f"a decoded run without libavfilter: {p.stderr[-400:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quale", required=True)
    args = ap.parse_args()
    if not shutil.which("ffmpeg"):
        print("skip: the ffmpeg tool is not installed (scripts/bootstrap.sh --test installs it)")
        return 77
    with tempfile.TemporaryDirectory(prefix="quale-filters-") as tmp:
        files = make_inputs(tmp)
        probe = subprocess.run([args.quale, "-r", files["ref"], "-d", files["ref"], "-n",
                                "--feature", "psnr", "--frame_cnt", "1", "-q", "--vf", "null"],
                               capture_output=True, text=True)
        if "has no libavfilter" in probe.stderr or "has no decoder" in probe.stderr:
            print(f"skip: this build of quale cannot filter: {probe.stderr.strip()}")
            return 77
        test_graphs(args.quale, files, tmp)
        test_one_side(args.quale, files, tmp)
        test_interlaced(args.quale, files, tmp)
        test_align(args.quale, files, tmp)
        test_split(args.quale, files, tmp)
        test_refusals(args.quale, files)
        test_without_libavfilter(args.quale, files)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
