"""`assay plan --hosts`: what runs on each host — fio's jobs and the participants beside them
(due-time reader, integrity writer, PostgreSQL, the blkio group that throttles, the
host's utilisation)."""

from __future__ import annotations

from typing import Any

from assay.actions.throttle import on_devices
from assay.integrity.check import settings, writing
from assay.participants.blkio import needed as throttles
from assay.participants.blkio import step_device
from assay.plan import PREFILL_JOB, RUN_JOB, Plan
from assay.scenario.units import format_duration, format_size


def participants(plan: Plan, host: str) -> list[dict[str, str]]:
    """Each participant on `host`: its name and what it does there."""
    assert plan.cluster is not None
    hp = plan.cluster.hosts[host]
    run = plan.jobfiles[host][RUN_JOB]
    sections = [ln for ln in run.splitlines() if ln.startswith("[") and ln != "[global]"]
    out = [{"name": "fio", "detail": f"{len(sections)} jobs in {RUN_JOB}, "
                                     f"{len(hp.files)} files "
                                     f"({format_size(sum(s for _, s in hp.files))}) prefilled "
                                     f"from {PREFILL_JOB}, in {hp.host.target}" if sections
            else "no job: the databases carry the load"}]
    logged = sum(1 for ln in run.splitlines() if ln.startswith("write_iolog="))
    if logged or plan.intended_note:
        out.append({"name": "due-time reader",
                    "detail": f"{logged} fixed-rate jobs' issue logs" if logged
                    else f"none: latency from the due time is {plan.intended_note}"})
    _, chosen = settings(plan.resolved, writing(plan.streams))
    mine = [w for w in chosen if w in hp.instances]
    if mine:
        out.append({"name": "integrity writer", "detail": ", ".join(mine)})
    pg = [f"{w} x{n}" for w, n in hp.instances.items()
          if plan.resolved.workloads[w].kind == "postgres"]
    if pg:
        out.append({"name": "PostgreSQL + pgbench", "detail": ", ".join(pg)})
    if throttles(plan):
        out.append({"name": "blkio throttle", "detail": _throttle(plan, host)})
    out.append({"name": "utilisation", "detail": "CPU, memory and network each second "
                                                 "(assay's agent; hosts.ndjson)"})
    return out


def _throttle(plan: Plan, host: str) -> str:
    caps = [f"{t.device} " + ", ".join(f"{k} {v}" for k, v in _caps(t).items())
            for t in plan.scenario.target.throttle]
    steps = [f"{step_device(s.device, ())} at {format_duration(s.at or 0)} "
             + ", ".join(f"{k} {v}" for k, v in _caps(s).items())
             for s in on_devices(plan.resolved.steps)]
    return "; ".join(
        [f"group assay/<run>.{host}"]
        + ([f"whole run: {', '.join(caps)}"] if caps else [])
        + ([f"steps: {', '.join(steps)}"] if steps else []))


def _caps(obj: Any) -> dict[str, int]:
    return {k: v for k in ("read_iops", "write_iops", "read_bps", "write_bps")
            if (v := getattr(obj, k, 0))}
