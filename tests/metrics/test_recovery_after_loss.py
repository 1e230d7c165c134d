"""Recovery after a cluster host is lost is measured against the survivors' baseline: the
before level scaled to the survivors' share of the target, not the full cluster's."""

from __future__ import annotations

from typing import Any

import pytest

from assay.metrics.phases import analyse
from assay.metrics.summary import ComponentInfo

# 3 hosts at 280 IO/s each; n3 lost at 10 s: the survivors' target is 560 from there
C = ComponentInfo("db.data.read", target_iops=840.0, target_steps=((10.0, 560.0),))


def second(t: float, iops: float, lat_ms: float = 1.0) -> dict[str, Any]:
    ios = int(iops)
    return {"t": t, "dt": 1.0, "c": C.name, "ios": ios, "bytes": ios * 8192,
            "lat_sum_ns": ios * lat_ms * 1e6, "lat_max_ns": int(lat_ms * 1e6),
            "behind_s": 0.0, "bins": {}}


def lost(t0: float) -> dict[str, Any]:
    return {"kind": "step", "name": "host_lost", "action": "host_lost", "n": 1,
            "t_start": t0, "t_end": t0, "outcome": "detected", "annotate": True}


def test_a_healthy_n_minus_1_run_recovers_at_once_against_the_survivors_share() -> None:
    # the survivors keep their own 560 IO/s, latency as before: nothing to recover from
    samples = [second(float(t), 840 if t <= 10 else 560) for t in range(1, 31)]
    report = analyse([C], samples, [lost(10.0)], 0.0, 30.0)
    [rec] = report.recovery
    assert rec["components"][C.name] == pytest.approx(1.0, abs=1.0)  # was None ("never")


def test_survivors_below_their_share_never_recover() -> None:
    # after the loss the survivors fall to 420 IO/s: 75 % of their 560, below the 90 % bar
    samples = [second(float(t), 840 if t <= 10 else 420) for t in range(1, 31)]
    report = analyse([C], samples, [lost(10.0)], 0.0, 30.0)
    assert report.recovery[0]["components"][C.name] is None


def test_survivors_back_at_their_share_after_a_slow_spell_recover_then() -> None:
    samples = [second(float(t), 840 if t <= 10 else (300 if t <= 16 else 560),
                      lat_ms=1.0 if not 10 < t <= 16 else 9.0) for t in range(1, 31)]
    report = analyse([C], samples, [lost(10.0)], 0.0, 30.0)
    assert report.recovery[0]["components"][C.name] == pytest.approx(6.0)
