#!/usr/bin/env bash
# Builds quale with its HIP backend on HIP's NVIDIA platform: the kernel
# sources through nvcc with HIP's NVIDIA headers, and the HIP runtime table
# over those headers' functions (which call CUDA).  `--backend hip` of this
# build runs on NVIDIA GPUs; the build is for checking the HIP backend on
# the GPU machines quale is measured on (scripts/device/gpu_check.sh
# --backends hip), not for users, and it links the NVIDIA driver.
#
#   scripts/hip-nvidia-build.sh BUILD_DIR
#
# HIP's NVIDIA headers in Debian 12 (libamdhip64-dev, ROCm 5.2) predate
# CUDA 12.x and 13's changes (cudaDeviceProp members, texture references),
# so the toolkit is Debian 12's own CUDA 11.8 (nvidia-cuda-toolkit and
# nvidia-cuda-dev from bookworm's non-free component), unpacked into
# BUILD_DIR/cuda-11.8 through a private apt setup (the machine's own
# sources and packages are left alone), with clang 14 as nvcc's host
# compiler (CUDA 11.8 refuses GCC 12).  The quale tool is
# BUILD_DIR/build/tools/quale; the script prints that path last.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
out=$(mkdir -p "${1:?usage: scripts/hip-nvidia-build.sh BUILD_DIR}" && cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)

need=()
command -v clang++-14 >/dev/null || need+=(clang-14)
command -v meson >/dev/null || need+=(meson)
command -v ninja >/dev/null || need+=(ninja-build)
[[ -e /usr/include/hip/nvidia_detail/nvidia_hip_runtime_api.h ]] || need+=(libamdhip64-dev)
apt_install "${need[@]}"

cuda=$out/cuda-11.8
root=$cuda/root
if [[ ! -x $root/usr/lib/nvidia-cuda-toolkit/bin/nvcc ]]; then
    apt_private "$cuda/apt"
    mkdir -p "$cuda/debs"
    echo "deb http://deb.debian.org/debian bookworm main contrib non-free" >"$cuda/apt/sources.list"
    apt-get "${apt_opts[@]}" update -qq
    (cd "$cuda/debs" && apt-get "${apt_opts[@]}" download -qq nvidia-cuda-toolkit nvidia-cuda-dev libnvvm4)
    rm -rf "$root"
    for deb in "$cuda"/debs/*.deb; do dpkg -x "$deb" "$root"; done
    # nvcc's profile: the unpacked tree instead of /usr
    profile=$root/usr/lib/nvidia-cuda-toolkit/bin/nvcc.profile
    rm -f "$profile"
    cat >"$profile" <<EOF
NVVMIR_LIBRARY_DIR = $root/usr/lib/nvidia-cuda-toolkit/libdevice
PATH += $root/usr/lib/nvidia-cuda-toolkit/bin:$root/usr/bin:
INCLUDES += "-I$root/usr/include" \$(_SPACE_)
LIBRARIES =+ \$(_SPACE_) -L$root/usr/lib/x86_64-linux-gnu
EOF
fi

export PATH=$root/usr/lib/nvidia-cuda-toolkit/bin:$PATH
if [[ ! -f $out/build/build.ninja ]]; then
    meson setup "$out/build" "$src" -Dbuildtype=release -Dcuda=enabled -Dhip=enabled \
        -Dhip_platform=nvidia -Dvulkan=disabled \
        -Dnvcc_include="$root/usr/include" -Dnvcc_lib="$root/usr/lib/x86_64-linux-gnu" \
        -Dnvcc_host_compiler=clang++-14 >"$out/setup.log"
fi
ninja -C "$out/build" tools/quale tools/quale-bench tests/gpu_parity >"$out/build.log"
echo "$out/build/tools/quale"
