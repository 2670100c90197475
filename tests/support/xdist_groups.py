"""Which tests share a pytest-xdist worker (`--dist loadgroup`, as scripts/test.sh runs the suite):
  - the `ray` tests, one after another: each starts a local Ray cluster, whose head takes fixed
    ports (its dashboard's 8265, without retries, and its agent's 52365) and writes
    /tmp/ray/ray_current_cluster, and two clusters of a dozen processes each on two cores starve
    each other's timed waits;
  - the tests of one module that take a module-scoped fixture of that module (a real campaign, a
    corpus compiled once, a bundle): it is built once, not once on each worker."""

from __future__ import annotations

import pytest


def group_items(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("ray") is not None:
            _group(item, "ray")
        elif _uses_its_module_fixture(item):
            _group(item, item.nodeid.split("::")[0])


def _uses_its_module_fixture(item: pytest.Item) -> bool:
    module = item.nodeid.split("::")[0]
    info = getattr(item, "_fixtureinfo", None)  # pytest's own record of the fixtures the test takes
    return info is not None and any(defs and defs[-1].scope == "module" and defs[-1].baseid == module
                                    and defs[-1].params is None  # (a parametrized one builds nothing shared)
                                    for defs in info.name2fixturedefs.values())


def _group(item: pytest.Item, name: str) -> None:
    """Marks the test for xdist's group. xdist 3.8 sends a group to one worker by the suffix
    `@name` it appends to the test's id, which pytest 9.2's structured ids no longer take: the
    grouping silently stopped (pytest-xdist issue #1386). So the id is set here as xdist means it,
    on a worker of a `--dist loadgroup` run only (tests/house/test_xdist_groups.py checks it)."""
    item.add_marker(pytest.mark.xdist_group(name))
    if getattr(item.config.option, "loadgroup", False) and hasattr(item, "_id"):
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(f"{item.nodeid}@{name}")
