"""The action registry: built-ins, checks at registration, entry-point plug-ins."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from assay import actions
from assay.actions import pause, snapshot
from assay.plan import plan_text
from assay.plugins import PluginError
from assay.scenario.models import StepBase, WaitUntil, WorkloadBase
from assay.scenario.yamlsource import ScenarioInvalid
from tests.plugin_dist import install

# an action that needs a platform snapshot, so the plan must check the platform for it
ACTION = '''
from typing import Literal
from assay.scenario.models import StepBase

class Params(StepBase):
    action: Literal["freeze"] = "freeze"

def requires(p):
    return {"snapshot"}

def run(p, ctx):
    return "frozen"
'''
SCENARIO = "name: t\n{target}workloads:\n  w: {{kind: dss}}\n" \
           "timeline:\n  steps:\n    - {{action: freeze, at: 5s}}\n"


def test_builtins_are_registered_and_keep_the_old_functions() -> None:
    assert set(actions.names()) >= {"snapshot", "device", "command", "pause"}
    assert actions.actions()["pause"] is pause.Params
    assert actions.action_module("snapshot") is snapshot
    step = snapshot.Params(keep=2, wait_until=WaitUntil(done="scrub"))
    assert actions.requirements(step) == {"snapshot", "snapshot.delete", "done.scrub"}


def test_an_object_without_run_is_refused_with_its_name() -> None:
    class Params(StepBase):
        pass

    half = types.SimpleNamespace(Params=Params, requires=lambda p: set())
    with pytest.raises(PluginError, match=r"action 'half' .* has no `run` function"):
        actions.REGISTRY.register("half", half)
    assert "half" not in actions.names()


def test_params_must_be_a_step_model() -> None:
    class Params(WorkloadBase):
        pass

    thing = types.SimpleNamespace(Params=Params, requires=lambda p: set(), run=lambda p, c: "")
    with pytest.raises(PluginError, match="has no `Params` class subclassing .*StepBase"):
        actions.REGISTRY.register("wrong", thing)


def test_an_entry_point_action_plans_and_its_needs_are_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, {"assay.actions": {"freeze": "ep_action_mod"}},
            {"ep_action_mod.py": ACTION})
    plan = plan_text(SCENARIO.format(target="target: {platform: btrfs}\n"), "t.yaml")
    assert [s.action for s in plan.resolved.steps] == ["freeze"]
    with pytest.raises(ScenarioInvalid, match="platform 'local' cannot do snapshot"):
        plan_text(SCENARIO.format(target=""), "t.yaml")


def test_a_broken_entry_point_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, {"assay.actions": {"half": "half_action_mod"}},
            {"half_action_mod.py": ACTION.split("def run")[0]}, name="assay-half")
    with pytest.raises(PluginError, match=r"action 'half' \(entry point 'half_action_mod' of "
                                          r"package assay-half 0.1\) has no `run` function"):
        actions.actions()
