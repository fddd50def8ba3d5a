#!/usr/bin/env bash
# Scores a catalog of video pairs on a Slurm cluster, each pair cut into N
# segments (docs/scale-out.md): an array job of one task per (pair, segment),
# then a job that merges each pair's parts into its output file.
#
#   submit.sh CATALOG --segments N [--parts-dir DIR] [--gpu] [--quale PATH]
#             [--partition P] [--max-parallel M] [--cpus-per-task C]
#             [--no-merge] [-- SBATCH_OPTION...]
#   submit.sh CATALOG --batch N [--parts-dir DIR] [--gpu] [--quale PATH]
#             [--partition P] [--max-parallel M] [--cpus-per-task C]
#             [-- SBATCH_OPTION...]
#
#   --batch N           instead of segments: N tasks, each running quale
#                       batch over its share of the pairs (whole pairs, no
#                       merge; the short pairs of a shot-based catalog)
#   --parts-dir DIR     where the parts, task lists and logs go (default:
#                       CATALOG without its extension, plus .parts)
#   --gpu               one GPU per task (--gres=gpu:1); the catalog's
#                       options choose the backend (--backend cuda)
#   --quale PATH        the quale binary on the compute nodes (default:
#                       $QUALE, else quale from the nodes' PATH)
#   --partition P       the partition of both jobs
#   --max-parallel M    at most M tasks at once
#   --cpus-per-task C   CPUs of each task (its quale gets --threads C)
#   --no-merge          the array alone (to redo missing parts and merge
#                       later)
#   -- SBATCH_OPTION... given to both sbatch calls (--account, --time ...)
#
# Prints array_jobs=ID[,ID...] and merge_job=ID on stdout.  Submitting the
# same catalog again recomputes only the parts that are missing: a task
# whose part exists ends at once.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "$prog: error: $*" >&2; exit 1; }
usage() {
    sed -n '/^#   submit.sh/,/^#   -- SBATCH/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 2
}

catalog='' segments='' batch='' parts_dir='' gpu=0 quale=${QUALE:-} partition='' max_parallel='' cpus='' merge=1
extra=()
while (($#)); do
    case $1 in
    --segments) segments=${2:-}; shift 2 || usage ;;
    --batch) batch=${2:-}; shift 2 || usage ;;
    --parts-dir) parts_dir=${2:-}; shift 2 || usage ;;
    --gpu) gpu=1; shift ;;
    --quale) quale=${2:-}; shift 2 || usage ;;
    --partition) partition=${2:-}; shift 2 || usage ;;
    --max-parallel) max_parallel=${2:-}; shift 2 || usage ;;
    --cpus-per-task) cpus=${2:-}; shift 2 || usage ;;
    --no-merge) merge=0; shift ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) usage ;;
    -*) echo "$prog: unknown option $1" >&2; usage ;;
    *) [[ -z $catalog ]] || usage; catalog=$1; shift ;;
    esac
done
[[ -n $catalog && (-n $segments || -n $batch) ]] || usage
[[ -z $segments || -z $batch ]] || die "--segments or --batch, not both"
[[ -z $segments || $segments =~ ^[1-9][0-9]*$ ]] ||
    die "--segments wants a number of 1 or more, not '$segments'"
[[ -z $batch || $batch =~ ^[1-9][0-9]*$ ]] || die "--batch wants a number of 1 or more, not '$batch'"
[[ -z $max_parallel || $max_parallel =~ ^[1-9][0-9]*$ ]] ||
    die "--max-parallel wants a number of 1 or more, not '$max_parallel'"
[[ -z $cpus || $cpus =~ ^[1-9][0-9]*$ ]] || die "--cpus-per-task wants a number of 1 or more"
[[ -f $catalog ]] || die "no catalog $catalog"
for c in sbatch scontrol python3; do
    command -v "$c" >/dev/null || die "$c not found (a Slurm client and python3 are needed)"
done

[[ -n $parts_dir ]] || parts_dir=${catalog%.*}.parts
# A path given with a slash is made absolute: the jobs need not start in
# this directory.  A bare name is looked up in the nodes' PATH.
if [[ $quale == */* && -d $(dirname -- "$quale") ]]; then
    quale=$(cd -- "$(dirname -- "$quale")" && pwd)/$(basename -- "$quale")
fi
if [[ -z $quale ]]; then
    quale=quale
fi
# The catalog's options are read by quale's own parser (quale
# check-options), so the same quale must run here.
command -v "$quale" >/dev/null ||
    die "$quale is not found here: the catalog's options are checked with it (--quale PATH)"
export QUALE=$quale
if [[ -n $batch ]]; then
    # quale batch reads and checks the catalog itself; its outputs are whole.
    "$quale" batch --list "$catalog" >/dev/null || exit 2
    catalog=$(cd -- "$(dirname -- "$catalog")" && pwd)/$(basename -- "$catalog")
    [[ -n $parts_dir ]] || parts_dir=${catalog%.*}.parts
    mkdir -p -- "$parts_dir/logs"
    task_opts=(--output="$parts_dir/logs/batch-%A_%a.out")
    ((gpu == 0)) || task_opts+=(--gres=gpu:1)
    [[ -z $cpus ]] || task_opts+=(--cpus-per-task="$cpus")
    [[ -z $partition ]] || task_opts+=(--partition="$partition")
    id=$(sbatch --parsable --array="0-$((batch - 1))${max_parallel:+%$max_parallel}" \
             "${task_opts[@]}" "${extra[@]}" "$here/quale-batch.sbatch" "$catalog" "$batch") ||
        die "sbatch of the batch array failed"
    id=${id%%;*}
    echo "$prog: array job $id: $batch tasks, each quale batch --share K/$batch" >&2
    echo "array_jobs=$id"
    exit 0
fi
# The catalog checked before anything is made of it.
python3 "$here/catalog.py" merges "$catalog" --segments "$segments" --parts-dir "$parts_dir" \
    --quale "$quale" >/dev/null || exit 2
mkdir -p -- "$parts_dir/logs"
parts_dir=$(cd -- "$parts_dir" && pwd)

# The lists are named by their content: submitting an unchanged catalog
# again reuses them, and a changed one gets new files instead of changing
# the lines under an array that is still running.
write_list() {
    local what=$1 tmp sum file
    tmp=$(mktemp "$parts_dir/.$what.XXXXXX")
    if ! python3 "$here/catalog.py" "$what" "$catalog" --segments "$segments" \
            --parts-dir "$parts_dir" --quale "$quale" >"$tmp"; then
        rm -f -- "$tmp"
        exit 2
    fi
    sum=$(sha1sum <"$tmp" | cut -c1-12)
    file=$parts_dir/$what-$sum.tsv
    if [[ -e $file ]]; then rm -f -- "$tmp"; else chmod 644 -- "$tmp"; mv -- "$tmp" "$file"; fi
    echo "$file"
}
tasks=$(write_list tasks)
merges=$(write_list merges)
ntasks=$(wc -l <"$tasks")
npairs=$(wc -l <"$merges")
echo "$prog: $npairs pairs x $segments segments = $ntasks tasks ($tasks)" >&2

common=()
[[ -z $partition ]] || common+=(--partition="$partition")
common+=("${extra[@]}")

# An array holds at most MaxArraySize - 1 as its highest index: a longer
# list is cut into several arrays, each given its offset into the list, and
# the limit on tasks at once is shared among them.
max_array=$(scontrol show config 2>/dev/null | sed -n 's/^MaxArraySize *= *\([0-9]*\).*/\1/p')
[[ $max_array =~ ^[0-9]+$ && $max_array -gt 0 ]] || max_array=1001
# QUALE_SUBMIT_CHUNK: a smaller cut, for testing the cut on a small list.
chunk=${QUALE_SUBMIT_CHUNK:-$max_array}
nchunks=$(((ntasks + chunk - 1) / chunk))
throttle=
if [[ -n $max_parallel ]]; then
    throttle=$((max_parallel / nchunks))
    ((throttle >= 1)) || throttle=1
fi
task_opts=(--output="$parts_dir/logs/task-%A_%a.out")
((gpu == 0)) || task_opts+=(--gres=gpu:1)
[[ -z $cpus ]] || task_opts+=(--cpus-per-task="$cpus")

array_ids=()
for ((offset = 0; offset < ntasks; offset += chunk)); do
    n=$((ntasks - offset < chunk ? ntasks - offset : chunk))
    spec=0-$((n - 1))${throttle:+%$throttle}
    id=$(sbatch --parsable --array="$spec" "${task_opts[@]}" "${common[@]}" \
             "$here/quale-task.sbatch" "$tasks" "$offset") ||
        die "sbatch of the task array (tasks $offset to $((offset + n - 1))) failed"
    id=${id%%;*}
    array_ids+=("$id")
    echo "$prog: array job $id: tasks $offset to $((offset + n - 1))${throttle:+, at most $throttle at once}" >&2
done
(
    IFS=,
    echo "array_jobs=${array_ids[*]}"
)

if ((merge)); then
    # afterany, not afterok: after a failed task the merge still runs, and
    # fails naming the missing parts, instead of waiting forever.
    dep=afterany$(printf ':%s' "${array_ids[@]}")
    id=$(sbatch --parsable --dependency="$dep" --output="$parts_dir/logs/merge-%j.out" \
             "${common[@]}" "$here/quale-merge.sbatch" "$merges") ||
        die "sbatch of the merge job failed"
    id=${id%%;*}
    echo "$prog: merge job $id after ${array_ids[*]} ($merges)" >&2
    echo "merge_job=$id"
fi
