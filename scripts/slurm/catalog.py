#!/usr/bin/env python3
"""Expands a catalog of video pairs into quale's segment tasks and merges.

A catalog is a JSON list of objects, or a CSV file with a header row, with
the fields:

  ref      the reference video                         (required)
  dist     the distorted video                         (required)
  output   the merged results file; its extension      (required)
           (.json .xml .csv .sub) picks the format
  model    a -m spec, e.g. version=vmaf_v0.6.1neg      (optional, may be empty)
  options  more quale flags as one shell-like string,  (optional)
           split as a shell would (shlex): -w 576 -h 324 -p 420 -b 8,
           --feature psnr, a second -m, --threads 2, --json ...

Relative paths in ref, dist, output and a model's path=FILE are taken from
the catalog's directory, so a catalog travels with its videos; paths inside
options are passed as written.  quale reads the catalog (`quale batch
--list`), as `quale batch` does: one parser for both.

  catalog.py tasks CATALOG --segments N --parts-dir DIR
  catalog.py merges CATALOG --segments N --parts-dir DIR

Both print one line per task or merge, its fields separated by tabs (no
quoting to undo: a field never holds a tab or a newline, and never is
empty, which the catalog check guarantees):

  PRODUCT <TAB> quale <TAB> ARG <TAB> ARG ...

PRODUCT is the file the line writes; the rest is the command line, whose
first word `quale` the runner replaces with its binary ($QUALE).  tasks
prints, for every pair in catalog order and every K of 1..N:

  DIR/ID.partK-of-N.json  quale -r REF -d DIST [-m MODEL] OPTIONS -q --segment K/N -o DIR/ID.partK-of-N.json

and merges, for every pair:

  OUTPUT  quale merge [FORMAT] [--precision P] -o OUTPUT DIR/ID.part1-of-N.json ... DIR/ID.partN-of-N.json

ID, the pair's id, is the output's file name without its extension, with
characters other than letters, digits, '.', '_' and '-' made '_'; two pairs
may not share one.  The output flags of options (--json, --xml, --csv,
--sub, --precision) go to the merge, since a part is always full-precision
JSON; the other flags go to the tasks.

The options are read by quale's own option parser (`quale check-options`,
with --quale PATH, else $QUALE, else quale in PATH), so that every spelling
getopt takes is seen as the tool sees it.  A bad catalog (unreadable, a
missing or unknown field, an output or id used twice, a flag that the tasks
set themselves in any spelling, -rX or --dist=X included, an option quale
refuses) is reported with its entry and exits 2.
"""
import argparse
import json
import os
import re
import subprocess
import sys

FORMATS = {".json": "--json", ".xml": "--xml", ".csv": "--csv", ".sub": "--sub"}


class CatalogError(Exception):
    pass


def read_pairs(path, quale):
    """The catalog's pairs as quale reads them (`quale batch --list`: one
    parser for quale batch and these scripts): dicts of where, ref, dist,
    output (paths from the catalog's folder), model and options (split as
    a shell splits them)."""
    try:
        proc = subprocess.run([quale, "batch", "--list", path], capture_output=True, text=True)
    except OSError as e:
        raise CatalogError(f"cannot run {quale} to read the catalog ({e.strerror}): give "
                           "--quale PATH, or put quale in PATH")
    if proc.returncode != 0:
        message = proc.stderr.strip().replace(f"quale batch: {path}: ", "")
        raise CatalogError(message)
    return json.loads(proc.stdout)


def pair_id(output):
    stem = os.path.splitext(os.path.basename(output))[0]
    return re.sub(r"[^A-Za-z0-9._-]", "_", stem)


def check_arg(where, arg):
    if arg == "" or "\t" in arg or "\n" in arg or "\r" in arg:
        raise CatalogError(f"{where}: an empty argument or one with a tab or newline "
                           f"cannot go in the task list: {arg!r}")
    return arg


def classify(quale, where, options):
    """Which options go to the tasks ('t') and which to the merge ('f', an
    output layout flag; 'm', --precision and its value), read by quale's own
    option parser (quale check-options), which refuses, in every spelling
    (-rX, --ref=X, --dist X, -qdX), the flags the tasks set themselves:
    another input, output or part would score another video or write
    elsewhere."""
    try:
        proc = subprocess.run([quale, "check-options", *options], capture_output=True,
                              text=True)
    except OSError as e:
        raise CatalogError(f"cannot run {quale} to check the options ({e.strerror}): give "
                           "--quale PATH, or put quale in PATH")
    if proc.returncode != 0:
        message = proc.stderr.strip().replace("quale check-options: ", "")
        raise CatalogError(f"{where}: options: {message}")
    kinds = proc.stdout.strip()
    if len(kinds) != len(options) or set(kinds) - set("tfm"):
        raise CatalogError(f"{where}: {quale} check-options answered {kinds!r} for "
                           f"{len(options)} options (not the quale this catalog.py belongs to?)")
    return kinds


def load(path, quale):
    """The catalog's pairs: dicts with id, ref, dist, model, task_options,
    output and merge_options."""
    pairs, outputs, ids = [], {}, {}
    for e in read_pairs(path, quale):
        where, ref, dist, output = e["where"], e["ref"], e["dist"], e["output"]
        model, options = e["model"], e["options"]
        kinds = classify(quale, where, options)
        task_options = [o for o, k in zip(options, kinds) if k == "t"]
        merge_options = [o for o, k in zip(options, kinds) if k != "t"]
        if "f" not in kinds:
            ext = os.path.splitext(output)[1].lower()
            # A single run writes XML when neither a flag nor the name says
            # otherwise; the merge is told so, to give that run's file.
            merge_options.insert(0, FORMATS.get(ext, "--xml"))
        if output in outputs:
            raise CatalogError(f"{where}: the output {output} is also that of "
                               f"{outputs[output]}")
        pid = pair_id(output)
        if pid in ids:
            raise CatalogError(f"{where}: the output's name gives the id '{pid}', as that of "
                               f"{ids[pid]} does: the parts of two pairs would collide")
        outputs[output], ids[pid] = where, where
        pair = {"id": pid, "ref": ref, "dist": dist, "model": model,
                "task_options": task_options, "output": output,
                "merge_options": merge_options}
        for arg in [ref, dist, model or "-", output, *task_options, *merge_options]:
            check_arg(where, arg)
        pairs.append(pair)
    return pairs


def part_path(parts_dir, pid, k, n):
    return os.path.join(parts_dir, f"{pid}.part{k}-of-{n}.json")


def task_lines(pairs, n, parts_dir):
    for p in pairs:
        for k in range(1, n + 1):
            part = part_path(parts_dir, p["id"], k, n)
            argv = ["quale", "-r", p["ref"], "-d", p["dist"]]
            if p["model"]:
                argv += ["-m", p["model"]]
            # -q: a progress line per frame is noise in a batch job's log.
            argv += p["task_options"] + ["-q", "--segment", f"{k}/{n}", "-o", part]
            yield [part] + argv


def merge_lines(pairs, n, parts_dir):
    for p in pairs:
        parts = [part_path(parts_dir, p["id"], k, n) for k in range(1, n + 1)]
        yield [p["output"], "quale", "merge", *p["merge_options"], "-o", p["output"], *parts]


def main():
    ap = argparse.ArgumentParser(
        description="Expands a catalog of video pairs into quale's segment tasks and merges "
                    "(tab-separated lines; see the top of this file).")
    ap.add_argument("what", choices=("tasks", "merges"))
    ap.add_argument("catalog")
    ap.add_argument("--segments", type=int, required=True, metavar="N",
                    help="segments per pair (1 or more)")
    ap.add_argument("--parts-dir", required=True, metavar="DIR",
                    help="where the tasks write their parts")
    ap.add_argument("--quale", default=os.environ.get("QUALE") or "quale", metavar="PATH",
                    help="the quale that checks the options (default: $QUALE, else quale "
                         "in PATH)")
    args = ap.parse_args()
    if args.segments < 1:
        ap.error("--segments must be 1 or more")
    parts_dir = os.path.abspath(args.parts_dir)
    try:
        check_arg("--parts-dir", parts_dir)
        pairs = load(args.catalog, args.quale)
    except CatalogError as e:
        print(f"catalog.py: {args.catalog}: {e}", file=sys.stderr)
        return 2
    lines = task_lines if args.what == "tasks" else merge_lines
    out = sys.stdout
    for fields in lines(pairs, args.segments, parts_dir):
        out.write("\t".join(fields) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
