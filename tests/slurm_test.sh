#!/usr/bin/env bash
# Scale-out on Slurm, end to end, on a private single-node cluster of this
# machine (scripts/slurm/local-cluster.sh):
#
#   tests/slurm_test.sh --quale PATH --shared DIR --cache DIR
#
# A catalog of three corpus pairs (two models and psnr on one, XML output on
# another) is cut into 3 segments each and submitted with submit.sh; the
# merged files must be those of one whole run of each pair, byte for byte
# but for the fps line, and VMAF per frame must match libvmaf's golden
# scores.  Then quale merge must refuse a missing part (naming it), a part
# given twice and parts of another cut; and submitting again after a part
# was deleted must recompute that part alone and merge.
#
# The cluster is stopped on every exit, leaving no daemons.  Exits 0 on
# PASS, 1 on FAIL, 77 (skip) when slurm-wlm and munge cannot be installed or
# there is no corpus.
# shellcheck disable=SC2317  # functions called through check and the traps
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
slurm_scripts=$root/scripts/slurm
prog=slurm_test

quale='' shared=${QUALE_SHARED_DIR:-$root/../shared} cache=${QUALE_CORPUS_CACHE:-$root/.cache/corpus}
while (($#)); do
    case $1 in
    --quale) quale=$2; shift 2 ;;
    --shared) shared=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    *) echo "usage: $0 --quale PATH [--shared DIR] [--cache DIR]" >&2; exit 2 ;;
    esac
done
[[ -n $quale && -x $quale ]] || { echo "$prog: no quale binary: '$quale'" >&2; exit 2; }
quale=$(cd "$(dirname "$quale")" && pwd)/$(basename "$quale")
if [[ ! -f $shared/corpus/manifest.json ]]; then
    echo "skip: no corpus at $shared/corpus"
    exit 77
fi
shared=$(cd "$shared" && pwd)
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

started=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/quale-slurm-test.XXXXXX")
cluster=$work/cluster
passed=0
failed=0
failures=()

pass() { passed=$((passed + 1)); echo "ok:   $*"; }
fail() { failed=$((failed + 1)); failures+=("$*"); echo "FAIL: $*"; }
check() { # check WHAT COMMAND...: passes when the command succeeds
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; return 1; fi
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ -f $cluster/slurm.conf ]]; then
        "$slurm_scripts/local-cluster.sh" stop "$cluster" || echo "$prog: stopping the cluster failed" >&2
    fi
    if ((rc == 0)); then
        rm -rf -- "$work"
    else
        echo "$prog: files kept in $work"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

summary() {
    echo
    echo "$prog: $passed passed, $failed failed ($((SECONDS - started)) s)"
    if ((failed)); then
        printf '  failed: %s\n' "${failures[@]}"
        echo "$prog: FAIL"
        exit 1
    fi
    echo "$prog: PASS"
    exit 0
}

# The jobs' logs, for a failure's report.
show_logs() {
    local f
    for f in "$work"/parts/logs/*.out; do
        [[ -f $f ]] || continue
        echo "----- $f"
        tail -n 20 "$f"
    done
}

echo "decoding the corpus into $cache ..."
if ! python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import corpus; corpus.ensure_decoded(sys.argv[2], sys.argv[3])' \
        "$here" "$shared" "$cache"; then
    fail "decoding the corpus"
    summary
fi

"$slurm_scripts/local-cluster.sh" start "$cluster"
rc=$?
if ((rc == 77)); then
    echo "skip: slurm-wlm and munge cannot be installed"
    exit 77
elif ((rc != 0)); then
    fail "starting the local cluster (exit status $rc; its logs above)"
    summary
fi
export SLURM_CONF=$cluster/slurm.conf
pass "local cluster started"

# The catalog: three pairs of the corpus's raw frames, with what the
# manifest says of their format.
python3 - "$shared/corpus/manifest.json" "$cache" "$work" <<'PY'
import csv, json, os, sys
manifest, cache, work = sys.argv[1:]
pairs = {p["name"]: p for p in json.load(open(manifest))}

def raw(name):
    p = pairs[name]
    return (f"-w {p['width']} -h {p['height']} -p {p['vmaf_pixel_format']} "
            f"-b {p['bitdepth']}")

catalog = [
    # The default model, JSON.
    {"ref": os.path.join(cache, pairs["dune_576x324_x264crf28"]["ref_yuv"]),
     "dist": os.path.join(cache, pairs["dune_576x324_x264crf28"]["dis_yuv"]),
     "output": "out/dune_576x324_x264crf28.json", "options": raw("dune_576x324_x264crf28")},
    # Two models and psnr.
    {"ref": os.path.join(cache, pairs["dune_576x324_x264crf42"]["ref_yuv"]),
     "dist": os.path.join(cache, pairs["dune_576x324_x264crf42"]["dis_yuv"]),
     "model": "version=vmaf_v0.6.1",
     "options": raw("dune_576x324_x264crf42") +
                " --feature psnr -m version=vmaf_v0.6.1neg:name=vmaf_neg",
     "output": "out/dune_576x324_x264crf42.json"},
    # 10 bits, 720p, XML.
    {"ref": os.path.join(cache, pairs["storm_720p10_x265crf28"]["ref_yuv"]),
     "dist": os.path.join(cache, pairs["storm_720p10_x265crf28"]["dis_yuv"]),
     "model": "", "options": raw("storm_720p10_x265crf28"),
     "output": "out/storm_720p10_x265crf28.xml"},
]
with open(os.path.join(work, "catalog.json"), "w") as f:
    json.dump(catalog, f, indent=1)
# The same catalog as CSV: both forms must give the same tasks.
with open(os.path.join(work, "catalog.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["ref", "dist", "model", "options", "output"])
    w.writeheader()
    for e in catalog:
        w.writerow(e)
PY
catalog=$work/catalog.json

catalog_py() { python3 "$slurm_scripts/catalog.py" --quale "$quale" "$@"; }
check "the CSV catalog gives the JSON catalog's tasks" \
    cmp -s <(catalog_py tasks "$catalog" --segments 3 --parts-dir "$work/parts") \
           <(catalog_py tasks "$work/catalog.csv" --segments 3 --parts-dir "$work/parts")
printf '[{"ref": "a", "dist": "b", "output": "o.json"}, {"ref": "a", "dist": "c", "output": "o.json"}]' \
    >"$work/bad.json"
catalog_py tasks "$work/bad.json" --segments 3 --parts-dir "$work/parts" >/dev/null 2>&1
check "a catalog with an output twice is refused (exit 2)" test $? -eq 2
printf '[{"ref": "a", "dist": "b", "output": "o.json", "colour": "red"}]' >"$work/bad.json"
catalog_py tasks "$work/bad.json" --segments 3 --parts-dir "$work/parts" >/dev/null 2>&1
check "a catalog with an unknown field is refused (exit 2)" test $? -eq 2
# Another input, output or part in the options, in every spelling getopt
# takes, would make a task score another video or write elsewhere.
for spelling in "-rX" "--refer=X" "--disto X" "-qdX" "--distorted=X" "-o X" "--out=X" \
                "--segm 1/2" "--html X" "--gpu all"; do
    printf '[{"ref": "a", "dist": "b", "output": "o.json", "options": "--feature psnr %s"}]' \
        "$spelling" >"$work/bad.json"
    message=$(catalog_py tasks "$work/bad.json" --segments 3 --parts-dir "$work/parts" 2>&1)
    rc=$?
    check "options holding '$spelling' are refused (exit 2, the flag named)" \
        test $rc -eq 2 -a -n "$(grep -e "may not hold" <<<"$message")"
done
# The merge's flags in other spellings go to the merge, not the tasks.
printf '[{"ref": "a", "dist": "b", "output": "o.json", "options": "--js --prec=6 --feature psnr"}]' \
    >"$work/good.json"
check "--js and --prec=6 go to the merge" \
    grep -q $'merge\t--js\t--prec=6\t-o' \
    <(catalog_py merges "$work/good.json" --segments 2 --parts-dir "$work/parts")
check "--feature psnr goes to the tasks, --js and --prec=6 do not" \
    grep -q $'\t--feature\tpsnr\t-q\t--segment' \
    <(catalog_py tasks "$work/good.json" --segments 2 --parts-dir "$work/parts")

# wait_jobs SECONDS ID...: until squeue no longer lists them.
wait_jobs() {
    local limit=$1 ids
    shift
    ids=$(IFS=,; echo "$*")
    local t0=$SECONDS
    while [[ -n $(squeue -h -j "$ids" 2>/dev/null) ]]; do
        if ((SECONDS - t0 > limit)); then
            echo "$prog: jobs $ids still queued after ${limit}s:"
            squeue -j "$ids"
            return 1
        fi
        sleep 1
    done
}

# job_states ID: the state of each of its records (an array has one a task).
job_states() { scontrol show job -o "$1" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 | sort | uniq -c; }
all_completed() {
    local states
    states=$(scontrol show job -o "$1" | grep -o 'JobState=[A-Z_]*' | sort -u)
    [[ $states == JobState=COMPLETED ]] || { echo "job $1:"; job_states "$1"; return 1; }
}

# submit: submit.sh on the catalog; sets array_jobs and merge_job.
submit() {
    local out
    array_jobs='' merge_job=''
    out=$("$slurm_scripts/submit.sh" "$catalog" --segments 3 --parts-dir "$work/parts" \
              --quale "$quale" --max-parallel 4) || return 1
    eval "$(grep -E '^(array_jobs|merge_job)=[0-9,]+$' <<<"$out")"
    [[ -n $array_jobs && -n $merge_job ]]
}

t_submit=$SECONDS
if ! submit; then
    fail "submitting the catalog"
    summary
fi
pass "submitted: array job $array_jobs, merge job $merge_job"
if ! wait_jobs 600 "$array_jobs" "$merge_job"; then
    fail "the jobs did not finish in time"
    show_logs
    summary
fi
echo "the jobs took $((SECONDS - t_submit)) s"
check "every array task completed" all_completed "$array_jobs" || show_logs
check "the merge job completed" all_completed "$merge_job" || show_logs

# Each pair once whole, with the catalog's own options, against its merged
# file; VMAF per frame against the golden file.
compare_pairs() {
    python3 - "$catalog" "$quale" "$work/single" "$shared/corpus/golden" <<'PY'
import difflib, json, os, re, shlex, subprocess, sys
import xml.etree.ElementTree as ET
catalog, quale, single_dir, golden_dir = sys.argv[1:]
base = os.path.dirname(catalog)
os.makedirs(single_dir, exist_ok=True)
bad = 0

def report(ok, what):
    global bad
    print(("ok:   " if ok else "FAIL: ") + what)
    bad += not ok

def without_fps(path):
    """The file's lines less the run's speed and the provenance's command
    lines and backend (the tasks ran with --segment and --threads 1)."""
    how_run = ('"fps"', "fps=", '"command": [', "<command ", '"backend": [', "<backend ")
    with open(path) as f:
        return [l for l in f if not any(w in l for w in how_run)]

def vmaf_frames(path):
    if path.endswith(".xml"):
        return [float(fr.get("vmaf")) for fr in ET.parse(path).getroot().iter("frame")]
    return [fr["metrics"]["vmaf"] for fr in json.load(open(path))["frames"]]

for e in json.load(open(catalog)):
    merged = os.path.join(base, e["output"])
    name = os.path.splitext(os.path.basename(merged))[0]
    single = os.path.join(single_dir, os.path.basename(merged))
    cmd = [quale, "-r", e["ref"], "-d", e["dist"]]
    if e.get("model"):
        cmd += ["-m", e["model"]]
    cmd += shlex.split(e.get("options", "")) + ["-q", "-o", single]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        report(False, f"{name}: the whole run failed: {shlex.join(cmd)}\n{proc.stderr}")
        continue
    if not os.path.exists(merged):
        report(False, f"{name}: no merged file {merged}")
        continue
    a, b = without_fps(merged), without_fps(single)
    if a == b:
        report(True, f"{name}: merged = whole run ({len(a)} lines but fps)")
    else:
        diff = list(difflib.unified_diff(b, a, "whole run", "merged", n=1))[:20]
        report(False, f"{name}: merged differs from the whole run:\n" + "".join(diff))
    golden = os.path.join(golden_dir, name + ".vmaf.json")
    if os.path.exists(golden):
        want = [fr["metrics"]["vmaf"] for fr in json.load(open(golden))["frames"]]
        got = vmaf_frames(merged)
        worst = max((abs(x - y) for x, y in zip(got, want)), default=0.0)
        report(len(got) == len(want) and worst <= 1e-4,
               f"{name}: VMAF of {len(got)} frames against golden's {len(want)}, "
               f"worst difference {worst:.3g}")
sys.exit(1 if bad else 0)
PY
}
check "every merged file is its pair's whole run" compare_pairs

# merge's refusals, on the first pair's parts.
parts=$work/parts
id=dune_576x324_x264crf28
p1=$parts/$id.part1-of-3.json p2=$parts/$id.part2-of-3.json p3=$parts/$id.part3-of-3.json
refused() { # refused WHAT PATTERN ARGS...: quale merge ARGS must fail, saying PATTERN
    local what=$1 pattern=$2 msg
    shift 2
    msg=$("$quale" merge -o "$work/refused.json" "$@" 2>&1)
    local rc=$?
    echo "      quale merge said (exit $rc): $msg"
    if ((rc == 0)); then
        fail "$what: quale merge succeeded"
    elif [[ -e $work/refused.json ]]; then
        fail "$what: quale merge failed but wrote its output"
    elif ! grep -qiE -- "$pattern" <<<"$msg"; then
        fail "$what: the message does not say /$pattern/"
    else
        pass "$what"
    fi
}
"$quale" -r "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["ref"])' "$catalog")" \
    -d "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["dist"])' "$catalog")" \
    -w 576 -h 324 -p 420 -b 8 -q --segment 1/2 -o "$work/$id.part1-of-2.json" ||
    fail "scoring part 1 of 2 for the overlap check"
rm -f -- "$p2"
refused "a missing part is refused and named" 'missing.*part 2([^0-9]|$)|part 2( of 3)?[^0-9].*missing' "$p1" "$p3"
refused "a part given twice is refused" 'both part 1|twice|more than once|duplicate|overlap' "$p1" "$p1" "$p3"
refused "parts of another cut are refused" 'different count|overlap|other run|cannot be merged' \
    "$work/$id.part1-of-2.json" "$p3"

# Submitting again: the deleted part alone is computed, and the merge runs.
declare -A mtime=()
for f in "$parts"/*.part*.json; do mtime[$f]=$(stat -c %y "$f"); done
rm -f -- "$work/out/$id.json"
t_rerun=$SECONDS
if ! submit; then
    fail "submitting again"
    summary
fi
if ! wait_jobs 600 "$array_jobs" "$merge_job"; then
    fail "the second jobs did not finish in time"
    show_logs
    summary
fi
echo "the second submission took $((SECONDS - t_rerun)) s"
check "again, every array task completed" all_completed "$array_jobs"
check "again, the merge job completed" all_completed "$merge_job"
check "the deleted part is there again" test -s "$p2"
same=1
for f in "${!mtime[@]}"; do
    [[ $(stat -c %y "$f") == "${mtime[$f]}" ]] || { echo "      $f was written again"; same=0; }
done
check "no other part was written again (${#mtime[@]} parts)" test $same -eq 1
ran=$(cat "$parts"/logs/task-"${array_jobs%%,*}"_*.out | grep -c 'done in')
skipped=$(cat "$parts"/logs/task-"${array_jobs%%,*}"_*.out | grep -c 'skipped')
check "one task ran and 8 were skipped (ran $ran, skipped $skipped)" test "$ran" -eq 1 -a "$skipped" -eq 8
check "the merged files are still the whole runs" compare_pairs

# The same catalog as quale batch tasks (submit.sh --batch 2): whole
# pairs, no merge; each output the merged one but for how it was run.
python3 - "$catalog" "$work/batch.json" <<'PY'
import json, sys
pairs = json.load(open(sys.argv[1]))
for p in pairs:
    p["output"] = p["output"].replace("out/", "batch/")
json.dump(pairs, open(sys.argv[2], "w"), indent=1)
PY
out=$("$slurm_scripts/submit.sh" "$work/batch.json" --batch 2 --parts-dir "$work/batch-parts" \
          --quale "$quale") || fail "submitting the catalog as quale batch tasks"
batch_job=$(sed -n 's/^array_jobs=\([0-9]*\)$/\1/p' <<<"$out")
if [[ -n $batch_job ]] && wait_jobs 600 "$batch_job"; then
    check "both quale batch tasks completed" all_completed "$batch_job"
    same_as_merged() {
        python3 - "$catalog" "$work" <<'PY'
import json, os, sys
catalog, work = sys.argv[1:]
how_run = ('"fps"', "fps=", '"command": [', "<command ", '"backend": [', "<backend ")
def lines(path):
    with open(path) as f:
        return [l for l in f if not any(w in l for w in how_run)]
ok = True
for p in json.load(open(catalog)):
    merged = os.path.join(work, p["output"])
    batch = os.path.join(work, p["output"].replace("out/", "batch/"))
    same = os.path.exists(batch) and lines(merged) == lines(batch)
    print(("ok:   " if same else "FAIL: ") + f"{batch} is {merged} but for how it ran")
    ok &= same
sys.exit(0 if ok else 1)
PY
    }
    check "quale batch's outputs are the merged files" same_as_merged
else
    fail "the quale batch tasks did not finish"
    show_logs
fi

summary
