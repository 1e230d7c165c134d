"""Early stop and the deciding threshold, on hand-made samples (no fio)."""

from __future__ import annotations

from assay.plan import plan_text
from assay.search.trials import early_stop

TEXT = """\
name: es
workloads:
  db: {kind: oltp, data_iops: 400, read_pct: 100, log_files: 0, data_files: 1, dataset: 32MiB}
timeline: {warmup: 2s, duration: 10s}
thresholds:
  db: rate
  db.data.read.lat_max: "< 100ms"
  db.data.read.lat_p99: "< 5ms"
"""


def sample(t: float, behind: float = 0.0, lat_max_ms: float = 1.0) -> dict:
    return {"t": t, "dt": 1.0, "c": "db.data.read", "ios": 400, "bytes": 0, "lat_sum_ns": 0,
            "lat_max_ns": lat_max_ms * 1e6, "behind_s": behind, "bins": {}}


def test_behind_schedule_in_the_measured_window_stops():
    check = early_stop(plan_text(TEXT, "es.yaml"))
    assert check is not None
    samples = [sample(1, behind=5.0)]  # warm-up: not graded, never a reason
    assert check(samples) is None
    samples.append(sample(3, behind=0.5))
    assert check(samples) is None
    samples.append(sample(4, behind=1.6))
    why = check(samples)
    assert why and "behind" in why and "db.iops >= target" in why


def test_a_latency_maximum_over_its_bound_stops():
    check = early_stop(plan_text(TEXT, "es.yaml"))
    assert check is not None
    assert check([sample(3, lat_max_ms=99)]) is None
    why = check([sample(3, lat_max_ms=99), sample(4, lat_max_ms=250)])
    assert why and "lat_max" in why


def test_percentiles_never_stop_a_run():
    """A p99 can still come down: only bounds no later second can undo stop a trial."""
    text = TEXT.replace("  db: rate\n", "").replace(
        '  db.data.read.lat_max: "< 100ms"\n', "")
    assert early_stop(plan_text(text, "es.yaml")) is None


def test_a_phase_threshold_never_stops_a_run():
    """`lat_max < 100ms during snap` says nothing about a spike outside the snapshots."""
    text = TEXT.replace("  db: rate\n", "").replace(
        '  db.data.read.lat_max: "< 100ms"\n',
        '  db.data.read.lat_max: "< 100ms during snap"\n').replace(
        "timeline: {warmup: 2s, duration: 10s}",
        "timeline:\n  warmup: 2s\n  duration: 10s\n  steps:\n"
        "    - {name: snap, action: annotate, text: snapshot, at: 5s}")
    assert early_stop(plan_text(text, "es.yaml")) is None
