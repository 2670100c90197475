"""A lane's availability says why no Vulkan device is listed: an old release's runtime that offers
none while a Vulkan driver is installed is not told to install the driver it has."""

from __future__ import annotations

from shapefuzz.iree import vulkan_drivers
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.iree.toolchain import ToolchainProbe


def _probe() -> ToolchainProbe:  # a release whose runtime lists only the CPU devices
    flags = frozenset({"--iree-hal-target-device", "--iree-hal-target-backends", "--iree-vulkan-target"})
    return ToolchainProbe("3.0.0", (3, 0), flags, ("local-sync://", "local-task://"), False, frozenset())


def test_installed_driver_blames_the_runtime(tmp_path, monkeypatch):
    (tmp_path / "lvp_icd.x86_64.json").write_text("{}")
    monkeypatch.setattr(vulkan_drivers, "ICD_DIRS", (str(tmp_path),))
    monkeypatch.delenv("VK_DRIVER_FILES", raising=False)
    monkeypatch.delenv("VK_ICD_FILENAMES", raising=False)
    said = BACKENDS["vulkan-spirv"].availability(_probe())
    assert "this release's runtime lists no Vulkan device" in said
    assert "mesa-vulkan-drivers" not in said


def test_no_driver_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(vulkan_drivers, "ICD_DIRS", (str(tmp_path / "none"),))
    monkeypatch.delenv("VK_DRIVER_FILES", raising=False)
    monkeypatch.delenv("VK_ICD_FILENAMES", raising=False)
    assert "install Debian's mesa-vulkan-drivers" in BACKENDS["vulkan-spirv"].availability(_probe())
