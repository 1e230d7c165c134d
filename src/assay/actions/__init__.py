"""Platform actions on the timeline (snapshot, device fail, throttle, command, ...).

An action module defines `Params` (a `StepBase` subclass), `run(params, ctx) -> output` and
`requires(params) -> set of platform capabilities` (empty for actions any platform can do), and
is registered in ACTION_MODULES.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from assay.scenario.models import StepBase

ACTION_MODULES: tuple[str, ...] = ("snapshot", "device", "scrub", "rebuild", "throttle",
                                   "command", "annotate", "pause")


def action_module(name: str) -> ModuleType:
    return importlib.import_module(f"assay.actions.{name}")


def actions() -> dict[str, type[StepBase]]:
    """Scenario step `action` → the model that validates that step."""
    return {name: action_module(name).Params for name in ACTION_MODULES}


def requirements(step: StepBase) -> frozenset[str]:
    """Platform capabilities a step needs, including its `wait_until: {done: ...}`."""
    needs = set(action_module(step.action).requires(step))
    if step.wait_until and step.wait_until.done:
        needs.add(f"done.{step.wait_until.done}")
    return frozenset(needs)
