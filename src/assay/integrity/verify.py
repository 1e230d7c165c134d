"""The verify pass: the agent's pass over the integrity blocks (assay/agent/blockpass.py, the
same code a host runs), then the checksum pass over the workloads' own data files
(checksum.py), whose corrupt and unreadable blocks count in the pass's totals."""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.agent.blockpass import FileResult, totals, verify_file
from assay.agent.blockpass import run_pass as run_blocks
from assay.integrity.area import Area
from assay.integrity.checksum import WorkloadChecksums, check_files, summary
from assay.integrity.fiojobs import HeadedFile

__all__ = ["FileResult", "run_pass", "totals", "verify_file"]


def run_pass(areas: list[Area], gens: dict[str, array[int]], direct: bool, label: str,
             t: float | None = None, locks: dict[str, threading.Lock] | None = None,
             stop: threading.Event | None = None,
             progress: Callable[[int], None] | None = None,
             sink: list[dict[str, Any]] | None = None,
             data: list[tuple[HeadedFile, Path]] | None = None,
             live: bool = False) -> dict[str, Any]:
    """One pass over every file (blockpass.run_pass); `data`: the workloads' own headed
    files, checksummed after the journaled blocks (`live`: fio may be writing them)."""
    return run_blocks(areas, gens, direct, label, t, locks, stop, progress, sink,
                      _DataFiles(data, direct, live, progress) if data else None)


class _DataFiles:
    def __init__(self, files: list[tuple[HeadedFile, Path]], direct: bool, live: bool,
                 progress: Callable[[int], None] | None):
        self.files, self.direct, self.live, self.progress = files, direct, live, progress
        self.sums: dict[str, WorkloadChecksums] = {}

    def run(self, stop: threading.Event | None) -> bool:
        return check_files(self.files, self.direct, stop, self.live, self.progress, self.sums)

    def summary(self) -> dict[str, Any]:
        return summary(self.sums)
