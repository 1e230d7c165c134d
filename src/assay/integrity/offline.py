"""`assay verify RUN`: a Jetstress-style checksum pass over a finished run's integrity blocks,
against the journal the run left, with its throughput and a verdict, into RUN/verify.json.

verify.json is written when the pass starts (status `running`), then with the outcome:
`passed` (every block ok), `failed` (a block lost, stale, corrupt or unreadable), or
`interrupted` (Ctrl-C, SIGTERM: the counts of what was read so far, no verdict on the rest).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError
from assay.integrity.area import Area, aligned, open_file
from assay.integrity.block import HEADER, MAGIC, PROBLEMS
from assay.integrity.fiojobs import HeadedFile
from assay.integrity.journal import Journal
from assay.integrity.verify import run_pass
from assay.platforms.safety import read_manifest
from assay.results.record import RunRecord

RESULT = "verify.json"
SCHEMA_VERSION = 1


def load(run_dir: Path, record: RunRecord) -> tuple[list[Area], dict[str, Any], bool]:
    """The run's integrity files and journals; a UserError when they cannot be checked."""
    section = record.integrity
    if not section or not section.get("files"):
        raise UserError(f"run {run_dir.name} was not in integrity mode: nothing to verify "
                        f"(`integrity: on` in the scenario, or `verify: true` on a workload)")
    if any(f.get("host") for f in section["files"]):
        raise UserError(f"run {run_dir.name} verified its blocks on its hosts (a cluster run): "
                        f"`assay verify` checks a one-host run's target; its passes are in "
                        f"run.json (`assay show {run_dir.name}`)")
    target = Path(record.target.path or "")
    if record.target.removed:
        raise UserError(f"run {run_dir.name} wrote to a temporary directory that was removed "
                        f"when it ended; run with --keep (or a target path) to verify later")
    areas = [Area.from_json(f, target) for f in section["files"]]
    gens = {}
    for a, f in zip(areas, section["files"], strict=True):
        if not a.path.is_file():
            raise UserError(f"{a.path}: the integrity file of workload {a.workload!r} is gone "
                            f"(the target was removed or cleaned)")
        # a truncated file is not refused: the blocks past its end read as zeros, lost
        _same_writer(a)
        journal = run_dir / str(f["journal"])
        try:
            gens[a.workload] = Journal.load(journal.parent, journal.name, a.blocks,
                                            f.get("journal_digest")).gens
        except (OSError, ValueError) as e:
            why = f"{e.strerror}: {e.filename}" if isinstance(e, OSError) else str(e)
            raise UserError(f"the journal of workload {a.workload!r} is missing or damaged, "
                            f"so verify cannot tell a stale block from a current one: "
                            f"{why}") from None
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


def _same_writer(a: Area) -> None:
    """Refuse a file that a later run has rewritten: its blocks would all look misplaced."""
    fd, _ = open_file(a.path, os.O_RDONLY, True)
    buf = aligned(a.block)
    try:
        os.preadv(fd, [buf], 0)
        magic, _, _, writer, _ = HEADER.unpack_from(buf, 0)
    except OSError:
        return  # the pass reports it unreadable
    finally:
        buf.close()
        os.close(fd)
    if magic == MAGIC and writer != a.writer:
        raise UserError(f"{a.path} now holds another run's blocks (writer {writer:x}, this run "
                        f"{a.writer:x}): a later run on the same target rewrote it")


def verify_run(run_dir: Path, record: RunRecord, stop: threading.Event,
               progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    areas, gens, direct = load(run_dir, record)
    data = data_files(record)
    started = time.time()
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "run": run_dir.name,
                           "started": started, "status": "running",
                           "files": [str(a.path) for a in areas] + [str(p) for _, p in data]}
    _write(run_dir, doc)
    result = run_pass(areas, gens, direct, "assay verify", None, None, stop, progress,
                      data=data)
    if result["status"] == "interrupted" and stop.is_set():
        result["reason"] = "interrupted by the user"
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
