"""One run's integrity mode: which workloads write checked blocks, their writers and journals,
the verify passes, and the run's `integrity` section of run.json.

The engine makes a session when the plan asks for integrity, prefills it after the dataset,
starts its writers with fio, stops them when the load ends, runs the final pass, and records
the section. A `verify` step finds the running session by run id (`active`).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol

from assay.integrity.area import Area, block_file, writer_id
from assay.integrity.block import PROBLEMS
from assay.integrity.fiojobs import HeadedFile
from assay.integrity.journal import Journal
from assay.integrity.verify import run_pass
from assay.integrity.writer import Writer
from assay.scenario.models import IntegritySpec, ResolvedScenario

JOURNAL_DIR = "integrity"  # in the run directory


class Verifies(Protocol):
    """A run's writers that a `verify` step can check (it reaches them through its context):
    this module's Session, or a cluster run's (hosts.py)."""

    status: str  # "writing" while the load runs: a pass then checks blocks being written

    def verify(self, label: str, t: float | None = None,
               stop: threading.Event | None = None) -> dict[str, Any]: ...


def settings(resolved: ResolvedScenario, writing: set[str]) -> tuple[IntegritySpec, list[str]]:
    """The integrity settings and the workloads that use them (`writing`: the workloads that
    write at all). Empty when integrity mode is off."""
    spec = resolved.scenario.integrity
    on = spec is not None
    chosen = [n for n, w in resolved.workloads.items()
              if n in writing and (w.verify if w.verify is not None else on)]
    return spec or IntegritySpec(), chosen


class Session:
    def __init__(self, run_id: str, spec: IntegritySpec, workloads: list[str], target: Path,
                 run_dir: Path, direct: bool, seed: int,
                 data_files: list[HeadedFile] | None = None,
                 data_hashes: dict[str, str] | None = None):
        self.run_id = run_id
        self.spec = spec
        self.target = target
        self.journal_dir = run_dir / JOURNAL_DIR
        self.direct = direct
        blocks = spec.size // spec.block
        self.areas = [Area(w, target / block_file(w), spec.block, blocks,
                           writer_id(run_id, w)) for w in workloads]
        self.writers: dict[str, Writer] = {}
        # the workloads' own files, written with fio's verify headers (fiojobs.py), and what
        # their content depends on (the prefill's data hash: a later run may rewrite them)
        self.data_files = data_files or []
        self.data_hashes = data_hashes or {}
        self.seed = seed
        self.passes: list[dict[str, Any]] = []
        self.status = "prepared"
        self.reason = ""
        self._verifying = threading.Lock()  # one pass at a time

    # -- the run's course ------------------------------------------------------------------
    def prefill(self) -> None:
        for i, a in enumerate(self.areas):
            journal = Journal.create(self.journal_dir, a.workload, a.blocks)
            w = Writer(a, journal, self.spec.rate, self.direct, self.seed * 1000 + i)
            w.prefill()
            self.writers[a.workload] = w

    def start(self) -> None:
        for w in self.writers.values():
            w.start()
        self.status = "writing"

    def stop(self) -> None:
        for w in self.writers.values():
            w.stop()
        if self.status == "writing":
            self.status = "stopped"

    def verify(self, label: str, t: float | None = None,
               stop: threading.Event | None = None) -> dict[str, Any]:
        """A pass over every file now, beside the writers (and fio, while the load runs: then
        the data files' bad blocks are read twice); recorded in the session."""
        with self._verifying:
            return run_pass(self.areas, {n: w.journal.gens for n, w in self.writers.items()},
                            self.direct, label, t, {n: w.lock for n, w in self.writers.items()},
                            stop, sink=self.passes,
                            data=[(f, self.target / f.name) for f in self.data_files],
                            live=self.status == "writing")

    def finish(self, t: float | None) -> dict[str, Any]:
        """Stop the writers and, unless the scenario says not to, verify every block."""
        self.stop()
        if self.spec.final and self.writers:
            self.verify("final", t)
        self.status = "verified" if self.passes else "not verified"
        return self.record()

    # -- run.json ----------------------------------------------------------------------------
    def record(self) -> dict[str, Any]:
        return section(self.spec, self.direct, [
            {**a.to_json(self.target), "journal": f"{JOURNAL_DIR}/{a.workload}",
             "acknowledged": self.writers[a.workload].acknowledged if a.workload in
             self.writers else 0,
             "write_errors": self.writers[a.workload].errors if a.workload in
             self.writers else 0,
             "direct_writes": a.workload in self.writers and self.writers[a.workload].direct,
             # the journal as the stopped writers left it: verify refuses another one
             **({"journal_digest": self.writers[a.workload].journal.digest()}
                if a.workload in self.writers and self.status != "writing" else {}),
             **({"last_error": self.writers[a.workload].last_error}
                if a.workload in self.writers and self.writers[a.workload].last_error else {})}
            for a in self.areas], self.passes, self.status, self.reason,
            [{**f.to_json(), "data": self.data_hashes.get(f.name, "")}
             for f in self.data_files])


def section(spec: IntegritySpec, direct: bool, files: list[dict[str, Any]],
            passes: list[dict[str, Any]], status: str, reason: str = "",
            data_files: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """run.json's `integrity`: settings, files (and the workloads' own headed data files),
    passes, and for each problem the worst count of any pass (a block found corrupt mid-run
    and rewritten later still counts); a workload's count in a pass is its journaled
    blocks' and its data files' together."""
    worst = {p.value: max((int(x.get(p.value, 0)) for x in passes), default=0)
             for p in PROBLEMS}
    per: dict[str, dict[str, int]] = {}
    for x in passes:
        sums = x.get("data_files", {}).get("workloads", {})
        for w in {**x.get("workloads", {}), **sums}:
            mine = per.setdefault(w, {p.value: 0 for p in PROBLEMS})
            for p in PROBLEMS:
                n = int(x.get("workloads", {}).get(w, {}).get(p.value, 0)) + \
                    int(sums.get(w, {}).get(p.value, 0))
                mine[p.value] = max(mine[p.value], n)
    return {"status": status, **({"reason": reason} if reason else {}),
            "settings": spec.model_dump(mode="json"), "direct": direct, "files": files,
            **({"data_files": data_files} if data_files else {}),
            "passes": passes, **worst, "workloads": per}
