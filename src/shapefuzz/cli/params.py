"""Click parameter types shared by the commands: validation lives here, so a bad value is one line
naming the option before any command runs."""

from __future__ import annotations

import math
import os

import click

from shapefuzz.iree.backends import resolve_backends
from shapefuzz.durations import parse_duration
from shapefuzz.errors import UsageError
from shapefuzz.schema import ENV_MAX_ARRAY_BYTES


class BackendList(click.ParamType):
    """A comma-separated list of backend names or aliases (cpu, vulkan, rocm, cuda, all)."""

    name = "backends"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            return resolve_backends(value)
        except UsageError as error:
            self.fail(str(error), param, ctx)


class ClusterAddress(click.ParamType):
    """A Ray cluster's address: 'auto', HOST:PORT or ray://HOST:PORT with a port from 1 to 65535."""

    name = "address"

    def convert(self, value, param, ctx):
        from shapefuzz.campaign.cluster.connect import check_address

        try:
            check_address(str(value))
        except UsageError as error:
            raise click.UsageError(str(error), ctx) from None  # the message already names the option
        return str(value)


class Duration(click.ParamType):
    """Seconds from 45s, 90m, 8h, 1h30m, 2d or a bare number; "none" means no limit (None)."""

    name = "duration"

    def convert(self, value, param, ctx):
        if value is None or isinstance(value, (int, float)) and math.isfinite(value):
            return value
        if str(value).strip().lower() == "none":
            return None
        flag = param.opts[0] if param is not None and param.opts else "--time"
        try:
            return parse_duration(value, flag)
        except UsageError as error:
            raise click.UsageError(str(error), ctx) from None  # the message already names the option


class Seconds(click.ParamType):
    """A timeout in seconds: finite and at least `minimum` (-1, 0, nan and inf would each have
    disabled the limit; a compile cut off after a millisecond would be reported as a hang)."""

    name = "seconds"

    def __init__(self, minimum: float = 1.0) -> None:
        self.minimum = minimum

    def convert(self, value, param, ctx):
        if isinstance(value, float) and math.isfinite(value) and value >= self.minimum:
            return value
        try:
            seconds = float(value)
        except (TypeError, ValueError, OverflowError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds < self.minimum:
            self.fail(f"{value!r}: give a finite number of seconds, at least {self.minimum:g}", param, ctx)
        return seconds


class ReleaseVersion(click.ParamType):
    """`--iree-version`: a release number such as 3.13.0, exactly (no trailing newline)."""

    name = "X.Y.Z"

    def convert(self, value, param, ctx):
        from shapefuzz.iree.releases import is_release_version

        if not is_release_version(value):
            self.fail(f"{str(value)[:40]!r}: give a release number such as 3.13.0", param, ctx)
        return value


class VersionSpec(click.ParamType):
    """`bisect --versions`: LOW..HIGH or a list, each a release number."""

    name = "versions"

    def convert(self, value, param, ctx):
        from shapefuzz.iree.releases import check_version_spec

        try:
            return check_version_spec(str(value))
        except UsageError as error:
            self.fail(str(error).removeprefix("--versions: "), param, ctx)


class OutputPath(click.ParamType):
    """`-o`: a file or folder to create or replace. Never `.`, `/` or `..` (a folder holding
    other things, which an export would write into or over), nor a device, FIFO or socket
    (replacing `/dev/null` with a regular file as root)."""

    name = "path"

    def convert(self, value, param, ctx):
        from pathlib import Path

        from shapefuzz.files import special_kind

        text = os.fspath(value)
        if not text or Path(text).name in ("", ".", "..") or text.endswith(("/", "/.")):
            self.fail(f"{text!r} names a folder that holds other things; give a new file or folder name", param, ctx)
        try:
            kind = special_kind(os.stat(text).st_mode)
        except OSError:
            kind = None
        if kind not in (None, "a folder"):
            self.fail(f"{text} is {kind}; give a regular file or folder name", param, ctx)
        return text


def refuse_empty(ctx: click.Context, param: click.Parameter, value: object) -> object:
    """A text given empty ('', or only blanks) is refused: `--corpus ''` read as "not given" saved
    into ./corpus, and `corpus index ''` wrote INDEX.md into the current folder."""
    values = value if isinstance(value, tuple) else (value,)
    if any(isinstance(v, str) and not v.strip() for v in values):
        raise click.BadParameter("empty; give a value" + ("" if param.required else " or leave the option out"), ctx, param)
    return value


def not_empty(ctx: click.Context, param: click.Parameter, value):
    """An option's callback: a value given empty (`--save ''`, often an unset shell variable) is
    refused, never read as the option left out."""
    return refuse_empty(ctx, param, value)


SEED = click.IntRange(0, (1 << 63) - 1)  # NumPy seeds are non-negative
POSITIVE = click.IntRange(1, 1 << 40)

class Bytes(click.ParamType):
    """A size: 1073741824, 512M, 2GiB; more than zero, at most 1 PiB (exact: 400 nines are refused)."""

    name = "bytes"

    def convert(self, value, param, ctx):
        from shapefuzz.schema import parse_bytes

        if isinstance(value, int) and 0 < value:
            return value
        try:
            return parse_bytes(value, "")
        except UsageError as error:
            self.fail(str(error).strip(), param, ctx)


def _set_array_cap(ctx: click.Context, param: click.Parameter, value: int | None) -> None:
    if value is not None:  # through the environment, so campaign workers inherit it
        os.environ[ENV_MAX_ARRAY_BYTES] = str(value)


def array_cap_option(command):
    """`--max-array-bytes`: input and output arrays larger than this are refused before they are
    built or loaded (default 1 GiB)."""
    return click.option("--max-array-bytes", type=Bytes(), expose_value=False, callback=_set_array_cap,
                        help="Refuse input/output arrays larger than this (default 1G).")(command)
