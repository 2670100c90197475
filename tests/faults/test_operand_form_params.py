"""A case header whose root-operand form (families/operands.py) is unknown, or does not write its
case, is the user's error: `check` says so in one line and exits 2, before anything is compiled
(the compiler here is a fake)."""

from __future__ import annotations

import json

import pytest

from support.hostile import cli, expect_2  # noqa: F401
from shapefuzz.case import Case
from shapefuzz.families import get_family, render_case


def _case_file(tmp_path, family: str, params: dict) -> str:
    plain = {k: v for k, v in params.items() if k != "operand"}
    body = render_case(Case.make(family, plain)).split("\n", 1)[1]
    path = tmp_path / f"{family}-{params.get('operand', '')}.mlir"
    path.write_text("// shapefuzz-case: " + json.dumps({"family": family, "params": params, "version": 1}) + "\n" + body)
    return str(path)


@pytest.mark.parametrize("family,changes,needle", [
    ("matmul", {"operand": "splat"}, "operand: 'splat' is not one of '', 'const', 'folded', 'scalar', 'unranked'"),
    ("matmul", {"operand": 3}, "operand: 3 is not one of"),
    ("matmul", {"operand": "unranked"}, "operand form 'unranked' does not write this case"),
    ("pool", {"operand": "const"}, "pool: operand form 'const' does not write this case (it takes no operand form)"),
    ("reduce", {"operand": "scalar", "kind": "argmax", "dims": [1], "use": "both"}, "operand form 'scalar'"),
])
def test_check_refuses_a_bad_operand_form_in_one_line(cli, tmp_path, family, changes, needle):
    fam = get_family(family)
    params = dict(fam.operand_examples.get("const") or fam.example)
    params.pop("operand", None)
    path = _case_file(tmp_path, family, {**params, **changes})
    expect_2(cli("check", path), "case params: not valid", needle)
