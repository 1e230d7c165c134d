"""The verify pass: read an integrity file in large direct reads and classify every block
against the journal (block.py). A failed read is retried block by block, so an unreadable
range is located to the block. It stops early, with status `interrupted` and what it counted
so far, on Ctrl-C or when `stop` is set.
"""

from __future__ import annotations

import contextlib
import errno
import os
import queue
import threading
import time
import zlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from assay.integrity.area import Area, aligned, open_file
from assay.integrity.block import CRC, HEADER, MAGIC, PROBLEMS, State, classify

CHUNK = 4 << 20
OFFSETS_KEPT = 100  # per kind of problem and file, the first ones


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
    writer that keeps writing meanwhile is never caught half-way. A reader thread reads the
    next chunk while this one is checked (reads release the GIL; checking is CPU)."""
    bs = area.block
    per = max(1, CHUNK // bs)
    fd, result.direct = open_file(area.path, os.O_RDONLY, direct)
    bufs = [aligned(per * bs) for _ in range(2)]
    views = [memoryview(b) for b in bufs]
    ready: queue.Queue[_Chunk | BaseException | None] = queue.Queue(maxsize=1)
    free: queue.Queue[int] = queue.Queue()
    for i in range(len(bufs)):
        free.put(i)
    quit_ = threading.Event()
    guard: contextlib.AbstractContextManager[Any] = lock or contextlib.nullcontext()

    def reader() -> None:
        try:
            for first in range(0, area.blocks, per):
                k = free.get()
                if quit_.is_set():
                    return
                n = min(per, area.blocks - first)
                with guard:
                    expected = gens[first:first + n]
                    bad = _read(fd, views[k], n, bs, first * bs)
                ready.put(_Chunk(first, n, k, expected, bad))
            ready.put(None)
        except BaseException as e:  # noqa: BLE001 - handed to the checking thread
            ready.put(e)

    thread = threading.Thread(target=reader, name=f"verify-{area.workload}", daemon=True)
    thread.start()
    try:
        while True:
            if stop is not None and stop.is_set():
                return False
            chunk = ready.get()
            if chunk is None:
                return True
            if isinstance(chunk, BaseException):
                raise chunk
            _check(views[chunk.buffer], chunk, area, result)
            free.put(chunk.buffer)
            if progress:
                progress(chunk.n * bs)
    finally:
        quit_.set()
        free.put(0)  # wake a reader waiting for a buffer
        while thread.is_alive():  # let a read in flight end before its buffer goes
            with contextlib.suppress(queue.Empty):
                ready.get(timeout=0.05)
        for v in views:
            v.release()
        for b in bufs:
            b.close()
        os.close(fd)


@dataclass
class _Chunk:
    first: int  # block index
    n: int
    buffer: int
    expected: array[int]
    unreadable: set[int]


def _check(mv: memoryview, chunk: _Chunk, area: Area, result: FileResult) -> None:
    bs, writer, pos = area.block, area.writer, chunk.first * area.block
    crc32, crc_at, header_at = zlib.crc32, CRC.unpack_from, HEADER.unpack_from
    expected, unreadable, counts = chunk.expected, chunk.unreadable, result.counts
    for i in range(chunk.n):
        s = i * bs
        e = s + bs - CRC.size
        off = pos + s
        if unreadable and i in unreadable:
            result.add(State.UNREADABLE, off)
            continue
        exp = expected[i]
        if crc32(mv[s:e]) == crc_at(mv, e)[0]:  # the common case, inline
            magic, o, gen, who, _ = header_at(mv, s)
            if magic == MAGIC and o == off and who == writer and gen >= exp:
                counts["ok"] += 1
                continue
        result.add(classify(mv, s, bs, off, exp, writer), off)
    result.checked += chunk.n
    result.bytes += chunk.n * bs


def _read(fd: int, mv: memoryview, n: int, bs: int, pos: int) -> set[int]:
    """Read n blocks at pos into mv; the indexes of the blocks that could not be read. A short
    read (a truncated file) leaves zeros: those blocks are lost, not unreadable."""
    try:
        got = os.preadv(fd, [mv[:n * bs]], pos)
        if got < n * bs:
            mv[got:n * bs] = bytes(n * bs - got)
        return set()
    except OSError as e:
        if e.errno not in (errno.EIO, errno.ENODATA, errno.EUCLEAN):
            raise
    bad = set()
    for i in range(n):  # locate the unreadable blocks
        try:
            os.preadv(fd, [mv[i * bs:(i + 1) * bs]], pos + i * bs)
        except OSError:
            bad.add(i)
    return bad


def totals(files: list[FileResult]) -> dict[str, int]:
    out = {"blocks": sum(f.blocks for f in files), "checked": sum(f.checked for f in files)}
    for s in State:
        out[s.value] = sum(f.counts[s.value] for f in files)
    return out


def run_pass(areas: list[Area], gens: dict[str, array[int]], direct: bool, label: str,
             t: float | None = None, locks: dict[str, threading.Lock] | None = None,
             stop: threading.Event | None = None,
             progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """One pass over every file: the pass's record (status completed / interrupted / failed)."""
    started = time.monotonic()
    files: list[FileResult] = []
    status, reason = "completed", ""
    try:
        for a in areas:
            files.append(FileResult(a.workload, a.blocks))
            done = verify_file(a, gens[a.workload], files[-1], direct,
                               (locks or {}).get(a.workload), stop, progress)
            if not done:
                status, reason = "interrupted", "the run ended during the pass"
                break
    except KeyboardInterrupt:
        status, reason = "interrupted", "interrupted by the user"
    except OSError as e:
        status, reason = "failed", f"{e.strerror or e}: {e.filename or ''}".rstrip(": ")
    seconds = time.monotonic() - started
    nbytes = sum(f.bytes for f in files)
    return {"label": label, **({"t": round(t, 2)} if t is not None else {}),
            "status": status, **({"reason": reason} if reason else {}),
            "seconds": round(seconds, 3), "bytes": nbytes,
            "mbps": round(nbytes / 1e6 / seconds, 1) if seconds > 0 else 0.0,
            **totals(files), "workloads": {f.workload: f.to_json() for f in files}}
