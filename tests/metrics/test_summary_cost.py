"""The live verdict asks every component's statistics each second: the answer must equal a
recount of every stored second, and its cost per second must not grow with the run
(bench/long_run.py). Cost is counted in Python lines executed, not timed: the machine may be
loaded, and a count is the same on every machine."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from assay.metrics.summary import SAMPLE_S, Accumulator, ComponentInfo
from assay.thresholds.grammar import parse
from assay.thresholds.live import LiveVerdict

C = "mail.db.read"


def sample(t: float, ios: int, lat_ms: float, dt: float = 1.0,
           bucket_ms: float | None = None) -> dict[str, Any]:
    bucket = int((bucket_ms or lat_ms) * 1e6)
    return {"t": t, "dt": dt, "c": C, "ios": ios, "bytes": ios * 32768,
            "lat_sum_ns": ios * lat_ms * 1e6, "lat_max_ns": int(lat_ms * 2e6), "behind_s": 0.0,
            "bins": {str(bucket): ios} if ios else {}}


def recount(acc: Accumulator) -> float | None:
    """The largest 15 s average by a scan of every window (the definition)."""
    full = [w for w in acc.windows.values() if w[2] >= SAMPLE_S / 2 and w[1]]
    if not full:
        full = [w for w in acc.windows.values() if w[1]]
    return max((w[0] / w[1] / 1e6 for w in full), default=None)


@pytest.mark.parametrize("order", ["in order", "shuffled", "idle stretches"])
def test_the_largest_15s_average_asked_every_second_equals_a_recount(order: str) -> None:
    rng = random.Random(7)
    seconds = [sample(t, rng.randint(50, 150), rng.uniform(0.5, 20.0), rng.choice([1.0, 0.6]))
               for t in range(1, 400)]
    if order == "shuffled":  # a phase or a late sidecar may hand seconds in any order
        rng.shuffle(seconds)
    if order == "idle stretches":
        seconds = [dict(s, ios=0, lat_sum_ns=0, bins={}) if 100 < s["t"] < 200 else s
                   for s in seconds]
    acc = Accumulator(ComponentInfo(C), 0.0, 1e9)
    for s in seconds:
        acc.add(s)
        assert acc.max_sample_ms() == recount(acc)
    assert acc.stats().lat_max_sample_ms == recount(acc)


def test_a_run_shorter_than_half_an_interval_still_has_its_largest_average() -> None:
    acc = Accumulator(ComponentInfo(C), 0.0, 1e9)
    for t in (1.0, 2.0, 3.0):
        acc.add(sample(t, 100, t))
    assert acc.max_sample_ms() == pytest.approx(2.0)  # one partial window: its average
    assert acc.max_sample_ms() == recount(acc)


def lines_run(fn: Callable[[], None]) -> int:
    """Python lines executed by fn (a deterministic measure of its cost)."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


def second(t: int) -> dict[str, Any]:
    """A second whose average latency is one of ~900 values (the medians' keys fill up over
    the long run) and whose histogram bucket is one of 7 (fio's buckets are bounded)."""
    return sample(t, 100, 1.0 + (t * 7919 % 900) / 100, bucket_ms=1.0 + t % 7)


def cost_of_last_minute(run_s: int) -> int:
    """Lines the live verdict runs over the last 60 s of a run `run_s` long."""
    thresholds = [parse(f"{C}.lat_max_sample < 50ms"), parse(f"{C}.lat_p99 < 100ms")]
    live = LiveVerdict(thresholds, [ComponentInfo(C)], 0.0, float(run_s))
    for t in range(1, run_s - 59):
        live.add([second(t)])
    assert live.results and live.results[0].observed is not None
    return lines_run(lambda: [live.add([second(t)]) for t in range(run_s - 59, run_s + 1)])


def test_the_live_verdicts_cost_per_second_does_not_grow_with_the_run() -> None:
    """Grading every second once scanned every 15 s window of the run so far (a 24 h run:
    5,760 windows per component per second by its end) and walked every key of the medians.
    Forty times the run, the same cost."""
    short, long = cost_of_last_minute(300), cost_of_last_minute(12_000)
    assert long <= short * 1.05, (short, long)


def sorted_walk(counts: dict[float, int], n: int) -> float:
    """The median of counted keys by a walk over them all (the definition)."""
    keys = sorted(counts)
    lo_rank, hi_rank = (n - 1) // 2, n // 2
    seen, lo = 0, None
    for k in keys:
        seen += counts[k]
        if lo is None and seen > lo_rank:
            lo = k
        if seen > hi_rank:
            return (lo + k) / 2 if lo is not None else k
    return keys[-1]


@pytest.mark.parametrize("shape", ["gauss", "drifting", "few values", "falling"])
def test_the_running_median_asked_every_second_equals_a_walk_over_its_keys(shape: str) -> None:
    from assay.metrics.median import RunningMedian

    rng = random.Random(11)
    make = {"gauss": lambda i: rng.gauss(4200, 300),
            "drifting": lambda i: 0.8 * (1 + i / 2000) + rng.random() * 0.05,
            "few values": lambda i: rng.choice((1.0, 2.0, 2.0, 3.0)),
            "falling": lambda i: 5000.0 - i * 1.7}[shape]
    m = RunningMedian()
    assert m.value() is None
    for i in range(3000):
        m.add(make(i))
        assert m.value() == sorted_walk(m._counts, len(m)), i


def test_a_synthetic_runs_verdict_figures_equal_a_recount_of_its_stored_seconds(
        tmp_path: Any) -> None:
    """End to end: the figures the live and final verdicts keep without rescanning (largest
    15 s average, the medians of the seconds) are those a scan of every stored second gives."""
    import functools
    import io

    from rich.console import Console

    from assay.engine import Engine, RunOptions
    from assay.plan.build import plan_text
    from assay.results.blocklog import read_rows
    from assay.runners.synthetic import SyntheticRunner

    text = ("name: recount\nworkloads:\n  mail: {kind: exchange, mailboxes: 2000, databases: 1,"
            " dataset: 64MiB}\ntimeline: {warmup: 10s, duration: 290s}\n")
    plan = plan_text(text, "recount.yaml")
    out = Engine(plan, RunOptions(tmp_path, runner=functools.partial(SyntheticRunner, 300)),
                 Console(file=io.StringIO())).execute()
    assert out.status == "completed", out.reason  # no thresholds: figures only
    rows = list(read_rows(out.run_dir, "samples"))
    checked = 0
    for name, stats in out.stats.items():
        windows: dict[int, list[float]] = {}
        iops: dict[float, int] = {}
        lat: dict[float, int] = {}
        for s in rows:
            middle = s["t"] - s["dt"] / 2
            if s["c"] != name or not plan.warmup <= middle <= plan.total_seconds:
                continue
            w = windows.setdefault(int(max(middle - plan.warmup, 0.0) // SAMPLE_S), [0, 0, 0])
            w[0], w[1], w[2] = w[0] + s["lat_sum_ns"], w[1] + s["ios"], w[2] + s["dt"]
            if s["dt"] >= 0.5:
                key = float(f"{s['ios'] / s['dt']:.3g}")
                iops[key] = iops.get(key, 0) + 1
                if s["ios"]:
                    key = float(f"{s['lat_sum_ns'] / s['ios'] / 1e6:.3g}")
                    lat[key] = lat.get(key, 0) + 1
        acc = Accumulator(ComponentInfo(name), 0.0, 0.0)
        acc.windows = windows
        assert stats.lat_max_sample_ms == recount(acc), name
        assert stats.iops_median == sorted_walk(iops, sum(iops.values())), name
        if lat:
            assert stats.lat_avg_median_ms == sorted_walk(lat, sum(lat.values())), name
            assert stats.lat_max_sample_ms is not None, name
            checked += 1
    assert checked >= 2
