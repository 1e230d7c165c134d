"""The hosts' database rows merged into the run's seconds (postgres/hostrows.py), and the
host's fold of pgbench's logs into those rows (agent/pgfold.py): fast, no database."""

from __future__ import annotations

import random
from pathlib import Path

from assay.agent.pgfold import GRACE_S, Fold
from assay.agent.pgfold import bucket as host_bucket
from assay.metrics.histogram import Histogram
from assay.postgres.hostrows import Names, Seconds, merge


def row(n: int, lat_ms: list[float], failed: int = 0, lag_ms: float = 0.0) -> dict:
    h: dict[int, int] = {}
    for x in lat_ms:
        b = host_bucket(int(x * 1e6))
        h[b] = h.get(b, 0) + 1
    return {"tx": {"n": n, "f": failed, "ls": int(sum(lat_ms) * 1e6),
                   "lm": int(max(lat_ms, default=0) * 1e6), "h": {str(k): v for k, v in h.items()},
                   "gs": 0, "gm": int(lag_ms * 1e6), "g": {}}}


def test_merged_second_adds_counts_takes_maxima_and_adds_buckets() -> None:
    rng = random.Random(7)
    a = [rng.uniform(1, 20) for _ in range(300)]
    b = [rng.uniform(5, 90) for _ in range(200)]
    m = merge([row(300, a, failed=2, lag_ms=3), row(200, b, failed=1, lag_ms=40)])["tx"]
    assert (m["n"], m["f"], m["gm"]) == (500, 3, 40_000_000)
    assert m["lm"] == int(max(a + b) * 1e6)
    assert m["ls"] == int(sum(a) * 1e6) + int(sum(b) * 1e6)
    # the merged buckets are those of all transactions together: p99 from them, exactly
    together = row(500, a + b)["tx"]["h"]
    assert m["h"] == {int(k): v for k, v in together.items()}
    p99 = Histogram(m["h"]).percentiles()[99.0]
    assert p99 == Histogram({int(k): v for k, v in together.items()}).percentiles()[99.0]
    assert p99 > 80e6  # the slow host's tail shows in the cluster's p99, not averaged away


def test_a_second_waits_for_every_running_host_and_a_closed_host_holds_nothing_back() -> None:
    s = Seconds(["n1", "n2"])
    s.add("n1", 0, row(10, [1.0]))
    s.add("n1", 1, row(11, [1.0]))
    assert s.ready() == []  # n2 has sent nothing
    s.add("n2", 0, row(20, [2.0]))
    [(k, rows)] = s.ready()
    assert k == 0 and rows["n1"]["tx"]["n"] == 10 and rows["n2"]["tx"]["n"] == 20
    s.close("n2")  # lost, or ended: n1 goes on alone
    s.add("n2", 1, row(99, [1.0]))  # nothing after its close counts
    assert [(k, r["n1"]["tx"]["n"], r["n2"]) for k, r in s.ready()] == [(1, 11, {})]
    s.add("n1", 1, row(5, [1.0]))  # late for a second handed out: counts in the next
    s.add("n1", 2, row(7, [1.0]))
    assert [r["n1"]["tx"]["n"] for _, r in s.ready()] == [12]


def test_final_hands_out_every_second_left() -> None:
    s = Seconds(["n1", "n2"])
    s.add("n1", 0, row(1, [1.0]))
    s.add("n1", 1, row(2, [1.0]))
    assert s.ready() == []
    assert [k for k, _ in s.ready(final=True)] == [0, 1]


def test_samples_name_the_workloads_components_with_targets_and_lag() -> None:
    names = Names("pg", ["new_order"], rate=True)
    r = row(40, [2.0, 30.0], failed=1, lag_ms=250)
    r["new_order"] = row(18, [2.0])["tx"]
    out = {s.component: s for s in names.samples(r, 4.0, "run", {"pg.tx.commit": 80.0}.get)}
    assert list(out) == ["pg.tx.commit", "pg.tx.failed", "pg.tx.lag", "pg.new_order.commit"]
    commit = out["pg.tx.commit"]
    assert (commit.ios, commit.target_iops, commit.t, commit.phase) == (40, 80.0, 4.0, "run")
    assert commit.behind_s == 0.25 and commit.lat_max_ns == 30_000_000
    assert out["pg.tx.failed"].ios == 1 and out["pg.tx.failed"].target_iops is None
    assert out["pg.new_order.commit"].ios == 18
    empty = names.samples({}, 5.0, "run", {"pg.tx.commit": 80.0}.get)
    assert [s.ios for s in empty] == [0, 0, 0, 0] and empty[0].target_iops == 80.0


def test_the_host_folds_pgbench_logs_into_seconds(tmp_path: Path) -> None:
    start = 1_000_000.0
    lines = [  # client tx latency_us script end_s end_us lag_us
        "0 1 1500 0 1000000 200000 100", "1 1 2500 1 1000000 900000 50",
        "0 2 skipped 0 1000001 500000 0", "1 2 90000 0 1000002 100000 7000"]
    (tmp_path / "tx.123").write_text("\n".join(lines[:3]) + "\n" + lines[3][:5])
    fold = Fold(tmp_path / "tx", start, {1: "payment"}, lag=True)
    assert fold.rows(start + GRACE_S - 0.5) == []  # second 0 is not GRACE_S old yet
    [first] = fold.rows(start + GRACE_S + 0.5)
    assert first["s"] == 0 and first["streams"]["tx"]["n"] == 2
    assert first["streams"]["payment"]["n"] == 1  # script 1 is the payment type
    assert first["streams"]["tx"]["gm"] == 100_000
    with open(tmp_path / "tx.123", "a") as f:  # the rest of a half-written line
        f.write(lines[3][5:] + "\n")
    rest = fold.rows(start + 100, final=True)
    assert [r["s"] for r in rest] == [1, 2]
    assert rest[0]["streams"]["tx"]["f"] == 1 and rest[1]["streams"]["tx"]["lm"] == 90_000_000
    assert fold.totals == {"commits": 3, "failed": 0, "skipped": 1}
