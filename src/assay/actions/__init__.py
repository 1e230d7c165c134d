"""Platform actions on the timeline (snapshot, device fail, throttle, command, ...).

An action module defines `Params` (a `StepBase` subclass) and is registered in ACTION_MODULES.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from assay.scenario.models import StepBase

ACTION_MODULES: tuple[str, ...] = ()


def action_module(name: str) -> ModuleType:
    return importlib.import_module(f"assay.actions.{name}")


def actions() -> dict[str, type[StepBase]]:
    """Scenario step `action` → the model that validates that step."""
    return {name: action_module(name).Params for name in ACTION_MODULES}
