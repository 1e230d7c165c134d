from assay.metrics.histogram import Histogram


def test_percentile_of_merged_histograms_is_not_the_average_of_percentiles():
    fast = Histogram({100: 990, 200: 10})  # p99 = 100
    slow = Histogram({10_000: 990, 20_000: 10})  # p99 = 10_000
    merged = Histogram.merged([fast, slow])
    assert merged.count == 2000
    # half the IOs are slow: the true p99 is in the slow part, far above the mean of p99s
    assert merged.percentile(99) == 10_000
    assert merged.percentile(50) == 200
    assert (fast.percentile(99) + slow.percentile(99)) / 2 != merged.percentile(99)


def test_percentiles_in_one_pass_match_single_calls():
    h = Histogram({k: 1 for k in range(1, 1001)})
    many = h.percentiles((50, 95, 99, 99.9))
    assert many == {p: h.percentile(p) for p in (50, 95, 99, 99.9)}
    assert many[50] == 500 and many[99.9] == 999


def test_minus_gives_the_interval_from_cumulative_bins():
    earlier = Histogram({1: 5, 2: 3})
    later = Histogram({1: 7, 2: 3, 3: 4})
    diff = later.minus(earlier)
    assert diff.bins == {1: 2, 3: 4}
    assert diff.max == 3


def test_empty():
    h = Histogram()
    assert h.percentile(99) is None and h.max is None and not h


def test_percentiles_never_exceed_the_exact_maximum():
    h = Histogram({1000: 98, 46_920: 2})  # the top bucket's value is above the real max
    assert h.percentiles((99.9,), cap=46_890)[99.9] == 46_890
    assert h.percentiles((50,), cap=46_890)[50] == 1000
