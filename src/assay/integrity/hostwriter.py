"""One host's `integrity` command (assay/agent/integrity.py), driven from here: started with
its spec, given its orders (a `kill` on the host: its stdin is not ours), and its rows read as
they come (per-second counts into integrity/<host>.ndjson, passes, the journals at the end).
A host that is lost, or whose command ended, answers "not verified" with the reason."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from assay.agent.block import State
from assay.agent.integrity import ORDERS
from assay.results.rundir import RunDir
from assay.runners import agent
from assay.runners.base import Runner

PREFILL_S = 600.0  # the longest a host's prefill of its blocks may take
PASS_S = 3600.0  # ... and a pass
ORDER_S = 30.0  # ... and a `kill` to reach it


class PlanParts(Protocol):
    """What integrity mode reads of the run's plan (plan/model.py Plan: a layer above)."""

    @property
    def name(self) -> str: ...
    @property
    def cluster(self) -> Any: ...
    @property
    def scenario(self) -> Any: ...
    @property
    def thresholds(self) -> Any: ...


class Hosts(Protocol):
    """What integrity mode uses of a cluster run's hosts (cluster/group.py RunnerGroup)."""

    @property
    def plan(self) -> PlanParts: ...
    runners: dict[str, Runner]
    lost: dict[str, dict[str, Any]]  # host -> when and why
    rd: RunDir
    force: bool  # --force: write into what assay did not create


class HostWriter:
    """One host's `integrity` command and the rows it sends back."""

    def __init__(self, host: str, group: Hosts, spec: dict[str, Any], log: Path):
        self.host = host
        self.group = group
        self.runner = group.runners[host]
        self.log = log
        self.pid = 0
        self.prefilled: dict[str, Any] = {}
        self.error = ""
        self.last: dict[str, Any] = {}  # the newest counts
        self.stopped: dict[str, Any] = {}
        self.journals: dict[str, dict[str, str]] = {}
        self.last_words = ""  # an ended command's last stderr line
        self.passes: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.ready = threading.Event()
        self.ended = threading.Event()
        self.proc = self.runner.agent("integrity", [json.dumps(spec, separators=(",", ":"))])
        self._reader = threading.Thread(target=self._read, name=f"integrity-{host}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            with open(self.log, "a", encoding="utf-8") as log:
                for row in agent.rows(self.proc.stdout):
                    if "journal" in row:
                        self.journals[str(row["journal"])] = row
                        continue
                    log.write(json.dumps(row) + "\n")
                    log.flush()
                    if "prefilled" in row:
                        self.prefilled, self.pid = row["prefilled"], int(row["pid"])
                        self.ready.set()
                    elif "error" in row:
                        self.error = str(row["error"])
                    elif "pass" in row:
                        self.passes.put(row["pass"])
                    if "stopped" in row:
                        self.stopped = row["stopped"]
                    if "acknowledged" in row:
                        self.last = row
        finally:
            self.last_words = self._last_words()
            self.ended.set()
            self.ready.set()
            self.passes.put(None)  # a pass awaited now will not come

    @property
    def gone(self) -> str:
        """Why this host's command can do nothing more, or ""."""
        lost = self.group.lost.get(self.host)
        if lost is not None:
            return f"the host was lost ({lost.get('reason', 'no answer')})"
        if self.ended.is_set():
            return self.error or f"the integrity command ended ({self.last_words or '?'})"
        return ""

    def _last_words(self) -> str:
        """The ended command's last stderr line (its output ended: so does it, soon)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        if self.proc.stderr is None or self.proc.poll() is None:
            return ""
        lines = self.proc.stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""

    def order(self, name: str) -> bool:
        """Send an order (a signal, agent/integrity.py ORDERS); whether it was delivered."""
        if self.gone or not self.pid:
            return False
        r = self.runner.run(["kill", "-s", ORDERS[name], str(self.pid)], timeout=ORDER_S)
        return r.returncode == 0

    def wait_ready(self) -> None:
        self.ready.wait(PREFILL_S)
        if not self.prefilled:
            raise OSError(f"{self.host}: the integrity blocks could not be written: "
                          f"{self.gone or 'no answer in time'}")

    def verify(self, stop: threading.Event | None = None) -> dict[str, Any]:
        """One pass on this host: its record, or one saying why it was not verified (`stop`:
        the run ended meanwhile; the host's pass is then not waited for)."""
        while not self.passes.empty():  # a pass a lost order left behind
            self.passes.get_nowait()
        began = time.monotonic()
        if not self.order("verify"):
            return _unverified(self.gone or "the verify order did not reach the host")
        ordered = time.monotonic() - began
        while time.monotonic() - began < PASS_S:
            try:
                got = self.passes.get(timeout=1.0)
            except queue.Empty:
                if self.gone:
                    break
                if stop is not None and stop.is_set():
                    return _unverified("the run ended during the pass")
                continue
            if got is not None:  # with what the order and the answer cost (ssh, here)
                return {**got, "order_s": round(ordered, 3),
                        "answer_s": round(time.monotonic() - began, 3)}
            break
        return _unverified(self.gone or "no pass came back in time")

    @property
    def acknowledged(self) -> dict[str, int]:
        """Writes acknowledged per workload: as the writers stopped, else the last count."""
        if self.stopped:
            return {w: int(v.get("acknowledged", 0)) for w, v in self.stopped.items()}
        return {w: int(n) for w, n in self.last.get("acknowledged", {}).items()}

    def end(self) -> None:
        """The writers stop, the journals come back, the command ends."""
        if self.pid and not self.gone:
            self.order("end")
            self.ended.wait(60.0)
        if not self.ended.is_set():
            self.proc.kill()
        _close(self.proc)
        self._reader.join(10.0)


def _unverified(reason: str) -> dict[str, Any]:
    return {"status": "not verified", "reason": reason, "blocks": 0, "checked": 0, "bytes": 0,
            "seconds": 0.0, "mbps": 0.0, **{s.value: 0 for s in State}, "workloads": {}}


def _close(proc: subprocess.Popen[bytes]) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
