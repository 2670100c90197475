"""Moved to `shapefuzz.size` (the ground floor: the corpus and the campaign use the same order)."""

from shapefuzz.size import Metrics, Size, code_lines, measure, shaped_dims, size_of, sort_key

__all__ = ["Metrics", "Size", "code_lines", "measure", "shaped_dims", "size_of", "sort_key"]
