"""The issue-log reader beside fio, on any runner: the agent's `issuelog` command
(agent/issuelog.py) started on the host where fio runs, its rows delivered as they come.

    logs = IssueLogs(runner, [job.spec() for job in jobs], sink).start()   # before fio
    ...                                                                     # fio runs
    logs.finish()                                                           # after fio ended

One path for one host and many: a local run starts it through LocalRunner.agent (this
interpreter, here), a cluster through each SshRunner (the host's python3). `sink` gets each
row (`{"t", "c", "bins", "ios"}`: one job's lags over one second) in the thread of its Pump,
which a cluster's hosts share.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any, Protocol

from assay.runners.base import Runner

SPEC = "issuelog.json"  # the agent's job list, kept beside the job files
Sink = Callable[[dict[str, Any]], None]


class Reader(Protocol):
    """What a Pump delivers an agent's output to."""

    def line(self, text: bytes) -> None: ...
    def eof(self) -> None: ...


class Pump:
    """One thread reading the rows of any number of agents as they come (a cluster's hosts
    share one: a thread per host would cost memory per host for nothing)."""

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = os.pipe()
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._new: list[tuple[IO[bytes], Reader]] = []
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="agent-rows", daemon=True)
        self._thread.start()

    def add(self, stream: IO[bytes], reader: Reader) -> None:
        with self._lock:
            self._new.append((stream, reader))
        os.write(self._wake_w, b"+")

    def close(self) -> None:
        """No more agents: the thread ends (the streams it still reads are dropped)."""
        self._closed = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b".")
        self._thread.join(10)
        self._selector.close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _run(self) -> None:
        while not self._closed:
            for key, _ in self._selector.select(timeout=1.0):
                if key.data is None:  # woken: new agents, or closed
                    os.read(self._wake_r, 4096)
                    with self._lock:
                        new, self._new = self._new, []
                    for stream, reader in new:
                        self._selector.register(stream.fileno(), selectors.EVENT_READ,
                                                [reader, b""])
                    continue
                reader, rest = key.data
                try:
                    data = os.read(key.fd, 1 << 16)
                except OSError:
                    data = b""
                if not data:  # the agent ended
                    self._selector.unregister(key.fd)
                    if rest:
                        reader.line(rest)
                    reader.eof()
                    continue
                lines = (rest + data).split(b"\n")
                key.data[1] = lines.pop()
                for line in lines:
                    reader.line(line)


class IssueLogs:
    def __init__(self, runner: Runner, jobs: Sequence[dict[str, Any]], sink: Sink,
                 closing: Callable[[], None] | None = None, pump: Pump | None = None):
        self.runner = runner
        self.closing = closing  # after the last row: the sink's store closed
        self.jobs = list(jobs)
        self.sink = sink
        self.ios: dict[str, int] = {}  # log -> IOs folded, from the agent's last line
        self.error: str | None = None  # why latency from the due time is missing or partial
        self.ended = False  # the agent said it ended (its last line came)
        self._proc: subprocess.Popen[bytes] | None = None
        self._pump = pump
        self._own_pump = pump is None
        self._eof = threading.Event()

    def start(self) -> IssueLogs:
        """Start the agent (before fio: it waits for the logs fio opens)."""
        self.runner.write_job(SPEC, json.dumps({"jobs": self.jobs}, indent=1))
        self._proc = self.runner.agent("issuelog", [SPEC])
        assert self._proc.stdout is not None
        if self._pump is None:
            self._pump = Pump()
        self._pump.add(self._proc.stdout, self)
        return self

    def line(self, text: bytes) -> None:
        """One line of the agent's output (a line that is not a row is skipped)."""
        try:
            row = json.loads(text)
        except ValueError:
            return
        if not isinstance(row, dict):
            return
        if "t" in row and "bins" in row:
            try:
                self.sink(row)
            except Exception as e:  # noqa: BLE001 - a store that fails: said, not fatal
                self.error = self.error or f"{type(e).__name__}: {e}"
        elif row.get("end"):
            self.ended = True
            self.ios = dict(row.get("ios") or {})
            self.error = self.error or row.get("error")

    def eof(self) -> None:
        self._eof.set()

    def finish(self, timeout: float = 60.0) -> None:
        """After fio ended: the agent reads what fio wrote last, sends every second left and
        ends (its stdin closed says fio is done)."""
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        self._eof.wait(timeout)
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
        if self._own_pump and self._pump is not None:
            self._pump.close()
        if self.closing is not None:
            self.closing()

    def stop(self) -> None:
        """End the agent at once (the host is lost: nothing more will come)."""
        if self._proc is not None:
            with contextlib.suppress(OSError):
                self._proc.kill()
