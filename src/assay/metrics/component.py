"""A component as the plan declares it (ComponentInfo: `workload.stream.direction`, its target
and window, stored in run.json) and its statistics over a window (Stats), with the threshold
metrics they answer (metrics/summary.py computes them from the samples).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from assay.metrics.steps import stepped
from assay.metrics.training import Training

TRAINING_METRICS = ("au", "au_min", "samples_s", "batch_wait_p50", "batch_wait_p99")
BURST_METRICS = {"save_s": "busy_max_s", "restore_s": "busy_max_s", "save_gbps": "busy_gbps",
                 "restore_gbps": "busy_gbps"}


@dataclass
class ComponentInfo:
    """What the plan knows about a component (stored in run.json)."""

    name: str  # workload.stream.direction
    target_iops: float | None = None
    poisson: bool = False
    start_s: float = 0.0
    end_s: float | None = None
    transactional: bool = True
    jobs: int = 1  # fio jobs that feed it: each can be one IO early or late at a window edge
    closed: bool = False  # closed loop with a target (Jetstress' threads): no pacing slack
    # the target from each time on, when it changes during the run (a cluster's survivors
    # after a host is lost): a window's target is then the time-weighted one over it
    target_steps: tuple[tuple[float, float | None], ...] = ()
    training: Training | None = None  # simulated accelerators fed by it (ai-training)
    timed: bool = False  # graded by how long its bursts take (a checkpoint's save, restore)
    view: bool = False  # a view of load another component counts (metrics/sampler.py)

    def rate_at(self, t: float) -> float | None:
        return stepped(self.target_iops, self.target_steps, t)

    @property
    def workload(self) -> str:
        return self.name.split(".")[0]

    @property
    def stream(self) -> str:
        return self.name.split(".")[1]

    @property
    def direction(self) -> str:
        return self.name.split(".")[2]


@dataclass
class Stats:
    component: str
    seconds: float
    ios: int
    bytes: int
    iops: float
    mbps: float
    lat_avg_ms: float | None
    lat_p50_ms: float | None
    lat_p95_ms: float | None
    lat_p99_ms: float | None
    lat_p999_ms: float | None
    lat_max_ms: float | None
    target_iops: float | None
    behind_max_s: float
    rate_tolerance: float  # IOPS a fixed-rate component may fall short by, from pacing noise
    intended: dict[str, float | None] | None = None  # latency from the due time (even pacing)
    lat_max_sample_ms: float | None = None  # largest 15 s average (Jetstress' counter samples)
    iops_median: float | None = None  # median of the 1 s samples (X-Ray's charts)
    lat_avg_median_ms: float | None = None  # median of the 1 s average latencies
    training: dict[str, float | None] | None = None  # au, samples_s, batch waits (ai-training)
    bursts: dict[str, float | None] | None = None  # busy_max_s, busy_gbps (checkpoints)

    @property
    def achieved_pct(self) -> float | None:
        return 100.0 * self.iops / self.target_iops if self.target_iops else None

    def metric(self, name: str) -> float | None:
        """The value a threshold metric names (latencies in ms)."""
        if name == "behind":
            return self.behind_max_s
        if name in ("iops", "mbps"):
            return float(getattr(self, name))
        if name == "tps":  # a database workload's transactions are its `ios`
            return self.iops
        if name in ("tpm", "nopm"):
            return self.iops * 60
        if name == "failed":
            return float(self.ios)
        if name == "iops_median":
            return self.iops_median
        if name in TRAINING_METRICS:
            return (self.training or {}).get(name)
        if name in BURST_METRICS:
            return (self.bursts or {}).get(BURST_METRICS[name])
        if name.startswith("lat_intended_"):
            return (self.intended or {}).get(f"{name}_ms")
        value = getattr(self, f"{name}_ms")
        return None if value is None else float(value)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["achieved_pct"] = None if self.achieved_pct is None else round(self.achieved_pct, 3)
        for k, v in d.items():
            if isinstance(v, float):
                d[k] = round(v, 4)
        return d
