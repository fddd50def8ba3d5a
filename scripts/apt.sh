# Sourced by the project's scripts: Debian's packages, installed where they
# are missing, or fetched through an apt setup of the script's own.

# apt_install PACKAGE...: installs them (through sudo when not root),
# quietly; nothing when none is named.
apt_install() {
    (($#)) || return 0
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    # One install at a time: tests that install their tools (Slurm, Chromium,
    # FFmpeg's build) run side by side, and apt takes its locks without
    # waiting.  Others' apt runs are waited for too (DPkg::Lock::Timeout).
    (
        flock 9
        "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
        "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
            --no-install-recommends "$@" >/dev/null
    ) 9>"${TMPDIR:-/tmp}/quale-apt.lock"
}

# apt_private DIR: an apt setup in DIR (its sources in DIR/sources.list,
# written by the caller; the machine's own sources and package lists are
# left alone), for `apt-get "${apt_opts[@]}" ...`.
apt_private() {
    mkdir -p "$1/lists/partial"
    apt_opts=(-o "Dir::Etc::SourceList=$1/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o "Dir::State::Lists=$1/lists" -o Debug::NoLocking=1)
}
