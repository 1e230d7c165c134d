"""Runners: how the engine carries out fio on a host (see base.py)."""

from assay.runners.base import CommandResult, Document, FioRun, Runner
from assay.runners.local import LocalRunner
from assay.runners.replay import ReplayRunner

__all__ = ["CommandResult", "Document", "FioRun", "LocalRunner", "ReplayRunner", "Runner"]
