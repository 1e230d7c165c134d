"""`verify`: a verify pass over the integrity blocks now, beside the load (integrity mode).

    - {name: check, action: verify, after: rebuild}      # after an event
    - {action: verify, at: 30s, every: 60s}

The writers keep writing; the pass takes each file's lock chunk by chunk, so what it reads and
what the journal says agree. The step records the counts (lost, stale, corrupt, unreadable)
and the first offsets, and checksums the workloads' own data files by their fio verify headers
(a block read bad while fio writes is read again before it counts); they count in the
`integrity.*` thresholds like the final pass. Problems
do not fail the step: thresholds grade them.
"""

from __future__ import annotations

from typing import Literal

from assay.actions.context import ActionContext
from assay.integrity.block import PROBLEMS
from assay.platforms.fsbase import ActionFailed
from assay.scenario.models import StepBase


class Params(StepBase):
    action: Literal["verify"] = "verify"


def requires(p: Params) -> set[str]:
    return set()  # any platform; the plan checks that integrity mode is on


def run(p: Params, ctx: ActionContext) -> str:
    session = ctx.verifier
    if session is None or session.status != "writing":
        raise ActionFailed("integrity mode is not writing (the load has not started or ended)")
    result = session.verify(f"{ctx.step_name}#{ctx.n}", ctx.t, ctx.stop)
    counts = {k.value: result[k.value] for k in PROBLEMS}
    ctx.details.update({"verify": {key: result[key] for key in (
        "status", "checked", "blocks", "seconds", "mbps", "lost", "stale", "corrupt",
        "unreadable")}, "offsets": {w: r["offsets"] for w, r in result["workloads"].items()
                                    if r["offsets"]}})
    sums = result.get("data_files")
    if sums:  # the workloads' own files, by fio's verify headers
        ctx.details["data_files"] = {**{k: sums[k] for k in (
            "files", "blocks", "checked", "corrupt", "unreadable")}, "offsets": [
            o for r in sums["workloads"].values() for o in r["offsets"]][:20]}
    found = ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "no problem"
    data = f" and {sums['checked']} data-file blocks" if sums else ""
    return (f"verified {result['checked']} of {result['blocks']} blocks{data} "
            f"({result['mbps']:g} MB/s, {result['status']}): {found}")
