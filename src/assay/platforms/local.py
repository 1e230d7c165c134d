"""The local platform: a directory (default: a temporary one) on this host."""

from __future__ import annotations

from typing import ClassVar

from assay.platforms.base import Platform


class Driver(Platform):
    name: ClassVar[str] = "local"
