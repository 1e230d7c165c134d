"""Reading a stream back (results/blocklog.py writes it): its rows in order, sealed blocks
then the tail; histogram bins merged straight from the columns; the last second it recorded.

A torn block (killed mid-write) fails its length or CRC and ends the blocks; the tail still
holds its rows. A tail that starts with the last block's rows (their `t`, in order) is what a
crash between sealing and emptying it left: those rows are skipped. Runs from before the
block store have only `<name>.ndjson`, holding every row, and read the same way.
"""

from __future__ import annotations

import itertools
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.results.blockformat import BINS, blocks, read_block, readable_rows


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
        rows = readable_rows(fh)
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
