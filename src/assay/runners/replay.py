"""Recorded fio output played back as if fio were running: engine tests in milliseconds.

A recording is a directory made by tests/fixtures/replay/record.py from a real fio run:

    scenario.yaml        the scenario whose plan produced the job file
    run.out.json         fio's stdout, verbatim (json+ status dumps, noise and all)
    run.stderr.txt       fio's stderr
    run.json             {"rc": fio's exit status, "how": what was done to fio,
                          "started": when fio was started (epoch s; older recordings lack it)}
    *_lat.*.log          per-IO logs, when the job asked for them
    issuelog.ndjson      the agent's `issuelog` rows (latency from the due time), when recorded

A job the recording lacks (a prefill, say) plays as a fio that wrote nothing and exited 0.
Time is the recording's own: the runner's clock follows the timestamps of the dumps it has
delivered, so the engine's time axis, timeline and phases see the run as it happened, only
faster (`speed` None: as fast as the engine reads; 1.0: in real time, from the instant it
is started at, as a real fio: the hosts of a replayed cluster keep time together).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from assay.fio.jsonstream import JsonStream, split_documents
from assay.runners.base import CommandResult, Document, FioRunBase
from assay.runners.local import LocalRunner

MEASURES_HOST = {"utilisation"}  # agent commands that read the host they run on


class ReplayRun(FioRunBase):
    def __init__(self, runner: ReplayRunner, name: str, at: float | None = None):
        self._runner = runner
        self._at = at if at is not None else time.time()  # wall clock: fio's start
        stem = Path(name).stem
        src = runner.recording / f"{stem}.out.json"
        raw = src.read_text(encoding="utf-8") if src.exists() else ""
        meta = runner.recording / f"{stem}.json"
        info = json.loads(meta.read_text()) if meta.exists() else {}
        self._rc = int(info.get("rc") or 0)
        err = runner.recording / f"{stem}.stderr.txt"
        self._stderr = err.read_text(encoding="utf-8") if err.exists() else ""
        self._copy = runner.workdir / f"{stem}.out.json"  # read back as the dumps are played
        self._copy.write_text(raw, encoding="utf-8")
        (runner.workdir / f"{stem}.stderr.txt").write_text(self._stderr, encoding="utf-8")
        # when fio was started, as recorded; older recordings: from the first dump
        self._started = float(info.get("started") or 0)
        if not self._started:
            first = next(split_documents(raw), {})
            runtime = max((float(j.get("job_runtime") or 0) for j in first.get("jobs", [])),
                          default=0.0)
            ts = float(first.get("timestamp_ms") or 0)
            self._started = (ts - runtime) / 1000 - 0.05 if ts else runner.clock()
        runner.now = self._started
        self._stopped = False
        self._last: Document | None = None

    @property
    def started(self) -> float:
        return self._started

    @property
    def last_doc(self) -> Document | None:
        return self._last

    def _docs(self) -> Iterator[Document]:
        """The recorded dumps, parsed one at a time (a replayed cluster holds none ahead)."""
        stream = JsonStream()
        with open(self._copy, encoding="utf-8") as fh:
            for chunk in iter(lambda: fh.read(1 << 16), ""):
                yield from stream.feed(chunk)
        yield from stream.close()

    def documents(self, poll: float = 0.2) -> Iterator[Document | None]:
        for doc in self._docs():
            if self._stopped:
                return
            ts = float(doc.get("timestamp_ms") or 0) / 1000
            if self._runner.speed:  # its time after the start, on the wall clock
                wait = self._at + (ts - self._started) / self._runner.speed - time.time()
                if wait > 0:
                    time.sleep(wait)
            self._runner.now = max(self._runner.now, ts)
            self._last = doc
            yield doc

    def stop(self) -> None:
        self._stopped = True

    def wait(self) -> int:
        return 0 if self._stopped else self._rc

    def stderr_tail(self, lines: int = 5) -> str:
        meaningful = [ln for ln in self._stderr.splitlines() if ln.strip()]
        return "\n".join(meaningful[-lines:])


class ReplayRunner(LocalRunner):
    """A LocalRunner (job files kept in the run directory, target sub-directories made) whose
    fio is a recording."""

    def __init__(self, recording: Path, host: str, workdir: Path, speed: float | None = None):
        super().__init__(host, workdir)
        self.recording = recording
        self.speed = speed
        self.now = time.time()  # the recording's clock, advanced by the dumps delivered
        self.started: list[str] = []  # job files started, in order (for tests)

    def clock(self) -> float:
        return self.now

    def check_job(self, name: str, env: Mapping[str, str]) -> str | None:
        return None  # the recording ran: fio accepted its job file

    def start(self, name: str, env: Mapping[str, str], *, at: float | None = None,
              sections: Sequence[str] = ()) -> ReplayRun:
        self.started.append(name)
        return ReplayRun(self, name, at)

    def fetch_logs(self) -> list[Path]:
        return [Path(shutil.copy(log, self.workdir / log.name))
                for log in sorted(self.recording.glob("*_lat.*.log"))]

    def run(self, argv: Sequence[str], timeout: float = 60.0) -> CommandResult:
        return CommandResult(0, "", "")

    def agent(self, command: str, args: Sequence[str] = ()) -> subprocess.Popen[bytes]:
        """The agent command's recorded rows (`<command>.ndjson`), else the agent itself; a
        replayed host's utilisation only as recorded (this machine's /proc is not its)."""
        rows = self.recording / f"{command}.ndjson"
        if not rows.exists() and command not in MEASURES_HOST:
            return super().agent(command, args)
        if not rows.exists():
            rows = Path(os.devnull)
        return subprocess.Popen(["cat", str(rows)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
