"""What runs on a host beside fio, or instead of it, with one lifecycle (base.py); plug-ins
from the `assay.participants` entry points, each a module with `make(where)`."""

from __future__ import annotations

from typing import Protocol

from assay.participants.base import ParticipantBase, Traits, Where
from assay.plugins import Registry

__all__ = ["REGISTRY", "ParticipantBase", "Plugin", "Traits", "Where", "made", "register"]


class Plugin(Protocol):
    def make(self, where: Where, /) -> ParticipantBase | None:
        """The participant for this run, or None where it has nothing to do."""


REGISTRY: Registry[Plugin] = Registry(
    "participant", "assay.participants",
    lambda name, obj: None if callable(getattr(obj, "make", None)) else "has no make(where)")


def register(name: str, plugin: Plugin) -> None:
    REGISTRY.register(name, plugin)


def made(where: Where) -> list[ParticipantBase]:
    """Each plug-in's participant for this run, in the registry's order."""
    out = []
    for name in REGISTRY.names():
        p = REGISTRY.get(name).make(where)
        if p is not None:
            out.append(p)
    return out
