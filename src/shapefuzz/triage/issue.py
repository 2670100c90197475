"""The parts of an upstream bug report that come from triage: a title naming the component and
the failing pass (never LLVM's "Please report issues to..." banner), the lanes where it
reproduces with the flags that matter, the whole top of a crash's backtrace, the regression
range, and the reproducer without shapefuzz's header comment."""

from __future__ import annotations

import re
from typing import Any, Mapping

from shapefuzz import markup
from shapefuzz.triage.component import variant_flags
from shapefuzz.triage.culprit import is_checker
from shapefuzz.triage.failing_pass import hang_pattern, pass_in_frame, raw_frames
from shapefuzz.triage.identity import without_printed_op
from shapefuzz.triage.localize import FRONTEND_NAMES, Localization
from shapefuzz.triage.record import TOP_FRAMES

CASE_HEADER = "// shapefuzz-case:"


def without_header(mlir: str) -> str:
    """The IR as a maintainer reads it: shapefuzz's `// shapefuzz-case:` header line dropped."""
    return "".join(line for line in mlir.splitlines(keepends=True) if not line.startswith(CASE_HEADER)).lstrip("\n")


def chain_text(family: str, params: Any) -> str:
    """The context ops a case keeps around its family's root op, in data-flow order (producers by
    the operand they make, then the root, then consumers by the result they read): "pad(operand 0)
    → conv → relu(result 0)"; "" for a case without a chain (a plain family bug)."""
    chain = params.get("context") if isinstance(params, Mapping) else None
    ops = [o for o in chain if isinstance(o, Mapping) and isinstance(o.get("op"), str)] if isinstance(chain, list) else []
    producers = sorted((o for o in ops if isinstance(o.get("operand"), int)), key=lambda o: o["operand"])
    consumers = sorted((o for o in ops if isinstance(o.get("result"), int)), key=lambda o: o["result"])
    if not producers and not consumers:
        return ""
    return " → ".join([*(f"{o['op']}(operand {o['operand']})" for o in producers), str(family or "root"),
                       *(f"{o['op']}(result {o['result']})" for o in consumers)])


def reproducer_chain(mlir: str | None) -> str:
    """`chain_text` of a reproducer's case header (the minimal one once shrunk); "" for a reproducer
    with no header, a broken one, or no chain."""
    from shapefuzz.case import case_from_mlir
    from shapefuzz.errors import ShapefuzzError

    try:
        case = case_from_mlir(mlir) if mlir else None
    except (ShapefuzzError, ValueError):
        return ""
    return chain_text(case.family, case.params) if case is not None else ""


def cut_chain(entry: Any) -> str:
    """`chain_text` of the case a reproducer cut down as plain text was cut from (an entry's
    `cut_from`, corpus.entry); "" for any other entry, or a case drawn alone."""
    case = getattr(entry, "cut_from", None)
    return chain_text(case.family, case.params) if case is not None else ""


def entry_chain(meta: Mapping[str, Any], mlir: str | None) -> tuple[str, bool]:
    """The context ops an entry's failure needs, and whether a device ladder said so: the chain
    `bundle-judge --save` wrote into meta.json `bug.chain` (its rungs run on the device, where no
    shrinker runs; "": the root alone fails), else `reproducer_chain` of the reproducer's header."""
    bug = meta.get("bug")
    if isinstance(bug, Mapping) and isinstance(bug.get("chain"), str) and isinstance(bug.get("ladder"), Mapping):
        return bug["chain"], True
    return reproducer_chain(mlir), False


def issue_title(meta: dict[str, Any], backend: str, stage: str, status: str, message: str) -> str:
    """`[component] pass: message`, e.g. `[frontend: torch-mlir conversion] convert-torch-to-tmtensor
    fails: 'tm_tensor.scatter' op mismatch ...`; a crash says where it crashed."""
    bug = meta.get("bug") or {}
    component = bug.get("component") or backend
    where = bug.get("failing_pass") or ""
    said = [line for line in bug.get("first_lines") or [] if "Please report" not in line]
    first = next((line for line in said if "error:" in line), said[0] if said else "")  # never a `note:` line first
    text = message if not first else first.split("error:", 1)[-1].strip()
    if status == "crash":
        what = f"crash in {where}" if where else "crash"
        words = crash_words(message)
        if words.endswith("::"):  # the signature's function was cut at an anonymous namespace: its frame names it
            frames = backtrace_lines(meta)
            words = f"{words.split(' in ', 1)[0]} in {frame_function(frames[0])}" if frames else words
        text = f"{what}: {words}" if words else what
    elif stage in ("compare", "run") and (bug.get("localized") or {}).get("phase"):
        loc = bug["localized"]
        what = "wrong values" if stage == "compare" else f"run-time {status}"
        after = "after" if loc.get("certain") else "that go away without"
        conversion = f"the {FRONTEND_NAMES.get(loc.get('frontend'), loc.get('frontend'))} conversion ({loc['phase']})"
        named = loc.get("pass_class") or loc.get("pass") or ""
        rewrote = f" ({loc['pattern']})" if loc.get("pattern") else ""
        text = ((f"{what} after {named}{rewrote} in {conversion}" if named else f"{what} from {conversion}")
                if loc.get("frontend") else
                f"{what} {after} {loc.get('pass_class') or loc['pass']} ({loc['phase']})" if loc.get("pass")
                else f"{what} from {backend}'s {loc['phase']}" if loc["phase"] == "codegen"
                else f"{what} after {loc['phase']}")
    elif status == "timeout" and stage == "compile":  # the stack its SIGABRT printed says where
        pattern = hang_pattern(str(meta.get("detail") or ""))
        text = (f"hangs in {where}" + (f", applying {pattern}" if pattern else "")) if where else \
            "compile does not finish (pass unknown)"
    elif stage == "compare":
        kind, _, family = message.partition(" in ")
        # a reproducer cut down as text (shrink.voted_stage) may hold none of its family's ops any more
        text = f"{kind} (cut down from a {family} case)" if meta.get("reference") and family else message
    elif where:
        loc = Localization.from_json(bug.get("localized"))
        refuser = refusing_pass(meta, stage, status, message)
        if stage == "compile" and loc is not None and loc.certain and loc.phase and loc.pass_name and \
                refuser and loc.pass_name != refuser:
            # placed at the maker of what a checker (or a conversion) refuses: the maker did not fail, it
            # made the buffer or the ill-typed op
            words = text
            text = f"{loc.pass_name} makes what {refuser} refuses: {words}"
            if len(f"[{component}] {text}") > TITLE_CHARS:  # the refuser goes first (the text names it), never the words
                text = f"{words} (IR made by {loc.pass_name})"
        elif stage == "compile" and loc is not None and loc.certain and loc.frontend and not loc.pass_name:
            # the conversion did not fail: its output did, on this lane (frontend_probe.conversion_made_failure)
            text = f"the {FRONTEND_NAMES.get(loc.frontend, loc.frontend)} conversion's output fails on {backend}: {text}"
        else:
            if stage == "compile" and loc is not None and loc.certain and loc.phase:
                where = loc.where  # a pass that runs in every phase, placed: "canonicalize (abi, inside inline)"
            text = f"{where} fails: {text}"
    # an op the message prints whole ("... marked illegal: %108 = "linalg.generic"(...)") goes: the message names
    # it already, and an audit read even a short one (`%19 = "math.ctpop"(%18) : (i32) -> i32`) as raw IR
    title = without_printed_op(f"[{component}] {text}")
    return clipped(title, TITLE_CHARS)


# GitHub's own bound on an issue title (an audit read three titles of 200 cut inside the message:
# "... restricted to…", "... need to be hoisted to the…")
TITLE_CHARS = 256
_FATAL = re.compile(r"(LLVM ERROR: .*|Assertion .*)")


def _class_and_name(function: str) -> str:
    """`mlir::torch::(anonymous namespace)::ConvertX::matchAndRewrite` as `ConvertX::matchAndRewrite`."""
    return "::".join(function.replace("(anonymous namespace)::", "").split("::")[-2:])


def frame_function(frame: str) -> str:
    """A backtrace line's function by class and name ("SelectionDAG::LegalizeTypes"), without its
    number, address, namespaces, arguments or file."""
    words = frame.split(" 0x", 1)[-1].strip().replace("(anonymous namespace)::", "").split(" ", 1)
    function = (words[-1] if len(words) > 1 else words[0]).split("(", 1)[0].strip()
    return _class_and_name(function)[:120]


def crash_words(message: str) -> str:
    """A crash's normalized message as a title says it, never a raw frame (an audit read five titles cut
    inside one: "mlir::torch::(anonymous namespace)::ConvertAtenIndexPutHackedTwinOp::matchAndRewrite(mlir::torch::To"):
    the fatal error's own words where it printed some ("LLVM ERROR: Do not know how to promote this
    operator!", an assertion), else the signal and the crashing function by its class and name
    ("SIGSEGV in AffineExpr::getKind") with what it printed after."""
    if found := _FATAL.search(message):
        return found.group(1).strip()
    signal, found_in, rest = message.partition(" in ")
    if not found_in:
        return message.strip()
    function, _, said = rest.replace("(anonymous namespace)::", "").partition(" ")
    return f"{signal} in {_class_and_name(function)}" + (f": {said.strip()}" if said.strip() else "")


def clipped(text: str, most: int) -> str:
    """`text` in at most `most` characters, cut at a word's end with an ellipsis (an audit read titles
    cut mid-word: "has shape's dime")."""
    if len(text) <= most:
        return text
    cut = text[: most - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > most // 2 else cut).rstrip(" ,;:") + "…"


def refusing_pass(meta: Mapping[str, Any], stage: str, status: str, message: str) -> str:
    """The pass the compiler said failed, as its own output names it (the kept detail's IR-dump header),
    before any placement renamed the bug's failing pass: a checker or conversion that only refused what
    an earlier pass made. Else the one the bug's identity names, when that is a checker."""
    from shapefuzz.triage.identity import identity_of

    said = identity_of(stage, status, message, str(meta.get("detail") or "")).failing_pass
    if said:
        return said
    named = re.search(r"\[([^\]]+)\]", str((meta.get("bug") or {}).get("identity") or ""))
    return named.group(1) if named and is_checker(named.group(1)) else ""


def lane_lines(meta: dict[str, Any], entry_backend: str) -> list[str]:
    """One line per lane where it reproduces, with the non-default flags that lane adds (Markdown)."""
    bug = meta.get("bug") or {}
    lanes = list(dict.fromkeys([entry_backend, *(bug.get("lanes") or [])]))
    out = []
    for lane in lanes:
        flags = variant_flags(lane)
        out.append(markup.code(lane) + (f" (adds {markup.code(' '.join(flags))})" if flags else " (default flags)"))
    return out


PASS_DEPTH = 48  # the most frames shown when looking for the failing pass's own


# frames of the action logging shapefuzz compiles with (a hang's stack is mostly these, an audit found):
# never the reader's command's
_INSTRUMENTATION = re.compile(r"mlir::tracing::|executeActionInternal|ActionLogger|llvm::get_thread_name|"
                              r"\bpthread_getname_np\b|\bprctl\b")


def backtrace_lines(meta: dict[str, Any]) -> list[str]:
    """The whole top of a crash's (or a hang's) backtrace, below the signal handler (whole frames) down to the
    failing pass's own frame (at least TOP_FRAMES), read again from the entry's kept output when
    it has one (the record may predate a better reading); frames an excerpt cut out are said
    where they are missing, never closed up silently."""
    status = meta.get("status") or (meta.get("signature") or {}).get("status")
    if status in ("crash", "timeout"):  # a hang: the stack it printed when stopped with SIGABRT
        frames = raw_frames(str(meta.get("detail") or ""), PASS_DEPTH)
        end = next((i + 1 for i, frame in enumerate(frames) if pass_in_frame(frame)), TOP_FRAMES)
        if frames:
            shown = with_gaps_said(frames[:max(end, TOP_FRAMES)])  # (gaps read before any frame is left out)
            kept = [frame for frame in shown if not _INSTRUMENTATION.search(frame)]
            note = [f"(... {len(shown) - len(kept)} frames of the action logging shapefuzz compiles with, left out)"] \
                if len(kept) < len(shown) else []
            return kept + note
    return with_gaps_said(list((meta.get("bug") or {}).get("frames") or []))


def with_gaps_said(frames: list[str]) -> list[str]:
    """`frames` with a line where their numbering jumps (`#12` then `#30`: an excerpt cut those out)."""
    out: list[str] = []
    last = None
    for frame in frames:
        number = re.match(r"\s*#(\d+) ", frame)
        n = int(number.group(1)) if number else None
        if n is not None and last is not None and n > last + 1:
            out.append(f"[... frames #{last + 1}-#{n - 1} were not kept with this entry: compile the reproducer "
                       "to see them ...]")
        last = n if n is not None else last
        out.append(frame)
    return out


def regression_line(meta: dict[str, Any], shown: str = "") -> str | None:
    """The range taken on this reproducer, with each release's verdict; None where there is none, or
    the one kept was taken on another entry than the one `shown` (its reproducer, its lane: what
    another entry's releases said is not this one's, and a campaign retakes it on this one)."""
    record = (meta.get("bug") or {}).get("regression")
    if isinstance(record, dict) and record.get("text"):
        stepped = str(record.get("stepped_over") or "")
        ranged = str(record.get("entry") or "")
        if shown and ranged and ranged != shown:
            return None
        generic = str(record.get("generic_form") or "")
        how = (f" To reproduce it with {markup.text(generic)}, print it in generic form first "
               f"({markup.code('iree-opt --mlir-print-op-generic')} of the release that found it).") if generic else ""
        each = str(record.get("releases") or "")
        return (f"- Regression range over released wheels: {markup.text(record['text'])}." + how
                + (f" Each release: {markup.text(each)}." if each else "")
                + (f" Could not tell: {markup.text(stepped[:1500])}." if stepped else ""))
    return None


__all__ = ["CASE_HEADER", "PASS_DEPTH", "backtrace_lines", "chain_text", "entry_chain", "issue_title", "lane_lines",
           "regression_line", "reproducer_chain", "with_gaps_said", "without_header"]
