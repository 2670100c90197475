"""What every command shares: the one object on the click context (which toolchain), the toolchain
options accepted before or after the subcommand, reading an MLIR file, exit codes."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import click
import numpy as np

from shapefuzz.errors import InvalidInputError, UsageError
from shapefuzz.iree.toolchain import Toolchain, find_toolchain

EXIT_OK, EXIT_FOUND, EXIT_USAGE = 0, 1, 2


class Session:
    """The one domain object on the click context: which toolchain, found lazily (a folder, a
    release, or the pinned wheels; $SHAPEFUZZ_IREE_BIN when neither option is given)."""

    def __init__(self, iree_bin: str | None = None, iree_version: str | None = None) -> None:
        self.iree_bin = iree_bin
        self.iree_version = iree_version
        self._toolchain: Toolchain | None = None

    @property
    def toolchain(self) -> Toolchain:
        if self._toolchain is None:
            if self.iree_bin is not None and self.iree_version is not None:
                raise UsageError("--iree-bin and --iree-version name two toolchains; give one of them")
            if self.iree_version is not None:
                from shapefuzz.iree.releases import release_toolchain

                self._toolchain = release_toolchain(self.iree_version, lambda line: click.echo(line, err=True))
            else:
                self._toolchain = find_toolchain(self.iree_bin)
        return self._toolchain


def _setter(attribute: str) -> Callable:
    def store(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:
            setattr(ctx.ensure_object(Session), attribute, value)
    return store


IREE_BIN_HELP = ("Folder with iree-compile, iree-opt and iree-run-module (default: $SHAPEFUZZ_IREE_BIN, "
                 "else the pinned wheels).")
IREE_VERSION_HELP = ("A released IREE, e.g. 3.11.0: its compiler and runtime wheels, installed once into "
                     "~/.cache/shapefuzz/toolchains (the cache bisect uses) and reused offline.")


def toolchain_options(command: Callable) -> Callable:
    """`--iree-bin` and `--iree-version` on a command, so they work after the subcommand as well
    as before it."""
    from shapefuzz.cli.params import ReleaseVersion

    for name, attribute, kind, text in (("--iree-version", "iree_version", ReleaseVersion(), IREE_VERSION_HELP),
                                        ("--iree-bin", "iree_bin", click.Path(file_okay=False), IREE_BIN_HELP)):
        command = click.option(name, type=kind, expose_value=False, callback=_setter(attribute),
                               metavar="X.Y.Z" if attribute == "iree_version" else None, help=text)(command)
    return command


def read_mlir(path: str) -> str:
    """The text of an MLIR file, or a one-line UsageError (a FIFO or device is refused unopened)."""
    from shapefuzz.files import read_bytes

    file = Path(path)
    if not file.exists():
        raise UsageError(f"no such file: {path}")
    if file.is_dir():
        raise UsageError(f"{path} is a folder, not an MLIR file")
    data = read_bytes(file)
    if not data.strip():
        raise InvalidInputError(f"{path} is empty")
    if b"\0" in data[:4096]:
        raise InvalidInputError(f"{path} is a binary file, not MLIR text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{path} is not UTF-8 text") from None


def load_inputs(path: str) -> list[np.ndarray]:
    """The arrays of an .npz, each member's header checked (plain numbers, under the array cap)
    before it is read. A lone .npy, a FIFO or a device is one line, not a crash or a hang."""
    import zipfile

    from shapefuzz.files import open_regular
    from shapefuzz.schema import SchemaError, read_npy_header

    try:
        with open(open_regular(path), "rb") as handle:
            if handle.read(4) not in (b"PK\x03\x04", b"PK\x05\x06"):  # a zip (or an empty one)
                raise UsageError(f"--inputs {path}: not an .npz archive (save the arrays with numpy.savez)")
            handle.seek(0)
            with np.load(handle, allow_pickle=False) as archive:
                names = sorted(archive.files, key=lambda n: (len(n), n))  # arr_0, arr_1, ..., arr_10
                arrays = []
                for name in names:
                    with archive.zip.open(f"{name}.npy") as member:
                        read_npy_header(member, name)
                    arrays.append(archive[name])
                return arrays
    except SchemaError as error:
        raise UsageError(f"--inputs {path}: {error}") from None
    except OSError as error:
        raise UsageError(f"--inputs {path}: {error.strerror or error}") from None
    except (ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        why = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise UsageError(f"--inputs {path}: not a readable .npz file ({why})") from None


def refuse_empty_values(command: click.Command) -> click.Command:
    """Every text and path parameter of `command` (and of its subcommands) refuses an empty value
    with one line, exit 2, before the command runs; its own callback, if any, runs after."""
    from shapefuzz.cli.params import refuse_empty

    for param in command.params:
        if isinstance(param.type, (click.types.StringParamType, click.Path)):
            own = param.callback
            param.callback = (refuse_empty if own is None else
                              lambda ctx, p, v, own=own: own(ctx, p, refuse_empty(ctx, p, v)))
    for sub in getattr(command, "commands", {}).values():
        refuse_empty_values(sub)
    return command
