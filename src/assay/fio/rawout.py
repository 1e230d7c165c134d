"""fio's raw output as the run directory keeps it: verbatim up to a cap, then only its last
document (the whole run's result). A local fio (process.py) and a remote one
(runners/sshfio.py) keep it alike.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import IO, Any

# fio's raw output kept verbatim up to this size (a json+ dump a second is about 0.5 MB for a
# dozen jobs): past it, only its last document, the whole run's result
RAW_CAP = 64 << 20


class RawOutput:
    """fio's stdout into `path`, as it arrives, up to RAW_CAP; then a line saying so, and at
    close() the last document, so that the file still ends with fio's final report."""

    def __init__(self, path: Path, flush: bool = False):
        self.path = path
        self.cap = RAW_CAP
        self.kept = 0  # bytes written verbatim
        self.error = ""  # why fio's output could not be kept, if it could not
        self._flush = flush  # each chunk on disk at once (a remote fio's: few, big ones)
        self._file: IO[bytes] | None = None
        try:
            self._file = open(path, "wb")  # noqa: SIM115
        except OSError as e:
            self._fail(e)

    def write(self, chunk: bytes) -> None:
        if self._file is None or self.kept >= self.cap:
            return
        try:
            self._file.write(chunk)
            self.kept += len(chunk)
            if self.kept >= self.cap:  # every second is in the samples; bound the disk
                self._file.write(f"\n# assay: fio's output past {self.cap >> 20} MiB is not "
                                 f"kept verbatim; its last document follows\n".encode())
            if self._flush:
                self._file.flush()
        except OSError as e:  # a full results disk: keep reading fio, say so after
            self._fail(e)

    def close(self, last: dict[str, Any] | None) -> None:
        """fio's output has ended; `last` is its last document."""
        if self._file is None:
            return
        with contextlib.suppress(OSError):
            if self.kept >= self.cap and last is not None:
                self._file.write((json.dumps(last, indent=2) + "\n").encode())
            self._file.close()
        self._file = None

    def _fail(self, e: OSError) -> None:
        self.error = f"cannot keep fio's output: {e.strerror}: {self.path}"
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
        self._file = None
