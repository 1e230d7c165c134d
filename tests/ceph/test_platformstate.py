"""platform.* thresholds graded from the platform's series and fio's: recovery, IO freeze,
HEALTH_ERR; a bound below what was measured fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.platforms import cephstate, platformstate

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ceph"


def state_rows(pattern: str, start: float = 0.0) -> list[dict[str, Any]]:
    """c: clean, d: degraded, e: HEALTH_ERR (degraded), one character a second."""
    return [{"t": start + i, "clean": ch == "c",
             "health": {"c": "HEALTH_OK", "d": "HEALTH_WARN", "e": "HEALTH_ERR"}[ch]}
            for i, ch in enumerate(pattern)]


def write(run_dir: Path, platform: list[dict[str, Any]], series: list[dict[str, Any]]) -> None:
    with open(run_dir / cephstate.SERIES, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in platform)
    with open(run_dir / "series.ndjson", "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in series)


def test_recovery_is_the_longest_unclean_stretch() -> None:
    assert platformstate.recovery_s(state_rows("ccdddcccddcc")) == (3.0, "")
    assert platformstate.recovery_s(state_rows("cccc")) == (0.0, "")
    observed, note = platformstate.recovery_s(state_rows("ccddd"))
    assert observed == 2.0 and "not active+clean at the end" in note
    assert platformstate.recovery_s([])[0] is None


def test_health_err_counts_seconds() -> None:
    assert platformstate.health_err_s(state_rows("cdeeedc")) == (3.0, "")


def io(t: float, ios: int, dt: float = 1.0, lat_ms: float = 20.0, c: str = "db.data.read") \
        -> dict[str, Any]:
    return {"t": t, "dt": dt, "c": c, "ios": ios, "lat_max_ms": lat_ms}


def test_io_freeze_counts_zero_seconds_on_every_host_together() -> None:
    series = [io(1, 100), io(2, 0), io(2, 5, c="db.log.write"), io(3, 0), io(3, 0, c="x"),
              io(4, 0), io(4, 0, c="x"), io(5, 90), io(6, 0)]  # the last: after the last IO
    assert platformstate.io_frozen_s(series) == (2.0, "")


def test_io_freeze_counts_seconds_fio_could_not_report() -> None:
    # every fio was silent 26 s (its status waits for stuck IO); its slowest IO waited 25.1 s
    series = [io(1, 100), io(2, 100), io(28.3, 165, dt=26.3, lat_ms=25100.0), io(29.3, 90)]
    assert platformstate.io_frozen_s(series) == (25.1, "")
    # a late report whose IO never waited long is a slow reporter, not a freeze
    assert platformstate.io_frozen_s([io(1, 9), io(3.2, 100, dt=2.2, lat_ms=40.0),
                                      io(4.2, 9)]) == (0.0, "")


def test_grade_passes_and_a_lowered_bound_fails(tmp_path: Path) -> None:
    write(tmp_path, state_rows("cccddddddcc"),
          [io(1, 100), io(2, 0), io(3, 0), io(4, 0), io(5, 100)])
    spec = ["platform.recovery_s < 5m", "platform.io_frozen_s < 30s",
            "platform.health_err_s == 0", "db.iops > 1"]
    graded = {g["metric"]: g for g in platformstate.grade(spec, tmp_path)}
    assert set(graded) == {"recovery_s", "io_frozen_s", "health_err_s"}
    assert all(g["passed"] for g in graded.values())
    assert graded["recovery_s"]["observed"] == 6.0 and graded["io_frozen_s"]["observed"] == 3.0
    lowered = platformstate.grade({"platform.recovery_s": "< 5s",
                                   "platform.io_frozen_s": "<= 2s"}, tmp_path)
    assert [g["passed"] for g in lowered] == [False, False]
    assert lowered[0]["expr"] == "platform.recovery_s < 5s"


def test_no_platform_series_fails_rather_than_passes(tmp_path: Path) -> None:
    graded = platformstate.grade(["platform.health_err_s == 0"], tmp_path)
    assert graded[0]["passed"] is False and graded[0]["observed"] is None


@pytest.mark.parametrize("bad", ["platform.recovery_s 5m", "platform.foo < 1s",
                                 "platform.recovery_s < soon"])
def test_bad_expressions_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match=r"platform"):
        platformstate.entries([bad])


def test_a_recorded_ceph_status_becomes_a_row() -> None:
    """`ceph status -f json` of the lab while the last node was cut off (a real one)."""
    line = {"ts": 1000.0, "status": json.loads((FIXTURES / "status-degraded.json").read_text())}
    row = cephstate.row(line, offset=-900.0)
    assert row["t"] == 100.0
    assert row["health"] == "HEALTH_WARN" and "OSD_DOWN" in row["checks"]
    assert row["osds"] == 4 and row["osds_up"] == 3
    assert row["clean"] is False and row["recovering"] is True
    assert row["pgs_total"] == sum(row["pgs"].values())
    assert cephstate.row({"ts": 5.0, "error": "timed out"}, 0.0)["health"] == "unreachable"


@pytest.mark.parametrize("state,ok", [
    ("active+clean", True), ("active+clean+snaptrim_wait", True),
    ("active+clean+scrubbing+deep", True), ("active+clean+laggy", False),
    ("active+clean+wait", False), ("active+undersized+degraded", False),
    ("active+recovery_wait+undersized+degraded+remapped", False)])
def test_which_pg_states_are_clean(state: str, ok: bool) -> None:
    assert cephstate.pg_clean(state) is ok
