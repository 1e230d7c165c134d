"""The report's per-second columns: compact, and read back exactly as stored."""

import json
import sys

from assay.report.rundata import Column, _records, per_second


def test_a_column_keeps_numbers_and_gaps_in_eight_bytes_each():
    col = Column([1.5, None, 3])
    col.append(None)
    col.append(4.25)
    col.append("not a number")
    assert list(col) == [1.5, None, 3.0, None, 4.25, None]
    assert (len(col), col[0], col[1], col[-2]) == (6, 1.5, None, 4.25)
    assert col[1:3] == [None, 3.0]
    big = Column(float(i) for i in range(100_000))
    as_list = [float(i) for i in range(100_000)]
    assert sys.getsizeof(big._a) < 0.3 * (sys.getsizeof(as_list) + 24 * len(as_list))


def test_per_second_reads_series_into_columns(tmp_path):
    rows = [{"t": t, "dt": 1.0, "c": c, "phase": "run", "iops": 100.0 + t,
             "mbps": None, "lat_avg_ms": 1.0, "lat_p99_ms": 2.0}
            for t in range(1, 4) for c in ("a", "b")]
    (tmp_path / "series.ndjson").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cols = per_second(tmp_path)
    assert set(cols) == {"a", "b"}
    assert list(cols["a"]["t"]) == [1.0, 2.0, 3.0]
    assert list(cols["a"]["iops"]) == [101.0, 102.0, 103.0]
    assert list(cols["b"]["mbps"]) == [None, None, None]
    assert cols["a"]["phase"] == ["run"] * 3 and cols["a"]["phase"][0] is cols["b"]["phase"][2]


def test_records_are_read_in_batches_past_blank_and_torn_lines(tmp_path):
    """Each batch is one json call; a batch of blank lines is not the end, and a torn line
    costs only itself."""
    rows = [{"t": float(t), "c": "a"} for t in range(7)]
    lines = [json.dumps(r) + "\n" for r in rows]
    text = "".join(lines[:2]) + "\n\n\n\n" + "".join(lines[2:5]) + '{"t": 9, "c"\n' + \
        "".join(lines[5:])
    path = tmp_path / "series.ndjson"
    path.write_text(text)
    assert list(_records(path, batch=3)) == rows
    assert list(_records(path)) == rows
    assert list(_records(tmp_path / "none.ndjson")) == []
