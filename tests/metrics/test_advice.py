from assay.metrics.advice import advise
from assay.metrics.summary import Stats


def stats(name, iops=100.0, target=None, behind=0.0, tol=0.0, p99=1.0, intended=None):
    return Stats(name, 60, int(iops * 60), 0, iops, 1.0, 0.5, 0.4, 0.9, p99, p99, p99 * 2,
                 target, behind, tol, intended)


def rows(component, values, start=1.0):
    return [{"t": start + i, "dt": 1.0, "c": component, "iops": v} for i, v in enumerate(values)]


def test_falling_behind_teaches_coordinated_omission():
    (w,) = advise({"a.b.read": stats("a.b.read", 90, 100, behind=3.2)}, [], {}, {})
    assert "3.2s behind" in w and "coordinated omission" in w


def test_rate_not_reached():
    (w,) = advise({"a.b.read": stats("a.b.read", 90, 100)}, [], {}, {})
    assert "90.0% of its target" in w


def test_intended_latency_far_above_fios_is_explained():
    s = stats("a.b.read", 100, 100, p99=1.0, intended={"lat_intended_p99_ms": 40.0})
    (w,) = advise({"a.b.read": s}, [], {}, {})
    assert "40.0 ms" in w and "slipped" in w


def test_variance_is_judged_inside_the_components_own_window():
    steady = [100.0] * 10
    series = rows("n.s.read", [0.0] * 10 + steady + [0.0] * 10)
    s = {"n.s.read": stats("n.s.read")}
    assert advise(s, series, {"n.s.read": (10.0, 20.0)}, {}) == []  # rows t=11..20
    (w,) = advise(s, series, {"n.s.read": (0.0, 31.0)}, {})
    assert "varies a lot" in w


def test_data_reduction_flatters():
    (w,) = advise({}, [], {}, {"db": (2.0, 1.0)})
    assert "compresses 2:1" in w and "flatters" in w
    assert advise({}, [], {}, {"db": (1.0, 1.0)}) == []
