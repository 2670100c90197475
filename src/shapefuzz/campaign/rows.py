"""The one typed, checked read of a campaign.sqlite value. A campaign folder is shared and copied,
so a row may hold anything (SQLite stores text in a REAL column): every column is checked by
`schema.py`'s readers as it is read, and a value shapefuzz never writes is a CorruptStoreError
naming the database, the table, the row and the column (one line, exit 2), never a traceback.

Knows nothing of IREE; speaks the plain values the store's rows hold."""

from __future__ import annotations

import enum
import math
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from shapefuzz import schema
from shapefuzz.errors import CorpusError
from shapefuzz.schema import SchemaError

# Above any active time, duration or epoch second a campaign writes (3 centuries), far below a
# float's range: 1e308 or inf read back would overflow a sum, a plot axis or an int().
MAX_SECONDS = 1e10
MAX_TEXT = 1 << 24  # repro_text and detail hold whole MLIR files and compiler output

E = TypeVar("E", bound=enum.Enum)


class CorruptStoreError(CorpusError):
    """A campaign.sqlite row holding a value shapefuzz never writes (hand-edited, or damaged in
    a way SQLite's own check does not see). The message names table, row and column."""


class RowReader:
    """Checks the columns of one row; `row` names it in the message (its key, sig or id)."""

    def __init__(self, db_path: Path, table: str, row: Any) -> None:
        self.db_path, self.table, self.row = db_path, table, row

    def fail(self, why: str) -> NoReturn:
        raise CorruptStoreError(
            f"campaign database {self.db_path} is corrupt: table {self.table}, row {_show(self.row)}, column {why}; "
            "restore it from a copy or move the campaign folder aside")

    def _checked(self, check, *args, **kwargs):
        try:
            return check(*args, **kwargs)
        except SchemaError as error:
            self.fail(str(error))

    def text(self, column: str, value: Any, *, max_len: int = 100_000) -> str:
        """A name or one-line text (keys, signatures, families, lanes): no control characters."""
        return self._checked(schema.text, value, column, max_len=max_len)

    def free_text(self, column: str, value: Any) -> str:
        """What a compiler or a traceback printed (detail, error, evidence, a reproducer): any
        characters, bounded."""
        if not isinstance(value, str):
            self.fail(f"{column}: expected text, got {_show(value)}")
        if len(value) > MAX_TEXT:
            self.fail(f"{column}: longer than {MAX_TEXT} characters")
        return value

    def integer(self, column: str, value: Any, minimum: int = 0, maximum: int = schema.MAX_SIZE) -> int:
        return self._checked(schema.integer, value, column, minimum, maximum)

    def optional_integer(self, column: str, value: Any) -> int | None:
        return None if value is None else self.integer(column, value)

    def seconds(self, column: str, value: Any) -> float:
        """A time or duration: a finite number from 0 to MAX_SECONDS (SQLite may hand back an int)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(f"{column}: expected a number of seconds, got {_show(value)}")
        if not (math.isfinite(value) and 0 <= value <= MAX_SECONDS):
            self.fail(f"{column}: {_show(value)} is not a time from 0 to {MAX_SECONDS:.0e} seconds")
        return float(value)

    def json(self, column: str, value: Any) -> Any:
        return self._checked(schema.load_json, self.free_text(column, value), column)

    def json_object(self, column: str, value: Any) -> dict[str, Any]:
        return self._checked(schema.obj, self.json(column, value), column)

    def text_list(self, column: str, value: Any) -> tuple[str, ...]:
        return tuple(self._checked(schema.text_list, self.json(column, value), column))

    def choice(self, column: str, value: Any, kind: type[E]) -> E:
        try:
            return kind(value)
        except ValueError:
            self.fail(f"{column}: {_show(value)} is not one of {', '.join(repr(k.value) for k in kind)}")

    def outcome(self, column: str, value: Any) -> dict[str, list]:
        """{lane: [status text, seconds]}, as `record` writes it."""
        lanes = self.json_object(column, value)
        for lane, item in lanes.items():
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                self.fail(f"{column}: lane {_show(lane)}: expected [status, seconds], got {_show(item)}")
            seconds = item[1]
            if type(seconds) is not float or not 0.0 <= seconds <= MAX_SECONDS:  # the name is made only to fail
                self.seconds(f"{column}: lane {_show(lane)}", seconds)
        return lanes


def meta_seconds(db_path: Path, key: str, text: str | None) -> float:
    """A meta value holding accumulated seconds (worker time), 0 when absent."""
    if text is None:
        return 0.0
    reader = RowReader(db_path, "meta", key)
    try:
        value = float(reader.text("value", text, max_len=64))
    except ValueError:
        reader.fail(f"value: {_show(text)} is not a number")
    return reader.seconds("value", value)


def meta_split(db_path: Path, key: str, text: str | None) -> dict[str, float]:
    """A meta value holding accumulated seconds by part (`{part: seconds}`), {} when absent."""
    split = meta_object(db_path, key, text) or {}
    reader = RowReader(db_path, "meta", key)
    for part, seconds in split.items():
        reader.text("value: part", part, max_len=40)
        reader.seconds(f"value: {_show(part)}", seconds)
    return split


def meta_object(db_path: Path, key: str, text: str | None) -> dict[str, Any] | None:
    """A meta value holding a JSON object, None when absent."""
    return None if text is None else RowReader(db_path, "meta", key).json_object("value", text)


def stored_config(db_path: Path, text: str | None, families: tuple[str, ...],
                  backends: tuple[str, ...]) -> dict[str, Any] | None:
    """The `config` meta a campaign's first session wrote, which a resume fills its defaults
    from: each field of the type written, families and backends among the known ones."""
    config = meta_object(db_path, "config", text)
    if config is None:
        return None
    r = RowReader(db_path, "meta", "config")
    for key, known in (("families", families), ("backends", backends)):
        if key in config:
            for name in r._checked(schema.text_list, config[key], f"value: {key}"):
                if name not in known:
                    r.fail(f"value: {key}: {_show(name)} is not a known one")
    if config.get("seed") is not None:
        r.integer("value: seed", config["seed"])
    if config.get("count") is not None:
        r.integer("value: count", config["count"], minimum=1)
    if config.get("seconds") is not None:
        r.seconds("value: seconds", config["seconds"])
    if config.get("corpus") is not None:
        r.text("value: corpus", config["corpus"], max_len=4096)
    for key in ("forced", "allocate", "context_share_pinned", "corpus_in_campaign"):
        if key in config and not isinstance(config[key], bool):
            r.fail(f"value: {key}: expected true or false, got {_show(config[key])}")
    if config.get("lanes_per_candidate") is not None:
        r.integer("value: lanes_per_candidate", config["lanes_per_candidate"], minimum=1)
    share = config.get("context_share")
    if share is not None and (isinstance(share, bool) or not isinstance(share, (int, float))
                              or not 0.0 <= share <= 1.0):  # nan fails both comparisons
        r.fail(f"value: context_share: {_show(share)} is not a share from 0 to 1")
    return config


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["CorruptStoreError", "MAX_SECONDS", "RowReader", "meta_object", "meta_seconds", "meta_split", "stored_config"]
