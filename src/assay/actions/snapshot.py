"""`snapshot`: take a snapshot of the target (or delete this run's oldest), keep the newest N.

    - {action: snapshot, at: 30s, every: 60s, count: 10, keep: 5}
    - {action: snapshot, op: delete, at: 10m}

Snapshots are named `<prefix>-<step>-<n>` and live beside the data on the same filesystem;
those a run takes are deleted when it ends unless `target.options.keep_snapshots` is true.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import Field

from assay.actions.context import ActionContext
from assay.scenario.models import StepBase


class Params(StepBase):
    action: Literal["snapshot"] = "snapshot"
    op: Literal["create", "delete"] = Field("create", description="delete: this run's oldest")
    keep: int | None = Field(None, ge=1, description="after creating, keep only the newest N "
                                                     "of this run's snapshots")
    prefix: str = Field("assay", pattern=r"^[A-Za-z0-9_-]+$")


def requires(p: Params) -> set[str]:
    return {"snapshot.delete"} if p.op == "delete" else (
        {"snapshot", "snapshot.delete"} if p.keep else {"snapshot"})


def run(p: Params, ctx: ActionContext) -> str:
    fs = ctx.fs
    if p.op == "delete":
        if not fs.created_snapshots:
            return "no snapshot of this run to delete"
        name = fs.created_snapshots[0]
        ctx.details["snapshot"] = name
        return fs.snapshot_delete(ctx, name) or f"deleted {name}"
    name = f"{p.prefix}-{time.strftime('%H%M%S')}-{ctx.step_name}-{ctx.n:03d}"
    ctx.details["snapshot"] = name
    out = [fs.snapshot_create(ctx, name) or f"created {name}"]
    while p.keep and len(fs.created_snapshots) > p.keep:
        old = fs.created_snapshots[0]
        out.append(fs.snapshot_delete(ctx, old) or f"deleted {old}")
        ctx.details.setdefault("deleted", []).append(old)
    ctx.details["snapshots"] = len(fs.created_snapshots)
    return "\n".join(out)
