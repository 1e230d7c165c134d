"""The per-second streams of a run (samples with their latency histograms, series), written
compactly and consistently at every second, in memory that does not grow with the run; read
back lazily (StoredRows), and their size on disk.

A stream `<name>` is two files in the run directory (their format: results/blockformat.py):

    <name>.ndjson   the tail: the last seconds, one JSON line per row, flushed every second
    <name>.blocks   sealed blocks of BLOCK_S seconds each, appended

Every BLOCK_S seconds the tail is encoded as one block, appended and synced, and only then
emptied. A crash between the two leaves the rows in both places; readers skip the repeat
(results/blockread.py). Rows need not come in time order (a cluster's hosts, the jobs of one
second): a tail row of a second a block holds too is still read.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from assay.results.blockformat import HEADER, MAGIC, blocks, encode, readable_rows
from assay.results.blockread import read_rows as read_rows  # most readers import it from here

BLOCK_S = 60.0  # seconds per sealed block: the tail holds at most this much plain text


class BlockLog:
    """Appends the rows of one stream; `seal` (every BLOCK_S seconds, and at `close`) moves
    the tail into a compressed block."""

    def __init__(self, directory: Path, name: str, block_s: float | None = None):
        self.tail = directory / f"{name}.ndjson"
        self.blocks = directory / f"{name}.blocks"
        self.block_s = block_s or BLOCK_S
        self._fh = open(self.tail, "a+", encoding="utf-8")  # noqa: SIM115 - held for the run
        self._span: tuple[float, float] | None = None  # the tail's lowest and highest `t`
        # bytes of whole blocks written (a torn one after them is cut off), those of a stream
        # opened again included
        self._end = max((o + n for _, _, o, n in blocks(self.blocks)), default=0)
        self.rows = 0  # appended so far
        self.last_t: float | None = None

    def append(self, rows: Iterable[str | dict[str, Any]]) -> None:
        """One second's rows (JSON lines or dicts), flushed: the stream is whole to here."""
        lines = [r if isinstance(r, str) else json.dumps(r, separators=(",", ":"))
                 for r in rows]
        if not lines:
            return
        first, last = (float(json.loads(line)["t"]) for line in (lines[0], lines[-1]))
        try:
            self._fh.write("".join(line + "\n" for line in lines))
            self._fh.flush()
        except OSError as e:  # name the file: a write error says nothing of where it was
            raise OSError(e.errno, e.strerror, str(self.tail)) from None
        self.rows += len(lines)
        self.last_t = last
        # lowest to highest, not first to last: rows may go back in time (another host's)
        lo, hi = self._span or (first, first)
        lo, hi = min(lo, first, last), max(hi, first, last)
        self._span = (lo, hi)
        if hi - lo >= self.block_s:
            self.seal()

    def seal(self) -> None:
        """Tail -> one block, synced, then an empty tail."""
        self._fh.seek(0)
        ts: list[float] = []

        def rows() -> Iterator[dict[str, Any]]:
            for row in readable_rows(self._fh):
                ts.append(round(float(row["t"]), 3))  # as decoded: milliseconds
                yield row

        payload = encode(rows())
        if not ts:
            return
        head = HEADER.pack(MAGIC, len(payload), zlib.crc32(payload), min(ts), max(ts))
        try:
            with open(self.blocks, "ab") as out:
                if out.tell() != self._end:  # a block torn by an earlier failed write
                    out.truncate(self._end)
                out.write(head + payload)
                out.flush()
                os.fsync(out.fileno())
        except OSError as e:  # named, as append's: which file could not grow
            raise OSError(e.errno, e.strerror, str(self.blocks)) from None
        self._end += len(head) + len(payload)
        self._fh.truncate(0)
        self._fh.seek(0)
        self._span = None

    def close(self) -> None:
        """The last seconds stay in the tail, as plain NDJSON: a run shorter than a block
        is a plain NDJSON file, as before this store."""
        try:
            self._fh.close()
        except OSError as e:
            raise OSError(e.errno, e.strerror, str(self.tail)) from None


def stored_bytes(run_dir: Path, name: str) -> int:
    return sum(p.stat().st_size for p in (run_dir / f"{name}.blocks", run_dir / f"{name}.ndjson")
               if p.exists())


def directory_bytes(path: Path) -> int:
    """The size of a run directory, as `du` would count its files."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class StoredRows:
    """A stream read again from disk each time it is iterated: what the verdict walks instead
    of a list of every second."""

    def __init__(self, run_dir: Path, name: str, count: int | None = None):
        self.run_dir, self.name = run_dir, name
        self._count = count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return read_rows(self.run_dir, self.name)

    def __len__(self) -> int:
        if self._count is None:
            self._count = sum(1 for _ in self)
        return self._count

    def __contains__(self, row: object) -> bool:
        return any(r == row for r in self)


class RunStreams:
    """The engine's per-second streams: `series` (one row per component, for charts),
    `samples` (the same seconds with histogram bins, for exact re-aggregation) and `hosts`
    (each host's utilisation)."""

    def __init__(self, run_dir: Path):
        self.series = BlockLog(run_dir, "series")
        self.samples = BlockLog(run_dir, "samples")
        self.hosts = BlockLog(run_dir, "hosts")

    def append(self, series: list[dict[str, Any]], samples: list[str]) -> None:
        self.series.append(series)
        self.samples.append(samples)

    def close(self) -> int:
        """Returns how many samples were recorded; every log is closed even when one fails
        (a full disk), and the first failure is raised then."""
        failure: OSError | None = None
        for log in (self.series, self.samples, self.hosts):
            try:
                log.close()
            except OSError as e:
                failure = failure or e
        if failure:
            raise failure
        return self.samples.rows
