"""`assay verify RUN`: a Jetstress-style checksum pass over a finished run's integrity blocks,
against the journal the run left, with its throughput and a verdict, into RUN/verify.json.

verify.json is written when the pass starts (status `running`), then with the outcome:
`passed` (every block ok), `failed` (a block lost, stale, corrupt or unreadable),
`interrupted` (Ctrl-C, SIGTERM: the counts of what was read so far, no verdict on the rest),
or, for a cluster run checked on its hosts (hostverify.py), `incomplete` (a host could not be
reached or checked: no verdict).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assay.agent.area import later_writer
from assay.exitcodes import UserError
from assay.hosts.inventory import Host
from assay.integrity import hostverify
from assay.integrity.area import Area
from assay.integrity.block import PROBLEMS
from assay.integrity.fiojobs import HeadedFile
from assay.integrity.hostverify import journal_gens
from assay.integrity.verify import run_pass
from assay.platforms.safety import read_manifest
from assay.results.record import RunRecord

RESULT = "verify.json"
SCHEMA_VERSION = 1


def section_of(run_dir: Path, record: RunRecord) -> dict[str, Any]:
    """The run's integrity section; a UserError when it was not in integrity mode."""
    section = record.integrity
    if not section or not section.get("files"):
        raise UserError(f"run {run_dir.name} was not in integrity mode: nothing to verify "
                        f"(`integrity: on` in the scenario, or `verify: true` on a workload)")
    return section


def load(run_dir: Path, record: RunRecord) -> tuple[list[Area], dict[str, Any], bool]:
    """A one-host run's integrity files and journals; a UserError when they cannot be
    checked."""
    section = section_of(run_dir, record)
    target = Path(record.target.path or "")
    if record.target.removed:
        raise UserError(f"run {run_dir.name} wrote to a temporary directory that was removed "
                        f"when it ended; run with --keep (or a target path) to verify later")
    areas = [Area.from_json(f, target) for f in section["files"]]
    gens = {}
    for a, f in zip(areas, section["files"], strict=True):
        # a truncated file is not refused: the blocks past its end read as zeros, lost
        why = later_writer(a)
        if why:
            raise UserError(why)
        gens[a.workload] = journal_gens(run_dir, f)
    return areas, gens, bool(section.get("direct", True))


def data_files(record: RunRecord) -> list[tuple[HeadedFile, Path]]:
    """The workloads' own files the run wrote with fio's verify headers, each where it is;
    a UserError for one that is gone or that a later run has rewritten without headers."""
    target = Path(record.target.path or "")
    manifest = read_manifest(target)
    out = []
    for d in (record.integrity or {}).get("data_files", []):
        f = HeadedFile(str(d["workload"]), str(d["path"]), int(d["size"]), int(d["interval"]))
        path = target / f.name
        if not path.is_file():
            raise UserError(f"{path}: the data file of workload {f.workload!r} is gone (the "
                            f"target was removed or cleaned)")
        now = (manifest.get(f.name) or {}).get("data")
        if manifest and d.get("data") and now != d["data"]:
            raise UserError(f"{path} was rewritten by a later run with another data pattern "
                            f"(no verify headers, or other ones): its blocks cannot be checked "
                            f"against this run's")
        out.append((f, path))
    return out


class Meter:
    """The bytes the pass has read, from every host at once: `show(read, total)` at most
    once a second."""

    def __init__(self, total: int, show: Callable[[int, int], None] | None):
        self.total, self.show = total, show
        self.read = 0
        self._lock = threading.Lock()
        self._shown = 0.0

    def __call__(self, n: int) -> None:
        with self._lock:
            self.read += n
            now = time.monotonic()
            if self.show is None or now - self._shown < 1.0:
                return
            self._shown = now
            self.show(self.read, self.total)

    def done(self) -> None:
        """The pass ended: what it read in all, shown once more (a pass under a second too)."""
        with self._lock:
            if self.show is not None and self.read:
                self.show(self.read, self.total)


def verify_run(run_dir: Path, record: RunRecord, stop: threading.Event,
               progress: Callable[[int, int], None] | None = None,
               hosts: Sequence[Host] | None = None,
               runner_for: hostverify.RunnerFor = hostverify.ssh) -> dict[str, Any]:
    """One pass over the run's blocks where they are: this machine's target, or each host's
    (`hosts`: an inventory that names them) for a cluster run. `progress(read, total)`: the
    bytes read so far, at most once a second."""
    section = section_of(run_dir, record)
    if any(f.get("host") for f in section["files"]):
        specs = hostverify.specs(run_dir, section, hosts)
        files = [f"{h}:{a['path']}" for h, (_, s) in specs.items() for a in s["areas"]]
        meter = Meter(sum(int(a["block"]) * int(a["blocks"]) for _, s in specs.values()
                          for a in s["areas"]), progress)

        def one_pass() -> dict[str, Any]:
            return hostverify.on_hosts(specs, stop, runner_for, meter)
    else:
        areas, gens, direct = load(run_dir, record)
        data = data_files(record)
        files = [str(a.path) for a in areas] + [str(p) for _, p in data]
        meter = Meter(sum(a.size for a in areas) + sum(p.stat().st_size for _, p in data),
                      progress)

        def one_pass() -> dict[str, Any]:
            return run_pass(areas, gens, direct, hostverify.LABEL, None, None, stop, meter,
                            data=data)
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "run": run_dir.name,
                           "started": time.time(), "status": "running", "files": files}
    _write(run_dir, doc)
    result = one_pass()
    meter.done()
    if result["status"] != "completed" and stop.is_set():  # on a cluster: some hosts' too
        result["status"], result["reason"] = "interrupted", "interrupted by the user"
    problems = sum(int(result[p.value]) for p in PROBLEMS)
    if result["status"] == "completed":
        doc["status"] = "failed" if problems else "passed"
    else:
        doc["status"] = result["status"]  # interrupted or failed: no verdict on the rest
    doc.update({"ended": time.time(), "pass": result})
    _write(run_dir, doc)
    return doc


def _write(run_dir: Path, doc: dict[str, Any]) -> None:
    tmp = run_dir / f".{RESULT}.tmp"
    tmp.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    os.replace(tmp, run_dir / RESULT)
