"""Machine paths in a tool's output folded to short placeholders, before any length budget cuts it.

A compiler's output names where things are: the call's work folder (`/tmp/shapefuzz-check-…/module.mlir`),
the toolchain's own folder (a frame `(/…/site-packages/iree/compiler/_mlir_libs/libIREECompiler.so+0x…)`,
the "Program arguments:" line), the home folder. Their lengths are the user's install, not the bug: kept
whole, a deeper install pushed the frame naming the failing pass out of a crash's kept excerpt, and
the cause's identity with it. Folded, the output is the same text wherever shapefuzz and IREE live.
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import Iterable

WORK = "<work>"  # the folder the call reads and writes (its temporary work folder)
TOOLCHAIN = "<iree>"  # the folder of the compiler or runtime binary
SITE_PACKAGES = "<site-packages>"
TMP = "<tmp>"
HOME = "<home>"

_STARTS = r"(?<![\w.~/-])"  # a path starts here: not inside a name or another path (`/a/tmp`); after `@` or `=`
_ENDS = r"(?![\w.+@~-])"  # and its folder ends here: `/tmp` is never the start of `/tmpx`
# any Python environment's package folder, wherever it is
_SITE = re.compile(rf"{_STARTS}(?:/[\w.+@~-]+)+/(?:site|dist)-packages{_ENDS}")


def own_folders(argv: Iterable[str]) -> list[tuple[str, str]]:
    """The folds for one call: its binary's folder (the toolchain) and the folders of the absolute
    paths in its arguments (`--x=@/tmp/…/input0.npy` too: the work folder)."""
    words = list(argv)
    folds: list[tuple[str, str]] = []
    if words and os.path.isabs(words[0]):
        folds.append((os.path.dirname(words[0]), TOOLCHAIN))
    for word in words[1:]:
        value = word.split("=", 1)[-1].lstrip("@")
        if os.path.isabs(value) and value != os.devnull:
            folds.append((os.path.dirname(value), WORK))
    return folds


def _machine_folds() -> list[tuple[str, str]]:
    return [(tempfile.gettempdir(), TMP), (os.path.expanduser("~"), HOME)]


def fold_paths(text: str, folds: Iterable[tuple[str, str]] = ()) -> str:
    """`text` with each folder of `folds` (a prefix and its placeholder), any site-packages folder,
    the temporary folder and the home folder replaced by their placeholders, the longest (innermost)
    first; a folder is replaced only as a whole path component (`/tmp` never inside `/tmpx` or `/a/tmp`)."""
    pairs: dict[str, str] = {}
    for folder, placeholder in [*folds, *_machine_folds()]:
        for spelling in {os.path.normpath(folder), os.path.realpath(folder)}:
            if len(spelling) > 1 and os.path.isabs(spelling):
                pairs.setdefault(spelling, placeholder)
    for folder in sorted(pairs, key=len, reverse=True):
        if folder in text:
            text = re.sub(_STARTS + re.escape(folder) + _ENDS, pairs[folder], text)
    return _SITE.sub(SITE_PACKAGES, text) if "-packages" in text else text


__all__ = ["HOME", "SITE_PACKAGES", "TMP", "TOOLCHAIN", "WORK", "fold_paths", "own_folders"]
