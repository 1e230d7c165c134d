"""What a run directory lost: seconds of its per-second streams that a cut, torn or
overwritten file no longer holds, said as how many seconds and where (issue 21).

The readers skip what they cannot read (blockread.py); this says what that was, so that a
report, an export or a comparison of the rest is never taken for the whole run. A crashed
run's torn last line, or a block torn while it was sealed (its rows are still in the tail),
lose nothing and are not damage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from assay.results.blockformat import blocks, valid_row

STREAMS = ("series", "samples", "hosts", "lags")
ENDING = ("series", "samples")  # recorded up to the run's last second
UNFINISHED = ("running", "crashed", "aborted", "interrupted")  # stopped mid-write: a torn
# last line, or fewer seconds than planned, is how they stopped, not damage
SCAN_BYTES = 32 << 20  # of a tail: a compact store's holds a minute, an older run's all of it
GAP_S = 2.0  # rows of consecutive seconds are ~1 s apart; a loaded machine's a little more


@dataclass(frozen=True)
class Loss:
    file: str
    first: float | None  # the last second kept before the loss (None: from the start)
    last: float | None  # the first second kept after it (None: to the end)
    why: str
    seconds: float | None = None

    def __str__(self) -> str:
        if self.first is not None and self.last is not None and self.last - self.first < 0.5:
            return f"{self.file}: rows of the second at {self.last:.1f}s lost: {self.why}"
        where = f"after {self.first:.1f}s" if self.first is not None else "from the start"
        where += f" until {self.last:.1f}s" if self.last is not None else " to the end"
        lost = f"{self.seconds:.0f}s lost" if self.seconds is not None else "seconds lost"
        if self.seconds is not None and self.seconds < 0.5:
            lost = "rows lost"
        return f"{self.file}: {lost} ({where}): {self.why}"


def losses(run_dir: Path, status: str, end: float | None) -> list[Loss]:
    """Every loss of the run's streams; `end` is the run's last second when it finished."""
    out: list[Loss] = []
    for name in STREAMS:
        out.extend(_stream(run_dir, name, status, end, name in ENDING))
    return out


def _stream(run_dir: Path, name: str, status: str, end: float | None,
            ending: bool) -> list[Loss]:
    out: list[Loss] = []
    path, tail = run_dir / f"{name}.blocks", run_dir / f"{name}.ndjson"
    last_block: float | None = None
    whole = 0
    for _, hi, offset, length in blocks(path) if path.exists() else ():
        last_block, whole = hi, offset + length
    kept, bad = _tail(tail, last_block)
    unreadable = path.stat().st_size - whole if path.exists() else 0
    if unreadable > 0:
        after = kept[0] if kept else end
        gap = None if after is None else after - (last_block or 0.0)
        if gap is None or gap > GAP_S:
            out.append(Loss(path.name, last_block, after,
                            f"{unreadable} bytes after its last whole block are unreadable "
                            f"(cut, torn or overwritten)",
                            _lost(last_block or 0.0, after, bool(kept))))
    for i, (before, after, count, torn) in enumerate(bad):
        if torn and status in UNFINISHED and i == len(bad) - 1:
            continue
        what = "its last line is cut short" if torn else f"{count} unreadable lines"
        out.append(Loss(tail.name, before, after if after is not None else end, what,
                        _lost(before or 0.0, after if after is not None else end,
                              after is not None)))
    if ending and end is not None and kept and end - kept[-1] > GAP_S and status not in UNFINISHED \
            and not (bad and bad[-1][1] is None):
        out.append(Loss(tail.name, kept[-1], end, f"it ends at {kept[-1]:.1f}s, the run at "
                                                  f"{end:.1f}s", end - kept[-1]))
    return out


def _lost(first: float, until: float | None, kept_row: bool) -> float | None:
    """Seconds between the last second kept and `until`: a kept row holds the second that
    ends at its `t`, the run's end holds nothing more."""
    return None if until is None else max(0.0, until - first - (1.0 if kept_row else 0.0))


Stretch = tuple[float | None, float | None, int, bool]  # t before, t after, lines, torn


def _tail(path: Path, after: float | None) -> tuple[list[float], list[Stretch]]:
    """The `t` of the tail's readable rows after the blocks, and its unreadable stretches.
    A run from before the compact store keeps every second here: of a large tail only the
    last SCAN_BYTES are read (a cut end), in constant memory."""
    rows: list[float] = []
    bad: list[Stretch] = []
    if not path.exists():
        return rows, bad
    run = 0  # lines in the current unreadable stretch
    line = b""
    with open(path, "rb") as fh:
        size = fh.seek(0, 2)
        fh.seek(max(0, size - SCAN_BYTES))
        if size > SCAN_BYTES:
            fh.readline()  # the partial line the scan starts in
        for line in fh:
            if not line.strip():
                continue
            try:
                row = json.loads(line.decode("utf-8"))
            except ValueError:
                row = None
            if row is None or not valid_row(row):
                run += 1
                continue
            t = float(row["t"])
            if run:
                bad.append((rows[-1] if rows else after, t, run, False))
                run = 0
            if after is None or round(t, 3) > after:
                rows.append(t)
    if run:
        bad.append((rows[-1] if rows else after, None, run, not line.endswith(b"\n")))
    return rows, bad
