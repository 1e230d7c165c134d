"""ActionContext: the step's template variables, commands and waits inside its time budget."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from assay.actions import annotate, pause
from assay.actions.context import Stopped
from assay.platforms.fsbase import ActionFailed, StepTimeout
from tests.actions.support import context, fs_platform, local_platform
from tests.realfs import Machine

STEP = annotate.Params(text="x")


def test_variables_of_a_directory_platform(tmp_path: Path) -> None:
    ctx = context(local_platform(tmp_path), STEP, name="mark", n=3, t=12.4, run_id="r-9")
    assert ctx.variables == {"path": str(tmp_path), "run_id": "r-9", "t": "12", "step": "mark",
                             "n": 3}


def test_variables_of_a_filesystem_platform(machine: Machine) -> None:
    plat = fs_platform(machine, "xfs")
    v = context(plat, STEP).variables
    assert v["path"] == str(plat.directory)
    assert v["mountpoint"] == str(plat.directory.parent)
    assert v["device"] == plat.devices()[0] and v["device"].startswith("/dev/loop")


def test_runs_shell_strings_and_argv(tmp_path: Path) -> None:
    ctx = context(local_platform(tmp_path), STEP)
    assert ctx("echo out; echo err >&2") == "out\nerr"
    assert ctx(["printf", "%s|", "a b", "c"]) == "a b|c|"
    with pytest.raises(ActionFailed, match=r"exited with status 4: nope"):
        ctx("echo nope; exit 4")


def test_a_stopped_run_or_spent_budget_runs_nothing(tmp_path: Path) -> None:
    flag = tmp_path / "ran"
    ctx = context(local_platform(tmp_path), STEP)
    ctx.stop.set()
    with pytest.raises(Stopped):
        ctx(f"touch {flag}")
    ctx = context(local_platform(tmp_path), STEP, timeout=0.01)
    time.sleep(0.05)
    assert ctx.remaining() is not None and ctx.remaining() < 0
    with pytest.raises(StepTimeout, match="ran out of time"):
        ctx(f"touch {flag}")
    assert not flag.exists()


def test_a_command_gets_only_the_time_left(tmp_path: Path) -> None:
    ctx = context(local_platform(tmp_path), STEP, timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(StepTimeout, match="did not finish"):
        ctx("sleep 10")
    assert time.monotonic() - t0 < 3


def test_no_deadline_means_no_budget(tmp_path: Path) -> None:
    assert context(local_platform(tmp_path), STEP).remaining() is None


def test_sleep_waits_and_ends_early_on_stop(tmp_path: Path) -> None:
    ctx = context(local_platform(tmp_path), STEP)
    t0 = time.monotonic()
    ctx.sleep(0.3)
    assert 0.28 < time.monotonic() - t0 < 1.5
    threading.Timer(0.2, ctx.stop.set).start()
    t0 = time.monotonic()
    with pytest.raises(Stopped):
        ctx.sleep(30)
    assert time.monotonic() - t0 < 2


def test_sleep_past_the_deadline_times_out_at_the_deadline(tmp_path: Path) -> None:
    step = pause.Params.model_validate({"for": "10s", "timeout": "0.4s"})
    ctx = context(local_platform(tmp_path), step, timeout=0.4)
    t0 = time.monotonic()
    with pytest.raises(StepTimeout, match=r"timeout \(0.4s\)"):
        ctx.sleep(10)
    assert 0.35 < time.monotonic() - t0 < 2


def test_fs_is_the_filesystem_platform(machine: Machine, tmp_path: Path) -> None:
    plat = fs_platform(machine, "xfs")
    assert context(plat, STEP).fs is plat
    with pytest.raises(AssertionError):
        _ = context(local_platform(tmp_path), STEP).fs
