#!/usr/bin/env python3
"""The HTML report (quale report), opened in a headless Chromium.

Checks what a reader of the page relies on:
  - the page alone (tools/quale/report_template.html with tests/report_sample_data.json):
    draws without a script error, refers to nothing outside itself, and its
    chart answers the mouse (hover, drag to zoom, double-click, key choice);
  - a report of two corpus runs (VMAF and the bootstrap model vmaf_b):
    every number the page carries (data-value) is the number of the results
    files, bit for bit: the pooled scores against "pooled_metrics" (pN and
    lowN computed here, as quale pools them), the worst frames against the
    per-frame scores; and a 1280x900 screenshot is not blank and has its
    chart axes (--update-screenshot keeps it as docs/report.png);
  - compressed inputs, whose results note frame rate and bitrate: time
    codes and the bitrate plot;
  - bad input: not results, no frames, no scores: exit 1 and a one-line
    message that names the file; a run with NaN (null) values still reports;
  - a synthetic run of 432,000 frames: a report under 10 MB that draws;
  - strings that could change how the page parses (a key, a file's name or
    a path given to --html holding "<!--<script>", "&", U+2028, bytes that
    are not UTF-8, keys named "constructor" or "__proto__"): escaped in the
    data, drawn as they are; a page whose data cannot be read (damaged, cut
    short, or swallowed by the HTML parser) shows its error box;
  - frames far apart (0, 1 and 16777215): a page of a few KB, made at once,
    whose size follows the frames there are, not their numbers' span;
  - write errors of the page (a full disk, a closed pipe): exit 1 and a
    line that says what failed.

Prints PASS or FAIL for each check and "N passed, M failed".  Exits 0 when
everything passed, 77 when no headless Chromium can be had
(scripts/chromium.sh), 1 otherwise.
"""
import argparse
import errno
import html
import html.parser
import json
import math
import os
import pathlib
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import corpus as shared_corpus  # noqa: E402

TEMPLATE = os.path.join(SOURCE_ROOT, "tools", "quale", "report_template.html")
SAMPLE = os.path.join(HERE, "report_sample_data.json")
SCREENSHOT = os.path.join(SOURCE_ROOT, "docs", "report.png")
PLACEHOLDER = "@QUALE_REPORT_DATA@"
PAIRS = ("dune_576x324_x264crf28", "dune_576x324_x264crf42")
MODELS = ["-m", "version=vmaf_v0.6.1", "-m", "version=vmaf_b_v0.6.3:name=vmaf_b"]
METHODS = ("mean", "harmonic_mean", "min", "max", "p1", "p5", "low1", "low5")
AXIS_RGB = (0x33, 0x33, 0x33)  # the template draws its axes in #333

PASSED = FAILED = 0


def check(ok, what, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print(f"PASS {what}", flush=True)
    else:
        FAILED += 1
        print(f"FAIL {what}" + (f": {detail}" if detail else ""), flush=True)
    return ok


# ---- the browser ----------------------------------------------------------

class Browser:
    def __init__(self, path, tmp):
        self.path = path
        self.tmp = tmp

    def run(self, page, args, budget, timeout=300):
        # A profile of its own: two runs at once would otherwise share one.
        profile = tempfile.mkdtemp(prefix="chromium-", dir=self.tmp)
        cmd = [self.path, "--headless=new", "--no-sandbox", "--disable-gpu",
               f"--virtual-time-budget={budget}", f"--user-data-dir={profile}",
               "--no-first-run", "--no-default-browser-check", "--disable-extensions",
               "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
               "--window-size=1280,900",
               # Nothing may leave the machine: a name lookup fails at once.
               "--host-resolver-rules=MAP * ~NOTFOUND"] + args + [pathlib.Path(page).as_uri()]
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        finally:
            shutil.rmtree(profile, ignore_errors=True)

    def dom(self, page, budget=5000):
        proc = self.run(page, ["--dump-dom"], budget)
        return proc.stdout if proc.returncode == 0 else ""

    def screenshot(self, page, png, budget=5000):
        proc = self.run(page, [f"--screenshot={png}"], budget)
        return proc.returncode == 0 and os.path.exists(png)


class Page(html.parser.HTMLParser):
    """What the test reads of a dumped DOM: <body>'s data attributes, the
    error box, the number cells (data-value) with their text."""

    def __init__(self, text):
        super().__init__()
        self.body = {}
        self.errors = ""
        self.cells = []
        self._in_errors = False
        self._cell = None
        self._cell_tag = None
        self._depth = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "body":
            self.body = a
        if a.get("id") == "quale-errors":
            self._in_errors = True
        if "data-value" in a and self._cell is None:
            self._cell = dict(a, tag=tag, text="")
            self._cell_tag = tag
            self._depth = 0
        elif self._cell is not None and tag == self._cell_tag:
            self._depth += 1

    def handle_endtag(self, tag):
        if self._in_errors and tag == "div":
            self._in_errors = False
        if self._cell is not None and tag == self._cell_tag:
            if self._depth:
                self._depth -= 1
            else:
                self.cells.append(self._cell)
                self._cell = None

    def handle_data(self, data):
        if self._in_errors:
            self.errors += data
        if self._cell is not None:
            self._cell["text"] += data


def page_ok(browser, page, label, budget=5000):
    """Opens the page: no error, drawn.  Returns the parsed Page or None."""
    dom = browser.dom(page, budget)
    if not check(bool(dom), f"{label}: Chromium opens the page"):
        return None
    p = Page(dom)
    check(p.body.get("data-errors") == "0", f"{label}: no script error (data-errors=0)",
          f"data-errors={p.body.get('data-errors')!r}: {p.errors.strip()[:400]}")
    check(p.body.get("data-ready") == "1", f"{label}: drawn (data-ready=1)",
          f"data-ready={p.body.get('data-ready')!r}")
    return p


def escape_data(text):
    """JSON text as tools/quale/report.c writes it into the page: '<', '>', '&',
    U+2028 and U+2029 escaped (they can only be inside strings)."""
    for c in "<>&\u2028\u2029":
        text = text.replace(c, f"\\u{ord(c):04x}")
    return text


def fill_template(data_text, out, extra_script="", escape=escape_data):
    """The page as quale report makes it: the data in place of the marker."""
    with open(TEMPLATE) as f:
        template = f.read()
    page = template.replace(PLACEHOLDER, escape(data_text))
    if extra_script:
        page = page.replace("</body>", extra_script + "\n</body>")
    with open(out, "w") as f:
        f.write(page)


def outside_data(text):
    """The page without its data script: what must not refer outside."""
    return re.sub(r'(<script id="quale-data"[^>]*>).*?(</script>)', r"\1\2", text, flags=re.S)


def no_network(text, label):
    text = outside_data(text)
    found = re.findall(r"(?i)(?:https?:|//[a-z0-9.-]+\.[a-z]{2,}/|<link\b|<img\b|<iframe\b|<object\b|"
                       r"<embed\b|\bsrc\s*=|\bhref\s*=|url\((?!#)|@import|\bfetch\(|XMLHttpRequest|"
                       r"WebSocket|\bimport\()", text)
    check(not found, f"{label}: refers to nothing outside the file", f"found {sorted(set(found))}")


# ---- expected numbers -----------------------------------------------------

def pooled_expected(doc, key, method):
    """The pooled value as quale computes it: libvmaf's four from the file,
    pN (numpy's linear) and lowN (mean of the lowest N%, at least one) from
    the per-frame values; None when the key has a NaN (null) frame."""
    pooled = doc.get("pooled_metrics", {}).get(key, {})
    if method in pooled:
        return pooled[method]
    values = [fr["metrics"][key] for fr in doc["frames"] if key in fr["metrics"]]
    if not values or any(v is None for v in values):
        return None
    x = sorted(values)
    n = len(x)
    share = float(method[1:] if method[0] == "p" else method[3:])
    if method[0] == "p":
        h = (n - 1) * share / 100
        lo = int(h)
        return x[lo] + (h - lo) * (x[lo + 1] - x[lo]) if lo + 1 < n else x[lo]
    k = min(n, max(1, math.ceil(n * share / 100)))
    return sum(x[:k]) / k


def same_number(text, want):
    if want is None:
        return text == "null"
    try:
        return text != "null" and float(text) == float(want)
    except ValueError:
        return False


def check_numbers(page, docs, label, main_key="vmaf", unpooled=()):
    """Every pooled cell and worst-frame row of the page against the results
    files (docs, in command-line order); keys in `unpooled` are left out of
    the pooled comparison."""
    pooled = [c for c in page.cells if "data-method" in c and c["data-key"] not in unpooled]
    seen = {(int(c["data-result"]), c["data-key"], c["data-method"])
            for c in page.cells if "data-method" in c}
    worst = [c for c in page.cells if "data-frame" in c]
    wrong = []
    for c in pooled:
        r, key, method = int(c["data-result"]), c["data-key"], c["data-method"]
        want = pooled_expected(docs[r], key, method)
        if not same_number(c["data-value"], want):
            wrong.append(f"result {r} {key} {method}: page {c['data-value']}, file {want!r}")
        elif want is not None and abs(float(c["text"]) - want) > 5.1e-7:
            wrong.append(f"result {r} {key} {method}: shows {c['text']!r} for {want!r}")
    check(not wrong, f"{label}: {len(pooled)} pooled cells = the results files' values",
          "; ".join(wrong[:6]))
    missing = [(r, m) for r in range(len(docs)) for m in METHODS if (r, main_key, m) not in seen]
    check(not missing, f"{label}: every method of {main_key} for every result in the pooled table",
          f"missing {missing[:8]}")
    for r, doc in enumerate(docs):
        rows = [c for c in worst if int(c["data-result"]) == r]
        scored = [(fr["metrics"][main_key], fr["frameNum"]) for fr in doc["frames"]
                  if fr["metrics"].get(main_key) is not None]
        want = sorted(scored)[:20]
        got = [(c["data-value"], int(c["data-frame"])) for c in rows]
        ok = len(got) == len(want) and all(
            f == wf and same_number(v, wv) for (v, f), (wv, wf) in zip(got, want))
        check(ok, f"{label}: result {r}'s {len(want)} worst frames (frame and score)",
              f"page {got[:4]}..., want {want[:4]}...")


# ---- the screenshot ---------------------------------------------------------

def read_png(path):
    """(width, height, rows of RGB tuples): 8-bit RGB or RGBA, not interlaced."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        raise ValueError(f"PNG of depth {depth}, colour type {color}, interlace {interlace}")
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    i = 0
    for _ in range(height):
        kind = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if kind == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif kind == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 0xFF
        elif kind == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif kind != 0:
            raise ValueError(f"PNG filter type {kind}")
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return width, height, rows


def check_screenshot(png, label):
    try:
        width, height, rows = read_png(png)
    except (OSError, ValueError, zlib.error, TypeError) as e:
        check(False, f"{label}: the screenshot decodes", str(e))
        return
    check((width, height) == (1280, 900), f"{label}: the screenshot is 1280x900", f"{width}x{height}")
    counts = {}
    for row in rows:
        for px in row:
            counts[px] = counts.get(px, 0) + 1
    background = max(counts, key=counts.get)
    ink = sum(n for px, n in counts.items() if max(abs(a - b) for a, b in zip(px, background)) > 24)
    share = ink / (width * height)
    check(share >= 0.02, f"{label}: not blank ({share:.1%} of the pixels are ink)",
          f"background {background}, only {share:.2%} differ")

    def is_axis(px):
        return all(abs(a - b) <= 12 for a, b in zip(px, AXIS_RGB))

    longest_h = 0
    for row in rows:
        run = 0
        for px in row:
            run = run + 1 if is_axis(px) else 0
            longest_h = max(longest_h, run)
    longest_v = 0
    runs = [0] * width
    for row in rows:
        for x, px in enumerate(row):
            runs[x] = runs[x] + 1 if is_axis(px) else 0
            if runs[x] > longest_v:
                longest_v = runs[x]
    check(longest_h >= 500 and longest_v >= 250,
          f"{label}: the chart's axes are drawn (runs of #333: {longest_h} px across, {longest_v} px down)")


# ---- the page alone ---------------------------------------------------------

SELF_TEST = r"""<script>
// Added by tests/report_test.py: works the chart as a reader would, and
// writes what happened into data-selftest.
(function () {
  var out = {};
  try {
    var box = document.querySelector('#per-frame .chart');
    var overlay = function () { return box.querySelector('.overlay'); };
    var r = overlay().getBoundingClientRect();
    var y = r.top + r.height / 2;
    var fire = function (type, x, target) {
      (target || overlay()).dispatchEvent(new MouseEvent(type, { bubbles: true, clientX: x, clientY: y, button: 0 }));
    };
    fire('mousemove', r.left + r.width / 2);
    var tip = box.querySelector('.tooltip');
    out.tooltip = tip.style.display === 'block' ? tip.textContent : '';
    fire('mousedown', r.left + r.width * 0.25);
    fire('mousemove', r.left + r.width * 0.5);
    fire('mouseup', r.left + r.width * 0.5);
    out.zoomed = document.getElementById('zoom-range').textContent;
    fire('dblclick', r.left + r.width * 0.5);
    out.reset = document.getElementById('zoom-range').textContent;
    var select = document.querySelector('#per-frame select');
    select.value = 'vmaf_b';
    select.dispatchEvent(new Event('change'));
    out.ci = box.querySelectorAll('path.ci').length;
    out.markers = box.querySelectorAll('line.marker').length;
    select.value = 'integer_vif_scale0';
    select.dispatchEvent(new Event('change'));
    out.envelope = box.querySelectorAll('path.envelope').length;
    out.lines = box.querySelectorAll('path.line').length;
  } catch (e) {
    out.error = String(e);
  }
  document.body.dataset.selftest = JSON.stringify(out);
})();
</script>"""


def timecode(frame, fps):
    """hh:mm:ss.mmm: the frame's start time to the millisecond."""
    ms = math.floor(frame * 1000 / fps + 1e-6)
    s = ms // 1000
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{ms % 1000:03d}"


def page_alone(browser, tmp):
    with open(TEMPLATE) as f:
        template = f.read()
    check(template.count(PLACEHOLDER) == 1 and
          f'<script id="quale-data" type="application/json">{PLACEHOLDER}</script>' in template,
          "template: the data marker appears once, in the quale-data script")
    no_network(template, "template")
    with open(SAMPLE) as f:
        sample_text = f.read()
    sample = json.loads(sample_text)
    page = os.path.join(tmp, "sample.html")
    fill_template(sample_text, page, SELF_TEST)
    p = page_ok(browser, page, "sample page")
    if not p:
        return
    wrong = []
    for c in p.cells:
        if "data-method" not in c:
            continue
        r = sample["results"][int(c["data-result"])]
        want = next(k for k in r["keys"] if k["name"] == c["data-key"])["pooled"].get(c["data-method"])
        if not same_number(c["data-value"], want):
            wrong.append(f"{c['data-key']} {c['data-method']}: {c['data-value']} for {want!r}")
    check(not wrong and p.cells, f"sample page: {len(p.cells)} number cells carry the data's numbers",
          "; ".join(wrong[:5]))
    try:
        st = json.loads(p.body.get("data-selftest", "{}"))
    except ValueError:
        st = {}
    check("error" not in st and st, "sample page: the self-test ran", st.get("error", "no result"))
    m = re.search(r"frame (\d+)", st.get("tooltip", ""))
    ok = bool(m)
    if ok:
        frame = int(m.group(1))
        for r in sample["results"]:
            v = r["values"]["vmaf"][frame]
            ok = ok and (f"{v:.6f}" if v is not None else "\u2014") in st["tooltip"]
        ok = ok and timecode(frame, sample["results"][0]["frame_rate"]) in st["tooltip"]
    check(ok, "sample page: hovering shows the frame, its time code and each result's value",
          repr(st.get("tooltip")))
    check(bool(re.match(r"frames \d+\u2013\d+$", st.get("zoomed", ""))) and st.get("reset") == "",
          "sample page: dragging zooms, a double-click resets",
          f"zoomed {st.get('zoomed')!r}, reset {st.get('reset')!r}")
    check(st.get("ci") == 2 and st.get("markers", 0) >= 3,
          "sample page: vmaf_b draws its 95% band for each result, with pooled lines",
          f"{st.get('ci')} bands, {st.get('markers')} lines")
    check(st.get("envelope") == 1 and st.get("lines") == 1,
          "sample page: a key kept as an envelope draws as a band, the other result's as a line",
          f"{st.get('envelope')} envelopes, {st.get('lines')} lines")


# ---- quale report -----------------------------------------------------------

def run_report(quale, inputs, out):
    t0 = time.monotonic()
    proc = subprocess.run([quale, "report", *inputs, "-o", out], capture_output=True, text=True)
    return proc, time.monotonic() - t0


def corpus_report(args, browser, tmp):
    corpus = os.path.join(args.shared, "corpus")
    if not os.path.isdir(corpus):
        print(f"skip: no corpus at {corpus}: the report of corpus runs is not checked")
        return None
    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = {p["name"]: p for p in json.load(f)}
    shared_corpus.ensure_decoded(args.shared, args.cache)
    files, docs = [], []
    for name in PAIRS:
        pair = manifest[name]
        out = os.path.join(tmp, name + ".json")
        cmd = [args.quale, "-r", os.path.join(args.cache, pair["ref_yuv"]),
               "-d", os.path.join(args.cache, pair["dis_yuv"]),
               "-w", str(pair["width"]), "-h", str(pair["height"]),
               "-p", pair["vmaf_pixel_format"], "-b", str(pair["bitdepth"]),
               *MODELS, "--json", "-o", out, "-q"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if not check(proc.returncode == 0, f"quale scores {name}", proc.stderr.strip()[-400:]):
            return None
        with open(out) as f:
            docs.append(json.load(f))
        files.append(out)
    html_path = os.path.join(tmp, "report.html")
    proc, seconds = run_report(args.quale, files, html_path)
    if not check(proc.returncode == 0 and os.path.exists(html_path),
                 f"quale report of {len(files)} runs ({seconds:.2f} s)", proc.stderr.strip()[-400:]):
        return None
    with open(html_path) as f:
        text = f.read()
    no_network(text, "report")
    check(PLACEHOLDER not in text, "report: the data marker is replaced")
    p = page_ok(browser, html_path, "report")
    if p:
        check_numbers(p, docs, "report")
    png = os.path.join(tmp, "report.png")
    if check(browser.screenshot(html_path, png), "report: a 1280x900 screenshot"):
        check_screenshot(png, "report")
        size = os.path.getsize(png)
        check(size < 300_000, f"report: the screenshot is small ({size // 1024} KB)")
        if args.update_screenshot:
            shutil.copyfile(png, SCREENSHOT)
            print(f"wrote {os.path.relpath(SCREENSHOT, SOURCE_ROOT)}")
    return files, docs


def compressed_report(args, browser, tmp):
    """Compressed inputs note their frame rate and bitrate in the results:
    the page then has time codes and the bitrate plot.  Skipped where quale
    cannot decode (no FFmpeg libraries)."""
    corpus = os.path.join(args.shared, "corpus")
    if not os.path.isdir(corpus):
        return
    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = {p["name"]: p for p in json.load(f)}
    files = []
    for name in PAIRS:
        pair = manifest[name]
        out = os.path.join(tmp, name + ".compressed.json")
        proc = subprocess.run([args.quale, "-r", os.path.join(corpus, pair["ref"]),
                               "-d", os.path.join(corpus, pair["dis"]), "--json", "-o", out, "-q"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"skip: compressed input ({name}) not scored here: {proc.stderr.strip()[-200:]}")
            return
        files.append(out)
    html_path = os.path.join(tmp, "compressed.html")
    proc, _ = run_report(args.quale, files, html_path)
    if not check(proc.returncode == 0, "compressed inputs: quale report writes the page",
                 proc.stderr.strip()[-300:]):
        return
    dom = browser.dom(html_path)
    p = Page(dom) if dom else None
    check(p is not None and p.body.get("data-errors") == "0" and p.body.get("data-ready") == "1",
          "compressed inputs: the page draws without a script error",
          p.errors.strip()[:300] if p else "Chromium failed")
    plot = re.search(r'<section id="bitrate".*?</section>', dom, re.S)
    check(bool(plot) and plot.group(0).count("<circle") == len(files),
          f"compressed inputs: the bitrate plot has a point for each of the {len(files)} results")
    worst = re.search(r'<section id="worst".*?</section>', dom, re.S)
    check(bool(worst) and len(re.findall(r">\d\d:\d\d:\d\d\.\d\d\d<", worst.group(0))) == 20 * len(files),
          "compressed inputs: the worst frames have their time codes")


def bad_input(args, browser, tmp, corpus_files):
    def refused(label, path):
        out = os.path.join(tmp, "refused.html")
        proc, _ = run_report(args.quale, [path], out)
        message = proc.stderr.strip()
        check(proc.returncode == 1, f"{label}: quale report exits 1", f"exit {proc.returncode}")
        check(len(message.splitlines()) == 1 and os.path.basename(path) in message,
              f"{label}: a one-line message naming the file", repr(message[:300]))
        check(not os.path.exists(out), f"{label}: no page is left behind")
        print(f"  message: {message[:200]}")

    def write(name, doc):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    refused("not results ({\"a\": 1})", write("not_results.json", {"a": 1}))
    refused("no frames", write("no_frames.json", {"version": "0.1.0", "frames": [],
                                                  "pooled_metrics": {}, "aggregate_metrics": {}}))
    refused("a file that does not exist", os.path.join(tmp, "missing_results.json"))
    if corpus_files:
        base = corpus_files[1]
    else:
        base = write("small.json", synthetic(48, seed=3))
    with open(base) as f:
        doc = json.load(f)
    blank = json.loads(json.dumps(doc))
    for fr in blank["frames"]:
        fr["metrics"] = {k: None for k in fr["metrics"]}
    blank["pooled_metrics"] = {k: {m: None for m in v} for k, v in blank["pooled_metrics"].items()}
    refused("every score null", write("all_null.json", blank))

    # Some NaN: still a report, without a script error, the worst frames
    # among the frames that have a score.
    nan = json.loads(json.dumps(doc))
    for n in (2, 9, 10):
        nan["frames"][n]["metrics"]["vmaf"] = None
    nan["frames"][5]["metrics"]["integer_adm2"] = None
    path = write("some_nan.json", nan)
    out = os.path.join(tmp, "some_nan.html")
    proc, _ = run_report(args.quale, [path], out)
    if check(proc.returncode == 0, "some NaN (null) values: quale report writes the page",
             proc.stderr.strip()[-300:]):
        p = page_ok(browser, out, "some NaN")
        if p:
            # How a key with NaN frames pools is the pooling's business
            # (libvmaf's: min and max pass over them, the means do not),
            # checked with the runs; here the other keys and the worst frames.
            check_numbers(p, [nan], "some NaN", unpooled=("vmaf", "integer_adm2"))


def synthetic(frames, seed):
    """A results file in quale's JSON layout: vmaf and the features of
    vmaf_v0.6.1 that a long run keeps as envelopes."""
    rng = random.Random(seed)
    keys = ("integer_adm2", "integer_vif_scale0", "integer_vif_scale1", "integer_vif_scale2",
            "integer_vif_scale3", "integer_motion2", "vmaf")
    out = []
    for n in range(frames):
        wave = math.sin(n / 900.0)
        out.append({"frameNum": n, "metrics": {
            "integer_adm2": 0.95 + 0.03 * wave + rng.uniform(-0.01, 0.01),
            "integer_vif_scale0": 0.55 + 0.05 * wave + rng.uniform(-0.02, 0.02),
            "integer_vif_scale1": 0.90 + 0.03 * wave + rng.uniform(-0.01, 0.01),
            "integer_vif_scale2": 0.94 + 0.02 * wave + rng.uniform(-0.01, 0.01),
            "integer_vif_scale3": 0.96 + 0.02 * wave + rng.uniform(-0.01, 0.01),
            "integer_motion2": abs(4 + 3 * wave + rng.uniform(-1, 1)),
            "vmaf": min(100.0, 88 + 6 * wave + rng.uniform(-3, 3) - (25 if n % 9973 == 0 else 0))}})
    pooled = {}
    for k in keys:
        x = [fr["metrics"][k] for fr in out]
        pooled[k] = {"min": min(x), "max": max(x), "mean": sum(x) / len(x),
                     "harmonic_mean": len(x) / sum(1 / (v + 1) for v in x) - 1}
    return {"version": "0.1.0", "frames": out, "pooled_metrics": pooled,
            "aggregate_metrics": {}}


def large_report(args, browser, tmp):
    n = 432_000
    path = os.path.join(tmp, "long_run.json")
    with open(path, "w") as f:
        json.dump(synthetic(n, seed=1), f)
    out = os.path.join(tmp, "long_run.html")
    proc, seconds = run_report(args.quale, [path], out)
    if not check(proc.returncode == 0, f"{n} frames: quale report writes the page",
                 proc.stderr.strip()[-300:]):
        return
    size = os.path.getsize(out)
    print(f"  {n} frames: report written in {seconds:.2f} s, {size / 1e6:.2f} MB")
    check(size < 10_000_000, f"{n} frames: the page is under 10 MB ({size / 1e6:.2f} MB)")
    t0 = time.monotonic()
    p = page_ok(browser, out, f"{n} frames", budget=30000)
    print(f"  {n} frames: Chromium took {time.monotonic() - t0:.1f} s with its start-up; the page "
          f"says it was drawn {p.body.get('data-drawn-ms') if p else '?'} ms after it began loading")


# ---- strings that reach the page ---------------------------------------------

# Strings that would change how the page parses if written as they are: the
# second one puts the HTML parser into the "double-escaped" state in which
# the data's <script> runs on over the rest of the page.
HOSTILE_KEYS = ("<!--<script>", "</script><script>x()</script>", "a&b>c<!--",
                "line\u2028sep\u2029", "constructor", "__proto__", "toString")

KEYS_TEST = r"""<script>
// Added by tests/report_test.py: draws the chart of every key in turn.
(function () {
  var out = { keys: [] };
  try {
    var select = document.querySelector('#per-frame select');
    Array.prototype.forEach.call(select.options, function (o) {
      select.value = o.value;
      select.dispatchEvent(new Event('change'));
      out.keys.push(o.value);
    });
  } catch (e) {
    out.error = String(e);
  }
  document.body.dataset.keystest = JSON.stringify(out);
})();
</script>"""


def page_data(text):
    """The data object embedded in a page's text, or None."""
    m = re.search(r'<script id="quale-data" type="application/json">(.*?)</script>', text, re.S)
    try:
        return json.loads(m.group(1)) if m else None
    except ValueError:
        return None


def data_escaped(text, label):
    """The data script of a written page holds no character that the HTML
    parser treats specially, and the page is UTF-8."""
    raw = open(text, "rb").read()
    try:
        page = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, f"{label}: the page is UTF-8", str(e))
        return None
    check(True, f"{label}: the page is UTF-8")
    m = re.search(r'<script id="quale-data" type="application/json">(.*?)</script>', page, re.S)
    inside = m.group(1) if m else ""
    found = sorted({c for c in inside if c in "<>&\u2028\u2029"})
    check(bool(m) and not found,
          f"{label}: the data has no '<', '>', '&', U+2028, U+2029 as they are",
          f"found {found!r}" if m else "no data script")
    return page


def text_of(dom, element_id):
    m = re.search(rf'<[a-z]+[^>]*id="{element_id}"[^>]*>(.*?)</div>', dom, re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", m.group(1))) if m else ""


def with_script(path, script):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    head, tail = text.rsplit("</body>", 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + script + "\n</body>" + tail)


def write_y4m(path, w, h, frames, seed):
    rng = random.Random(seed)
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F25:1 Ip C420jpeg\n".encode())
        for _ in range(frames):
            f.write(b"FRAME\n" + bytes(rng.randrange(256) for _ in range(w * h * 3 // 2)))


def hostile_strings(args, browser, tmp):
    """Keys, a results file's name and the paths of an --html run that hold
    what HTML or JavaScript would read as markup: the page draws them."""
    doc = synthetic(48, seed=5)
    for n, fr in enumerate(doc["frames"]):
        for i, key in enumerate(HOSTILE_KEYS):
            fr["metrics"][key] = 50 + i + (n % 7) * 0.5
    for i, key in enumerate(HOSTILE_KEYS):
        x = [fr["metrics"][key] for fr in doc["frames"]]
        doc["pooled_metrics"][key] = {"min": min(x), "max": max(x), "mean": sum(x) / len(x)}
    name = "<!--<script>&\u2028.json"
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
    # a second result without those keys: its page must not find them in
    # what every object inherits
    other = os.path.join(tmp, "plain.json")
    with open(other, "w") as f:
        json.dump(synthetic(48, seed=6), f)
    out = os.path.join(tmp, "hostile.html")
    proc, _ = run_report(args.quale, [path, other], out)
    if not check(proc.returncode == 0, "hostile keys and names: quale report writes the page",
                 proc.stderr.strip()[-300:]):
        return
    if data_escaped(out, "hostile keys and names") is None:
        return
    with_script(out, KEYS_TEST)
    p = page_ok(browser, out, "hostile keys and names")
    if p:
        try:
            st = json.loads(p.body.get("data-keystest", "{}"))
        except ValueError:
            st = {}
        missing = [k for k in HOSTILE_KEYS if k not in st.get("keys", [])]
        check(st and "error" not in st and not missing,
              f"hostile keys and names: the chart draws each of the {len(HOSTILE_KEYS)} keys",
              st.get("error", f"not offered: {missing!r}"))
        dom = browser.dom(out)
        shown = text_of(dom, "quale-names")
        check(name in shown, "hostile keys and names: the file's name is shown as it is",
              repr(shown[:200]))

    # --html on a scoring run: the distorted video's path (its name heads
    # the page, both paths are among the settings) with markup and a byte
    # that is not UTF-8
    ref = os.path.join(tmp, "ref.y4m")
    dis = os.path.join(os.fsencode(tmp), b"\xff<!--<script>dis.y4m")
    write_y4m(ref, 64, 48, 3, seed=1)
    write_y4m(dis, 64, 48, 3, seed=2)
    out = os.path.join(tmp, "hostile_run.html")
    proc = subprocess.run([os.fsencode(args.quale), b"-r", os.fsencode(ref), b"-d", dis,
                           b"--html", os.fsencode(out), b"-q"], capture_output=True)
    if not check(proc.returncode == 0, "--html of a run whose path holds '<!--<script>': "
                 "the page is written", proc.stderr.decode(errors="replace").strip()[-300:]):
        return
    if data_escaped(out, "--html, hostile path") is None:
        return
    p = page_ok(browser, out, "--html, hostile path")
    if p:
        shown = text_of(browser.dom(out), "quale-names")
        check("\ufffd<!--<script>dis.y4m" in shown,
              "--html, hostile path: the name is shown, its stray byte as U+FFFD",
              repr(shown[:200]))


def error_box(browser, tmp):
    """A page whose data cannot be read says so in its error box instead of
    staying blank."""
    def shows_error(page, label, want):
        dom = browser.dom(page)
        p = Page(dom) if dom else None
        errors = p.errors.strip() if p else ""
        count = p.body.get("data-errors") if p else None
        check(p is not None and count not in (None, "0") and want in errors,
              f"{label}: the error box says so", f"data-errors={count!r}, box {errors[:300]!r}")
        print(f"  box: {errors[:160]!r}")

    page = os.path.join(tmp, "broken_data.html")
    fill_template('{"generator": "quale", "results": [', page)
    shows_error(page, "data that is not JSON", "data cannot be read")

    # data escaped as the page's writer once escaped it ("</" alone):
    # "<!--<script>" makes the HTML parser take the rest of the page for data
    with open(SAMPLE) as f:
        sample = json.load(f)
    sample["results"][0]["name"] = "<!--<script>"
    page = os.path.join(tmp, "swallowed.html")
    fill_template(json.dumps(sample), page, escape=lambda t: t.replace("</", "<\\/"))
    shows_error(page, "data that runs on over the page", "did not load")

    page = os.path.join(tmp, "cut_short.html")
    fill_template(json.dumps(json.load(open(SAMPLE))), page)
    with open(page, "rb") as f:
        text = f.read()
    with open(page, "wb") as f:
        f.write(text[:text.index(b'<script id="quale-data"') + 2000])
    shows_error(page, "a page cut short in its data", "did not load")


# ---- frames far apart ---------------------------------------------------------

SPARSE_TEST = r"""<script>
// Added by tests/report_test.py: hovers near the right end of the chart,
// and counts the pieces of the line.
(function () {
  var out = {};
  try {
    var box = document.querySelector('#per-frame .chart');
    var overlay = box.querySelector('.overlay');
    var r = overlay.getBoundingClientRect();
    var at = function (share) {
      overlay.dispatchEvent(new MouseEvent('mousemove', { bubbles: true,
        clientX: r.left + r.width * share, clientY: r.top + r.height / 2 }));
      return box.querySelector('.tooltip').textContent;
    };
    out.right = at(0.999);
    out.middle = at(0.5);
    var line = box.querySelector('path.line');
    out.pieces = line ? (line.getAttribute('d').match(/M/g) || []).length : 0;
  } catch (e) {
    out.error = String(e);
  }
  document.body.dataset.sparsetest = JSON.stringify(out);
})();
</script>"""


def sparse_report(args, browser, tmp):
    """Frames whose numbers are far apart: the page holds the frames there
    are.  The file the issue found: frames 0, 1 and 16777215 (the largest
    span a results file may have) of eight keys that are not metrics, which
    made a 671 MB page."""
    keys = [f"score{i}" for i in range(8)]
    frames = [{"frameNum": n, "metrics": {k: 1.5 for k in keys}} for n in (0, 1, 16777215)]
    doc = {"version": "0.1.0", "frames": frames, "pooled_metrics": {}, "aggregate_metrics": {}}
    path = os.path.join(tmp, "far_apart.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    out = os.path.join(tmp, "far_apart.html")
    proc, seconds = run_report(args.quale, [path], out)
    if not check(proc.returncode == 0, "frames 0, 1, 16777215: quale report writes the page",
                 proc.stderr.strip()[-300:]):
        return
    size = os.path.getsize(out)
    data_size = size - os.path.getsize(TEMPLATE)
    print(f"  frames 0, 1, 16777215 ({os.path.getsize(path)}-byte file): {size} bytes "
          f"({data_size} of data) in {seconds:.2f} s")
    # 3 frames of 8 keys: a few hundred bytes of values, names and runs
    if not check(data_size < 4096, f"frames 0, 1, 16777215: the page's data is under 4 KB "
                 f"({data_size} bytes)"):
        return  # a page of the span's size is not opened
    with open(out, encoding="utf-8") as f:
        data = page_data(f.read())
    r = data["results"][0] if data else {}
    check(r.get("frame_numbers", {}).get("runs") == [[0, 2], [16777215, 1]] and
          all(len(r["values"][k]) == 3 for k in keys),
          "frames 0, 1, 16777215: two runs of frames, three values of each key",
          repr(r.get("frame_numbers")))
    with_script(out, SPARSE_TEST)
    p = page_ok(browser, out, "frames 0, 1, 16777215")
    if p:
        rows = [int(c["data-frame"]) for c in p.cells if "data-frame" in c]
        check(rows == [0, 1, 16777215], "frames 0, 1, 16777215: the worst frames", repr(rows))
        st = json.loads(p.body.get("data-sparsetest", "{}"))
        check("frame 16777215" in st.get("right", "") and "1.500000" in st.get("right", ""),
              "frames 0, 1, 16777215: hovering at the right end shows frame 16777215",
              repr(st))
        check(st.get("pieces") == 2, "frames 0, 1, 16777215: the line breaks where no frame is",
              f"{st.get('pieces')} pieces")

    # a frame with none of the first key's values is a frame all the same
    doc["frames"][1] = {"frameNum": 2, "metrics": {"score7": 2.5}}
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    proc, seconds = run_report(args.quale, [path], out)
    size = os.path.getsize(out) if proc.returncode == 0 else 0
    with open(out, encoding="utf-8") as f:
        data = page_data(f.read()) if size < 1_000_000 else None
    r = data["results"][0] if data else {}
    check(proc.returncode == 0 and r.get("frame_numbers", {}).get("runs") ==
          [[0, 1], [2, 1], [16777215, 1]] and r["values"]["score7"] == [1.5, 2.5, 1.5] and
          r["values"]["score0"] == [1.5, None, 1.5],
          f"frames 0, 2 (another key alone), 16777215: three frames ({size} bytes, "
          f"{seconds:.2f} s)", repr(r.get("frame_numbers")) + proc.stderr.strip()[-200:])


def gap_report(args, browser, tmp):
    """A gap amid an ordinary run (frames 0-9 and 20-29): two runs, drawn
    with a break, the hover finding the frames on either side."""
    doc = {"version": "0.1.0", "frames": [{"frameNum": n, "metrics": {"score": n + 0.25}}
                                          for n in list(range(10)) + list(range(20, 30))],
           "pooled_metrics": {}, "aggregate_metrics": {}}
    path = os.path.join(tmp, "gap.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    out = os.path.join(tmp, "gap.html")
    proc, _ = run_report(args.quale, [path], out)
    if not check(proc.returncode == 0, "frames 0-9 and 20-29: quale report writes the page",
                 proc.stderr.strip()[-300:]):
        return
    with open(out, encoding="utf-8") as f:
        data = page_data(f.read())
    r = data["results"][0] if data else {}
    check(r.get("frame_numbers", {}).get("runs") == [[0, 10], [20, 10]] and
          len(r.get("values", {}).get("score", [])) == 20,
          "frames 0-9 and 20-29: two runs, 20 values", repr(r.get("frame_numbers")))
    with_script(out, SPARSE_TEST)
    p = page_ok(browser, out, "frames 0-9 and 20-29")
    if p:
        st = json.loads(p.body.get("data-sparsetest", "{}"))
        m = re.search(r"frame (\d+)", st.get("middle", ""))
        frame = int(m.group(1)) if m else -1
        check(frame in (9, 20) and f"{frame + 0.25:.6f}" in st["middle"],
              "frames 0-9 and 20-29: hovering in the gap shows the nearest frame and its value",
              repr(st))
        check(st.get("right", "").startswith("frame 29") and "29.250000" in st["right"],
              "frames 0-9 and 20-29: the chart reaches frame 29", repr(st))
        check(st.get("pieces") == 2, "frames 0-9 and 20-29: the line breaks at the gap",
              f"{st.get('pieces')} pieces")


# ---- write errors -------------------------------------------------------------

def write_errors(args, tmp):
    """A page that cannot be written: exit 1 and one line that says what
    failed and why."""
    if not os.path.exists("/dev/full"):
        print("skip: no /dev/full: write errors of the page not checked")
        return
    path = os.path.join(tmp, "small_for_errors.json")
    with open(path, "w") as f:
        json.dump(synthetic(48, seed=7), f)
    full, broken = os.strerror(errno.ENOSPC), os.strerror(errno.EPIPE)

    def said(label, proc, *wants):
        message = proc.stderr.strip() if isinstance(proc.stderr, str) else \
            proc.stderr.decode(errors="replace").strip()
        check(proc.returncode == 1, f"{label}: exit 1", f"exit {proc.returncode}")
        check(len(message.splitlines()) == 1 and all(w in message for w in wants),
              f"{label}: one line saying what failed", repr(message[:300]))
        print(f"  message: {message[:200]}")

    said("quale report -o /dev/full",
         subprocess.run([args.quale, "report", path, "-o", "/dev/full"], capture_output=True,
                        text=True), "cannot write '/dev/full'", full)
    with open("/dev/full", "w") as dev_full:
        said("quale report -o - into a full disk",
             subprocess.run([args.quale, "report", path, "-o", "-"], stdout=dev_full,
                            stderr=subprocess.PIPE, text=True), "standard output", full)
    # a closed pipe, SIGPIPE ignored (as under many supervisors): EPIPE
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        said("quale report -o - into a closed pipe",
             subprocess.run([args.quale, "report", path, "-o", "-"], stdout=write_end,
                            stderr=subprocess.PIPE, text=True, restore_signals=False,
                            preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN)),
             "standard output", broken)
    finally:
        os.close(write_end)
    with open("/dev/full", "w") as dev_full:
        said("quale report --help into a full disk",
             subprocess.run([args.quale, "report", "--help"], stdout=dev_full,
                            stderr=subprocess.PIPE, text=True), full)
    ref, dis = os.path.join(tmp, "err_ref.y4m"), os.path.join(tmp, "err_dis.y4m")
    write_y4m(ref, 64, 48, 3, seed=3)
    write_y4m(dis, 64, 48, 3, seed=4)
    said("--html /dev/full on a scoring run",
         subprocess.run([args.quale, "-r", ref, "-d", dis, "--html", "/dev/full", "-q",
                         "-o", os.path.join(tmp, "err.json")], capture_output=True, text=True),
         "cannot write '/dev/full'", full)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quale", required=True, help="path of the quale tool")
    ap.add_argument("--shared", default=shared_corpus.default_shared())
    ap.add_argument("--cache", default=shared_corpus.default_cache())
    ap.add_argument("--update-screenshot", action="store_true",
                    help="keep the report's screenshot as docs/report.png")
    args = ap.parse_args()
    args.quale = os.path.abspath(args.quale)

    proc = subprocess.run([os.path.join(SOURCE_ROOT, "scripts", "chromium.sh")],
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode == 77:
        print("skip: no headless Chromium (scripts/chromium.sh could not install one)")
        return 77
    if proc.returncode != 0 or not proc.stdout.strip():
        check(False, "scripts/chromium.sh finds a Chromium", f"exit {proc.returncode}")
        return 1
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="quale-report-") as tmp:
        browser = Browser(proc.stdout.strip().splitlines()[-1], tmp)
        page_alone(browser, tmp)
        done = corpus_report(args, browser, tmp)
        compressed_report(args, browser, tmp)
        bad_input(args, browser, tmp, done[0] if done else None)
        large_report(args, browser, tmp)
        hostile_strings(args, browser, tmp)
        error_box(browser, tmp)
        sparse_report(args, browser, tmp)
        gap_report(args, browser, tmp)
        write_errors(args, tmp)
    print(f"{PASSED} passed, {FAILED} failed ({time.monotonic() - t0:.0f} s)")
    return 1 if FAILED or not PASSED else 0


if __name__ == "__main__":
    sys.exit(main())
