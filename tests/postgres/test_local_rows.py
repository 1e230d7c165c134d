"""pgbench's per-transaction logs → per-second samples on this machine, as on a host (the
agent's fold, agent/pgfold.py, made samples by postgres/hostrows.py): checked against
pgbench's own summary of the same real run (tests/fixtures/postgres/throttled: 200 tx/s, a
write throttle for 3 s, a 200 ms latency limit that skipped 537 transactions)."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import pytest

from assay.agent.pgfold import GRACE_S, bucket
from assay.metrics.histogram import Histogram
from assay.metrics.sampler import ComponentSpec, Sample
from assay.postgres.load import PostgresLoad
from assay.workloads.postgres import Params
from tests.conftest import FIXTURES

RUN = FIXTURES / "postgres" / "throttled"


def summary(name: str) -> int:
    text = (RUN / "pgbench.txt").read_text()
    m = re.search(rf"number of transactions {name}: (\d+)", text)
    assert m, name
    return int(m[1])


def lines() -> list[list[str]]:
    return [x.split() for p in sorted(RUN.glob("tx.*")) for x in p.read_text().splitlines()]


def start_of_run() -> float:
    return float(min(int(f[4]) for f in lines()))


class TxLog:
    """A local database's transaction log as the run reads it (PostgresLoad.seconds)."""

    def __init__(self, prefix: Path, driver: str, rate: float | None, start: float):
        params = Params.model_validate({"kind": "postgres", "driver": driver, "rate": rate})
        self.load = PostgresLoad("pg", params, prefix.parent, "r")
        self.load.fold = self.load.folding(start)
        self.specs = {"pg.tx.commit": ComponentSpec("pg.tx.commit", [], "commit", rate)}

    @property
    def totals(self) -> dict[str, int]:
        assert self.load.fold is not None
        return self.load.fold.totals

    def poll(self, now: float, origin: float, warmup: float, final: bool = False) \
            -> list[Sample]:
        return self.load.seconds(now, origin, warmup, self.specs, final)


def test_bucket_error_is_under_half_a_percent() -> None:
    for ns in (1, 100, 255, 1000, 123_456, 9_999_999, 4_700_000_000):
        assert abs(bucket(ns) - ns) <= max(1, ns * 0.004), ns
    assert bucket(1000) == bucket(1001) or abs(bucket(1000) - 1000) < 4


def test_totals_match_pgbench_summary(tmp_path: Path) -> None:
    for p in RUN.glob("tx.*"):
        shutil.copy(p, tmp_path / p.name)
    log = TxLog(tmp_path / "tx", "pgbench", 200.0, start_of_run())
    samples = log.poll(0, start_of_run(), 0.0, final=True)
    commits = [s for s in samples if s.component == "pg.tx.commit"]
    failed = [s for s in samples if s.component == "pg.tx.failed"]
    lag = [s for s in samples if s.component == "pg.tx.lag"]
    assert sum(s.ios for s in commits) == summary("actually processed") == 1266
    assert sum(s.ios for s in failed) == summary("skipped") == 537
    assert log.totals == {"commits": 1266, "failed": 0, "skipped": 537}
    # one sample per component per second, on consecutive seconds
    assert [s.t for s in commits] == [s.t for s in lag] == [s.t for s in failed]
    assert all(b.t - a.t == pytest.approx(1.0) for a, b in zip(commits, commits[1:], strict=False))
    # the throttle shows: seconds with almost no commits and a schedule lag of ~200 ms
    worst = max(commits, key=lambda s: s.behind_s)
    assert worst.behind_s > 0.15 and min(s.ios for s in commits[:-1]) < 20


def test_percentiles_match_the_raw_latencies(tmp_path: Path) -> None:
    for p in RUN.glob("tx.*"):
        shutil.copy(p, tmp_path / p.name)
    log = TxLog(tmp_path / "tx", "pgbench", 200.0, start_of_run())
    samples = log.poll(0, start_of_run(), 0.0, final=True)
    merged = Histogram.merged(s.hist for s in samples if s.component == "pg.tx.commit")
    raw = sorted(int(f[2]) * 1000 for f in lines() if f[2].isdigit())
    exact = raw[math.ceil(len(raw) * 0.99) - 1]
    assert merged.count == len(raw)
    assert merged.percentile(99.0) == pytest.approx(exact, rel=0.005)
    lag = Histogram.merged(s.hist for s in samples if s.component == "pg.tx.lag")
    raw_lag = sorted(int(f[6]) * 1000 for f in lines() if f[2].isdigit())
    assert lag.percentile(99.0) == pytest.approx(raw_lag[math.ceil(len(raw_lag) * .99) - 1],
                                                 rel=0.005)


def test_live_polling_waits_for_buffered_lines_and_loses_none(tmp_path: Path) -> None:
    """Lines arrive in pieces (stdio buffers, a line cut in two); a second is emitted only
    GRACE_S after it ended, and every transaction is counted exactly once."""
    start = start_of_run()
    text = {p.name: p.read_bytes() for p in RUN.glob("tx.*")}
    log = TxLog(tmp_path / "tx", "pgbench", 200.0, start)
    out = []
    for cut in (0.3, 0.55, 0.8, 1.0):
        for name, data in text.items():
            (tmp_path / name).write_bytes(data[:int(len(data) * cut) - (7 if cut < 1 else 0)])
        now = start + 9 * cut
        got = log.poll(now, start, 0.0)
        assert all(s.t <= now - start - GRACE_S + 1 for s in got)
        out += got
    out += log.poll(start + 20, start, 0.0, final=True)
    assert sum(s.ios for s in out if s.component == "pg.tx.commit") == 1266
    assert sum(s.ios for s in out if s.component == "pg.tx.failed") == 537


def test_transaction_types_of_the_tpcc_mix(tmp_path: Path) -> None:
    (tmp_path / "tx.1").write_text(
        "0 1 1500 0 1000 100000 0\n"  # new_order
        "0 2 2500 1 1000 200000 0\n"  # payment
        "1 1 failed 0 1000 300000 0 3\n"  # a new_order that failed after its tries
        "1 2 4000 0 1001 100000 0\n")
    log = TxLog(tmp_path / "tx", "tpcc", None, 1000.0)
    by = {(s.component, round(s.t)): s.ios for s in log.poll(0, 1000.0, 0.0, final=True)}
    assert by[("pg.tx.commit", 1)] == 2 and by[("pg.tx.failed", 1)] == 1
    assert by[("pg.new_order.commit", 1)] == 1 and by[("pg.payment.commit", 1)] == 1
    assert by[("pg.new_order.commit", 2)] == 1 and by[("pg.delivery.commit", 2)] == 0
    assert "pg.tx.lag" not in {c for c, _ in by}  # no fixed rate: no schedule lag
    assert log.totals == {"commits": 3, "failed": 1, "skipped": 0}
