"""Prefill: write each workload's files, with its data pattern, before measuring, on every
host of the run at once (a local run is its one host).

Reading never-written blocks measures the platform's shortcut for holes, and written data that
compresses or dedupes differently from the run's flatters or hurts a platform with data
reduction. So every file is written sequentially in 1 MiB IOs with the same data options as
the workload's writes. A file stays valid for later runs while its manifest entry (files.py)
matches this run's and the file is whole; `--fresh` rewrites it. The files about to be
written are listed as not prefilled before the first byte (a prefill cut short leaves nothing
to reuse), and as prefilled when it ends well.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from types import MappingProxyType
from typing import Any

from rich.console import Console

from assay.console import LiveProgress
from assay.exitcodes import RunAborted
from assay.plan.model import PREFILL_PREFIX
from assay.prefill.files import DataFiles, Run, write
from assay.results.rundir import RunDir
from assay.runners.base import FioRun
from assay.scenario.units import format_size

Start = Callable[[dict[str, list[str]]], FioRun]  # fio on each host, with its sections


def prefill(hosts: dict[str, tuple[Run, DataFiles]], start: Start, run_dir: RunDir,
            console: Console, fresh: bool, lost: Mapping[str, Any] = MappingProxyType({})
            ) -> dict[str, Any]:
    """Every host writes its stale files at once; run.json's `prefill` (with each host's, on a
    cluster). Each host's DataFiles are as its check read and claimed them, before any IO
    (files.py). `lost`: the hosts lost meanwhile, by name, each with its `reason`."""
    todo = {h: df.stale(fresh) for h, (_, df) in hosts.items()}
    per_host = {h: {"files": len(todo[h]), "bytes": sum(s for _, s in todo[h]),
                    "reused_files": len(df.files) - len(todo[h])} for h, (_, df) in hosts.items()}
    total = sum(v["bytes"] for v in per_host.values())
    info: dict[str, Any] = {"files": sum(v["files"] for v in per_host.values()), "bytes": total,
                            "reused_files": sum(v["reused_files"] for v in per_host.values()),
                            "fresh": fresh}
    if any(df.nested for _, df in hosts.values()):
        info["hosts"] = per_host
    on = f" on {len(hosts)} hosts" if "hosts" in info else ""
    if not info["files"]:
        run_dir.event("prefill", outcome="reused", files=info["reused_files"])
        console.print(f"prefill: reusing {info['reused_files']} files{on}; --fresh rewrites "
                      f"them")
        return info
    _each(lambda h: _note(hosts[h], [n for n, _ in todo[h]], False), [h for h in hosts if todo[h]])
    t0 = time.monotonic()
    run_dir.event("prefill", outcome="started", files=info["files"], bytes=total,
                  reused_files=info["reused_files"])
    fio = start({h: [f"{PREFILL_PREFIX}{n}" for n, _ in t] for h, t in todo.items() if t})
    try:
        with LiveProgress(console, "prefill", total) as bar:
            for doc in fio.documents():
                if doc is None:
                    continue
                written = sum(j["write"]["io_bytes"] for j in doc.get("jobs", []))
                rate = written / max(time.monotonic() - t0, 1e-3) / 1e6
                bar.update(written, f"{format_size(written)} {rate:.0f} MB/s{on}")
    except BaseException:
        fio.stop()
        fio.wait()
        raise
    rc = fio.wait()
    if lost or rc != 0:
        why = "; ".join(f"{h}: {v['reason']}" for h, v in lost.items())
        raise RunAborted(f"prefill failed: {why or f'fio exit {rc}: {fio.stderr_tail()}'}")
    _each(lambda h: _note(hosts[h], [n for n, _ in todo[h]], True), [h for h in hosts if todo[h]])
    info["seconds"] = round(time.monotonic() - t0, 2)
    run_dir.event("prefill", outcome="done", seconds=info["seconds"])
    return info


def _note(host: tuple[Run, DataFiles], names: list[str], prefilled: bool) -> None:
    run, df = host
    df.note(names, prefilled)
    why = write(run, df)
    if why:
        raise RunAborted(f"{df.host}: cannot write the manifest of its files in {df.target}: "
                         f"{why}")


def _each(fn: Callable[[str], Any], hosts: list[str]) -> None:
    """`fn` on each host at once (a command over SSH each)."""
    if len(hosts) == 1:
        fn(hosts[0])
    elif hosts:
        with ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
            list(pool.map(fn, hosts))
