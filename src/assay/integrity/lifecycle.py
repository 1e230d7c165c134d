"""The engine's hooks into integrity mode: a session for a plan, and its end whatever ends the
run. It takes the plan's parts, not the Plan (plan/ imports integrity/, not the reverse)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.integrity.check import writing
from assay.integrity.fiojobs import headed_files
from assay.integrity.hosts import HostsSession
from assay.integrity.hostwriter import Hosts
from assay.integrity.session import Session, settings
from assay.platforms.base import Platform
from assay.scenario.models import ResolvedScenario
from assay.workloads.base import Stream

AnySession = Session | HostsSession  # one host's (here), or a cluster's (on each host)


def open_session(resolved: ResolvedScenario, streams: list[Stream], run_id: str,
                 directory: Path, run_dir: Path, direct: bool,
                 data_hash: Callable[[str], str]) -> Session | None:
    """The run's session, or None when no workload is in integrity mode (`data_hash`: a
    prefilled file's content hash, prefill/files.py's)."""
    spec, chosen = settings(resolved, writing(streams))
    if not chosen:
        return None
    files = headed_files(streams)
    return Session(run_id, spec, chosen, directory, run_dir, direct, resolved.scenario.seed,
                   files, {f.name: data_hash(f.name) for f in files})


def open_hosts(resolved: ResolvedScenario, streams: list[Stream], run_id: str, group: Hosts,
               direct: bool, platform: Platform) -> HostsSession | None:
    """A cluster run's session: the writers and passes run on each host (hosts.py)."""
    spec, chosen = settings(resolved, writing(streams))
    if not chosen:
        return None
    return HostsSession(run_id, spec, chosen, group, direct, resolved.scenario.seed, platform)


def close(session: AnySession, status: str) -> dict[str, Any]:
    """Stop the writers if the load did not (an interrupted or aborted run) and the section for
    run.json; a run that ended early is not verified, and says how to do it later."""
    session.stop()
    if isinstance(session, HostsSession):
        session.end()  # the hosts' commands end, their journals come back
    if not session.passes and session.writers:
        session.status = "not verified"
        session.reason = (f"the run was {status} before the final pass; `assay verify RUN` "
                          f"checks the blocks while the target keeps them")
    return session.record()
