"""Platform drivers: where the data lives and which platform actions it supports.

A driver module defines `Driver` (a `platforms.base.Platform` subclass) and is registered in
DRIVER_MODULES. A scenario that asks for an action its platform lacks is rejected before IO.
"""

from __future__ import annotations

import importlib

from assay.platforms.base import Platform

DRIVER_MODULES: tuple[str, ...] = ("local", "btrfs", "xfs", "command")


def driver(name: str) -> type[Platform]:
    if name not in DRIVER_MODULES:
        raise KeyError(name)
    return importlib.import_module(f"assay.platforms.{name}").Driver
