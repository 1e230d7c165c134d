"""`command`: a shell command with the step's variables, quoted; a failure carries its output."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from assay.actions import command
from assay.platforms.fsbase import ActionFailed, StepTimeout
from tests.actions.support import context, fs_platform, local_platform
from tests.realfs import Machine


def step(template: str, **extra: object) -> command.Params:
    return command.Params.model_validate({"run": template, **extra})


def test_render_quotes_each_variable_for_the_shell() -> None:
    out = command.render("snap {path}@{n}", {"path": "/srv/a b;rm x", "n": 2})
    assert out == "snap '/srv/a b;rm x'@2"
    assert command.render("echo {{literal}} {t}", {"t": "5"}) == "echo {literal} 5"


def test_render_names_an_unknown_variable_and_the_known_ones() -> None:
    with pytest.raises(ActionFailed, match=r"unknown variable 'pool' in 'rbd \{pool\}' "
                                           r"\(known: n, path\)"):
        command.render("rbd {pool}", {"path": "/x", "n": 1})
    with pytest.raises(ActionFailed, match="unknown variable"):
        command.render("echo {0}", {"path": "/x"})


def test_render_refuses_a_malformed_template_as_a_step_failure() -> None:
    with pytest.raises(ActionFailed):
        command.render("echo {path} }", {"path": "/x"})


def test_runs_with_every_variable_and_records_the_command(tmp_path: Path) -> None:
    target = tmp_path / "odd dir; touch pwned"
    p = step("echo {path} {run_id} {t} {step} {n}")
    ctx = context(local_platform(target), p, name="snap-it", n=4, t=33.2, run_id="20260101_x")
    out = command.run(p, ctx)
    assert out == f"{target} 20260101_x 33 snap-it 4"
    assert ctx.details["command"] == f"echo '{target}' 20260101_x 33 snap-it 4"
    assert not (Path.cwd() / "pwned").exists() and not (tmp_path / "pwned").exists()


def test_the_command_really_runs_in_the_shell(tmp_path: Path) -> None:
    p = step("cd {path} && printf '%s' {n} > marker.{n} && ls")
    assert command.run(p, context(local_platform(tmp_path), p, n=7)) == "marker.7"
    assert (tmp_path / "marker.7").read_text() == "7"


def test_a_non_zero_exit_fails_with_status_and_output(tmp_path: Path) -> None:
    p = step("echo creating; echo 'volume not found' >&2; exit 5")
    with pytest.raises(ActionFailed) as e:
        command.run(p, context(local_platform(tmp_path), p))
    assert "exited with status 5" in str(e.value)
    assert "creating" in str(e.value) and "volume not found" in str(e.value)


def test_a_command_past_its_timeout(tmp_path: Path) -> None:
    p = step("sleep 20", timeout="0.4s")
    t0 = time.monotonic()
    with pytest.raises(StepTimeout):
        command.run(p, context(local_platform(tmp_path), p, timeout=0.4))
    assert time.monotonic() - t0 < 3


def test_filesystem_variables_on_a_real_mount(machine: Machine) -> None:
    plat = fs_platform(machine, "xfs")
    p = step("findmnt -n -o SOURCE --target {mountpoint}; echo {device}")
    source, device = command.run(p, context(plat, p)).splitlines()
    assert source == device == plat.devices()[0]


def test_needs_no_platform_capability() -> None:
    assert command.requires(step("true")) == set()
