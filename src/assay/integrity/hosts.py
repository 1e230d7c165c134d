"""Integrity mode on every host of a cluster run: the agent's `integrity` command
(assay/agent/integrity.py) writes and verifies each host's blocks where they live, and only
small rows come back (per-second counts, each pass's record, the journals at the end).

One writer per host per writing workload placed there; a pass is one pass on every active
host, at once, merged here: its counts are the hosts' sums, each host's record is kept under
`hosts`, and a problem's offset names its host (`n2:8192`). A host lost before or during a
pass is "not verified" and the merged pass is `incomplete`, so an `integrity.*` threshold
cannot pass on the hosts that were checked alone (never a silent pass).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.agent.area import RBD, block_file, writer_id
from assay.agent.block import PROBLEMS, State
from assay.agent.integrity import unpack
from assay.agent.journal import digest_of
from assay.integrity import session as local
from assay.integrity.hostwriter import Hosts, HostWriter
from assay.platforms import rbdjobs
from assay.platforms.base import Platform
from assay.platforms.ceph import Driver as Ceph
from assay.scenario.models import IntegritySpec
from assay.thresholds.evaluate import integrity_result

JOURNAL_DIR = local.JOURNAL_DIR  # in the run directory: integrity/<host>/<workload>.gen|log


def _instance(host: str, workload: str) -> str:
    """The rbdjobs instance name of a host's blocks: its image `assay.SCENARIO.INSTANCE`."""
    return f"{host}.integrity-{workload}"


def merge(label: str, t: float | None, per_host: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One pass record from the hosts' (counts summed, offsets naming their host); complete
    only when every host's pass is."""
    done = [h for h, r in per_host.items() if r.get("status") == "completed"]
    missing = {h: r.get("reason", r.get("status")) for h, r in per_host.items() if h not in done}
    seconds = max((float(r.get("seconds", 0)) for r in per_host.values()), default=0.0)
    nbytes = sum(int(r.get("bytes", 0)) for r in per_host.values())
    out: dict[str, Any] = {
        "label": label, **({"t": round(t, 2)} if t is not None else {}),
        "status": "completed" if not missing else "incomplete",
        **({"reason": "not verified on " + "; ".join(f"{h}: {why}" for h, why in
                                                    missing.items())} if missing else {}),
        "seconds": round(seconds, 3), "bytes": nbytes,
        "mbps": round(nbytes / 1e6 / seconds, 1) if seconds > 0 else 0.0}
    for key in ("blocks", "checked", *(s.value for s in State)):
        out[key] = sum(int(r.get(key, 0)) for r in per_host.values())
    workloads: dict[str, dict[str, Any]] = {}
    for h, r in per_host.items():
        for w, f in r.get("workloads", {}).items():
            mine = workloads.setdefault(w, {"offsets": {}})
            for k, v in f.items():
                if k == "offsets":
                    for state, offsets in v.items():
                        mine["offsets"].setdefault(state, []).extend(f"{h}:{o}" for o in offsets)
                elif isinstance(v, (int, float)) and not isinstance(v, bool):
                    mine[k] = mine.get(k, 0) + v
    out["workloads"] = workloads
    out["hosts"] = per_host
    return out


class HostsSession:
    """The Session of a cluster run (session.Session's interface, for the engine, the
    `verify` action and lifecycle.close)."""

    def __init__(self, run_id: str, spec: IntegritySpec, chosen: list[str], group: Hosts,
                 direct: bool, seed: int, platform: Platform | None = None):
        assert group.plan.cluster is not None
        self.run_id, self.spec, self.group, self.direct, self.seed = \
            run_id, spec, group, direct, seed
        # on RBD, each host's blocks are an image of their own, made and removed by the driver
        self.ceph = platform if isinstance(platform, Ceph) and \
            rbdjobs.on_rbd(group.plan.scenario.target) else None
        self.placed = {h: [w for w in chosen if hp.instances.get(w)]
                       for h, hp in group.plan.cluster.hosts.items()}
        self.placed = {h: ws for h, ws in self.placed.items() if ws}
        self.journal_dir = group.rd.path / JOURNAL_DIR
        self.writers: dict[str, HostWriter] = {}
        self.passes: list[dict[str, Any]] = []
        self.status = "prepared"
        self.reason = ""
        self.ended = False
        self._verifying = threading.Lock()

    def _spec(self, host: str) -> dict[str, Any]:
        assert self.group.plan.cluster is not None
        root = self.group.plan.cluster.hosts[host].host.path
        blocks = self.spec.size // self.spec.block
        return {"areas": [{"workload": w, "path": self._where(host, w, root),
                           "block": self.spec.block, "blocks": blocks,
                           "writer": writer_id(f"{self.run_id}/{host}", w)}
                          for w in self.placed[host]],
                "rate": self.spec.rate, "direct": self.direct, "seed": self.seed,
                "journal": JOURNAL_DIR,
                **({"rbd": {"conf": self.ceph.conf, "client": self.ceph.client,
                            "keyring": self.ceph.keyring}} if self.ceph else {})}

    def _where(self, host: str, workload: str, root: str | None) -> str:
        if self.ceph is None:
            return f"{root}/{block_file(workload, host)}"
        image = rbdjobs.image_name(self.group.plan.name, _instance(host, workload))
        return f"{RBD}{self.ceph.pool}/{image}"

    # -- the run's course ------------------------------------------------------------------
    def prefill(self) -> None:
        self.journal_dir.mkdir(parents=True, exist_ok=True)
        if self.ceph is not None:  # an image per host and workload, as the driver makes them
            self.ceph.open_hosts(self.group.plan.name, [
                (f"{_instance(h, w)}/blocks", self.spec.size)
                for h, ws in self.placed.items() for w in ws], self.group.force)
        for h in self.placed:
            self.writers[h] = HostWriter(h, self.group, self._spec(h),
                                         self.journal_dir / f"{h}.ndjson")
        for w in self.writers.values():
            w.wait_ready()

    def start(self) -> None:
        self._each(lambda w: w.order("start"))
        self.status = "writing"

    def stop(self) -> None:
        if self.status == "writing":
            self._each(lambda w: w.order("stop"))
            self.status = "stopped"

    def verify(self, label: str, t: float | None = None,
               stop: threading.Event | None = None) -> dict[str, Any]:
        """A pass on every host at once, merged (hosts lost are not verified)."""
        with self._verifying:
            results = self._each(lambda w: w.verify(stop))
            record = merge(label, t, results)
            self.passes.append(record)
            return record

    def finish(self, t: float | None) -> dict[str, Any]:
        self.stop()
        if self.spec.final and self.writers:
            self.verify("final", t)
        self.end()
        done = self.passes and self.passes[-1]["status"] == "completed"
        self.status = "verified" if done else "not verified"
        if self.passes and not done:
            self.reason = str(self.passes[-1].get("reason", ""))
        return self.record()

    def end(self) -> None:
        """The commands end and their journals are kept in the run directory (once)."""
        if self.ended:
            return
        self.ended = True
        self._each(lambda w: w.end())
        for h, w in self.writers.items():
            for name, row in w.journals.items():
                d = self.journal_dir / h
                d.mkdir(parents=True, exist_ok=True)
                (d / f"{name}.gen").write_bytes(unpack(row["gen"]))
                (d / f"{name}.log").write_bytes(unpack(row["log"]))

    def _each(self, call: Any) -> dict[str, Any]:
        if not self.writers:
            return {}
        with ThreadPoolExecutor(max_workers=min(16, len(self.writers))) as pool:
            futures = {h: pool.submit(call, w) for h, w in self.writers.items()}
        return {h: f.result() for h, f in futures.items()}

    # -- run.json ----------------------------------------------------------------------------
    def record(self) -> dict[str, Any]:
        files = []
        for h in self.placed:
            w = self.writers.get(h)
            spec = self._spec(h)
            for area in spec["areas"]:
                name = area["workload"]
                stopped = (w.stopped.get(name, {}) if w else {})
                kept = self.journal_dir / h / f"{name}.gen"
                brought = kept.is_file() and (self.journal_dir / h / f"{name}.log").is_file()
                files.append({
                    "host": h, "workload": name, "path": area["path"],
                    "block_size": area["block"], "blocks": area["blocks"],
                    "writer": area["writer"], "journal": f"{JOURNAL_DIR}/{h}/{name}",
                    "acknowledged": w.acknowledged.get(name, 0) if w else 0,
                    "write_errors": int(stopped.get("write_errors", 0)),
                    "direct_writes": bool(stopped.get("direct_writes",
                                                      (w.prefilled.get(name, {}).get("direct")
                                                       if w else False))),
                    **({"journal_digest": stopped["journal_digest"]}
                       if "journal_digest" in stopped else {}),
                    # the journal as it came back matches what the host's writer left
                    **({"journal_back": digest_of(kept.read_bytes(), (
                        self.journal_dir / h / f"{name}.log").read_bytes())
                        == stopped.get("journal_digest")} if brought and stopped else {}),
                    **({"last_error": stopped["last_error"]} if stopped.get("last_error")
                       else {})})
        out = local.section(self.spec, self.direct, files, self.passes, self.status,
                            self.reason)
        out["hosts"] = {h: self._host(h) for h in self.placed}
        return out

    def _host(self, host: str) -> dict[str, Any]:
        """One host's own verdict: its last pass, its worst counts over the passes, and the
        scenario's integrity thresholds graded on its blocks alone (the run's verdict grades
        them on every host's together)."""
        mine = [{**p["hosts"][host], "label": p["label"]} for p in self.passes
                if host in p.get("hosts", {})]
        last = mine[-1] if mine else {}
        writer = self.writers.get(host)
        alone = local.section(self.spec, self.direct, [], mine, "")
        graded = [integrity_result(t, alone).to_json()
                  for t in self.group.plan.thresholds if t.integrity]
        return {"status": last.get("status", "not verified"),
                **({"reason": last["reason"]} if last.get("reason") else {}),
                "blocks": int(last.get("blocks", 0)), "checked": int(last.get("checked", 0)),
                "mbps": last.get("mbps", 0.0),
                "acknowledged": sum(writer.acknowledged.values()) if writer else 0,
                **{p.value: int(alone[p.value]) for p in PROBLEMS},
                **({"thresholds": graded} if graded else {})}
