"""Loads the Jinja MLIR templates, from the wheel (shapefuzz/templates) or the source tree (templates/)."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import jinja2


def templates_dir() -> Path:
    packaged = Path(__file__).parent / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "templates"


class _CompiledCache(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept between processes: every campaign worker, and every command,
    compiled all the families' templates anew (about 2 s of a worker's start on two loaded
    cores). Entries are keyed by the template's source, so an edited template is compiled again;
    a cache that cannot be read or written is no cache, never an error."""

    def load_bytecode(self, bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, ValueError, EOFError, TypeError):
            bucket.reset()

    def dump_bytecode(self, bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _compiled_cache() -> jinja2.BytecodeCache | None:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "shapefuzz" / "templates"  # beside the toolchain cache (toolchain.cache_root)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _CompiledCache(str(folder))


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,  # a missing parameter is our bug: fail loudly
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        bytecode_cache=_compiled_cache(),
    )


def render_template(name: str, **context: Any) -> str:
    return _environment().get_template(name).render(**context)
