"""The issue-log reader beside fio, on any runner: the agent's `issuelog` command
(agent/issuelog.py) started on the host where fio runs, its rows delivered as they come.

    logs = IssueLogs(runner, [job.spec() for job in jobs], sink).start()   # before fio
    ...                                                                     # fio runs
    logs.finish()                                                           # after fio ended

One path for one host and many: a local run starts it through LocalRunner.agent (this
interpreter, here), a cluster through each SshRunner (the host's python3). `sink` gets each
row (`{"t", "c", "bins", "ios"}`: one job's lags over one second), in the reader's thread.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import Any

from assay.runners.agent import rows
from assay.runners.base import Runner

SPEC = "issuelog.json"  # the agent's job list, kept beside the job files
Sink = Callable[[dict[str, Any]], None]


class IssueLogs:
    def __init__(self, runner: Runner, jobs: Sequence[dict[str, Any]], sink: Sink,
                 closing: Callable[[], None] | None = None):
        self.runner = runner
        self.closing = closing  # after the last row: the sink's store closed
        self.jobs = list(jobs)
        self.sink = sink
        self.ios: dict[str, int] = {}  # log -> IOs folded, from the agent's last line
        self.error: str | None = None  # why latency from the due time is missing or partial
        self.ended = False  # the agent said it ended (its last line came)
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> IssueLogs:
        """Start the agent (before fio: it waits for the logs fio opens)."""
        self.runner.write_job(SPEC, json.dumps({"jobs": self.jobs}, indent=1))
        self._proc = self.runner.agent("issuelog", [SPEC])
        self._thread = threading.Thread(target=self._pump, name="issue-logs", daemon=True)
        self._thread.start()
        return self

    def _pump(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for row in rows(self._proc.stdout):
            if "t" in row and "bins" in row:
                try:
                    self.sink(row)
                except Exception as e:  # noqa: BLE001 - a store that fails: said, not fatal
                    self.error = self.error or f"{type(e).__name__}: {e}"
            elif row.get("end"):
                self.ended = True
                self.ios = dict(row.get("ios") or {})
                self.error = self.error or row.get("error")

    def finish(self, timeout: float = 60.0) -> None:
        """After fio ended: the agent reads what fio wrote last, sends every second left and
        ends (its stdin closed says fio is done)."""
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if self._thread is not None:
            self._thread.join(timeout)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if not self.ended and not self.error:
            err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
            self.error = f"the agent ended without its last line (status {proc.returncode})" \
                + (f": {err.splitlines()[-1]}" if err else "")
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        self._proc = None
        if self.closing is not None:
            self.closing()

    def stop(self) -> None:
        """End the agent at once (the host is lost: nothing more will come)."""
        if self._proc is not None:
            with contextlib.suppress(OSError):
                self._proc.kill()
