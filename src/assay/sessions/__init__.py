"""Where a run's load runs, as one session for the engine (base.py)."""

from __future__ import annotations

from rich.console import Console

from assay.plan import Plan
from assay.platforms.base import Platform
from assay.run_options import RunOptions
from assay.sessions.base import Session
from assay.sessions.hosts import HostsSession
from assay.sessions.local import LocalSession

__all__ = ["HostsSession", "LocalSession", "Session", "open_session"]


def open_session(plan: Plan, opt: RunOptions, platform: Platform, console: Console) -> Session:
    """This machine's session, or the inventory's hosts' when the plan places the load there."""
    kind = LocalSession if plan.cluster is None else HostsSession
    return kind(plan, opt, platform, console)
