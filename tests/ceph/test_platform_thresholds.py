"""Each `platform.` threshold fails a real lab run when the platform misbehaves beyond its
bound: a scrub error planted and found (HEALTH_ERR until repaired), then a node cut off (all IO
frozen until the monitors mark its OSD down after the 20 s heartbeat grace; every PG clean
again only after the 30 s down-out interval and the rebuild). The bounds sit below what Ceph's
own settings make certain (state, not tight timings): `health_err_s == 0` against a PG scrub
found inconsistent, `io_frozen_s < 10s` against a 20 s grace, `recovery_s < 20s` against a
30 s down-out interval.

One lab for the module (bring-up ~25-40 s), about 5 minutes on a loaded 2-core machine.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.platforms import cephstate, labceph, platformstate
from tests.ceph.test_lab import Lab, needs_ceph, run_on, steps
from tests.conftest import needs_fio, verdict_of
from tests.sshlab import needs_netns

pytestmark = [needs_netns, needs_fio, needs_ceph, pytest.mark.slow, pytest.mark.tier2]

MISBEHAVING = """\
name: ceph-misbehaving
target: {platform: ceph}
workloads:
  db: {kind: oltp, data_iops: 40, log_iops: 5, data_files: 1, log_files: 1, dataset: 64MiB}
timeline:
  duration: 4m
  steps:
    - {name: corrupt, action: scrub, corrupt: true, at: 5s, timeout: 3m}
    - {name: repair, action: scrub, repair: true, after: corrupt, timeout: 3m}
    - {action: host_fail, after: repair, host: "-1"}
    - {name: rebuild, action: rebuild, after: host_fail, wait_until: {done: rebuild, poll: 2s},
       timeout: 3m}
thresholds:
  - platform.health_err_s == 0
  - platform.io_frozen_s < 10s
  - platform.recovery_s < 20s
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("cephlabs")
    c, ceph_lab = labceph.create(f"t{uuid.uuid4().hex[:6]}", 4, root)
    try:
        yield c, ceph_lab, root
    finally:
        if Path(c.root).exists():
            labceph.destroy(c)


@pytest.mark.timeout(900)
def test_each_platform_threshold_fails_when_the_platform_misbehaves(lab: Lab,
                                                                     tmp_path: Path) -> None:
    labceph.wait_healthy(lab[1], 4, 300)
    scenario = tmp_path / "misbehaving.yaml"
    scenario.write_text(MISBEHAVING)
    proc, run_dir, run = run_on(lab, tmp_path, str(scenario))
    assert proc.returncode == 1, verdict_of(proc)
    assert run["status"] == "failed"
    by_name = steps(run_dir)
    corrupt = by_name["corrupt"]  # scrub found the planted error: an event naming the PG
    assert corrupt["outcome"] == "ok" and corrupt["found"] == ["read_error"], corrupt
    assert f"pg {corrupt['pg']} inconsistent" in corrupt["output"]
    assert by_name["repair"]["outcome"] == "ok" and by_name["repair"]["pgs"] == [corrupt["pg"]]
    assert by_name["host_fail"]["outcome"] == "ok"
    rows = cephstate.read(run_dir)
    err = [r for r in rows if r.get("health") == "HEALTH_ERR"]
    assert err and any({"OSD_SCRUB_ERRORS", "PG_DAMAGED"} & set(r.get("checks", [])) for r in err)
    assert any(r.get("osds_up") == 3 for r in rows)  # the cut node's OSD was marked down
    graded = {t["metric"]: t for t in run["cluster"]["thresholds"]}
    assert set(graded) == {"health_err_s", "io_frozen_s", "recovery_s"}
    for t in graded.values():  # each failed on its own measure, above its bound
        assert t["passed"] is False and t["observed"] is not None, t
        assert t["observed"] > t["bound"], t
    assert graded["io_frozen_s"]["observed"] >= 15  # the heartbeat grace, not noise
    # the same run with bounds above what was measured passes: the failures were the platform's
    met = platformstate.grade([
        f"platform.health_err_s <= {graded['health_err_s']['observed']:g}",
        f"platform.io_frozen_s < {graded['io_frozen_s']['observed'] + 1:g}s",
        f"platform.recovery_s < {graded['recovery_s']['observed'] + 1:g}s"], run_dir)
    if graded["recovery_s"]["note"] == "not active+clean at the end":
        met = met[:2]  # (a rebuild slower than the run: still failing, and rightly)
    assert all(t["passed"] for t in met), met
