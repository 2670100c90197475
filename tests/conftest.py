import pytest

from shapefuzz.toolchain import find_toolchain


@pytest.fixture(scope="session")
def toolchain():
    """The real IREE toolchain from the pinned wheels."""
    return find_toolchain(None)


@pytest.fixture(scope="session")
def has_vulkan(toolchain):
    return toolchain.probe.has_device("vulkan")
