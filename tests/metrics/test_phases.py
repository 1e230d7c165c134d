"""Phases and recovery from synthetic per-second samples; the phase grammar; grading by phase."""

from __future__ import annotations

from typing import Any

import pytest

from assay.metrics.phases import analyse
from assay.metrics.summary import ComponentInfo, aggregate
from assay.thresholds.evaluate import evaluate
from assay.thresholds.grammar import ThresholdError, parse

C = ComponentInfo("db.data.read", target_iops=100.0)


def second(t: float, iops: int = 100, lat_ms: float = 1.0) -> dict[str, Any]:
    return {"t": t, "dt": 1.0, "c": C.name, "ios": iops, "bytes": iops * 8192,
            "lat_sum_ns": iops * lat_ms * 1e6, "lat_max_ns": int(lat_ms * 1e6), "behind_s": 0.0,
            "bins": {}}


def run_of(slow: set[int], seconds: int = 30, slow_lat: float = 10.0) -> list[dict[str, Any]]:
    return [second(float(t), lat_ms=slow_lat if t in slow else 1.0)
            for t in range(1, seconds + 1)]


def step(t0: float, t1: float, n: int = 1, name: str = "snap") -> dict[str, Any]:
    return {"kind": "step", "name": name, "action": "snapshot", "n": n, "t_start": t0,
            "t_end": t1, "outcome": "ok", "annotate": True}


def test_before_during_after_windows_and_stats() -> None:
    samples = run_of(slow={11, 12})  # the seconds (10, 11] and (11, 12]
    report = analyse([C], samples, [step(10.2, 11.6)], 0.0, 30.0)
    kinds = [(w["name"], w["start"], w["end"]) for w in report.windows]
    assert kinds == [("before", 0.0, 10.0), ("during", 10.0, 12.0), ("after", 12.0, 30.0)]
    during = report.stats("during snap", C.name)
    assert during is not None and during.lat_avg_ms == pytest.approx(10.0)
    before = report.stats("before", C.name)
    assert before is not None and before.lat_avg_ms == pytest.approx(1.0)
    assert report.stats("during snapshot", C.name) == during  # by action name too
    # a phase is an exact re-aggregation, the same as aggregating that window directly
    assert during == aggregate(C, samples, 10.0, 12.0)


def test_between_repeated_events_and_short_event_owns_its_second() -> None:
    samples = run_of(slow=set())
    events = [step(5.3, 5.31, 1), step(10.5, 10.52, 2)]
    report = analyse([C], samples, events, 0.0, 20.0)
    names = [w["name"] for w in report.windows]
    assert names == ["before", "during", "between", "during", "after"]
    assert report.seconds["during"] == 2.0  # two events of one second each
    assert report.seconds["between"] == 4.0  # (6, 10]


def test_recovery_counts_seconds_until_steadily_back() -> None:
    # the event ends at 10; latency stays high until second 15, then normal
    samples = run_of(slow={9, 10, 11, 12, 13, 14, 15})
    report = analyse([C], samples, [step(8.0, 10.0)], 0.0, 30.0)
    value, events, note = report.worst_recovery(C.name)
    assert events == 1 and note == ""
    assert value == pytest.approx(5.0)  # second (15, 16] is the first good one


def test_recovery_none_when_never_back() -> None:
    samples = run_of(slow=set(range(9, 31)))
    report = analyse([C], samples, [step(8.0, 10.0)], 0.0, 30.0)
    assert report.worst_recovery(C.name)[0] is None


def test_no_events_no_phases() -> None:
    report = analyse([C], run_of(set()), [], 0.0, 30.0)
    assert report.windows == [] and report.to_json()["phases"] == []


def test_grammar_phase_and_recovery() -> None:
    t = parse("db.data.write.lat_p99 < 50ms during snapshot")
    assert (t.metric, t.value, t.phase, t.phase_step) == ("lat_p99", 50.0, "during snapshot",
                                                          "snapshot")
    assert parse("iops >= 95% target after").phase == "after"
    assert parse("db.data.read.recovery <= 30").value == 30.0
    assert parse("recovery <= 30s after replace").phase_step == "replace"
    assert parse("db.lat_p99 < 2ms").phase is None  # unchanged without a phase
    with pytest.raises(ThresholdError):
        parse("recovery <= 30 before")
    with pytest.raises(ThresholdError):
        parse("lat_p99 < 20ms before snapshot")
    with pytest.raises(ThresholdError):
        parse("recovery <= 30ms")


def test_evaluate_by_phase_and_recovery() -> None:
    samples = run_of(slow={11, 12, 13})
    report = analyse([C], samples, [step(10.0, 11.0)], 0.0, 30.0)
    stats = {C.name: aggregate(C, samples, 0.0, 30.0)}
    checks = [parse("db.data.read.lat_avg < 2ms before"),
              parse("db.data.read.lat_avg < 2ms during snap"),
              parse("db.data.read.recovery <= 1"),
              parse("db.data.read.recovery <= 5 after snap"),
              parse("db.data.read.lat_avg < 2ms during other")]
    results = evaluate(checks, [C], stats, report)
    assert [r.passed for r in results] == [True, False, False, True, False]
    assert "no `during other` phase" in results[4].note
    # without phase data, phase thresholds fail rather than pass silently
    assert not any(r.passed for r in evaluate(checks[1:], [C], stats, None))
