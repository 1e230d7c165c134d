"""Platform drivers: where the data lives and which platform actions it supports.

Each driver module defines `Driver` (a `platforms.base.Platform` subclass, or `FsPlatform`
for one with platform operations), registered here; plug-ins come from `assay.platforms`
entry points (see assay.plugins and docs/extending.md).
"""

from __future__ import annotations

from typing import Protocol

from assay.platforms import btrfs, ceph, command, local, xfs
from assay.platforms.base import Platform
from assay.plugins import Registry
from assay.scenario.models import Target


class PlatformDriver(Protocol):
    """What a driver provides: the class itself, not an instance."""

    @property
    def name(self) -> str:
        """`target.platform` in scenarios; recorded with every run."""

    def supports(self, target: Target, /) -> frozenset[str]:
        """The capabilities (timeline actions) it offers for `target`."""

    def __call__(self, target: Target, /) -> Platform:
        """A driver for one run; the engine and the actions call its `Platform` methods."""


def _problem(name: str, obj: object) -> str | None:
    if not (isinstance(obj, type) and issubclass(obj, Platform)):
        what = "a module; name its driver class (`module:Driver`)" if hasattr(obj, "Driver") \
            else "not a subclass of assay.platforms.base.Platform"
        return f"is {what}"
    if obj.name != name:  # runs record it: a forgotten `name` would say "local"
        return f"calls itself {obj.name!r}: set `name = {name!r}` on the class"
    return None


REGISTRY: Registry[PlatformDriver] = Registry("platform driver", "assay.platforms", _problem)


def register(name: str, driver: PlatformDriver) -> None:
    """Add a driver class; its `name` must be the name it is registered under."""
    REGISTRY.register(name, driver)


register("local", local.Driver)
register("btrfs", btrfs.Driver)
register("xfs", xfs.Driver)
register("command", command.Driver)
register("ceph", ceph.Driver)

# the built-ins; names() adds plug-ins
DRIVER_MODULES = ("local", "btrfs", "xfs", "command", "ceph")


def get(name: str) -> PlatformDriver:
    return REGISTRY.get(name)


def names() -> list[str]:
    return REGISTRY.names()


def driver(name: str) -> PlatformDriver:
    """The driver class for `target.platform`; KeyError if there is none."""
    return REGISTRY.get(name)
