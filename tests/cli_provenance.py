#!/usr/bin/env python3
"""Provenance: a results file says what produced it.

Runs the quale tool on small pairs made by quale-sample and checks that
the JSON and XML name quale's version and build, the model (name and
version), the backend, the metrics with their options, the inputs (name as
given, size, format) and the command line, quoted so that a shell reads it
back to the same words; that libvmaf-style readers still read the files
(extra JSON key and XML element ignored, CSV unchanged); that quale merge
keeps the parts' provenance (the command lines with the parts they come
from); and that quale report shows it and tells two runs of different
models apart.  Prints "N passed, M failed".
"""
import argparse
import csv
import html
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tally import check, finish  # noqa: E402


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True)


def records(doc, section):
    return doc.get("provenance", {}).get(section, [])


def check_json(argv, out, ref, dist):
    p = run(argv)
    check(p.returncode == 0, f"the run succeeds: {p.stderr.strip()[-300:]}")
    with open(out) as f:
        doc = json.load(f)
    check("provenance" in doc, "the JSON has a provenance object")
    quale = records(doc, "quale")
    check(len(quale) == 1 and quale[0].get("version") == doc.get("version")
          and quale[0].get("build"), f"quale's version and build: {quale}")
    models = records(doc, "model")
    check(models == [{"name": "vmaf", "version": "vmaf_v0.6.1"}],
          f"the model's name and version: {models}")
    backend = records(doc, "backend")
    check(len(backend) == 1 and backend[0].get("name") == "cpu"
          and backend[0].get("threads") == "2", f"the backend and threads: {backend}")
    psnr = [r for r in records(doc, "feature") if r.get("name") == "psnr"]
    check(len(psnr) == 1 and psnr[0].get("options") == "enable_chroma=false",
          f"the feature with its options: {psnr}")
    inputs = records(doc, "input")
    check([r.get("role") for r in inputs] == ["reference", "distorted"], f"two inputs: {inputs}")
    for r, path in zip(inputs, (ref, dist)):
        check(r.get("name") == path and r.get("bytes") == str(os.path.getsize(path)),
              f"{r.get('role')}: its name as given and its size: {r}")
        check(r.get("format") == "64x48 4:2:0 8-bit" and r.get("decoder") == "YUV4MPEG2",
              f"{r.get('role')}: its format and reader: {r}")
    commands = records(doc, "command")
    check(len(commands) == 1 and shlex.split(commands[0].get("line", "")) == argv,
          f"the command line reads back to the words run: {commands} vs {argv}")
    # libvmaf's readers look things up by name: everything they read is there
    check(len(doc["frames"]) == 6 and "vmaf" in doc["pooled_metrics"]
          and "vmaf" in doc["frames"][0]["metrics"], "a libvmaf-style JSON reader reads it")
    return doc


def check_xml(argv, out):
    p = run(argv)
    check(p.returncode == 0, f"the XML run succeeds: {p.stderr.strip()[-300:]}")
    root = ET.parse(out).getroot()
    prov = root.find("provenance")
    check(prov is not None, "the XML has a <provenance> element")
    if prov is None:
        return
    model = prov.findall("model")
    check([m.attrib for m in model] == [{"name": "vmaf", "version": "vmaf_v0.6.1"}],
          f"<model> names the model and its version: {[m.attrib for m in model]}")
    check([i.get("role") for i in prov.findall("input")] == ["reference", "distorted"],
          "<input> for each video")
    command = prov.findall("command")
    check(len(command) == 1 and shlex.split(command[0].get("line", "")) == argv,
          "<command> reads back to the words run")
    check(prov.find("quale") is not None and prov.find("backend") is not None,
          "<quale> and <backend>")
    # libvmaf's readers: findall('frames/frame'), pooled_metrics/metric
    frames = root.findall("frames/frame")
    names = [m.get("name") for m in root.findall("pooled_metrics/metric")]
    check(len(frames) == 6 and "vmaf" in names and frames[0].get("vmaf") is not None,
          "a libvmaf-style XML reader reads it")


def check_csv(argv, out):
    p = run(argv)
    with open(out, newline="") as f:
        text = f.read()
    rows = list(csv.DictReader(text.splitlines()))
    check(p.returncode == 0 and text.startswith("Frame,") and len(rows) == 6
          and "vmaf" in rows[0], "the CSV stays libvmaf's: a header, then a row a frame")


def check_merge(quale, base, tmp):
    parts = []
    for k in (1, 2):
        part = os.path.join(tmp, f"part{k}.json")
        p = run([quale] + base + ["--segment", f"{k}/2", "-o", part])
        check(p.returncode == 0, f"part {k}: {p.stderr.strip()[-200:]}")
        parts.append(part)
    merged = os.path.join(tmp, "merged.json")
    p = run([quale, "merge", "-q", "-o", merged] + parts[::-1])
    check(p.returncode == 0, f"merge: {p.stderr.strip()[-200:]}")
    with open(merged) as f:
        doc = json.load(f)
    with open(parts[0]) as f:
        first = json.load(f)
    for section in ("quale", "backend", "model", "feature", "input"):
        check(records(doc, section) == records(first, section) and records(doc, section),
              f"merge keeps the parts' {section} records once")
    commands = records(doc, "command")
    check(sorted(c.get("parts") for c in commands) == ["1", "2"]
          and all("--segment" in c.get("line", "") for c in commands),
          f"merge keeps each part's command line with its part: {commands}")
    xml_out = os.path.join(tmp, "merged.xml")
    p = run([quale, "merge", "-q", "--xml", "-o", xml_out] + parts)
    root = ET.parse(xml_out).getroot() if p.returncode == 0 else None
    check(root is not None and root.find("provenance/model") is not None
          and len(root.findall("provenance/command")) == 2,
          "merge keeps the provenance in XML too")


def report_data(page):
    with open(page) as f:
        text = f.read()
    m = re.search(r'<script id="quale-data" type="application/json">(.*?)</script>', text, re.S)
    return json.loads(m.group(1)) if m else {}


def check_report(quale, runs, tmp):
    page = os.path.join(tmp, "report.html")
    p = run([quale, "report", "-o", page] + runs)
    check(p.returncode == 0, f"report: {p.stderr.strip()[-200:]}")
    data = report_data(page)
    versions = []
    for result in data.get("results", []):
        facts = [dict(r["facts"]) for r in result.get("provenance", [])
                 if r.get("section") == "model"]
        versions.append([f.get("version") for f in facts])
    check(versions == [["vmaf_v0.6.1"], ["vmaf_v0.6.1neg"]],
          f"the page's data holds each run's model and version: {versions}")
    browser = shutil.which("chromium")
    if not browser:
        print("chromium is not installed: the drawn page is not checked (not counted)")
        return
    profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp)
    dom = run([browser, "--headless=new", "--no-sandbox", "--disable-gpu",
               "--virtual-time-budget=5000", f"--user-data-dir={profile}", "--no-first-run",
               "--host-resolver-rules=MAP * ~NOTFOUND", "--dump-dom",
               pathlib.Path(page).as_uri()]).stdout
    text = html.unescape(re.sub(r"<[^>]+>", " ", dom))
    check("What produced each run" in text and "vmaf_v0.6.1neg" in text,
          "the page shows what produced each run")
    check(re.search(r"the runs differ in: [^.]*\bmodel\b", text) is not None,
          "the page tells the two runs apart by their model")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quale", required=True)
    ap.add_argument("--sample", required=True)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="quale-provenance-")
    try:
        pair = os.path.join(tmp, "pair")
        subprocess.run([args.sample, "--width", "64", "--height", "48", "--frames", "6", pair],
                       check=True, capture_output=True)
        ref = os.path.join(pair, "sample_ref.y4m")
        dist = os.path.join(pair, "sample_dist.y4m")
        # an output name a shell must have quoted, to check the quoting
        odd = os.path.join(tmp, "it's a run")
        os.makedirs(odd)
        base = ["-r", ref, "-d", dist, "--threads", "2", "-q", "-m", "version=vmaf_v0.6.1",
                "--feature", "psnr=enable_chroma=false"]
        json_out = os.path.join(odd, "run.json")
        check_json([args.quale] + base + ["--json", "-o", json_out], json_out, ref, dist)
        xml_out = os.path.join(odd, "run.xml")
        check_xml([args.quale] + base + ["--xml", "-o", xml_out], xml_out)
        csv_out = os.path.join(tmp, "run.csv")
        check_csv([args.quale] + base + ["--csv", "-o", csv_out], csv_out)
        check_merge(args.quale, base, tmp)
        neg = os.path.join(tmp, "neg.json")
        p = run([args.quale, "-r", ref, "-d", dist, "--threads", "2", "-q", "-m",
                 "version=vmaf_v0.6.1neg", "--json", "-o", neg])
        check(p.returncode == 0, f"the second run: {p.stderr.strip()[-200:]}")
        check_report(args.quale, [json_out, neg], tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
