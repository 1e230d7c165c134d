"""Per-second rows of a run (samples with their latency histograms, series) stored compactly
and consistently at every second, in memory that does not grow with the run.

A stream `<name>` is two files in the run directory:

    <name>.ndjson   the tail: the last seconds, one JSON line per row, flushed every second
    <name>.blocks   sealed blocks of BLOCK_S seconds each, appended: a header (magic, payload
                    length, CRC-32, first and last `t`) and a zlib-compressed columnar payload

Every BLOCK_S seconds the tail is encoded as one block, appended and synced, and only then
emptied. A crash between the two leaves the rows in both places: readers skip a tail that
starts with the last block's rows (their `t`, in order). Rows need not come in time order
(a cluster's hosts, the jobs of one second): a tail row of a second a block holds too is
still read. A torn block (killed mid-write) fails its length or CRC and ends the blocks;
the tail still holds its rows. Runs from before this store have only `<name>.ndjson`,
holding every row, and read the same way.

The payload is columnar: one JSON list per key (`t` as millisecond deltas, strings as indices
into a names table, histogram bins flattened to per-row bin counts, key deltas and counts).
Columns of similar numbers compress far better than text rows: 24 h x 16 components of
samples and series take 15.3 MB instead of 834 MB of NDJSON (bench/long_run.py).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import struct
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

BLOCK_S = 60.0  # seconds per sealed block: the tail holds at most this much plain text
MAGIC = b"ASB1"
HEADER = struct.Struct("<4sIIdd")  # magic, payload bytes, crc32, first t, last t
BINS = "bins"


def encode(rows: Iterable[dict[str, Any]]) -> bytes:
    """Rows -> a columnar, compressed payload (see the module docstring). Rows are taken one
    at a time into the columns: a block never holds its rows as dicts all at once."""
    raw: dict[str, list[Any]] = {}
    bins: dict[str, list[int]] = {"n": [], "k": [], "v": []}
    n = 0
    for r in rows:
        for k, value in r.items():
            if k == BINS:
                continue
            col = raw.get(k)
            if col is None:
                col = raw[k] = [None] * n
            col.append(value)
        n += 1
        for col in raw.values():
            if len(col) < n:
                col.append(None)
        b = r.get(BINS) or {}
        bins["n"].append(len(b))
        prev = 0
        for key, v in sorted((int(x), y) for x, y in b.items()):
            bins["k"].append(key - prev)
            bins["v"].append(v)
            prev = key
    keys = list(raw)
    if any(bins["n"]):
        keys.append(BINS)
    cols: dict[str, Any] = {"n": n, "keys": keys}
    for k in keys:
        if k == BINS:
            cols[k] = bins
            continue
        values = raw[k]
        if k == "t":
            ms = [round(float(v) * 1000) for v in values]
            cols[k] = {"d": [b - a for a, b in zip([0, *ms[:-1]], ms, strict=True)]}
        elif all(isinstance(v, str) for v in values):
            names = sorted(set(values))
            index = {name: i for i, name in enumerate(names)}
            cols[k] = {"s": names, "i": [index[v] for v in values]}
        else:
            cols[k] = {"v": values}
    return zlib.compress(json.dumps(cols, separators=(",", ":")).encode(), 9)


def decode(payload: bytes) -> list[dict[str, Any]]:
    cols = json.loads(zlib.decompress(payload))
    n: int = cols["n"]
    columns: dict[str, list[Any]] = {}
    for k in cols["keys"]:
        c = cols[k]
        if k == BINS:
            it_k, it_v = iter(c["k"]), iter(c["v"])
            out = []
            for count in c["n"]:
                prev, bins = 0, {}
                for _ in range(count):
                    prev += next(it_k)
                    bins[str(prev)] = next(it_v)
                out.append(bins)
            columns[k] = out
        elif "d" in c:
            acc, ts = 0, []
            for d in c["d"]:
                acc += d
                ts.append(acc / 1000)
            columns[k] = ts
        elif "s" in c:
            columns[k] = [c["s"][i] for i in c["i"]]
        else:
            columns[k] = c["v"]
    keys = list(columns)
    return [{k: columns[k][i] for k in keys if columns[k][i] is not None or k != BINS}
            for i in range(n)]


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
            for row in _lines(self._fh):
                ts.append(round(float(row["t"]), 3))  # as decoded: milliseconds
                yield row

        payload = encode(rows())
        if not ts:
            return
        head = HEADER.pack(MAGIC, len(payload), zlib.crc32(payload), min(ts), max(ts))
        with open(self.blocks, "ab") as out:
            if out.tell() != self._end:  # a block torn by an earlier failed write
                out.truncate(self._end)
            out.write(head + payload)
            out.flush()
            os.fsync(out.fileno())
        self._end += len(head) + len(payload)
        self._fh.truncate(0)
        self._fh.seek(0)
        self._span = None

    def close(self) -> None:
        """The last seconds stay in the tail, as plain NDJSON: a run shorter than a block
        is a plain NDJSON file, as before this store."""
        self._fh.close()


def _lines(fh: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The readable rows of a tail; a torn last line (killed mid-write), or lines damaged
    since, are skipped (results/damage.py says what they held)."""
    for line in fh:
        line = line.strip()
        if not line:
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if valid_row(row):
            yield row


def valid_row(row: Any) -> bool:
    """A row as assay writes it: a mapping with a finite time `t`, and its histogram bins,
    if any, whole counts by bin. Anything else is damage, not data."""
    if not isinstance(row, dict):
        return False
    t = row.get("t")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        return False
    bins = row.get(BINS)
    return bins is None or isinstance(bins, dict) and all(
        isinstance(k, str) and k.isdigit() and isinstance(v, int) and not isinstance(v, bool)
        for k, v in bins.items())


def blocks(path: Path) -> Iterator[tuple[float, float, int, int]]:
    """(first t, last t, offset, length) of each whole block of a `.blocks` file."""
    if not path.exists():
        return
    with open(path, "rb") as fh:
        offset = 0
        while True:
            head = fh.read(HEADER.size)
            if len(head) < HEADER.size:
                return
            magic, length, crc, first, last = HEADER.unpack(head)
            payload = fh.read(length)
            if magic != MAGIC or len(payload) < length or zlib.crc32(payload) != crc:
                return  # torn or foreign: the rows after it are still in the tail
            yield first, last, offset + HEADER.size, length
            offset += HEADER.size + length


def read_block(path: Path, offset: int, length: int) -> list[dict[str, Any]]:
    with open(path, "rb") as fh:
        fh.seek(offset)
        return decode(fh.read(length))


def read_rows(run_dir: Path, name: str, every: int = 1) -> Iterator[dict[str, Any]]:
    """Every row of stream `name`, in order: sealed blocks, then the tail. `every` > 1 reads
    one block in that many (evenly spread, for a sampled view of a long run)."""
    path = run_dir / f"{name}.blocks"
    whole = list(blocks(path))
    for i, (_, _, offset, length) in enumerate(whole):
        if i % every == 0:
            yield from read_block(path, offset, length)
    yield from tail_rows(run_dir, name, whole)


def tail_rows(run_dir: Path, name: str, whole: list[tuple[float, float, int, int]]) \
        -> Iterator[dict[str, Any]]:
    """The tail's rows not already in a block (`whole`: the stream's blocks). A tail that
    starts with the last block's rows, `t` for `t`, is what a crash between sealing and
    emptying it left: those rows are skipped. Comparing `t` alone would drop rows appended
    after the seal with a `t` the block holds too (a second's rows split by the seal)."""
    tail = run_dir / f"{name}.ndjson"
    if not tail.exists():
        return
    sealed = _block_ms(run_dir / f"{name}.blocks", *whole[-1][2:]) if whole else []
    with open(tail, encoding="utf-8", errors="replace") as fh:
        rows = _lines(fh)
        head = list(itertools.islice(rows, len(sealed)))
        if [round(float(r["t"]) * 1000) for r in head] != sealed:
            yield from head
        yield from rows


def _block_ms(path: Path, offset: int, length: int) -> list[int]:
    """The `t` of a block's rows in milliseconds, in order, from its `t` column alone."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        cols = json.loads(zlib.decompress(fh.read(length)))
    return list(itertools.accumulate(cols["t"]["d"])) if "t" in cols else []


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


def merged_bins(run_dir: Path, name: str, start: float, end: float) \
        -> dict[str, dict[int, int]] | None:
    """Histogram bins summed per component over rows with start < t <= end, read straight
    from the columns (no row dicts: a day of seconds merges in seconds). None for a run
    without blocks (older runs: read their NDJSON)."""
    path = run_dir / f"{name}.blocks"
    if not path.exists():
        return None
    out: dict[str, dict[int, int]] = {}
    whole = list(blocks(path))
    for lo_t, hi_t, offset, length in whole:
        if hi_t <= start or lo_t > end + 1e-6:
            continue
        with open(path, "rb") as fh:
            fh.seek(offset)
            cols = json.loads(zlib.decompress(fh.read(length)))
        t = 0
        comps = [cols["c"]["s"][i] for i in cols["c"]["i"]]
        it_k, it_v = iter(cols[BINS]["k"]), iter(cols[BINS]["v"])
        for d, c, count in zip(cols["t"]["d"], comps, cols[BINS]["n"], strict=True):
            t += d
            if start < t / 1000 <= end + 1e-6:
                acc = out.setdefault(c, {})
                key = 0
                for _ in range(count):
                    key += next(it_k)
                    acc[key] = acc.get(key, 0) + next(it_v)
            else:
                for _ in range(count):
                    next(it_k)
                    next(it_v)
    for row in tail_rows(run_dir, name, whole):
        if not start < row["t"] <= end + 1e-6:
            continue
        acc = out.setdefault(str(row.get("c")), {})
        for k, v in (row.get(BINS) or {}).items():
            acc[int(k)] = acc.get(int(k), 0) + v
    return out


def last_second(run_dir: Path, name: str = "series") -> float | None:
    """The last `t` a stream recorded (a crashed run: how far it got), without reading it
    all: the tail's last whole line, else the last block's header."""
    tail = run_dir / f"{name}.ndjson"
    if tail.exists():
        with open(tail, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 65536))
            for raw in reversed(fh.read().splitlines()):
                try:
                    t = json.loads(raw).get("t")
                except (ValueError, AttributeError):
                    continue  # a torn last line
                if isinstance(t, int | float):
                    return float(t)
    last = None
    for _, hi, _, _ in blocks(run_dir / f"{name}.blocks"):
        last = hi
    return last
