"""Latency from the due time while the run goes: the p99 of each second for which both fio's
latency histogram (the engine's samples) and the issue-log lags (the run directory's `lags`
stream, metrics/duetime.py) are in, paired the way the final verdict pairs them. Each update
shows the worst of the seconds paired since the one before: a stalled host catches up in a
burst of seconds, and the second that stalled must not be passed over for a newer one.

The lags of a second are stored once no later IO can fall in it, so this figure trails the
live one by a second or two. A cluster's hosts send their seconds a little apart, and a host
whose fio stalled, or that is slow, later still: a second is paired once every host's lags
have reached it, so that a late host's late IOs are in its figure, not left out. A host
silent for HOST_WAIT_S (lost, or its agent gone) holds the figure no longer. Memory stays
bounded: only the last KEEP_S seconds are held.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.metrics.duetime import STREAM, pair

KEEP_S = 30
HOST_WAIT_S = 10  # the longest a cluster's second waits for a host's lags


class LiveDue:
    def __init__(self, windows: dict[str, list[str]]):
        self.jobs = windows  # component -> its fixed-rate jobs (duetime.due_windows)
        self.run_dir: Path | None = None
        self._service: dict[int, dict[str, str]] = {}  # second -> component -> bins (JSON)
        self._lags: dict[int, dict[str, dict[int, int]]] = {}  # second -> job -> lag bins
        self._at = 0  # bytes of lags.ndjson read
        self._sealed = 0  # size of lags.blocks when last read: a new block empties the tail
        self._last_t = -1.0
        self._newest: dict[str, float] = {}  # host -> the second of its newest lags
        self._paired: dict[str, int] = {}  # component -> its newest second paired
        self.p99_ms: dict[str, float] = {}

    def samples(self, records: list[dict[str, Any]]) -> None:
        """The engine's sample records (their bins kept as text: parsed only when paired)."""
        for r in records:
            if r.get("c") in self.jobs and isinstance(r.get("bins_json"), str):
                self._service.setdefault(round(float(r["t"])), {})[r["c"]] = r["bins_json"]

    def update(self) -> None:
        """Read the lags written since the last call; pair the seconds now complete, and
        show the worst of them."""
        if self.run_dir is None or not self.jobs:
            return
        try:
            sealed = (self.run_dir / f"{STREAM}.blocks").stat().st_size
        except OSError:
            sealed = 0
        if sealed != self._sealed:
            self._sealed, self._at = sealed, 0
        self._read_lags(self.run_dir / f"{STREAM}.ndjson")
        ready = max(min(self._newest.values(), default=-1.0), self._last_t - HOST_WAIT_S)
        for c, jobs in self.jobs.items():
            done, worst = self._paired.get(c, -1), None
            for sec in sorted(s for s in self._service if done < s <= ready):
                service, lags = self._service[sec].get(c), self._lags.get(sec, {})
                if service is None or not all(j in lags for j in jobs):
                    continue
                merged: dict[int, int] = {}
                for j in jobs:
                    for k, v in lags[j].items():
                        merged[k] = merged.get(k, 0) + v
                bins = {int(k): int(v) for k, v in json.loads(service).items()}
                p99 = pair(bins, merged).percentiles((99.0,))[99.0]
                self._paired[c] = sec
                if p99 is not None and (worst is None or p99 > worst):
                    worst = p99
            if worst is not None:
                self.p99_ms[c] = worst / 1e6
        newest = max(self._service, default=0)
        for table in (self._service, self._lags):
            for sec in [s for s in table if s < newest - KEEP_S]:
                del table[sec]

    def _read_lags(self, path: Path) -> None:
        try:
            with open(path, "rb") as fh:
                if fh.seek(0, 2) < self._at:  # sealed into a block: the tail starts again
                    self._at = 0
                fh.seek(self._at)
                data = fh.read()
        except OSError:
            return
        whole = data[:data.rfind(b"\n") + 1]
        self._at += len(whole)
        wanted = {j for jobs in self.jobs.values() for j in jobs}
        for line in whole.splitlines():
            try:
                r = json.loads(line)
                t = float(r["t"])
            except (ValueError, KeyError, TypeError):
                continue
            if t < self._last_t - HOST_WAIT_S or r.get("c") not in wanted:
                continue  # its second is paired without it by now
            host = str(r.get("host") or "")
            self._newest[host] = max(self._newest.get(host, -1.0), t)
            per_job = self._lags.setdefault(round(t), {}).setdefault(str(r["c"]), {})
            for k, v in (r.get("bins") or {}).items():
                per_job[int(k)] = per_job.get(int(k), 0) + int(v)
            self._last_t = max(self._last_t, t)
