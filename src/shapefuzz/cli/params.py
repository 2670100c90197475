"""Click parameter types shared by the commands: validation lives here, so a bad value is one line
naming the option before any command runs."""

from __future__ import annotations

import math
import os

import click

from shapefuzz.backends import resolve_backends
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


class Duration(click.ParamType):
    """Seconds from 45s, 90m, 8h, 1h30m, 2d or a bare number; "none" means no limit (None)."""

    name = "duration"

    def convert(self, value, param, ctx):
        if value is None or isinstance(value, (int, float)):
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
