"""Click parameter types shared by the commands: validation lives here, so a bad value is one line
naming the option before any command runs."""

from __future__ import annotations

import click

from shapefuzz.backends import resolve_backends
from shapefuzz.durations import parse_duration
from shapefuzz.errors import UsageError


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
