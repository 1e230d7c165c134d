"""Each host's blkio group, made the same way for one host (a local run) and for three: real
cgroup v1 groups on this machine, whose hosts here share its kernel as the lab's network
namespaces do. The lab runs it over SSH (tests/cluster/test_throttle_lab.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.hosts import cgroup
from assay.participants.blkio import BlkioGroups
from assay.plan import LOCAL
from assay.plan.build import plan_text
from assay.runners.local import LocalRunner
from tests.realfs import Machine, needs_blkio

SHAPES = {"local": [LOCAL], "three hosts": ["n1", "n2", "n3"]}
SCENARIO = """name: t
target:
  throttle: [{throttle}]
workloads:
  db: {{kind: oltp, data_iops: 100, dataset: 16MiB}}
timeline:
  duration: 10s
  steps: [{steps}]
"""


def numbers(dev: str) -> str:
    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def groups(tmp_path: Path, names: list[str], throttle: str = "", steps: str = "",
           target: str = "/", devices: tuple[str, ...] = (),
           lost: tuple[str, ...] = ()) -> BlkioGroups | None:
    plan = plan_text(SCENARIO.format(throttle=throttle, steps=steps), "t.yaml")
    return BlkioGroups.open(plan, f"run-{tmp_path.name}", {h: LocalRunner(h, tmp_path)
                                                          for h in names}, lost,
                            dict.fromkeys(names, target),
                            dict.fromkeys(names, str(cgroup.BLKIO_ROOT)), devices)


def left(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (cgroup.BLKIO_ROOT / "assay").glob(f"run-{tmp_path.name}.*"))


@needs_blkio
@pytest.mark.parametrize("shape", SHAPES)
def test_target_throttle_is_in_force_on_every_host(shape: str, machine: Machine,
                                                   tmp_path: Path) -> None:
    names = SHAPES[shape]
    a, b = machine.loop(), machine.loop()
    blkio = groups(tmp_path, names, f"{{device: {a}, read_iops: 300, write_iops: 200}}, "
                                    f"{{device: {b}, write_bps: 1MiB}}")
    assert blkio is not None
    try:
        assert left(tmp_path) == [f"run-{tmp_path.name}.{h}" for h in names]
        want = {"read_iops": f"{numbers(a)} 300", "write_iops": f"{numbers(a)} 200",
                "write_bps": f"{numbers(b)} {1 << 20}"}
        assert blkio.in_force() == {h: want for h in names}
        assert all(Path(p).exists() and Path(p).parent.name == f"run-{tmp_path.name}.{h}"
                   for h, p in blkio.procs().items())
        blkio.limit(a, read_iops=50)  # a step's cap: every host, the other caps of `a` lifted
        assert {h: c.get("read_iops") for h, c in blkio.in_force().items()} == \
            dict.fromkeys(names, f"{numbers(a)} 50")
    finally:
        blkio.remove()
    assert left(tmp_path) == []


@needs_blkio
def test_a_lost_host_is_not_asked(machine: Machine, tmp_path: Path) -> None:
    a = machine.loop()
    lost: set[str] = set()
    blkio = groups(tmp_path, SHAPES["three hosts"], f"{{device: {a}, read_iops: 300}}",
                   lost=lost)  # type: ignore[arg-type]
    assert blkio is not None
    lost.add("n2")
    blkio.limit(a, read_iops=40)
    assert blkio.in_force() == {"n1": {"read_iops": f"{numbers(a)} 40"},
                                "n3": {"read_iops": f"{numbers(a)} 40"}}
    blkio.remove()
    assert left(tmp_path) == [f"run-{tmp_path.name}.n2"]  # what a lost host had stays
    lost.clear()
    blkio.remove()
    assert left(tmp_path) == []


@needs_blkio
@pytest.mark.parametrize("shape", SHAPES)
def test_a_step_without_a_device_caps_the_disk_under_each_target(shape: str, machine: Machine,
                                                               tmp_path: Path) -> None:
    dev, mnt = machine.filesystem("xfs")
    blkio = groups(tmp_path, SHAPES[shape], steps="{action: throttle, read_iops: 30, at: 1s}",
                   target=str(mnt / "data"))  # not made yet: the nearest parent counts
    assert blkio is not None and blkio.device(None) == "target"
    try:
        assert blkio.in_force() == dict.fromkeys(SHAPES[shape], {})  # nothing until the step
        blkio.limit("target", read_iops=30)
        assert blkio.in_force() == dict.fromkeys(SHAPES[shape], {"read_iops":
                                                                 f"{numbers(dev)} 30"})
    finally:
        blkio.remove()


@needs_blkio
@pytest.mark.parametrize("shape", SHAPES)
def test_refused_before_any_io_naming_each_host(shape: str, machine: Machine,
                                                tmp_path: Path) -> None:
    names = SHAPES[shape]
    with pytest.raises(UserError) as e:
        groups(tmp_path, names, f"{{device: {tmp_path}, read_iops: 1}}")
    lines = [f"{h}: cannot throttle there: {tmp_path} is not a block device there"
             for h in names]
    assert str(e.value) == (lines[0] if len(names) == 1 else
                            f"{len(names)} hosts cannot throttle:\n  " + "\n  ".join(lines))
    assert left(tmp_path) == []  # no group is left behind
    with pytest.raises(UserError, match="the target .* is on no block device of its own"):
        groups(tmp_path, names, steps="{action: throttle, read_iops: 30, at: 1s}",
               target="/proc")
    dev = machine.loop()
    with pytest.raises(UserError, match=r"^throttle: device 3: the platform has 1"):
        groups(tmp_path, names, steps="{action: throttle, device: 3, read_iops: 3, at: 1s}",
               devices=(dev,))
    assert left(tmp_path) == []


def test_nothing_throttled_makes_no_group(tmp_path: Path) -> None:
    plan = plan_text(SCENARIO.format(throttle="", steps=""), "t.yaml")
    assert BlkioGroups.open(plan, "r", {LOCAL: LocalRunner(LOCAL, tmp_path)}, (),
                            {LOCAL: "/"}, {LOCAL: str(tmp_path)}) is None


def test_a_host_without_blkio_v1_is_refused(tmp_path: Path) -> None:
    plan = plan_text(SCENARIO.format(throttle="{device: target, read_iops: 1}", steps=""),
                     "t.yaml")
    with pytest.raises(UserError, match=f"^local: cannot throttle there: no cgroup v1 blkio "
                                        f"at {tmp_path}$"):
        BlkioGroups.open(plan, "r", {LOCAL: LocalRunner(LOCAL, tmp_path)}, (), {LOCAL: "/"},
                         {LOCAL: str(tmp_path)})
