"""Workload kinds, one module each, registered here; plug-ins come from `assay.workloads`
entry points (see assay.plugins and docs/extending.md).
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from assay.plugins import Registry, lacks
from assay.scenario.models import WorkloadBase
from assay.workloads import (
    ai_training,
    backup,
    checkpoint,
    dss,
    eda,
    exchange,
    fio,
    hcibench,
    micro,
    oltp,
    postgres,
    swbuild,
    vda,
    vdi,
)
from assay.workloads.base import BuildContext, Stream

P = TypeVar("P", bound=WorkloadBase)


class WorkloadKind(Protocol[P]):
    """What a workload kind provides (usually a module)."""

    @property
    def Params(self) -> type[P]:
        """The keys the scenario accepts: a `WorkloadBase` subclass whose `kind` is the name."""

    def build(self, name: str, params: P, ctx: BuildContext, /) -> list[Stream]:
        """The workload's streams: its data files, fio jobs and graded components."""


REGISTRY: Registry[WorkloadKind[Any]] = Registry(
    "workload kind", "assay.workloads", lambda name, obj: lacks(obj, WorkloadBase, "build"))


def register(name: str, kind: WorkloadKind[P]) -> None:
    """Add a kind; mypy checks that `Params` and `build` agree, the registry checks at run time."""
    REGISTRY.register(name, kind)


register("exchange", exchange)
register("oltp", oltp)
register("dss", dss)
register("vdi", vdi)
register("backup", backup)
register("micro", micro)
register("fio", fio)
register("hcibench", hcibench)
register("postgres", postgres)
register("ai-training", ai_training)
register("checkpoint", checkpoint)
register("swbuild", swbuild)
register("vda", vda)
register("eda", eda)


def get(name: str) -> WorkloadKind[Any]:
    return REGISTRY.get(name)


def names() -> list[str]:
    return REGISTRY.names()


def kind_module(kind: str) -> Any:
    """The kind `kind` (untyped: callers use optional hooks such as micro's `duration`)."""
    return REGISTRY.get(kind)


def kinds() -> dict[str, type[WorkloadBase]]:
    """Scenario key `kind` → the model that validates that workload."""
    return {k: REGISTRY.get(k).Params for k in REGISTRY.names()}
