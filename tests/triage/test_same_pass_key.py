"""One failing pass however it is spelled (`recheck.regression.same_pass_key`): what counting distinct
failing passes rests on (a cause's pass, the context study's "distinct failing passes"). The context
bench once counted FoldUnitExtentDimsPass (an out-of-memory's frame) and
iree-dispatch-creation-fold-unit-extent-dims-for-func (an error's dump header) as two passes."""

from __future__ import annotations

from shapefuzz.recheck.regression import same_pass_key


def test_a_pass_is_one_key_however_a_failure_spells_it():
    fold = ["FoldUnitExtentDimsPass", "iree-dispatch-creation-fold-unit-extent-dims-for-func",
            "iree-dispatch-creation-fold-unit-extent-dims", "iree-flow-fold-unit-extent-dims",
            "mlir::iree_compiler::FoldUnitExtentDimsPass"]
    assert len({same_pass_key(name) for name in fold}) == 1
    # a release names the link step by the wrapper that runs the pass: one place a failure is in
    assert same_pass_key("iree-hal-serialize-all-executables") == same_pass_key("iree-hal-serialize-target-executables")


def test_distinct_passes_stay_distinct():
    names = ["FoldUnitExtentDimsPass", "iree-hal-serialize-all-executables", "canonicalize", "cse", ""]
    assert len({same_pass_key(name) for name in names}) == len(names)
