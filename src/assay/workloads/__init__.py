"""Workload kinds, one module each, registered here.

A kind module defines `Params` (a `WorkloadBase` subclass: the keys the scenario accepts) and
`build(name, params, ctx) -> list[Stream]` (its fio jobs and graded components).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from assay.scenario.models import WorkloadBase

KIND_MODULES = ("exchange", "oltp", "dss", "vdi", "backup", "micro", "fio")


def kind_module(kind: str) -> ModuleType:
    return importlib.import_module(f"assay.workloads.{kind}")


def kinds() -> dict[str, type[WorkloadBase]]:
    """Scenario key `kind` → the model that validates that workload."""
    return {k: kind_module(k).Params for k in KIND_MODULES}
