"""The on-disk format of a stream (results/blocklog.py): tail rows, sealed blocks, and the
columnar payload a block holds.

    <name>.ndjson   the tail: one JSON line per row
    <name>.blocks   sealed blocks, appended: a header (magic, payload length, CRC-32, first
                    and last `t`) and a zlib-compressed columnar payload

The payload is columnar: one JSON list per key (`t` as millisecond deltas, strings as indices
into a names table, histogram bins flattened to per-row bin counts, key deltas and counts).
Columns of similar numbers compress far better than text rows: 24 h x 16 components of
samples and series take 15.3 MB instead of 834 MB of NDJSON (bench/long_run.py, at zlib level
9; level 6 makes blocks 5 % larger for an eighth of the CPU).
"""

from __future__ import annotations

import json
import math
import operator
import struct
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

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
        if b:  # thousands of bins a row: sorted and differenced at C speed
            order = sorted(b, key=int)
            at = list(map(int, order))
            bins["k"].extend(map(operator.sub, at, [0, *at[:-1]]))
            bins["v"].extend(map(b.__getitem__, order))
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
    # level 6, not 9: 5 % larger blocks, 8 times less CPU (a lab's controller shares its cores)
    return zlib.compress(json.dumps(cols, separators=(",", ":")).encode(), 6)


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


def readable_rows(fh: Iterable[str]) -> Iterator[dict[str, Any]]:
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
    # JSON keys are strings; the checks run at C speed (every bin of every row read back)
    return bins is None or isinstance(bins, dict) and all(map(str.isdigit, bins)) and \
        set(map(type, bins.values())) <= {int}


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
