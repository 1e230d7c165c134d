"""Everything a report shows, read from a stored run directory (never from fio).

Charts use series.ndjson (one small row per second and component), downsampled here with a
min/max envelope. samples.ndjson, which carries a latency histogram per row and can be large, is
read only for the whole-window percentile curve, streamed and capped.
"""

from __future__ import annotations

import io
import json
import math
import os
from array import array
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from assay.metrics.histogram import Histogram
from assay.report.downsample import envelope_xy
from assay.results import safeopen
from assay.results.blockformat import valid_row
from assay.results.blockread import merged_bins, read_rows
from assay.results.record import RunRecord

CHART_METRICS = ("iops", "mbps", "lat_avg_ms", "lat_p99_ms")
MAX_POINTS = 2000  # per line: more than a chart is pixels wide
SAMPLES_CAP_BYTES = 24 << 20  # beyond this, the histogram is merged from evenly spread slices
SLICES = 64
MIN_DT = 0.5  # s: shorter intervals (a boundary stub) are too noisy to chart or count


def read_text(path: Path) -> str:
    """A file shown verbatim: '' when missing, or when it is a link, not a regular file or
    hard-linked (results/safeopen.py): a report shows only what the run directory holds."""
    return safeopen.read_text(path)


def read_ndjson(path: Path) -> Iterator[dict[str, Any]]:
    """results/rundir.read_ndjson (mappings; a torn or damaged line skipped), the file opened
    by results/safeopen.py: a link out of the run directory is not read."""
    try:
        raw = safeopen.open_file(path, hard_links_ok=True)
    except OSError:
        return
    with io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield record


def phases(run: RunRecord, last_t: float) -> list[dict[str, Any]]:
    """Shaded spans: warm-up always, then the run's phase windows (metrics/phases.py)."""
    start, end = run.measured_window()
    out: list[dict[str, Any]] = []
    if start > 0:
        out.append({"name": "warm-up", "start": 0.0, "end": start, "kind": "warmup"})
    for p in run.phases:
        name = p.name
        if p.step and p.step not in name:
            name = f"{name} {p.step}"  # "during snapshot-1"
        kind = "during" if name.startswith("during") else "phase"
        out.append({"name": name, "start": p.start, "end": p.end, "kind": kind})
    if end < last_t - 0.5:
        out.append({"name": "not measured", "start": end, "end": last_t, "kind": "after"})
    return out


def steps(run_dir: Path) -> list[dict[str, Any]]:
    """Timeline steps (`kind: step` events) on the series clock (seconds from load start)."""
    events = list(read_ndjson(run_dir / "events.ndjson"))
    load0 = next((e.get("time") for e in events
                  if e.get("kind") == "load" and e.get("outcome") == "started"), None)
    out = []
    for e in events:
        if e.get("kind") != "step":
            continue
        t0, t1 = e.get("t_start"), e.get("t_end")
        if not isinstance(t0, int | float):
            t0 = (e["time"] - load0) if load0 and isinstance(e.get("time"), int | float) else None
        elif t0 > 1e8 and load0:  # wall-clock seconds: move onto the run's clock
            t0, t1 = t0 - load0, (t1 - load0 if isinstance(t1, int | float) else None)
        if t0 is None:
            continue
        out.append({"name": str(e.get("name") or e.get("action") or "step"),
                    "action": str(e.get("action") or ""), "start": round(float(t0), 3),
                    "end": round(float(t1), 3) if isinstance(t1, int | float) else None,
                    "outcome": str(e.get("outcome") or ""),
                    "detail": _last_line(e.get("error") or e.get("reason") or e.get("output"))})
    return out


def _records(path: Path, batch: int = 20_000) -> Iterator[dict[str, Any]]:
    """NDJSON records, decoded a batch of lines at a time (one json call per batch is several
    times faster on day-long runs); a batch with a torn or bad line falls back line by line."""
    try:
        raw = safeopen.open_file(path, hard_links_ok=True)  # never through a link
    except OSError:
        return
    with io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as fh:
        while True:
            taken = list(islice(fh, batch))  # stops at the end, not after `batch` reads
            if not taken:
                return
            lines = [ln for ln in taken if ln.strip()]
            try:
                yield from filter(valid_row, json.loads("[" + ",".join(lines) + "]"))
            except ValueError:
                for ln in lines:
                    try:
                        yield from filter(valid_row, [json.loads(ln)])
                    except ValueError:
                        continue


def series_rows(run_dir: Path) -> Iterator[dict[str, Any]]:
    """The per-second series: compact blocks and tail, or an older run's series.ndjson."""
    if (run_dir / "series.blocks").exists():
        return read_rows(run_dir, "series")
    return _records(run_dir / "series.ndjson")


def _last_line(text: Any) -> str:
    """A step's output can be long: its last non-empty line says what happened."""
    lines = [ln for ln in str(text or "").splitlines() if ln.strip()]
    return lines[-1].strip()[:300] if lines else ""


class Column:
    """Numbers as 8-byte doubles, None kept as NaN: a day of 16 series is ~1.4 M rows, and as
    Python lists of floats its columns alone would take ~400 MB (docs/results.md)."""

    __slots__ = ("_a",)

    def __init__(self, values: Iterable[float | None] = ()):
        self._a = array("d", (math.nan if v is None else v for v in values))

    def append(self, v: Any) -> None:
        self._a.append(float(v) if isinstance(v, int | float) else math.nan)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Iterator[float | None]:
        return (None if v != v else v for v in self._a)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [None if v != v else v for v in self._a[i]]
        v = self._a[i]
        return None if v != v else v


def per_second(run_dir: Path) -> dict[str, dict[str, Any]]:
    """component -> {"t": [...], "dt": [...], "phase": [...], metric: [...]} (series.ndjson);
    numbers in compact columns (Column), phases as a list of (shared) names."""
    out: dict[str, dict[str, Any]] = {}
    numbers = ("t", "dt", *CHART_METRICS)
    for row in series_rows(run_dir):
        c = row.get("c")
        if not isinstance(c, str) or not isinstance(row.get("t"), int | float):
            continue
        cols = out.get(c)
        if cols is None:
            cols = out[c] = {k: Column() for k in numbers}
            cols["phase"] = []
        for k in numbers:
            cols[k].append(row.get(k))
        phase = row.get("phase")
        cols["phase"].append(_PHASES.setdefault(phase, phase) if isinstance(phase, str)
                             else phase)
    return out


_PHASES: dict[str, str] = {}  # one string per phase name, however many rows carry it


def chart_series(cols: dict[str, dict[str, list[Any]]],
                 max_points: int = MAX_POINTS) -> dict[str, dict[str, Any]]:
    """Per component and metric: [t...], [v...] downsampled, spikes kept."""
    out: dict[str, dict[str, Any]] = {}
    for c, data in cols.items():
        out[c] = {}
        # fio's closing stub (a few hundredths of a second as the run stops) is no second:
        # its rate is noise and drew a false plunge at the end of every chart
        keep = [i for i, dt in enumerate(data["dt"]) if dt is None or dt >= MIN_DT]
        ts = [data["t"][i] for i in keep]
        for m in CHART_METRICS:
            xs, ys = envelope_xy(ts, [data[m][i] for i in keep], max_points)
            out[c][m] = [[round(t, 3) for t in xs], ys]
    return out


HOST_METRICS = ("cpu_pct", "cpu_user_pct", "cpu_system_pct", "cpu_iowait_pct", "mem_used_pct",
                "net_rx_mbps", "net_tx_mbps")


def host_series(run_dir: Path, max_points: int = MAX_POINTS) -> dict[str, dict[str, Any]]:
    """host -> metric -> [[t...], [v...]] from hosts.ndjson (network summed over the NICs),
    downsampled like the IO series."""
    cols: dict[str, dict[str, list[Any]]] = {}
    rows = read_rows(run_dir, "hosts") if (run_dir / "hosts.blocks").exists() \
        else _records(run_dir / "hosts.ndjson")
    for row in rows:
        t = row.get("t")
        if not isinstance(t, int | float):
            continue
        c = cols.setdefault(str(row.get("host") or "local"), {k: [] for k in ("t", *HOST_METRICS)})
        nets = {k: v for k, v in row.items() if k.startswith("net.") and isinstance(v, int | float)}
        row = {**row, "net_rx_mbps": sum(v for k, v in nets.items() if k.endswith(".rx_mbps")),
               "net_tx_mbps": sum(v for k, v in nets.items() if k.endswith(".tx_mbps"))}
        c["t"].append(t)
        for k in HOST_METRICS:
            v = row.get(k)
            c[k].append(v if isinstance(v, int | float) else None)
    out: dict[str, dict[str, Any]] = {}
    for host, data in cols.items():
        out[host] = {}
        for k in HOST_METRICS:
            xs, ys = envelope_xy(data["t"], data[k], max_points)
            out[host][k] = [[round(t, 3) for t in xs], ys]
    return out


def xray_bands(run: RunRecord) -> dict[str, list[float]]:
    """component -> [low, high]: X-Ray's 95 % band, target ± 1.96·√target, of each fixed-rate
    component (a 1 s sample of a Poisson process at the target falls in it 95 % of the time)."""
    return {c: [round(s.target_iops - 1.96 * math.sqrt(s.target_iops), 2),
                round(s.target_iops + 1.96 * math.sqrt(s.target_iops), 2)]
            for c, s in run.stats.items() if s.target_iops}


def _sample_lines(path: Path, cap: int) -> Iterator[str]:
    """All lines of a small file; evenly spread slices of a large one (cap the work)."""
    with safeopen.open_file(path, hard_links_ok=True) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size <= cap:
            for line in fh:
                yield line.decode("utf-8", "replace")
            return
        per_slice = cap // SLICES
        for i in range(SLICES):
            fh.seek(i * size // SLICES)
            if i:
                fh.readline()  # skip the partial line we landed in
            read = 0
            while read < per_slice:
                line = fh.readline()
                if not line:
                    break
                read += len(line)
                yield line.decode("utf-8", "replace")


def latency_curves(run_dir: Path, run: RunRecord,
                   cap: int = SAMPLES_CAP_BYTES) -> dict[str, Any]:
    """Merged histograms over the measured window -> latency by percentile, per component."""
    start, end = run.measured_window()
    compact = merged_bins(run_dir, "samples", start, end)
    if compact is not None:  # the compact store: every second, exactly
        return {"curves": {c: percentile_curve(Histogram(b)) for c, b in compact.items() if b},
                "sampled": False}
    path = run_dir / "samples.ndjson"
    try:
        with safeopen.open_file(path, hard_links_ok=True) as fh:
            size = os.fstat(fh.fileno()).st_size
    except OSError:  # missing, or a link out of the run directory
        return {"curves": {}, "sampled": False}
    merged: dict[str, dict[str, int]] = {}  # bins summed with fio's string keys: no conversions
    for line in _sample_lines(path, cap):
        try:
            s = json.loads(line)
        except ValueError:
            continue
        if not valid_row(s):  # damaged since (results/damage.py says so)
            continue
        t = s.get("t")
        if not isinstance(t, int | float) or not (start < t <= end + 1e-6):
            continue
        acc = merged.setdefault(s.get("c", "?"), {})
        for k, v in (s.get("bins") or {}).items():
            acc[k] = acc.get(k, 0) + v
    hists = {c: Histogram.from_fio(b) for c, b in merged.items()}
    return {"curves": {c: percentile_curve(h) for c, h in hists.items() if h},
            "sampled": size > cap}


def percentile_curve(h: Histogram, step: float = 0.02) -> list[list[float]]:
    """[[percentile, ms], ...] thinned on the `nines` scale (-log10(1-p)) the chart uses."""
    total = h.count
    seen = 0
    out: list[list[float]] = []
    next_p = 0.0  # the next fraction worth a point: `step` further along the nines scale
    keys = sorted(h.bins)
    for i, k in enumerate(keys):
        seen += h.bins[k]
        p = seen / total
        if p >= next_p or i == len(keys) - 1:
            out.append([round(100 * p, 5), round(k / 1e6, 4)])
            x = 6.0 if p >= 1 else min(6.0, -math.log10(1 - p))
            next_p = 1 - 10 ** -(x + step)
    return out


def job_files(run_dir: Path | safeopen.Inside) -> dict[str, str]:
    """host -> rendered fio job file, verbatim: hosts/<host>/run.fio, each opened inside the
    run directory (a linked host directory or job file is left out)."""
    if isinstance(run_dir, safeopen.Inside):
        return dict(run_dir.files("hosts", "run.fio"))
    try:
        with safeopen.Inside(run_dir) as held:
            return dict(held.files("hosts", "run.fio"))
    except OSError:
        return {}
