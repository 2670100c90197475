"""Minimize a failing MLIR file while keeping its failure signature.

The engine (`engine.py`) is domain-free: it takes `is_interesting(text) -> bool`, a prefilter and
a sort key. Passes propose candidates (`mlirtext.py` for any MLIR, `params.py` for generated
files); `iree.py` holds the IREE-specific predicate; `run.py` wires them for the command line.
Which of two reproducers is smaller is `shapefuzz.size` (the corpus and the campaign share it).
"""

from shapefuzz.shrink.engine import Pass, Problem

__all__ = ["Pass", "Problem"]
