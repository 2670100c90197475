"""Whether a Vulkan driver (an ICD) is installed on this machine, to say why a runtime lists no
Vulkan device: with none installed, installing Mesa's gives the software device; with one
installed, the runtime at hand is what offers none (an old release's runtime does not find it)."""

from __future__ import annotations

import os
from pathlib import Path

# where the Vulkan loader looks for ICD manifests (Linux), in its own order
ICD_DIRS = ("/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d", "/usr/share/vulkan/icd.d")


def vulkan_driver_installed(dirs: tuple[str, ...] | None = None) -> bool:
    """An ICD manifest is in one of `dirs` (ICD_DIRS) or named by VK_DRIVER_FILES / VK_ICD_FILENAMES."""
    named = [p for var in ("VK_DRIVER_FILES", "VK_ICD_FILENAMES")
             for p in os.environ.get(var, "").split(os.pathsep) if p]
    if any(Path(p).is_file() for p in named):
        return True
    return any(Path(d).is_dir() and any(Path(d).glob("*.json")) for d in (ICD_DIRS if dirs is None else dirs))


def no_vulkan_device_note(dirs: tuple[str, ...] | None = None) -> str:
    """Why no Vulkan device is listed, as a parenthesis to "no vulkan device"."""
    if vulkan_driver_installed(dirs):
        return "this release's runtime lists no Vulkan device, though a Vulkan driver is installed"
    return "install Debian's mesa-vulkan-drivers"
