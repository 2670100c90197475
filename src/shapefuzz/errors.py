"""One exception root for shapefuzz. Compiler failures are data, not exceptions; these are for
user errors (caught once in the CLI, printed as one line, exit 2) and for our own bugs."""


class ShapefuzzError(Exception):
    """Root of every error shapefuzz raises on purpose."""


class UsageError(ShapefuzzError):
    """Bad input from the user: a missing file, an unknown backend, a budget that does not parse.
    The message is one line that names the problem and, where it can, the fix."""


class ToolchainError(UsageError):
    """The IREE toolchain cannot be found or used (a --iree-bin folder without the tools, say)."""


class InvalidInputError(UsageError):
    """An MLIR file that does not parse or verify. For generated cases this is our bug."""


class UndefinedReference(InvalidInputError):
    """A generated case whose NumPy reference is undefined (NaN cast to an integer type: the module
    and NumPy may give any value there). The generator's slip, never judged: a campaign discards
    the candidate; `check` says so in one line (exit 2)."""


class CorpusError(ShapefuzzError):
    """A corpus or campaign folder that cannot be read or is from a newer version."""


class EnvironmentFault(ShapefuzzError):
    """The machine, not the compiler: a full disk, an I/O error or a file of ours gone missing
    during a compile or run. Never a finding: `check` says so in one line (exit 2); a campaign
    retries the candidate later and reports the condition."""


class ClusterLost(ShapefuzzError):
    """The Ray head of a `--cluster` campaign went away mid-campaign. The campaign stops at once
    with its report written from the store, which is intact: the same command resumes it once a
    head runs again. Exit 75 (EX_TEMPFAIL: try again later), never 1 (a finding)."""
