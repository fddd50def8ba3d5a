# Sourced by the device scripts: the Vulkan loader from .gl/*.deb where it
# was carried (the GPU machine has none of its own), and VK_DRIVER_FILES
# pointed at NVIDIA's driver manifest where it is not set.
if compgen -G ".gl/*.deb" >/dev/null; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
if [[ -z ${VK_DRIVER_FILES:-} ]]; then
    icd=$(find /usr/local/nvidia /usr/share/vulkan /etc/vulkan -name 'nvidia_icd*.json' 2>/dev/null | head -1)
    [[ -n $icd ]] && export VK_DRIVER_FILES=$icd
fi
