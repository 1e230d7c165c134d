"""The workload-kind registry: built-ins, checks at registration, entry-point plug-ins."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from assay import workloads
from assay.plan import plan_text
from assay.plugins import PluginError
from assay.scenario.models import StepBase, WorkloadBase
from assay.workloads import oltp
from tests.plugin_dist import install, write

KIND = '''
from typing import Literal
from assay.scenario.models import WorkloadBase
from assay.workloads.base import Pattern, build_stream, split_files

class Params(WorkloadBase):
    kind: Literal["{name}"] = "{name}"

def build(name, p, ctx):
    return [build_stream(name, "s", p, split_files(name, "s", 1 << 26, 1),
                         Pattern([(4096, 100)], 50))]
'''


def test_builtins_are_registered_and_keep_the_old_functions() -> None:
    assert workloads.names()[:7] == ["exchange", "oltp", "dss", "vdi", "backup", "micro", "fio"]
    assert workloads.kinds()["oltp"] is oltp.Params
    assert workloads.kind_module("oltp") is oltp
    with pytest.raises(KeyError):
        workloads.get("nosuchkind")


def test_an_object_without_build_is_refused_with_its_name() -> None:
    class Params(WorkloadBase):
        pass

    with pytest.raises(PluginError, match=r"workload kind 'half'.* has no `build` function"):
        workloads.REGISTRY.register("half", types.SimpleNamespace(Params=Params))
    assert "half" not in workloads.names()


def test_params_must_be_a_workload_model() -> None:
    class Params(StepBase):
        pass

    thing = types.SimpleNamespace(Params=Params, build=lambda *a: [])
    with pytest.raises(PluginError, match="has no `Params` class subclassing .*WorkloadBase"):
        workloads.REGISTRY.register("steplike", thing)


def test_a_builtin_name_cannot_be_taken_again() -> None:
    with pytest.raises(PluginError, match="'oltp' .* clashes with module assay.workloads.oltp"):
        workloads.register("oltp", oltp)


def test_an_entry_point_kind_is_found_and_plans(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, {"assay.workloads": {"epkind": "ep_kind_mod"}},
            {"ep_kind_mod.py": KIND.replace("{name}", "epkind")})
    assert "epkind" in workloads.names()
    plan = plan_text("name: t\nworkloads:\n  w: {kind: epkind}\n", "t.yaml")
    assert [j.name for s in plan.streams for j in s.jobs] == ["w.s.1"]


def test_a_broken_plugin_is_named_and_keeps_failing(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, {"assay.workloads": {"broken": "broken_kind_mod"}},
            {"broken_kind_mod.py": "import no_such_dependency\n"}, name="assay-broken")
    for _ in range(2):  # nothing half-loaded is kept
        with pytest.raises(PluginError) as e:
            workloads.kinds()
        assert str(e.value) == (
            "workload kind 'broken' (entry point 'broken_kind_mod' of package assay-broken 0.1) "
            "cannot be loaded: ModuleNotFoundError: No module named 'no_such_dependency' "
            "(fix or uninstall the plug-in)")


def test_an_entry_point_that_does_not_conform_is_refused(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, {"assay.workloads": {"nobuild": "nobuild_mod"}},
            {"nobuild_mod.py": KIND.replace("{name}", "nobuild").split("def build")[0]})
    with pytest.raises(PluginError, match="'nobuild' .*nobuild_mod.* has no `build` function"):
        workloads.get("nobuild")


def test_the_cli_reports_a_broken_plugin_without_a_traceback(tmp_path: Path) -> None:
    write(tmp_path, {"assay.workloads": {"broken": "broken_cli_mod"}},
            {"broken_cli_mod.py": "raise RuntimeError('half installed')\n"}, name="assay-broken")
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: t\nworkloads:\n  w: {kind: oltp}\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "assay", "plan", str(scenario), "--no-check"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert "workload kind 'broken'" in done.stderr
    assert "RuntimeError: half installed" in done.stderr
    assert "Traceback" not in done.stderr
