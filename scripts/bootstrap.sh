#!/usr/bin/env bash
# Sets up shapefuzz on a fresh Debian machine: the software Vulkan driver (when root), a virtual
# environment in .venv with the pinned wheels, and shapefuzz itself. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! ldconfig -p 2>/dev/null | grep -q libvulkan.so.1 || ! ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "bootstrap: installing Debian's mesa-vulkan-drivers (software Vulkan device)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null
    else
        echo "bootstrap: note: not root, so the software Vulkan driver (mesa-vulkan-drivers) was not installed;" \
             "shapefuzz will compile for Vulkan but run only on the CPU backends" >&2
    fi
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
