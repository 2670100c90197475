import pytest

from shapefuzz.iree.backends import BACKENDS, resolve_backends
from shapefuzz.errors import ToolchainError, UsageError
from shapefuzz.iree.toolchain import find_toolchain, parse_version
from support.fakes import make_fake_toolchain


def test_aliases_expand_and_duplicates_collapse():
    assert resolve_backends("cpu,llvm-cpu") == ("llvm-cpu", "vmvx")
    assert set(resolve_backends(["rocm"])) == {"rocm-gfx942", "rocm-gfx90a", "rocm-gfx1100"}


def test_unknown_backend_suggests_the_closest():
    with pytest.raises(UsageError, match="did you mean 'vulkan-spirv'"):
        resolve_backends("vulkan-spriv")


def test_parse_version():
    assert parse_version("IREE compiler version 3.13.0rc20261016 @ 89ece") == ("3.13.0rc20261016", (3, 13))
    assert parse_version("garbage") == ("unknown", (0, 0))


@pytest.mark.iree
def test_real_toolchain_probe(toolchain):
    probe = toolchain.probe
    assert probe.release == (3, 13)
    assert probe.has_flag("--iree-rocm-target") and not probe.has_flag("--iree-hip-target")
    assert probe.has_device("local-task")
    assert BACKENDS["rocm-gfx942"].compile_flags(probe)[-1] == "--iree-rocm-target=gfx942"
    assert BACKENDS["llvm-cpu"].executes(probe) and not BACKENDS["rocm-gfx942"].executes(probe)


def test_old_release_uses_the_hip_target_flag(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = make_fake_toolchain(tmp_path / "bin", "ok", version="3.10.0",
                                 flags=["--iree-hal-target-device", "--iree-hip-target"])
    probe = find_toolchain(folder).probe
    assert probe.release == (3, 10)
    assert BACKENDS["rocm-gfx90a"].compile_flags(probe) == ("--iree-hal-target-device=hip", "--iree-hip-target=gfx90a")
    assert not BACKENDS["cuda-sm80"].compiles(probe)


def test_iree_bin_errors_name_the_problem(tmp_path):
    with pytest.raises(ToolchainError, match="no such folder"):
        find_toolchain(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ToolchainError, match="no executable iree-compile"):
        find_toolchain(tmp_path / "empty")
