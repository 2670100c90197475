"""Loads the Jinja MLIR templates, from the wheel (shapefuzz/templates) or the source tree (templates/)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jinja2


def templates_dir() -> Path:
    packaged = Path(__file__).parent / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "templates"


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,  # a missing parameter is our bug: fail loudly
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_template(name: str, **context: Any) -> str:
    return _environment().get_template(name).render(**context)
