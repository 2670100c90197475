import os

import pytest

from shapefuzz.iree.toolchain import find_toolchain
from support.xdist_groups import group_items


# No campaign started by a test downloads IREE releases for its regression phase (tests of the
# fetcher use a fake release source); the CLI's subprocesses inherit this.
os.environ["SHAPEFUZZ_FETCH_RELEASES"] = "0"


@pytest.fixture(scope="session")
def toolchain():
    """The real IREE toolchain from the pinned wheels."""
    return find_toolchain(None)


@pytest.fixture(scope="session")
def has_vulkan(toolchain):
    return toolchain.probe.has_device("vulkan")


@pytest.fixture(autouse=True)
def _no_stop_owed_to_the_next_test():
    """Tests run many to a pytest-xdist worker: a stop one test left owed or recorded in
    `process.interrupts` (a command run in-process that took a signal) would be raised by the next
    test's first sandboxed call, taking the worker down as if it had been Ctrl-C'd."""
    yield
    from shapefuzz.process import interrupts

    interrupts.forget()


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    """Marks by cost: a test that uses the real toolchain must say so (`-m "not iree"` skips it).
    Then the tests that share a pytest-xdist worker (support/xdist_groups.py says which and why)."""
    unmarked = [item.nodeid for item in items
                if "toolchain" in getattr(item, "fixturenames", ()) and item.get_closest_marker("iree") is None]
    if unmarked:
        raise pytest.UsageError("these tests use the real IREE toolchain without @pytest.mark.iree: "
                                + ", ".join(unmarked))
    group_items(items)
