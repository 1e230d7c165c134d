"""Prefill: write each workload's files, with its data pattern, before measuring.

Reading never-written blocks measures the platform's shortcut for holes, and written data that
compresses or dedupes differently from the run's flatters or hurts a platform with data
reduction. So every file is written sequentially in 1 MiB IOs with the same data options as
the workload's writes. A file stays valid for later runs while its size and data pattern are
unchanged (recorded in the target's manifest); `--fresh` rewrites it.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.console import LiveProgress
from assay.exitcodes import RunAborted
from assay.fio.jobfile import render
from assay.plan import PREFILL_JOB, Plan
from assay.plan.model import PREFILL_PREFIX, prefill_jobs
from assay.platforms.safety import read_manifest, write_manifest
from assay.results.rundir import RunDir
from assay.runners import Runner
from assay.scenario.units import format_size

SPACE_MARGIN = 64 << 20  # keep this much free: a full filesystem misbehaves before it is full


def data_hash(plan: Plan, name: str) -> str:
    """What a prefilled file's content depends on: reuse it only when this is unchanged."""
    for job in prefill_jobs(plan):
        if job.name == f"{PREFILL_PREFIX}{name}":
            section = render({}, [job]).split("\n[prefill.", 1)[1]
            return hashlib.sha256(section.encode()).hexdigest()[:16]
    return ""


def stale_files(plan: Plan, manifest: dict[str, Any], directory: Path, fresh: bool,
                device: str | None) -> list[tuple[str, int]]:
    """The files that must be (re)written."""
    todo = []
    sets = plan.file_sets
    for name, size in plan.files:
        entry = manifest.get(name) or {}
        count = sets.get(name, 1)
        # a set of small files is whole when its first and last files are (a run that
        # deletes some of them deletes the first ones first)
        ends = [name] if count == 1 else [name.replace("$filenum", str(i)) for i in (0, count - 1)]
        reusable = (not fresh and entry.get("size") == size
                    and entry.get("data") == data_hash(plan, name) and entry.get("prefilled")
                    and (device is not None or all(
                        (directory / e).exists() and (directory / e).stat().st_size >= size // count
                        for e in ends)))
        if not reusable:
            todo.append((name, size))
    return todo


def prefill(plan: Plan, directory: Path, runner: Runner, run_dir: RunDir, console: Console, *,
            fresh: bool, env: dict[str, str], device: str | None = None) -> dict[str, Any]:
    """Write what is stale, from the plan's prefill job file; returns the facts for run.json.
    `directory` holds the manifest (and the files, unless they are on a raw `device`)."""
    manifest = read_manifest(directory)
    todo = stale_files(plan, manifest, directory, fresh, device)
    total = sum(s for _, s in todo)
    if not device:
        existing = sum((directory / n).stat().st_size for n, _ in todo if (directory / n).exists())
        free = shutil.disk_usage(directory).free
        if total - existing > free - SPACE_MARGIN:
            raise RunAborted(f"not enough free space in {directory}: the dataset needs "
                             f"{format_size(total - existing)} more, {format_size(free)} is "
                             f"free. Lower `dataset` or choose another target.")
    for name, size in plan.files:  # claim the files before writing a byte
        manifest.setdefault(name, {"size": size, "created": time.time()})
    write_manifest(directory, manifest)
    reused = len(plan.files) - len(todo)
    info: dict[str, Any] = {"files": len(todo), "bytes": total, "reused_files": reused,
                            "fresh": fresh}
    if not todo:
        run_dir.event("prefill", outcome="reused", files=reused)
        console.print(f"prefill: reusing {reused} files ({format_size(plan.dataset_bytes)}); "
                      f"--fresh rewrites them")
        return info
    t0 = time.monotonic()
    run_dir.event("prefill", outcome="started", files=len(todo), bytes=total)
    fio = runner.start(PREFILL_JOB, env, sections=[f"{PREFILL_PREFIX}{n}" for n, _ in todo])
    try:
        with LiveProgress(console, "prefill", total) as bar:
            for doc in fio.documents():
                if doc is None:
                    continue
                written = sum(j["write"]["io_bytes"] for j in doc.get("jobs", []))
                rate = written / max(time.monotonic() - t0, 1e-3) / 1e6
                bar.update(written, f"{format_size(written)} {rate:.0f} MB/s")
    except BaseException:
        fio.stop()
        fio.wait()
        raise
    rc = fio.wait()
    if rc != 0:
        raise RunAborted(f"prefill failed (fio exit {rc}): {fio.stderr_tail()}")
    for name, size in todo:
        manifest[name] = {"size": size, "data": data_hash(plan, name), "prefilled": True,
                          "created": time.time()}
    write_manifest(directory, manifest)
    info["seconds"] = round(time.monotonic() - t0, 2)
    run_dir.event("prefill", outcome="done", seconds=info["seconds"])
    return info
