"""Latency from the due time while the run goes, from the run's `lags` stream as the agents'
rows come: one host's second is paired at once, a cluster's once every host's lags are in
(or once a silent host has held it long enough). An update shows the worst second of those
paired since the last one: a stalled host's burst of seconds cannot hide its stall."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.metrics.duetime import pair
from assay.observe.duelive import LiveDue

SERVICE = {"1000000": 90, "2000000": 10}  # fio's bins of the second: 1 and 2 ms
LATE = {"500000000": 10}  # 10 IOs that waited 0.5 s in fio's schedule on that host
ON_TIME = {"1000": 90}


def lags(path: Path, *rows: dict[str, Any]) -> None:
    with open(path / "lags.ndjson", "a", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps({"c": "db.read.8k", "ios": 0, **r}) + "\n")


def live(tmp_path: Path, seconds: range) -> LiveDue:
    due = LiveDue({"db.read": ["db.read.8k"]})
    due.run_dir = tmp_path
    due.samples([{"c": "db.read", "t": float(s), "bins_json": json.dumps(SERVICE)}
                 for s in seconds])
    return due


def p99_ms(service: dict[str, int], *lag_bins: dict[str, int]) -> float:
    merged: dict[int, int] = {}
    for bins in lag_bins:
        for k, v in bins.items():
            merged[int(k)] = merged.get(int(k), 0) + v
    value = pair({int(k): v for k, v in service.items()}, merged).percentiles((99.0,))[99.0]
    assert value is not None
    return value / 1e6


def test_one_hosts_second_is_paired_as_soon_as_its_lags_are_in(tmp_path: Path) -> None:
    due = live(tmp_path, range(1, 4))
    lags(tmp_path, {"host": "local", "t": 3.0, "bins": LATE})
    due.update()
    assert due.p99_ms["db.read"] == p99_ms(SERVICE, LATE) > 400


def test_a_clusters_second_waits_for_every_hosts_lags(tmp_path: Path) -> None:
    due = live(tmp_path, range(1, 30))
    # n1 has sent seconds 2 to 7, n2 only 2: its fio stalled, or it is slow (a loaded
    # machine); pairing second 7 now would leave n2's late IOs out of it
    lags(tmp_path, {"host": "n2", "t": 2.0, "bins": ON_TIME},
         *[{"host": "n1", "t": float(t), "bins": ON_TIME} for t in range(2, 8)])
    due.update()
    assert due.p99_ms["db.read"] == p99_ms(SERVICE, ON_TIME, ON_TIME)  # second 2: both in
    lags(tmp_path, {"host": "n2", "t": 3.0, "bins": LATE})
    due.update()  # second 3 holds both hosts' lags: n2's late IOs are in its figure
    assert due.p99_ms["db.read"] == p99_ms(SERVICE, ON_TIME, LATE) > 400
    assert p99_ms(SERVICE, ON_TIME) < 5  # what pairing n1's lags alone would have said
    # n2 silent since (lost, or its agent gone): it holds the figure HOST_WAIT_S at most
    lags(tmp_path, *[{"host": "n1", "t": float(t), "bins": ON_TIME} for t in range(8, 16)])
    due.update()
    assert due.p99_ms["db.read"] == p99_ms(SERVICE, ON_TIME) < 5  # second 15 - 10 = 5


def test_a_burst_of_seconds_shows_its_worst_not_its_newest(tmp_path: Path) -> None:
    """A stalled host catches up in a burst (seconds 2 to 6 at once, the 3rd late): the
    figure is the stalled second's, then, at the next update, the next seconds' again."""
    due = live(tmp_path, range(1, 12))
    lags(tmp_path, {"host": "local", "t": 1.0, "bins": ON_TIME})
    due.update()
    assert due.p99_ms["db.read"] == p99_ms(SERVICE, ON_TIME) < 5
    lags(tmp_path, *[{"host": "local", "t": float(t), "bins": LATE if t == 3 else ON_TIME}
                     for t in range(2, 7)])
    due.update()
    assert due.p99_ms["db.read"] == p99_ms(SERVICE, LATE) > 400  # not second 6's
    due.update()  # nothing new: the figure stays
    assert due.p99_ms["db.read"] == p99_ms(SERVICE, LATE)
    lags(tmp_path, {"host": "local", "t": 7.0, "bins": ON_TIME})
    due.update()
    assert due.p99_ms["db.read"] == p99_ms(SERVICE, ON_TIME) < 5
