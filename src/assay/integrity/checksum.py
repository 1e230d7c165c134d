"""The checksum pass over the workload's own data files, as Jetstress reads every page of every
database: every block of a headed file (fiojobs.py) must carry a fio verify header whose own
CRC and whose data's CRC32C agree, at its own offset (fioheader.py), or it is corrupt, named by
file and offset. Staleness and loss are the journal's (verify.py): a header says a block is
whole, not that it is the last write acknowledged.

The prefill writes headers too, so every block has one from the start: a block without one
(zeros, someone else's data) is corrupt. During the load (`verify` steps) fio keeps writing
while the pass reads, and a read can catch a block half-written: a bad block is read again
before it is counted, and counts only if it stays bad.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.integrity.area import AHEAD, CHUNK, OFFSETS_KEPT, aligned, open_file, read_blocks
from assay.integrity.fioheader import Fault, check, check_many
from assay.integrity.fiojobs import HeadedFile

CONFIRM_READS = 5  # a block read bad during the load is read up to this many times more
CONFIRM_WAIT_S = 0.02


@dataclass
class WorkloadChecksums:
    """The checksum pass over one workload's data files."""

    workload: str
    files: int = 0
    blocks: int = 0
    checked: int = 0
    corrupt: int = 0
    unreadable: int = 0
    bytes: int = 0
    direct: bool = True
    faults: dict[str, int] = field(default_factory=dict)  # corrupt blocks by Fault
    offsets: list[dict[str, Any]] = field(default_factory=list)  # the first ones

    def add(self, name: str, offset: int, fault: Fault | None) -> None:
        kind = "corrupt" if fault else "unreadable"
        if fault:
            self.corrupt += 1
            self.faults[fault.value] = self.faults.get(fault.value, 0) + 1
        else:
            self.unreadable += 1
        if len(self.offsets) < OFFSETS_KEPT:
            self.offsets.append({"file": name, "offset": offset, "state": kind,
                                 **({"fault": fault.value} if fault else {})})

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files, "blocks": self.blocks, "checked": self.checked,
                "ok": self.checked - self.corrupt - self.unreadable, "corrupt": self.corrupt,
                "unreadable": self.unreadable, "bytes": self.bytes, "direct": self.direct,
                "faults": self.faults, "offsets": self.offsets}


def check_file(f: HeadedFile, path: Path, result: WorkloadChecksums, direct: bool = True,
               stop: threading.Event | None = None, live: bool = False,
               progress: Callable[[int], None] | None = None) -> bool:
    """Every block of one headed file into `result`; whether it finished. AHEAD reads are in
    flight while a chunk is checked; `live`: fio may be writing (bad blocks are re-read)."""
    bs = f.interval
    blocks = f.size // bs
    per = max(1, CHUNK // bs)
    result.files += 1
    result.blocks += blocks
    fd, result.direct = open_file(path, os.O_RDONLY, direct)
    bufs = [aligned(per * bs) for _ in range(AHEAD + 1)]
    views = [memoryview(b) for b in bufs]
    free = list(range(len(bufs)))
    starts = iter(range(0, blocks, per))

    def read(first: int, k: int) -> tuple[int, int, int, set[int]]:
        n = min(per, blocks - first)
        return first, n, k, read_blocks(fd, views[k], n, bs, first * bs)

    pool = ThreadPoolExecutor(AHEAD, thread_name_prefix=f"checksum-{f.workload}")
    pending: deque[Future[tuple[int, int, int, set[int]]]] = deque()

    def submit() -> None:
        while free and (first := next(starts, None)) is not None:
            pending.append(pool.submit(read, first, free.pop()))

    try:
        submit()
        while pending:
            if stop is not None and stop.is_set():
                return False
            first, n, k, unreadable = pending.popleft().result()
            mv = views[k]
            for i in sorted(set(check_many(mv, bs, first * bs, n)) | unreadable):
                offset = (first + i) * bs
                if i in unreadable:
                    result.add(f.name, offset, None)
                    continue
                fault = check(mv[i * bs:(i + 1) * bs], bs, offset)
                if fault and live:
                    fault = _confirm(fd, bs, offset, fault, bytes(mv[i * bs:(i + 1) * bs]))
                if fault:
                    result.add(f.name, offset, fault)
            result.checked += n
            result.bytes += n * bs
            free.append(k)
            submit()
            if progress:
                progress(n * bs)
        return True
    finally:
        for p in pending:
            p.cancel()
        pool.shutdown(wait=True)  # a read in flight ends before its buffer goes
        for v in views:
            v.release()
        for b in bufs:
            b.close()
        os.close(fd)


def _confirm(fd: int, bs: int, offset: int, fault: Fault, first: bytes) -> Fault | None:
    """A block read bad while fio writes: read it again until it is whole (a write was in
    flight) or reads the same twice (damage stays: it counts)."""
    buf = aligned(bs)
    mv = memoryview(buf)[:bs]
    last = first
    try:
        for i in range(CONFIRM_READS):
            time.sleep(CONFIRM_WAIT_S * (i + 1))
            if read_blocks(fd, mv, 1, bs, offset):
                return fault  # now unreadable: keep what the first read found
            again = check(mv, bs, offset)
            if again is None:
                return None
            if mv == last:
                return again
            fault, last = again, bytes(mv)
        return fault
    finally:
        mv.release()
        buf.close()


def check_files(files: list[tuple[HeadedFile, Path]], direct: bool = True,
                stop: threading.Event | None = None, live: bool = False,
                progress: Callable[[int], None] | None = None,
                out: dict[str, WorkloadChecksums] | None = None) -> bool:
    """The pass over every headed file into `out` (per workload, counted as it goes, so an
    interrupted pass keeps what it saw); whether it finished."""
    out = {} if out is None else out
    for f, path in files:
        result = out.setdefault(f.workload, WorkloadChecksums(f.workload))
        if not check_file(f, path, result, direct, stop, live, progress):
            return False
    return True


def summary(results: dict[str, WorkloadChecksums]) -> dict[str, Any]:
    """The pass record's `data_files`: totals and per workload."""
    per = {w: r.to_json() for w, r in results.items()}
    totals = {k: sum(int(r[k]) for r in per.values())
              for k in ("files", "blocks", "checked", "ok", "corrupt", "unreadable", "bytes")}
    return {**totals, "workloads": per}
