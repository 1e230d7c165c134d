"""The verify pass over integrity blocks: read a file (or an RBD image) in large direct reads
and classify every block against the journal (block.py). A failed read is retried block by
block, so an unreadable range is located to the block. It stops early, with status
`interrupted` and what it counted so far, on Ctrl-C or when `stop` is set.

The same code runs here (integrity/verify.py adds the workloads' own data files) and on a host
(the agent's `integrity` command).
"""

from __future__ import annotations

import contextlib
import functools
import struct
import threading
import time
from array import array
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from .area import AHEAD, CHUNK, OFFSETS_KEPT, Area, aligned, read_blocks
from .block import HEADER, MAGIC, PROBLEMS, RESIDUE, State, classify, crc32


class DataPass(Protocol):
    """The workloads' own data files, checked after the blocks (integrity/verify.py)."""

    def run(self, stop: threading.Event | None) -> bool:
        """Check them all (counted as it goes); whether it finished."""

    def summary(self) -> dict[str, Any]:
        """What it counted so far: totals (`bytes`, `corrupt`, `unreadable`, ...)."""


@dataclass
class FileResult:
    workload: str
    blocks: int
    checked: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {s.value: 0 for s in State})
    offsets: dict[str, list[int]] = field(default_factory=lambda: {s.value: [] for s in PROBLEMS})
    bytes: int = 0
    direct: bool = True

    def add(self, state: State, offset: int) -> None:
        self.counts[state.value] += 1
        if state is not State.OK and len(self.offsets[state.value]) < OFFSETS_KEPT:
            self.offsets[state.value].append(offset)

    def to_json(self) -> dict[str, Any]:
        return {"blocks": self.blocks, "checked": self.checked, **self.counts,
                "offsets": {k: v for k, v in self.offsets.items() if v}, "bytes": self.bytes,
                "direct": self.direct}


def verify_file(area: Area, gens: array[int], result: FileResult, direct: bool = True,
                lock: threading.Lock | None = None, stop: threading.Event | None = None,
                progress: Callable[[int], None] | None = None) -> bool:
    """Check every block of `area` into `result` (counted as it goes, so an interrupted pass
    keeps what it saw); whether it finished. `gens` is read under `lock` chunk by chunk, so a
    writer that keeps writing meanwhile is never caught half-way. AHEAD reads are in flight
    while a chunk is checked (reads release the GIL, and a device likes a queue), and chunks
    are checked in order, so the offsets kept are the first ones."""
    bs = area.block
    per = max(1, CHUNK // bs)
    dev, result.direct = area.open_read(direct)
    bufs = [aligned(per * bs) for _ in range(AHEAD + 1)]
    views = [memoryview(b) for b in bufs]
    free = list(range(len(bufs)))
    starts = iter(range(0, area.blocks, per))
    guard: contextlib.AbstractContextManager[Any] = lock or contextlib.nullcontext()

    def read(first: int, k: int) -> _Chunk:
        n = min(per, area.blocks - first)
        with guard:
            expected = gens[first:first + n]
            bad = read_blocks(dev, views[k], n, bs, first * bs)
        return _Chunk(first, n, k, expected, bad)

    pool = ThreadPoolExecutor(AHEAD, thread_name_prefix=f"verify-{area.workload}")
    pending: deque[Future[_Chunk]] = deque()

    def submit() -> None:
        while free:
            first = next(starts, None)
            if first is None:
                return
            pending.append(pool.submit(read, first, free.pop()))

    try:
        submit()
        while pending:
            if stop is not None and stop.is_set():
                return False
            chunk = pending.popleft().result()
            _check(views[chunk.buffer], chunk, area, result)
            free.append(chunk.buffer)
            submit()
            if progress:
                progress(chunk.n * bs)
        return True
    finally:
        for f in pending:
            f.cancel()
        pool.shutdown(wait=True)  # a read in flight ends before its buffer goes
        for v in views:
            v.release()
        for b in bufs:
            b.close()
        dev.close()


@dataclass
class _Chunk:
    first: int  # block index
    n: int
    buffer: int
    expected: array[int]
    unreadable: set[int]


def _check(mv: memoryview, chunk: _Chunk, area: Area, result: FileResult) -> None:
    """Every block of a chunk: the headers unpacked in C (one struct spanning a block), one
    CRC call per block, the rare problem classified in full."""
    bs, writer, pos, n = area.block, area.writer, chunk.first * area.block, chunk.n
    check, expected, unreadable = crc32, chunk.expected, chunk.unreadable
    ok, s, off = 0, 0, pos
    for exp, (magic, o, gen, who) in zip(expected, _blocks(bs).iter_unpack(mv[:n * bs])):  # noqa: B905 (3.9)
        if check(mv[s:s + bs]) == RESIDUE and gen >= exp and o == off and who == writer \
                and magic == MAGIC and not (unreadable and s // bs in unreadable):
            ok += 1
        elif unreadable and s // bs in unreadable:
            result.add(State.UNREADABLE, off)
        else:
            result.add(classify(mv, s, bs, off, exp, writer), off)
        s += bs
        off += bs
    result.counts["ok"] += ok
    result.checked += n
    result.bytes += n * bs


@functools.lru_cache(maxsize=None)  # noqa: UP033 (3.9)
def _blocks(size: int) -> struct.Struct:
    """A block as magic, offset, generation, writer and the rest skipped."""
    return struct.Struct(f"{HEADER.format[:-1]}{size - HEADER.size + 8}x")


def totals(files: list[FileResult]) -> dict[str, int]:
    out = {"blocks": sum(f.blocks for f in files), "checked": sum(f.checked for f in files)}
    for s in State:
        out[s.value] = sum(f.counts[s.value] for f in files)
    return out


def run_pass(areas: list[Area], gens: dict[str, array[int]], direct: bool, label: str,
             t: float | None = None, locks: dict[str, threading.Lock] | None = None,
             stop: threading.Event | None = None,
             progress: Callable[[int], None] | None = None,
             sink: list[dict[str, Any]] | None = None,
             data: DataPass | None = None) -> dict[str, Any]:
    """One pass over every area: the pass's record (status completed / interrupted / failed),
    also appended to `sink`. Whatever else ends it (the run being stopped) is re-raised once
    the pass is in `sink` as interrupted, with what it had counted. `data`: the workloads' own
    headed files, checked after the blocks (integrity/checksum.py); their corrupt and
    unreadable blocks count in the pass's totals."""
    started = time.monotonic()
    files: list[FileResult] = []
    status, reason = "completed", ""

    def record() -> dict[str, Any]:
        checked = data.summary() if data is not None else {}
        seconds = time.monotonic() - started
        nbytes = sum(f.bytes for f in files) + int(checked.get("bytes", 0))
        result = {"label": label, **({"t": round(t, 2)} if t is not None else {}),
                  "status": status, **({"reason": reason} if reason else {}),
                  "seconds": round(seconds, 3), "bytes": nbytes,
                  "mbps": round(nbytes / 1e6 / seconds, 1) if seconds > 0 else 0.0,
                  **totals(files), "workloads": {f.workload: f.to_json() for f in files}}
        if checked:
            result["data_files"] = checked
            for k in ("corrupt", "unreadable"):
                result[k] += checked[k]
        if sink is not None:
            sink.append(result)
        return result

    try:
        for a in areas:
            files.append(FileResult(a.workload, a.blocks))
            done = verify_file(a, gens[a.workload], files[-1], direct,
                               (locks or {}).get(a.workload), stop, progress)
            if not done:
                status, reason = "interrupted", "the run ended during the pass"
                break
        if data is not None and status == "completed" and not data.run(stop):
            status, reason = "interrupted", "the run ended during the pass"
    except KeyboardInterrupt:
        status, reason = "interrupted", "interrupted by the user"
    except OSError as e:
        status, reason = "failed", f"{e.strerror or e}: {e.filename or ''}".rstrip(": ")
    except BaseException:
        status, reason = "interrupted", "the run was stopped during the pass"
        record()
        raise
    return record()
