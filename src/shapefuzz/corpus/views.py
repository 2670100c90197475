"""What an entry shows of itself: repro.sh, and text made safe to store (no machine paths, no
control characters, no line breaks in a comment)."""

from __future__ import annotations

import os
import re
import shlex
from typing import Any

from shapefuzz.corpus.entry import MAX_DETAIL, REPRODUCER
from shapefuzz.model import Signature
from shapefuzz.triage.excerpt import excerpt


def comment_text(value: Any, limit: int = 300) -> str:
    """A value made safe for a `#` or `//` comment line: no line breaks or control characters."""
    return re.sub(r"[\x00-\x1f\x7f]+", " ", str(value))[:limit]


def repro_script(meta: dict[str, Any]) -> str:
    """repro.sh for a validated meta.json: every value it embeds is quoted (shlex) or, in a
    comment, stripped of line breaks."""
    sig = Signature.from_json(meta["signature"])
    command = ["shapefuzz", "check", REPRODUCER, "--backends", sig.backend]
    if meta.get("seed"):
        command += ["--seed", str(int(meta["seed"]))]
    versions = ", ".join(meta.get("toolchain_versions") or [])
    lines = [
        "#!/bin/sh",
        f"# shapefuzz corpus entry {comment_text(meta['id'])}",
        f"# signature: {comment_text(sig)}",
        f"# expected state: {comment_text(meta['expected_state'])}  (toolchain {comment_text(versions)})",
        'cd "$(dirname "$0")" || exit 2',
        " ".join(shlex.quote(w) for w in command),
        "# With the entry's saved inputs and expected outputs: shapefuzz replay .",
    ]
    if meta.get("import_command"):
        lines.append(f"# {REPRODUCER} is what IREE's ONNX importer makes of model.onnx:")
        lines.append("#   " + comment_text(" ".join(shlex.quote(w) for w in meta["import_command"]), 1000))
    if meta.get("compile_command"):
        lines.append("# The plain compile:")
        lines.append("#   " + comment_text(" ".join(shlex.quote(w) for w in meta["compile_command"]), 4000))
    return "\n".join(lines) + "\n"


def strip_paths(words: list[str]) -> list[str]:
    """A compile command with machine paths reduced to file names (no absolute paths in the corpus)."""
    out = []
    for word in words:
        if "=" in word and word.startswith("-"):
            flag, _, value = word.partition("=")
            out.append(f"{flag}={os.path.basename(value)}" if os.path.isabs(value) else word)
        else:
            out.append(os.path.basename(word) if os.path.isabs(word) else word)
    if out and out[0].endswith("iree-compile"):
        out[0] = "iree-compile"
    return out


_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ABS_PATH = re.compile(r"(?<![\w.~])/(?:[\w.+@-]+/)+([\w.+@-]+)")


def scrub(text: str) -> str:
    """Error text with absolute paths cut to their last component (no machine paths in the corpus)."""
    text = _CONTROL_CHARS.sub("?", text.replace("\r\n", "\n").replace("\r", "\n"))  # garbage stderr stays readable
    # head and tail: the first error lines and the top of a backtrace matter as much as the end
    return excerpt(_ABS_PATH.sub(r"\1", text), 2 * MAX_DETAIL - 100)

