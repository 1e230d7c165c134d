"""What a run has measured so far, as Prometheus families, for `assay run --metrics`.

The engine hands each second's rows to `rows` (the same rows it appends to the run
directory) and the live verdict to `opened`; both only store references under a lock, so the
engine never waits on a scrape. Timeline events and host losses are read from the run
directory's events.ndjson at scrape time, from where the last scrape stopped.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from assay.metrics.exposition import Family, render
from assay.metrics.families import (
    Totals,
    add_component,
    add_host,
    catalogue,
    component_labels,
    workload_hosts,
)
from assay.observe.duelive import LiveDue
from assay.thresholds.live import LiveVerdict

PHASES = ("prefill", "warmup", "run", "ended")


class LiveMetrics:
    def __init__(self, scenario: str, due: dict[str, list[str]] | None = None):
        self.scenario = scenario
        self.due = LiveDue(due or {})
        self.run_dir: Path | None = None
        self.run_id = ""
        self.live: LiveVerdict | None = None
        self.hosts: dict[str, str] = {}  # workload -> its components' host label
        self.run_hosts: list[str] = []  # the hosts of the run
        self._lock = threading.Lock()
        self._series: dict[str, dict[str, Any]] = {}  # component -> its last row
        self._host_rows: dict[str, dict[str, Any]] = {}
        self._totals = Totals()
        self._phase = "prefill"
        self._events_at = 0  # bytes of events.ndjson already read
        self._steps: dict[tuple[str, str], int] = {}
        self._lost: set[str] = set()

    # -- the engine's side (its thread): store and return ----------------------------------
    def opened(self, run_dir: Path, live: LiveVerdict) -> None:
        try:
            record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            record = {}
        plan = record.get("plan") or {}
        with self._lock:
            self.run_dir, self.live = run_dir, live
            self.due.run_dir = run_dir
            self.run_id = str(record.get("id") or run_dir.name)
            self.run_hosts = [str(h) for h in plan.get("hosts") or ["local"]]
            self.hosts = workload_hosts(plan.get("workloads") or {}, self.run_hosts)

    def rows(self, stream: str, rows: list[dict[str, Any]]) -> None:
        with self._lock:
            if stream == "series":
                for r in rows:
                    self._series[str(r.get("c"))] = r
                    self._totals.add(r)
                    self._phase = str(r.get("phase") or self._phase)
            elif stream == "samples":
                self.due.samples(rows)
            elif stream == "hosts":
                for r in rows:
                    self._host_rows[str(r.get("host") or "local")] = r

    def ended(self) -> None:
        with self._lock:
            self._phase = "ended"

    # -- the scraper's side (the server's thread) -------------------------------------------
    def families(self) -> list[Family]:
        self._read_events()
        fams = catalogue()
        with self._lock:
            self.due.update()
            base = {"run_id": self.run_id, "scenario": self.scenario} if self.run_id else \
                {"scenario": self.scenario}  # no run directory yet
            fams["assay_run"].add(1, base)
            for p in PHASES:
                fams["assay_phase"].add(1 if p == self._phase else 0, {**base, "phase": p})
            last_t = max((float(r.get("t") or 0) for r in self._series.values()), default=None)
            fams["assay_load_elapsed_seconds"].add(last_t, base)
            for c, row in sorted(self._series.items()):
                add_component(fams, row, component_labels(base, c, self.hosts), self._totals,
                              due_p99_ms=self.due.p99_ms.get(c))
            hosts = set(self._host_rows) | set(self.run_hosts) | self._lost
            for h in sorted(hosts):
                fams["assay_host_active"].add(0 if h in self._lost else 1, {**base, "host": h})
            for h, row in sorted(self._host_rows.items()):
                add_host(fams, row, {**base, "host": h})
            for (action, outcome), n in sorted(self._steps.items()):
                fams["assay_timeline_steps"].add(n, {**base, "action": action,
                                                     "outcome": outcome})
            results = list(self.live.results) if self.live else []
        for r in results:
            fams["assay_threshold_passing"].add(
                1 if r.passed else 0, {**base, "threshold": r.threshold.text or r.threshold.expr,
                                       "component": r.component})
        return list(fams.values())

    def text(self, openmetrics: bool) -> str:
        return render(self.families(), openmetrics)

    def _read_events(self) -> None:
        """Steps and host losses written since the last scrape."""
        if self.run_dir is None:
            return
        try:
            with open(self.run_dir / "events.ndjson", "rb") as fh:
                fh.seek(self._events_at)
                data = fh.read()
        except OSError:
            return
        whole = data[:data.rfind(b"\n") + 1]  # a line still being written waits
        with self._lock:
            self._events_at += len(whole)
            for line in whole.splitlines():
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                kind = e.get("kind") if isinstance(e, dict) else None
                if kind == "step":
                    key = (str(e.get("action") or "step"), str(e.get("outcome") or ""))
                    self._steps[key] = self._steps.get(key, 0) + 1
                elif kind == "host_lost":
                    self._lost.add(str(e.get("host")))
                elif kind == "load" and e.get("outcome") in ("ended", "stopped early"):
                    self._phase = "ended"
