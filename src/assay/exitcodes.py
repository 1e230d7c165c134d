"""Process exit codes: stable, named, documented (CI systems rely on them)."""

from enum import IntEnum


class ExitCode(IntEnum):
    PASSED = 0  # every threshold held (or there were none: status `completed`)
    FAILED = 1  # the run completed but at least one threshold failed
    INVALID_INPUT = 2  # bad scenario, bad option, unsafe target refused
    ABORTED = 3  # no verdict: fio died, an action failed, disk full, or the run was
    # `incomplete` (its samples grade under 95 % of the measured seconds)
    INTERNAL = 4  # a bug in assay
    INTERRUPTED = 130  # Ctrl-C / SIGTERM


class AssayError(Exception):
    """An error meant for the user: printed without a traceback, exits with `code`."""

    code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str, code: ExitCode | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code


class UserError(AssayError):
    code = ExitCode.INVALID_INPUT


class RunAborted(AssayError):
    code = ExitCode.ABORTED
