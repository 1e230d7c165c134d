import pytest

from assay.metrics.summary import ComponentInfo, Stats
from assay.thresholds.evaluate import evaluate, expand
from assay.thresholds.grammar import ThresholdError, parse


def stats(name, iops=100.0, target=None, lat_avg=1.0, lat_max=5.0, behind=0.0, tol=0.0):
    return Stats(name, 60, int(iops * 60), 0, iops, 1.0, lat_avg, 0.5, 2, 3, 4, lat_max, target,
                 behind, tol)


def test_grammar():
    t = parse("db.data.read.lat_p99 < 20ms")
    assert (t.selector, t.metric, t.op, t.value) == (("db", "data", "read"), "lat_p99", "<", 20)
    assert parse("lat_max <= 1s").value == 1000
    assert parse("lat_avg < 500us").value == 0.5
    assert parse("mail.db.iops >= 95% target").target_fraction == 0.95


@pytest.mark.parametrize("bad,match", [
    ("db.lat_p98 < 2ms", "unknown metric"), ("db.lat_p99 < 20", "needs a unit"),
    ("iops >= 5ms", "plain number"), ("lat_avg >= target", "only iops"), ("db lat", "expected"),
])
def test_grammar_errors(bad, match):
    with pytest.raises(ThresholdError, match=match):
        parse(bad)


def test_jetstress_preset_expands_for_the_workload():
    ts = expand({"mail": "jetstress-strict"})
    assert [t.text for t in ts][:2] == ["mail.db.read.lat_avg <= 20ms",
                                       "mail.db.read.lat_max_sample <= 100ms"]
    assert all(t.source == "preset jetstress-strict" for t in ts)


def test_selector_matching_and_rate_rules():
    comps = [ComponentInfo("m.db.read", 100), ComponentInfo("m.db.write", 50),
             ComponentInfo("m.log.write", 10)]
    st = {"m.db.read": stats("m.db.read", 99.9, 100, tol=0.5),
          "m.db.write": stats("m.db.write", 40, 50),
          "m.log.write": stats("m.log.write", 10, 10, lat_avg=12)}
    res = evaluate(expand(["m.db.iops >= target", "log.write.lat_avg <= 10ms"]), comps, st)
    by = {(r.threshold.text, r.component): r for r in res}
    assert by[("m.db.iops >= target", "m.db.read")].passed  # inside the pacing tolerance
    assert not by[("m.db.iops >= target", "m.db.write")].passed
    assert by[("m.db.iops >= target", "m.db.write")].note == "80.0% of the bound"
    assert not by[("log.write.lat_avg <= 10ms", "m.log.write")].passed


def test_a_rate_miss_says_by_how_much_and_past_which_tolerance():
    comps = [ComponentInfo("m.db.read", 4200)]
    st = {"m.db.read": stats("m.db.read", 4185.9, 4200, behind=1.0, tol=13.9)}
    (r,) = evaluate(expand(["iops >= target"]), comps, st)  # 1.0 s behind: not over the limit
    assert not r.passed
    assert r.note == "99.7% of the bound, short by more than the pacing tolerance (13.9 IO/s)"


def test_a_component_that_fell_behind_cannot_pass_a_rate_threshold():
    comps = [ComponentInfo("m.db.read", 100)]
    st = {"m.db.read": stats("m.db.read", 100, 100, behind=3.0)}
    (r,) = evaluate(expand(["iops >= target"]), comps, st)
    assert not r.passed and "behind" in r.note


def test_a_bare_preset_in_list_form_applies_to_every_workload():
    ts = expand(["rate", "db.lat_max < 1s"])
    assert [t.text for t in ts] == ["iops >= target", "behind <= 1", "db.lat_max < 1s"]
    assert ts[0].source == "preset rate"
