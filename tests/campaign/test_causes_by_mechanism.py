"""Wrong values grouped by how they fail, not by op family (issue #43's audit): one i8-emulation bug on
vulkan-spirv (an i8 tensor whose byte size is not a multiple of 4 loses its last 32-bit word) showed
in a gather and in a conv and became two causes, and the gather one shared its identity with an
unrelated llvm-cpu gather miscompile. Where the verdict names the mechanism, the cause is the
mechanism on that kind of lane; elsewhere the family's identity stays."""

from __future__ import annotations

from shapefuzz.campaign.causes.cause_ties import Causes
from shapefuzz.triage.identity import identity_of, mechanism_of

EMULATION = ("wrong numbers only on vulkan-spirv (Mesa's software Vulkan device, the only one here), while llvm-cpu "
             "agree with the NumPy reference; vulkan-spirv has no 8/16-bit storage, so IREE emulates i8/i16 in "
             "32-bit words, and the module holds a {what}: an emulated tensor whose byte size is not a multiple "
             "of 4 loses its last word (IREE's emulation, codegen for SPIR-V)")
RACE = ("wrong numbers only on vulkan-llvmpipe ...; vulkan-spirv on the same driver fails too, and the wrong values "
        "change from run to run (first: 1 2; again: 1 3): a race in the code IREE generates for both targets")
PLAIN = "compare/mismatch on llvm-cpu for input that verifies"


def _fields(lane: str, message: str, stage: str = "compare", status: str = "mismatch") -> dict[str, str]:
    ident = identity_of(stage, status, message)
    return {"backend": lane, "stage": stage, "status": status, "message": message, "identity": ident.key,
            "strong": "1" if ident.strong else ""}


def test_one_emulation_bug_in_two_families_is_one_cause_apart_from_a_cpu_bug_of_one_family():
    causes = Causes()
    causes.add("vk-gather", _fields("vulkan-spirv", "wrong values in gather via torch"), EMULATION.format(what="2xsi8"))
    causes.add("vk-conv", _fields("vulkan-spirv", "wrong values in conv"), EMULATION.format(what="?x?xi8"))
    causes.add("cpu-gather", _fields("llvm-cpu", "wrong values in gather via torch"), PLAIN)
    assert sorted(map(sorted, causes.members().values())) == [["cpu-gather"], ["vk-conv", "vk-gather"]]
    causes.tie(["vk-gather", "cpu-gather"])  # one candidate wrong on both lanes: still two ways of failing
    assert len(causes.members()) == 2
    name = causes.name_of()
    assert name["vk-gather"] == name["vk-conv"] != name["cpu-gather"]


def test_without_a_named_mechanism_wrong_values_of_two_families_stay_apart():
    causes = Causes()
    causes.add("a", _fields("llvm-cpu", "wrong values in gather via torch"), PLAIN)
    causes.add("b", _fields("llvm-cpu", "wrong values in conv"), PLAIN)
    causes.add("c", _fields("vulkan-spirv", "wrong values in conv"), "")  # an older store's bucket: no evidence
    assert len(causes.members()) == 3


def test_a_race_is_one_cause_per_lane_kind_and_a_named_pass_stays_the_identity():
    causes = Causes()
    causes.add("topk", _fields("vulkan-llvmpipe", "wrong values in topk"), RACE)
    causes.add("sort", _fields("vulkan-spirv", "wrong values in sort"), RACE)
    causes.add("cpu", _fields("llvm-cpu", "wrong values in sort"), RACE.replace("vulkan", "cpu"))
    assert sorted(map(sorted, causes.members().values())) == [["cpu"], ["sort", "topk"]]
    compile_error = _fields("vulkan-spirv", "'linalg.generic' op failed", "compile", "error")
    causes.add("err", compile_error, EMULATION.format(what="3xi8"))  # a compile error: its own identity
    assert ["err"] in causes.members().values()


def test_the_mechanisms_read_from_verdicts():
    assert mechanism_of(EMULATION.format(what="17xsi8")) == "an emulated i8/i16 tensor loses its last 32-bit word"
    assert "race" in mechanism_of(RACE)
    assert mechanism_of("vulkan-spirv: target limit llvmpipe-loop-limit (a gap; documented); ...") == \
        "target limit llvmpipe-loop-limit"
    assert mechanism_of(PLAIN) == ""
