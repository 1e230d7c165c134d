"""`host_fail` / `host_recover` on a real platform: a command template with the host's
inventory variables, quoted, never a secret. (The lab-cluster driver runs end to end in
tests/cluster/test_lab.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.actions import host_fail, host_recover
from assay.hosts import inventory
from assay.platforms.fsbase import ActionFailed
from tests.actions.support import context, local_platform

INVENTORY = """\
n1 ansible_host=10.0.0.1 bmc=10.9.0.1 assay_path=/mnt/a
n2 ansible_host=10.0.0.2 bmc='10.9.0.2; touch pwned' ipmi_password=hunter2 assay_path=/mnt/a
"""


def ctx_for(tmp_path: Path, step):  # type: ignore[no-untyped-def]
    ctx = context(local_platform(tmp_path / "data"), step)
    ctx.hosts = {h.name: h for h in inventory.parse(INVENTORY, "inv.ini")}
    return ctx


def test_the_command_gets_the_hosts_variables_quoted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    step = host_fail.Params.model_validate(
        {"action": "host_fail", "at": 1, "host": "-1",
         "run": f"echo {{host}} {{address}} {{bmc}} > {out}"})
    ctx = ctx_for(tmp_path, step)
    host_fail.run(step, ctx)
    assert out.read_text() == "n2 10.0.0.2 10.9.0.2; touch pwned\n"  # data, not a command
    assert ctx.details["host"] == "n2" and "echo n2" in ctx.details["command"]


def test_a_secret_is_no_variable_and_a_host_must_be_known(tmp_path: Path) -> None:
    step = host_recover.Params.model_validate(
        {"action": "host_recover", "at": 1, "host": "n2", "run": "echo {ipmi_password}"})
    with pytest.raises(ActionFailed, match="unknown variable 'ipmi_password'"):
        host_recover.run(step, ctx_for(tmp_path, step))
    step = host_fail.Params.model_validate({"action": "host_fail", "at": 1, "host": "n9"})
    with pytest.raises(ActionFailed, match="'n9' is not one of this run's hosts"):
        host_fail.run(step, ctx_for(tmp_path, step))


def test_without_a_lab_a_real_platform_needs_a_command(tmp_path: Path) -> None:
    step = host_fail.Params.model_validate({"action": "host_fail", "at": 1, "host": "n1"})
    with pytest.raises(ActionFailed, match="give `run:` a command"):
        host_fail.run(step, ctx_for(tmp_path, step))
