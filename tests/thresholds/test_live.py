"""The live verdict: thresholds graded second by second with the final verdict's evaluator; a
failure no later second can undo is final (search trials stop there). Hand-made samples."""

from __future__ import annotations

from assay.plan import Plan, plan_text
from assay.plan.tally import tally
from assay.thresholds.evaluate import evaluate
from assay.thresholds.live import LiveVerdict
from assay.verdict import grade

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


def sample(t: float, behind: float = 0.0, lat_max_ms: float = 1.0, ios: int = 400) -> dict:
    return {"t": t, "dt": 1.0, "c": "db.data.read", "ios": ios, "bytes": 0, "lat_sum_ns": 0,
            "lat_max_ns": lat_max_ms * 1e6, "behind_s": behind, "bins": {"800000": ios}}


def live(plan: Plan) -> LiveVerdict:
    return LiveVerdict(plan.thresholds, plan.components, plan.warmup, plan.total_seconds)


def test_behind_schedule_in_the_measured_window_is_final():
    v = live(plan_text(TEXT, "es.yaml"))
    v.add([sample(1, behind=5.0)])  # warm-up: not graded, never a reason
    assert v.failure() is None and v.summary() == ""
    v.add([sample(3, behind=0.5)])
    assert v.failure() is None
    n = len(v.results)
    assert n >= 3 and v.summary() == f"thresholds {n}/{n}"
    v.add([sample(4, behind=1.6)])
    why = v.failure()
    assert why and "behind" in why and "db.iops >= target" in why
    assert v.summary() != f"thresholds {n}/{n}" and v.summary().endswith(f"/{n}")


def test_a_latency_maximum_over_its_bound_is_final():
    v = live(plan_text(TEXT, "es.yaml"))
    v.add([sample(3, lat_max_ms=99)])
    assert v.failure() is None
    v.add([sample(4, lat_max_ms=250)])
    why = v.failure()
    assert why and "lat_max" in why


def test_a_failing_percentile_or_rate_is_not_final():
    """A p99 can still come down and a short second be made up: the run goes on."""
    v = live(plan_text(TEXT, "es.yaml"))
    slow = sample(3, ios=300)
    slow["bins"] = {"9000000": 300}  # every IO at 9 ms: p99 over 5 ms
    v.add([slow])
    assert any(not r.passed for r in v.results)  # failing now ...
    assert v.failure() is None  # ... but not for good


def test_a_phase_threshold_waits_for_the_verdict():
    """`lat_max < 100ms during snap` says nothing about a spike outside the snapshots."""
    text = TEXT.replace("  db: rate\n", "").replace(
        '  db.data.read.lat_max: "< 100ms"\n',
        '  db.data.read.lat_max: "< 100ms during snap"\n').replace(
        "timeline: {warmup: 2s, duration: 10s}",
        "timeline:\n  warmup: 2s\n  duration: 10s\n  steps:\n"
        "    - {name: snap, action: annotate, text: snapshot, at: 5s}")
    v = live(plan_text(text, "es.yaml"))
    v.add([sample(3, lat_max_ms=500)])
    assert v.failure() is None
    assert all("during" not in r.threshold.text for r in v.results)


def test_the_live_count_says_what_waits_for_the_verdict():
    """A phase threshold is graded at the end: the live line counts it in its total, as the
    run's header and summary do."""
    text = TEXT.replace('  db.data.read.lat_max: "< 100ms"\n',
                        '  db.data.read.lat_max: "< 100ms during snap"\n').replace(
        "timeline: {warmup: 2s, duration: 10s}",
        "timeline:\n  warmup: 2s\n  duration: 10s\n  steps:\n"
        "    - {name: snap, action: annotate, text: snapshot, at: 5s}")
    plan = plan_text(text, "es.yaml")
    v = live(plan)
    v.add([sample(3)])
    n = len(v.results)
    assert v.summary() == f"thresholds {n}/{n} (of {n + 1})"
    samples = [sample(t) for t in range(1, 13)]
    assert len(grade(plan, samples, [], []).results) == n + 1 == tally(plan).total
    cluster = LiveVerdict(plan.thresholds, plan.components, plan.warmup, plan.total_seconds,
                          total=n + 5)  # a cluster's hosts and its own add theirs
    cluster.add([sample(3)])
    assert cluster.summary() == f"thresholds {n}/{n} (of {n + 5})"


def test_live_and_final_verdicts_agree():
    """One evaluator: the last live grading equals the verdict's on the same seconds."""
    plan = plan_text(TEXT, "es.yaml")
    samples = [sample(t, lat_max_ms=2 + t) for t in range(1, 13)]
    v = live(plan)
    for s in samples:
        v.add([s])
    final = grade(plan, samples, [], [])
    whole = [r for r in final.results if not r.threshold.phase]
    assert [(r.threshold.text, r.passed, r.observed) for r in v.results] == \
        [(r.threshold.text, r.passed, r.observed) for r in whole]
    assert evaluate(plan.thresholds, plan.components, final.stats)[0].passed == \
        v.results[0].passed


def test_each_second_walks_the_histograms_only_a_percentile_threshold_reads():
    """A long run's histograms hold every bucket its tail reached: the live verdict takes
    percentiles only of the components a percentile threshold grades, and no statistics of
    a component no threshold grades, and still agrees with the verdict."""
    text = TEXT.replace("read_pct: 100", "read_pct: 50").replace("log_files: 0", "log_files: 1") \
        .replace("  db: rate\n", '  db.data.write.iops: ">= 90% target"\n')
    plan = plan_text(text, "es.yaml")
    v = live(plan)
    assert v.percentiles == {"db.data.read": True, "db.data.write": False}  # none of the log
    assert set(v.acc) == set(v.percentiles)  # its samples are not even counted
    asked: list[tuple[str, bool]] = []
    for name, acc in v.acc.items():
        def stats(percentiles: bool = True, _acc=acc, _stats=acc.stats, _name=name):  # noqa: ANN001, ANN202
            asked.append((_name, percentiles))
            return _stats(percentiles)
        acc.stats = stats  # type: ignore[method-assign]
    samples = [dict(sample(t), c=c) for t in range(1, 13)
               for c in ("db.data.read", "db.data.write", "db.log.write")]
    for t in range(12):
        v.add(samples[3 * t:3 * t + 3])
    assert set(asked) == {("db.data.read", True), ("db.data.write", False)}
    whole = [r for r in grade(plan, samples, [], []).results if not r.threshold.phase]
    assert [(r.threshold.text, r.component, r.passed, r.observed) for r in v.results] == \
        [(r.threshold.text, r.component, r.passed, r.observed) for r in whole]
