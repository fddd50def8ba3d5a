#!/usr/bin/env bash
# Installs what building and testing quale needs, if it is missing, from
# Debian's packages.  Safe to run again: it installs nothing that is there.
#
#   scripts/bootstrap.sh            build tools (meson, ninja, a C compiler,
#                                   glslc + the Vulkan headers for the Vulkan backend,
#                                   hipcc for the kernels' AMD code objects,
#                                   FFmpeg's libraries for compressed input
#                                   and --vf's filter graphs)
#   scripts/bootstrap.sh --test     also what the tests use (python3, ffmpeg, and
#                                   Mesa's lavapipe, a Vulkan device on the CPU)
# The CUDA backend is built when nvcc is there (it is not installed here:
# it comes with the CUDA toolkit).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

want_tests=0
[[ ${1:-} == --test ]] && want_tests=1

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have meson || need+=(meson)
have ninja || need+=(ninja-build)
have cc || need+=(gcc)
have pkg-config || need+=(pkg-config)
have c++ || need+=(g++)               # the public header's C++ test
have glslc || need+=(glslc)
[[ -f /usr/include/vulkan/vulkan.h ]] || need+=(libvulkan-dev)
# The kernels are also built as AMD code objects (HIP: hipcc, clang with
# the AMDGPU targets, ROCm's device libraries).
have hipcc || need+=(hipcc libamdhip64-dev rocm-device-libs)
# Compressed input (mp4, mkv, ...) is decoded with FFmpeg's libraries;
# --vf's filter graphs run through libavfilter.
for lib in libavformat libavcodec libavutil libswscale libavfilter; do
    pkg-config --exists "$lib" 2>/dev/null || need+=("$lib-dev")
done
if ((want_tests)); then
    have python3 || need+=(python3)
    have ffmpeg || need+=(ffmpeg)     # decodes the shared test corpus
    have valgrind || need+=(valgrind) # scripts/sanitize.sh
    ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || need+=(mesa-vulkan-drivers)
fi

((${#need[@]})) || exit 0
echo "bootstrap: installing ${need[*]}" >&2
apt_install "${need[@]}"
