#!/usr/bin/env bash
# Installs what building and testing quale needs, if it is missing, from
# Debian's packages.  Safe to run again: it installs nothing that is there.
#
#   scripts/bootstrap.sh            build tools (meson, ninja, a C compiler,
#                                   glslc + the Vulkan headers for the Vulkan backend,
#                                   hipcc for the kernels' AMD code objects,
#                                   FFmpeg's libraries for compressed input
#                                   and --vf's filter graphs)
#   scripts/bootstrap.sh --test     also what the tests use (python3, ffmpeg,
#                                   Mesa's lavapipe, a Vulkan device on the CPU,
#                                   numpy and meson-python for the Python package)
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
# The Python package (python/quale): Debian's interpreter and its headers.
debian_has() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
debian_has python3-dev || need+=(python3-dev)
for lib in libavformat libavcodec libavutil libswscale libavfilter; do
    pkg-config --exists "$lib" 2>/dev/null || need+=("$lib-dev")
done
if ((want_tests)); then
    have python3 || need+=(python3)
    have ffmpeg || need+=(ffmpeg)     # decodes the shared test corpus
    have valgrind || need+=(valgrind) # scripts/sanitize.sh
    ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || need+=(mesa-vulkan-drivers)
    # The Python package's tests: numpy frames, Result.to_pandas(), and pip installing the
    # source tree in a venv through meson-python.
    # (meson-python needs patchelf for the shared libraries the wheel carries.)
    for pkg in python3-numpy python3-pandas python3-venv python3-pip python3-mesonpy patchelf; do
        debian_has "$pkg" || need+=("$pkg")
    done
fi

((${#need[@]})) || exit 0
echo "bootstrap: installing ${need[*]}" >&2
apt_install "${need[@]}"
