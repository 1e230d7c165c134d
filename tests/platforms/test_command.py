"""The command driver: the scenario's shell templates are the platform's operations."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from assay.actions import snapshot
from assay.platforms import command
from assay.platforms.fsbase import ActionFailed, run_command
from assay.scenario.models import Target
from tests.actions.support import context


def driver(path: Path, **templates: str) -> command.Driver:
    d = command.Driver(Target(platform="command", path=str(path), options=templates))
    d.prepare()
    return d


def test_supports_exactly_the_templates_given() -> None:
    target = Target(platform="command", options={"snapshot": "x", "done.scrub": "y",
                                                 "devices": ["/dev/x"], "pool": "p"})
    assert command.Driver.supports(target) == {"snapshot", "done.scrub"}
    assert command.Driver.supports(Target(platform="command")) == frozenset()


def test_prepare_records_the_mount_of_the_directory(tmp_path: Path) -> None:
    d = driver(tmp_path / "data")
    assert (tmp_path / "data").is_dir()
    found = subprocess.run(["findmnt", "-n", "-o", "TARGET,FSTYPE", "-T", str(tmp_path)],
                           capture_output=True, text=True, check=True).stdout.split()
    assert [d.mountpoint, d.mount["fstype"]] == found


def test_snapshot_templates_render_quoted_names_and_paths(tmp_path: Path) -> None:
    data = tmp_path / "my data"
    d = driver(data, snapshot="mkdir {path}/../{name}",
               **{"snapshot.delete": "rmdir {path}/../{name}"})
    d.snapshot_create(run_command, "snap 1")
    assert (tmp_path / "snap 1").is_dir() and d.created_snapshots == ["snap 1"]
    d.snapshot_delete(run_command, "snap 1")
    assert not (tmp_path / "snap 1").exists() and d.created_snapshots == []


def test_step_variables_ride_on_the_context(tmp_path: Path) -> None:
    d = driver(tmp_path, snapshot="echo {run_id} {step} {n} {t} {name}")
    p = snapshot.Params()
    ctx = context(d, p, name="snap", n=3, t=61.6, run_id="r7")
    assert snapshot.run(p, ctx) == f"r7 snap 3 62 {ctx.details['snapshot']}"


def test_device_ops_and_operations(tmp_path: Path) -> None:
    d = driver(tmp_path, **{"device.replace": "echo replace {device} by {new_device}",
                            "device.fail": "echo fail {device} [{new_device}]",
                            "scrub": "echo scrubbing {mountpoint}"})
    assert d.device_op(run_command, "replace", "/dev/a", "/dev/b") == \
        "replace /dev/a by /dev/b"
    assert d.device_op(run_command, "fail", "/dev/a", None) == "fail /dev/a []"
    assert d.operation(run_command, "scrub") == f"scrubbing {d.mountpoint}"
    with pytest.raises(ActionFailed, match="target.options has no `rebuild` command"):
        d.operation(run_command, "rebuild")


def test_template_errors(tmp_path: Path) -> None:
    d = driver(tmp_path, snapshot="snap {pool}/{name}", scrub="echo bad >&2; exit 2")
    with pytest.raises(ActionFailed, match=r"target.options.snapshot: unknown variable 'pool'"):
        d.snapshot_create(run_command, "s")
    assert d.created_snapshots == []
    with pytest.raises(ActionFailed, match="exited with status 2: bad"):
        d.operation(run_command, "scrub")


def test_busy_is_the_done_command_failing(tmp_path: Path) -> None:
    flag = tmp_path / "finished"
    d = driver(tmp_path, **{"done.rebuild": f"test -e {flag}"})
    assert d.busy(run_command, "rebuild") is True
    flag.touch()
    assert d.busy(run_command, "rebuild") is False
    with pytest.raises(ActionFailed, match="has no `done.scrub` command"):
        d.busy(run_command, "scrub")


def test_cleanup_deletes_snapshots_only_with_a_delete_template(tmp_path: Path) -> None:
    d = driver(tmp_path / "a", snapshot="mkdir {path}/{name}",
               **{"snapshot.delete": "rmdir {path}/{name}"})
    d.snapshot_create(run_command, "s1")
    d.snapshot_create(run_command, "s2")
    d.cleanup(keep=False)
    assert d.created_snapshots == [] and list((tmp_path / "a").iterdir()) == []
    d = driver(tmp_path / "b", snapshot="mkdir {path}/{name}")
    d.snapshot_create(run_command, "s1")
    d.cleanup(keep=False)  # no way to delete: left alone rather than failing
    assert (tmp_path / "b" / "s1").is_dir()


def test_busy_with_a_done_command_that_says_has_no(tmp_path: Path) -> None:
    status = tmp_path / "status"
    status.write_text("rebuilding 40%\n")
    d = driver(tmp_path, **{"done.rebuild": "grep -q 'pool has no rebuild running' "
                                            "{path}/status"})
    assert d.busy(run_command, "rebuild") is True
    status.write_text("pool has no rebuild running\n")
    assert d.busy(run_command, "rebuild") is False
