"""Platform actions on the timeline (snapshot, device fail, throttle, command, ...), one module
each, registered here; plug-ins come from `assay.actions` entry points (see assay.plugins and
docs/extending.md). A scenario that asks for an action its platform lacks is rejected before IO.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any, Protocol, TypeVar

from assay.actions import (
    annotate,
    command,
    device,
    host_fail,
    host_recover,
    pause,
    pg_backup,
    rebuild,
    scrub,
    snapshot,
    throttle,
    verify,
)
from assay.actions.context import ActionContext
from assay.plugins import Registry, lacks
from assay.scenario.models import StepBase

P = TypeVar("P", bound=StepBase)


class Action(Protocol[P]):
    """What a timeline action provides (usually a module)."""

    @property
    def Params(self) -> type[P]:
        """The step's keys: a `StepBase` subclass whose `action` is the name."""

    def requires(self, params: P, /) -> Set[str]:
        """Platform capabilities the step needs (`snapshot`, `device.fail`, ...); empty for
        actions any platform can do."""

    def run(self, params: P, ctx: ActionContext, /) -> str:
        """Do it, within `ctx`'s time budget; the output recorded in the step's event."""


REGISTRY: Registry[Action[Any]] = Registry(
    "action", "assay.actions", lambda name, obj: lacks(obj, StepBase, "requires", "run"))


def register(name: str, action: Action[P]) -> None:
    """Add an action; mypy checks that `Params`, `requires` and `run` agree."""
    REGISTRY.register(name, action)


register("snapshot", snapshot)
register("device", device)
register("scrub", scrub)
register("rebuild", rebuild)
register("throttle", throttle)
register("command", command)
register("annotate", annotate)
register("pause", pause)
register("host_fail", host_fail)
register("host_recover", host_recover)
register("pg_backup", pg_backup)
register("verify", verify)


def get(name: str) -> Action[Any]:
    return REGISTRY.get(name)


def names() -> list[str]:
    return REGISTRY.names()


def action_module(name: str) -> Action[Any]:
    return REGISTRY.get(name)


def actions() -> dict[str, type[StepBase]]:
    """Scenario step `action` → the model that validates that step."""
    return {name: REGISTRY.get(name).Params for name in REGISTRY.names()}


def requirements(step: StepBase) -> frozenset[str]:
    """Platform capabilities a step needs, including its `wait_until: {done: ...}`."""
    needs = set(REGISTRY.get(step.action).requires(step))
    if step.wait_until and step.wait_until.done:
        needs.add(f"done.{step.wait_until.done}")
    return frozenset(needs)
