"""What run.json says when the load starts: the scenario, the plan, the target and the hosts.

Everything a reader needs to re-render or compare the run without the scenario file: the
components and their targets, the thresholds as written, the target's facts and the
environment fingerprint. The verdict adds statistics and results at the end (verdict.py).
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

from assay.hosts.fingerprint import block_device_facts, host_facts, target_facts
from assay.plan import Plan
from assay.platforms.base import Platform


def boot_id() -> str:
    """Changes at every boot: a `running` run from another boot has crashed."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def initial_record(plan: Plan, run_id: str, platform: Platform, directory: Path,
                   direct: bool, parent: str | None, variables: dict[str, str]) -> dict[str, Any]:
    device = plan.scenario.target.device
    return {
        "id": run_id,
        "status": "running",
        "started": time.time(),
        "pid": os.getpid(),
        "boot_id": boot_id(),
        "scenario": {"name": plan.name, "file": plan.resolved.file,
                     "description": plan.scenario.description,
                     "sha256": hashlib.sha256(plan.resolved.text.encode()).hexdigest(),
                     "seed": plan.scenario.seed},
        "plan": {"duration_s": plan.duration, "warmup_s": plan.warmup,
                 "workloads": {n: w.model_dump(mode="json")
                               for n, w in plan.resolved.workloads.items()},
                 "streams": [{"key": s.key, "description": s.description,
                              "transactional": s.transactional, "jobs": len(s.jobs),
                              "files": [f.name for f in s.files]}
                             for s in plan.streams],
                 "thresholds": [t.text for t in plan.thresholds],
                 "hosts": plan.hosts, "variables": variables},
        "components": {c.name: {"target_iops": c.target_iops, "poisson": c.poisson,
                                "start_s": c.start_s, "end_s": c.end_s,
                                "transactional": c.transactional, "jobs": c.jobs,
                                "view": c.view}
                       for c in plan.components},
        "target": {**plan.scenario.target.model_dump(mode="json"),
                   "path": str(directory), "temporary": platform.temporary,
                   **platform.facts(), **platform.made_facts(),
                   **(target_facts(str(directory), plan.dataset_bytes, direct)
                      if not device else {"backing": block_device_facts(device),
                                          "dataset_bytes": plan.dataset_bytes,
                                          "direct_io": direct})},
        "environment": host_facts(),
        "parent": parent,
        "intended_latency": plan.intended_note,
        **({"warnings": list(plan.warnings)} if plan.warnings else {}),
    }
