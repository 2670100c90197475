"""A resume with pins other than the campaign's own (issue #47): `shapefuzz fuzz` on a campaign
folder that holds a store resumes it; naming other --ops, --backends, --seed, --context-share or
--lanes-per-candidate would mix two campaigns' draws in one store, so each difference is named
("--ops differs: the campaign ran topk; this run asks for scatter") and the resume is refused,
exit 2, with nothing written, unless --force is given. Pins left out keep the campaign's own.
The end-to-end test runs the fake compiler: it is about input handling, not IREE."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from support.hostile import one_line, run  # noqa: F401

from shapefuzz.campaign.rows import CorruptStoreError, stored_config
from shapefuzz.campaign.run import FuzzRequest, build_config
from shapefuzz.errors import UsageError

STORED = {"families": ["conv", "topk"], "backends": ["llvm-cpu", "vmvx"], "seed": 3, "count": 10, "seconds": None,
          "corpus": "corpus", "forced": False, "until_saturated": None, "context_share": 0.5, "lanes_per_candidate": 2}


def _resume(tmp_path, stored=STORED, **asked):
    return build_config(FuzzRequest(campaign=str(tmp_path / "camp"), corpus="corpus", **asked), dict(stored))


@pytest.mark.parametrize("asked, line", [
    ({"ops": "scatter"}, "--ops differs: the campaign ran conv,topk; this run asks for scatter"),
    ({"ops": "conv,topk,scatter"}, "--ops differs: the campaign ran conv,topk; this run asks for conv,topk,scatter"),
    ({"backends": ("vulkan-spirv",)},
     "--backends differs: the campaign ran llvm-cpu,vmvx; this run asks for vulkan-spirv"),
    ({"backends": ("vmvx", "llvm-cpu")},  # the same lanes, but every candidate on each: other draws
     "--backends differs: the campaign ran llvm-cpu,vmvx in turn, 2 lanes a candidate; this run asks for "
     "vmvx,llvm-cpu on every candidate"),
    ({"seed": 4}, "--seed differs: the campaign ran seed 3; this run asks for seed 4"),
    ({"context_share": 0.9}, "--context-share differs: the campaign ran context share 0.5; this run asks for "
                             "context share 0.9"),
    ({"lanes_per_candidate": 3}, "--lanes-per-candidate differs: the campaign ran 2 lanes a candidate; this run "
                                 "asks for 3"),
])
def test_each_changed_pin_is_named_and_refused_unless_forced(tmp_path, asked, line):
    with pytest.raises(UsageError) as refused:
        _resume(tmp_path, **asked)
    text = str(refused.value)
    assert text.startswith(line + ". ") and "--force" in text and "\n" not in text, text
    forced = _resume(tmp_path, force=True, **asked)
    assert forced.changed_pins == (line,)


def test_several_changes_are_named_together(tmp_path):
    with pytest.raises(UsageError, match=r"^--ops differs: .*scatter\. --seed differs: .*seed 9\. Leave them out"):
        _resume(tmp_path, ops="scatter", seed=9)


def test_pins_left_out_or_named_again_keep_the_campaigns_own(tmp_path):
    config = _resume(tmp_path, stored={**STORED, "context_share": 0.25, "lanes_per_candidate": 3})
    assert (config.families, config.backends, config.seed) == (("conv", "topk"), ("llvm-cpu", "vmvx"), 3)
    assert (config.context_share, config.lanes_per_candidate, config.rotate) == (0.25, 3, True)
    again = _resume(tmp_path, ops="topk,conv", seed=3, context_share=0.5, lanes_per_candidate=2)
    assert again.families == ("conv", "topk") and again.changed_pins == ()  # the same names: the stored order
    forced = {**STORED, "forced": True}
    same = _resume(tmp_path, stored=forced, backends=("vmvx", "llvm-cpu"), lanes_per_candidate=5)
    assert same.backends == ("llvm-cpu", "vmvx") and not same.rotate and same.changed_pins == ()


def test_a_campaign_stored_before_a_pin_was_kept_cannot_differ_on_it(tmp_path):
    old = {k: v for k, v in STORED.items() if k not in ("context_share", "lanes_per_candidate")}
    config = _resume(tmp_path, stored=old, context_share=0.8, lanes_per_candidate=4)
    assert (config.context_share, config.lanes_per_candidate, config.changed_pins) == (0.8, 4, ())


def test_a_bad_value_is_said_as_such_before_any_difference(tmp_path):
    with pytest.raises(UsageError, match=r"^--context-share 7\.0: give a fraction"):
        _resume(tmp_path, context_share=7.0)


@pytest.mark.parametrize("field, value", [("context_share", 7), ("context_share", "half"), ("context_share", True),
                                          ("lanes_per_candidate", 0), ("lanes_per_candidate", 2.5)])
def test_a_stored_pin_shapefuzz_never_writes_is_a_corrupt_store(tmp_path, field, value):
    text = json.dumps({**STORED, field: value})
    with pytest.raises(CorruptStoreError, match=f"column value: {field}"):
        stored_config(tmp_path / "campaign.sqlite", text, ("conv", "topk"), ("llvm-cpu", "vmvx"))


def _meta_and_rows(camp: Path) -> tuple:
    con = sqlite3.connect(camp / "campaign.sqlite")
    try:
        return (con.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0],
                con.execute("SELECT family, count(*) FROM candidates GROUP BY family ORDER BY family").fetchall())
    finally:
        con.close()


def test_the_cli_refuses_a_resume_with_other_ops_and_writes_nothing(tmp_path):
    base = ["fuzz", "--campaign", "camp", "--corpus", "corpus", "--no-shrink", "--jobs", "1", "--plain",
            "--no-bisect", "--no-localize", "--backends", "rocm-gfx942"]
    env = {"SHAPEFUZZ_FETCH_RELEASES": "0"}
    first = run(tmp_path, *base, "--count", "2", "--ops", "topk", env_extra=env)
    assert first.returncode == 0, first.stderr
    before = _meta_and_rows(tmp_path / "camp")
    assert before[1] == [("topk", 2)]
    refused = run(tmp_path, *base, "--count", "4", "--ops", "scatter", env_extra=env)
    one_line(refused, 2, "--ops differs: the campaign ran topk; this run asks for scatter", "--force")
    assert _meta_and_rows(tmp_path / "camp") == before  # nothing drawn, the stored pins as they were
    forced = run(tmp_path, *base, "--count", "4", "--ops", "scatter", "--force", env_extra=env)
    assert forced.returncode == 0, forced.stderr
    assert "resuming with other pins (--force): --ops differs: the campaign ran topk" in forced.stdout + forced.stderr
    config, rows = _meta_and_rows(tmp_path / "camp")
    assert json.loads(config)["families"] == ["scatter"] and rows == [("scatter", 2), ("topk", 2)]
