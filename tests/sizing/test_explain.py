"""Figures carry their explanation; checks say by how much a rule is missed."""

import json

from assay.sizing.explain import (
    BinBytes,
    Bytes,
    Figure,
    Result,
    at_least,
    at_most,
    ceil_div,
    describe_inputs,
    fmt,
    round_half_up,
)


def test_round_half_up_like_the_published_tables():
    assert round_half_up(0.00067 * 50, 3) == 0.034  # Python's round() gives 0.033
    assert round_half_up(0.0597 * 150, 2) == 8.96


def test_ceil_div_ignores_float_noise():
    assert ceil_div(0.1 * 3, 0.1) == 3
    assert ceil_div(7, 2) == 4


def test_checks_report_the_miss():
    c = at_most("cpu", 93.0, 80.0, "%", "CPU")
    assert not c.ok and c.over_by == 13.0 and "by 13.0 %" in c.message
    ok = at_least("nodes", 7, 7, "nodes", "Nodes")
    assert ok.ok and ok.over_by == 0


def test_json_and_explanation_come_from_the_same_figure():
    f = Figure("RAM", 2.0 * (1 << 30), "bytes", "a x b", {"a": Bytes(1 << 30), "b": 2}, "src")
    r = Result("x", inputs={})
    r.add("ram", f)
    doc = json.loads(json.dumps(r.to_json()))
    assert doc["figures"]["ram"] == {"label": "RAM", "value": 2 * (1 << 30), "unit": "bytes",
                                     "formula": "a x b", "inputs": {"a": 1 << 30, "b": 2},
                                     "source": "src"}
    assert describe_inputs(f) == "a = 1.07 GB (1.00 GiB), b = 2"
    assert describe_inputs(Figure("x", 1, "", "a", {"a": BinBytes(1 << 30)})) == "a = 1.00 GiB"


def test_json_has_no_float_artifacts():
    r = Result("x", inputs={"sum": 0.1 + 0.2, "nested": [4040.0000000000005]})
    r.add("f", Figure("f", 4040.0000000000005, "IOPS", "a"))
    r.add("inf", Figure("nothing left", float("inf"), "%", "a"))
    doc = r.to_json()
    text = json.dumps(doc)
    assert doc["figures"]["f"]["value"] == 4040 and isinstance(doc["figures"]["f"]["value"], int)
    assert doc["inputs"] == {"sum": 0.3, "nested": [4040]}
    assert doc["figures"]["inf"]["value"] is None  # JSON has no infinity
    assert "Infinity" not in text and "0000000" not in text


def test_sizes_print_decimal_with_binary_beside():
    assert fmt(16 * 10**12, "bytes") == "16.00 TB (14.55 TiB)"
    assert fmt(128 << 30, "bytes", binary=True) == "128.00 GiB"
    assert fmt(99.99994, "%") == "99.99994 %"
    assert fmt(5.2, "nines") == "5.2 nines"
