#!/usr/bin/env bash
# Sets up shapefuzz on a fresh Debian machine: the software Vulkan driver (when root), a virtual
# environment in .venv with the pinned wheels, and shapefuzz itself. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_UPDATED=
apt_install() {  # Debian packages, when root (fails otherwise, and the caller says what that means)
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "bootstrap: installing Debian's $*"
        [ -n "$APT_UPDATED" ] || { apt-get update -qq; APT_UPDATED=1; }
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
    else
        return 1
    fi
}

if ! ldconfig -p 2>/dev/null | grep -q libvulkan.so.1 || ! ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
    if ! apt_install mesa-vulkan-drivers libvulkan1; then  # the software Vulkan device
        echo "bootstrap: note: not root, so the software Vulkan driver (mesa-vulkan-drivers) was not installed;" \
             "shapefuzz will compile for Vulkan but run only on the CPU backends" >&2
    fi
fi

# The dashboard's tests open report.html in Debian's headless Chromium (driven through its
# chromedriver) and read the live view's screen in tmux; nothing is downloaded at test time.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null || ! command -v tmux >/dev/null; then
    if ! apt_install chromium chromium-driver tmux; then
        echo "bootstrap: note: chromium, chromium-driver and tmux were not installed (not root, or apt-get failed);" \
             "the tests that look at report.html and the live view will be skipped, saying why" >&2
    fi
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
