"""A reproducer as an older release can read it: printed in MLIR's generic form by the toolchain
that wrote it (`iree-opt --mlir-print-op-generic`), then read by the older release's `iree-opt`
and printed back in that release's own custom syntax. Custom syntax changes across releases
(3.13's `iree_linalg_ext.attention <indexing_maps = ...> ins(...)` is "expected 'ins'" to 3.12),
the generic form much less; the older release's custom form keeps `func.func @main(...)` readable
by shapefuzz's own function reader, so compile- and run-stage checks work on it alike."""

from __future__ import annotations

import os
from dataclasses import dataclass

from shapefuzz.process.cleanup import temp_dir
from shapefuzz.invoke.execute import run_sandboxed
from shapefuzz.files import write_text
from shapefuzz.process.sandbox import Limits
from shapefuzz.iree.toolchain import Toolchain

_LIMITS = Limits(timeout=60.0)


@dataclass(frozen=True)
class Reprint:
    text: str | None  # the reader's custom form; None when it could not be made
    why: str = ""  # one line, when `text` is None


def _first_error(output: str) -> str:
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    line = next((x for x in lines if "error:" in x), lines[0] if lines else "no output")
    return line.split("error:", 1)[-1].strip()[:160]


def reprinted(text: str, printer: Toolchain, reader: Toolchain, limits: Limits = _LIMITS) -> Reprint:
    """`text` as `reader`'s release prints it after reading `printer`'s generic form of it. The
    leading `//` lines (the `// shapefuzz-case:` header) are kept: printing drops comments."""
    if printer.opt_bin is None or reader.opt_bin is None:
        return Reprint(None, "no iree-opt to print the generic form with")
    header = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        header.append(line)
    with temp_dir("reprint") as tmp:
        source, generic, custom = (os.path.join(tmp, name) for name in ("in.mlir", "generic.mlir", "custom.mlir"))
        write_text(source, text)
        printed = run_sandboxed([str(printer.opt_bin), source, "--mlir-print-op-generic", "-o", generic], limits)
        if not printed.ok:
            return Reprint(None, f"the writing release cannot print it: {_first_error(printed.stderr)}")
        read = run_sandboxed([str(reader.opt_bin), generic, "-o", custom], limits)
        if not read.ok:
            return Reprint(None, f"its generic form does not parse either ({_first_error(read.stderr)})")
        with open(custom, encoding="utf-8") as handle:
            body = handle.read()
    return Reprint("\n".join([*header, body]) if header else body)


__all__ = ["Reprint", "reprinted"]
