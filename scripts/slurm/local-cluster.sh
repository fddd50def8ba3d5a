#!/usr/bin/env bash
# A private single-node Slurm cluster on this machine, for trying and testing
# the scale-out scripts (docs/scale-out.md) without a real cluster:
#
#   local-cluster.sh start DIR   start munged, slurmctld and slurmd, wait until
#                                the node is idle, print the env line
#   local-cluster.sh env DIR     print the line to eval for sbatch, squeue, ...
#   local-cluster.sh stop DIR    cancel its jobs, stop the daemons, wait for them
#
# Everything lives under DIR (munge key and socket, slurm.conf, state, spool,
# logs, pid files) so that /etc/slurm, /etc/munge and the system's services
# are never touched, and two clusters in two directories do not meet: each
# gets its own ports and munge socket.  Debian's slurm-wlm and munge are
# installed when missing; start exits 77 when they cannot be.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "$prog: error: $*" >&2; exit 1; }

usage() {
    echo "usage: $prog start|stop|env DIR" >&2
    exit 2
}

(($# == 2)) || usage
action=$1
[[ $action == start || $action == stop || $action == env ]] || usage
[[ $action != start ]] || mkdir -p -- "$2"
[[ -d $2 ]] || die "no such directory: $2"
dir=$(cd -- "$2" && pwd)

conf=$dir/slurm.conf
munge_dir=$dir/munge
socket=$munge_dir/munge.socket
run_dir=$dir/run
log_dir=$dir/log
# Set in the environment of the daemons it starts: slurmstepd inherits it
# from slurmd, so stop finds the steps of this cluster (and only those) if
# slurmd died before they ended.
marker="QUALE_LOCAL_CLUSTER=$dir"
start_timeout=${QUALE_SLURM_START_TIMEOUT:-90}

env_line() { printf 'export SLURM_CONF=%q\n' "$conf"; }

# pid_of NAME PIDFILE: the pid in PIDFILE if that process is alive and is
# NAME (a pid file left by a crash may name a pid reused by another program).
pid_of() {
    local name=$1 file=$2 pid comm
    [[ -s $file ]] || return 1
    pid=$(tr -dc '0-9' <"$file")
    [[ -n $pid && -r /proc/$pid/comm ]] || return 1
    comm=$(<"/proc/$pid/comm") || return 1
    [[ $comm == "$name" ]] || return 1
    echo "$pid"
}

# wait_gone PID SECONDS: 0 once PID has exited, 1 if it outlives SECONDS.
wait_gone() {
    local pid=$1 i
    for ((i = 0; i < $2 * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

# end PID WHAT: SIGTERM, then SIGKILL if it is still there after 20 s.
end() {
    local pid=$1 what=$2
    kill -TERM "$pid" 2>/dev/null || return 0
    if ! wait_gone "$pid" 20; then
        echo "$prog: $what ($pid) ignored SIGTERM; killing it" >&2
        kill -KILL "$pid" 2>/dev/null || true
        wait_gone "$pid" 5 || echo "$prog: $what ($pid) is still there" >&2
    fi
}

# The processes whose environment carries this cluster's marker (slurmstepd,
# once slurmd is gone) and all their descendants (the jobs' processes, whose
# environment is the submitter's).
marked_pids() {
    local f pid
    local -A parent=()
    local -a found=()
    for f in /proc/[0-9]*/stat; do
        pid=${f#/proc/}
        pid=${pid%/stat}
        [[ $pid != "$$" && $pid != "$BASHPID" ]] || continue
        # Field 4 of stat is the parent; the command before it is in
        # parentheses and may hold spaces.
        parent[$pid]=$(sed 's/.*) [A-Za-z] \([0-9]*\).*/\1/' "$f" 2>/dev/null) || continue
        tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -qxF -- "$marker" && found+=("$pid")
    done
    local -A seen=()
    local changed=1 p
    for pid in "${found[@]}"; do seen[$pid]=1; done
    while ((changed)); do
        changed=0
        for pid in "${!parent[@]}"; do
            p=${parent[$pid]}
            if [[ -z ${seen[$pid]:-} && -n $p && -n ${seen[$p]:-} ]]; then
                seen[$pid]=1
                changed=1
            fi
        done
    done
    ((${#seen[@]} == 0)) || printf '%s\n' "${!seen[@]}"
}

stop_cluster() {
    local pid name pids
    # Jobs first, while slurmctld can still cancel them: a step killed with
    # its daemons gone would be left running.
    if pid_of slurmctld "$run_dir/slurmctld.pid" >/dev/null && [[ -f $conf ]]; then
        SLURM_CONF=$conf scancel --quiet --user="$(id -un)" 2>/dev/null || true
        local i
        for ((i = 0; i < 30; i++)); do
            [[ -z $(SLURM_CONF=$conf squeue -h -o %i 2>/dev/null) ]] && break
            sleep 1
        done
    fi
    # Both told at once: each takes a second or two to shut down.
    local -a daemons=()
    for name in slurmd slurmctld; do
        if pid=$(pid_of "$name" "$run_dir/$name.pid"); then
            kill -TERM "$pid" 2>/dev/null || true
            daemons+=("$pid:$name")
        fi
    done
    for pid in "${daemons[@]}"; do
        end "${pid%%:*}" "${pid#*:}"
    done
    rm -f -- "$run_dir/slurmd.pid" "$run_dir/slurmctld.pid"
    pids=$(marked_pids)
    if [[ -n $pids ]]; then
        for pid in $pids; do
            end "$pid" "process of this cluster"
        done
    fi
    if pid=$(pid_of munged "$munge_dir/munged.pid"); then
        end "$pid" munged
    fi
    rm -f -- "$munge_dir/munged.pid" "$socket" "$socket.lock"
}

show_logs() {
    local f
    for f in "$munge_dir/munged.log" "$log_dir/slurmctld.log" "$log_dir/slurmd.log"; do
        [[ -f $f ]] || continue
        echo "----- $f (last 40 lines)" >&2
        tail -n 40 -- "$f" >&2
    done
}

# Fails the start: the logs, then whatever did start is stopped again.
start_failed() {
    echo "$prog: error: $*" >&2
    show_logs
    stop_cluster
    exit 1
}

need_packages() {
    local c missing=0
    for c in munged mungekey slurmctld slurmd sinfo sbatch squeue scontrol scancel; do
        command -v "$c" >/dev/null 2>&1 || missing=1
    done
    ((missing == 0)) && return 0
    echo "$prog: installing slurm-wlm and munge ..." >&2
    # shellcheck source=scripts/apt.sh
    source "$here/../apt.sh"
    # The packages would start the system's munged, slurmctld and slurmd
    # (with /etc's key and configuration): a policy that refuses service
    # starts is in place while they install, unless the machine has one.
    local policy=/usr/sbin/policy-rc.d placed=0 installed=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh
# placed by quale local-cluster.sh while installing
exit 101
' >"$policy" &&
            chmod 755 "$policy" && placed=1
    fi
    apt_install slurm-wlm munge && installed=1
    ((placed)) && rm -f "$policy"
    if ((installed == 0)); then
        echo "$prog: cannot install slurm-wlm and munge (Debian packages); no local cluster" >&2
        exit 77
    fi
    for c in munged mungekey slurmctld slurmd sinfo sbatch squeue scontrol scancel; do
        if ! command -v "$c" >/dev/null 2>&1; then
            echo "$prog: $c is missing after installing slurm-wlm and munge; no local cluster" >&2
            exit 77
        fi
    done
}

# Two free TCP ports below Linux's ephemeral range (32768 up), where an
# outgoing connection will not take them between now and the daemons' start.
free_ports() {
    python3 - <<'PY'
import random, socket
ports = []
for port in random.sample(range(20000, 32000), 400):
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", port))
    except OSError:
        continue
    finally:
        s.close()
    ports.append(port)
    if len(ports) == 2:
        break
print(*ports)
PY
}

write_conf() {
    local host=$1 ctld_port=$2 slurmd_port=$3 hw node mem gpus=0 gres=
    # The node as slurmd sees the hardware (CPUs, boards, sockets, cores,
    # threads), with RealMemory 5% below what it reports: a node that
    # declares more memory than it registers is drained.
    hw=$(slurmd -C | head -n 1) || return 1
    mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")
    [[ -n $mem ]] || return 1
    node=$(tr ' ' '\n' <<<"$hw" | grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=' |
           tr '\n' ' ')
    # The GPUs, so that submit.sh --gpu (--gres=gpu:1) is scheduled here: one
    # per NVIDIA device file.  QUALE_SLURM_GPUS=N declares N stand-ins
    # instead, to try the --gres path on a machine without GPUs: Slurm
    # wants a character device per GPU, so each is a copy of /dev/null.
    rm -rf -- "$dir/gres.conf" "$dir/fake-gpu"
    local d k
    if [[ -n ${QUALE_SLURM_GPUS:-} ]]; then
        [[ $QUALE_SLURM_GPUS =~ ^[0-9]+$ ]] || return 1
        for ((k = 0; k < QUALE_SLURM_GPUS; k++)); do
            mkdir -p -- "$dir/fake-gpu"
            mknod "$dir/fake-gpu/$k" c 1 3 || return 1
            echo "Name=gpu File=$dir/fake-gpu/$k" >>"$dir/gres.conf"
            gpus=$((gpus + 1))
        done
    else
        for d in /dev/nvidia[0-9]*; do
            [[ -c $d ]] || continue
            echo "Name=gpu File=$d" >>"$dir/gres.conf"
            gpus=$((gpus + 1))
        done
    fi
    ((gpus == 0)) || gres="Gres=gpu:$gpus "
    # slurmd reads gres.conf from slurm.conf's directory.
    cat >"$conf" <<EOF
# A private single-node cluster written by scripts/slurm/local-cluster.sh.
ClusterName=qualelocal
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$run_dir/slurmctld.pid
SlurmdPidFile=$run_dir/slurmd.pid
SlurmctldLogFile=$log_dir/slurmctld.log
SlurmdLogFile=$log_dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
SelectType=select/cons_tres
# Cores only: with memory a consumable, a job without --mem takes the node's
# whole memory and the array's tasks would run one at a time.
SelectTypeParameters=CR_Core
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
# Finished jobs stay visible to scontrol for an hour: there is no accounting
# database to ask afterwards.
MinJobAge=3600
$( ((gpus == 0)) || echo GresTypes=gpu)
NodeName=$host NodeAddr=127.0.0.1 ${node}${gres}RealMemory=$((mem * 95 / 100)) State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start_cluster() {
    local host i state ctld_port slurmd_port
    if pid_of slurmctld "$run_dir/slurmctld.pid" >/dev/null ||
       pid_of munged "$munge_dir/munged.pid" >/dev/null; then
        die "a cluster is already running in $dir (stop it first: $prog stop $dir)"
    fi
    # slurmd starts the jobs as their users, and the key and the pid files
    # are root's.
    [[ $(id -u) -eq 0 ]] || die "a local cluster needs root (slurmd runs the jobs as their users)"
    need_packages
    # A unix socket's path holds at most 107 bytes.
    ((${#socket} < 100)) || die "DIR is too long for munge's socket path: $socket"
    host=$(hostname -s)
    mkdir -p -- "$munge_dir" "$run_dir" "$log_dir" "$dir/state" "$dir/spool"
    # The key's directory is searchable by all (the jobs' users reach the
    # socket through it) and writable by its owner alone, as munged wants.
    chmod 711 -- "$dir" "$munge_dir"

    [[ -s $munge_dir/munge.key ]] ||
        mungekey --create --keyfile="$munge_dir/munge.key" ||
        die "mungekey could not write $munge_dir/munge.key"
    chmod 600 -- "$munge_dir/munge.key"
    # --force: munged also refuses a directory above its files that others
    # may write to (without the sticky bit), which DIR's parents may be.
    munged --force --key-file="$munge_dir/munge.key" --socket="$socket" \
        --pid-file="$munge_dir/munged.pid" --log-file="$munge_dir/munged.log" \
        --seed-file="$munge_dir/munged.seed" ||
        start_failed "munged did not start"
    for ((i = 0; i < 50; i++)); do
        [[ -S $socket ]] && break
        sleep 0.1
    done
    [[ -S $socket ]] || start_failed "munged did not create its socket $socket"

    read -r ctld_port slurmd_port < <(free_ports) || true
    [[ -n ${slurmd_port:-} ]] || start_failed "found no free TCP ports for slurmctld and slurmd"
    write_conf "$host" "$ctld_port" "$slurmd_port" || start_failed "could not write $conf"

    export SLURM_CONF=$conf
    slurmctld -f "$conf" || start_failed "slurmctld did not start"
    env "$marker" slurmd -f "$conf" || start_failed "slurmd did not start"

    state=
    for ((i = 0; i < start_timeout * 2; i++)); do
        state=$(sinfo -h -N -n "$host" -o %T 2>/dev/null || true)
        [[ $state == idle ]] && break
        # A node that registers with less than slurm.conf declares is set
        # invalid or drained at once and stays so: no use waiting.
        [[ $state != inval && $state != drain* ]] ||
            start_failed "node $host registered as '$state' (see slurmctld.log)"
        pid_of slurmctld "$run_dir/slurmctld.pid" >/dev/null || ((i < 10)) ||
            start_failed "slurmctld exited"
        pid_of slurmd "$run_dir/slurmd.pid" >/dev/null || ((i < 10)) ||
            start_failed "slurmd exited"
        sleep 0.5
    done
    [[ $state == idle ]] ||
        start_failed "node $host not idle after ${start_timeout}s (state: ${state:-none})"
    echo "$prog: cluster up in $dir (node $host, slurmctld port $ctld_port, slurmd port $slurmd_port)"
    echo "$prog: for sbatch, squeue, ...:"
    env_line
}

case $action in
start) start_cluster ;;
stop) stop_cluster ;;
env)
    [[ -f $conf ]] || die "no cluster in $dir (no slurm.conf)"
    env_line
    ;;
esac
