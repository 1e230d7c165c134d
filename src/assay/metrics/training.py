"""Simulated accelerators fed by the bytes fio read: accelerator utilisation (AU), samples/s
and how long each batch waited for its data (kind ai-training, docs/ai.md).

DLIO (MLPerf Storage) runs, per accelerator, reader threads that fill a prefetch queue of
batches while the accelerator "computes" each batch by sleeping a fixed time. Here fio's
readers read at the accelerators' demand (batch bytes / compute time), and this model plays
the accelerators against the bytes fio actually delivered in each status interval:

    queue  += bytes / batch_bytes                         batches ready
    done    = min(queue, accelerators × dt / compute_s)   batches computed this interval
    queue   = min(queue - done, slack)
    AU      = Σ done × compute_s / (accelerators × Σ dt)

fio's readers are paced at the demand, so they cannot run ahead of the accelerators as
DLIO's readers do (up to its prefetch queue); a batch that fio delivers a little late would
have been waiting in DLIO's queue. So the queue starts with `slack` batches (1 s of demand,
never more than DLIO's prefetch depth) and holds no more: a storage that keeps the schedule
within that slack costs no AU, one that falls behind drains it and the accelerators wait.
The seconds before the graded window (the warm-up) are played too but not counted, so a
slow storage has used up the slack before grading starts (the plan says how long a warm-up
that takes).

A batch's wait is the idle time of its accelerator divided by the batches it computed in that
interval (an interval with none carries its idle time to the next batch). It is a fluid model
at the status interval's resolution (1 s): within an interval the bytes are taken as evenly
spread, and whole-batch granularity is not kept.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Training:
    """What a component's accelerators need (set by kind ai-training)."""

    accelerators: float  # per host; × load.scale (a search varies it)
    batch_bytes: float  # bytes of one batch (batch size × sample bytes)
    compute_s: float  # seconds of compute per batch per accelerator
    sample_bytes: float
    prefetch: float  # slack: batches that may arrive late, all accelerators (<= DLIO's queue)
    au_target: float  # percent: MLPerf Storage's pass level for the model

    @property
    def demand_bps(self) -> float:
        """Bytes/s the accelerators read when never kept waiting."""
        return self.accelerators * self.batch_bytes / self.compute_s


def weighted_percentile(points: list[tuple[float, float]], pct: float) -> float | None:
    """The value below which `pct` % of the weight lies; points are (value, weight)."""
    total = sum(w for _, w in points)
    if total <= 0:
        return None
    rank = total * pct / 100.0
    seen = 0.0
    for value, weight in sorted(points):
        seen += weight
        if seen >= rank - 1e-12:
            return value
    return max(v for v, _ in points)


class AcceleratorClock:
    """The accelerators of one component, fed interval by interval (bytes read, seconds)."""

    def __init__(self, model: Training):
        self.m = model
        self.queue = model.prefetch  # batches ready, all accelerators
        self.batches = 0.0  # batches computed
        self.seconds = 0.0
        self.nbytes = 0
        self.carry = 0.0  # idle seconds per accelerator not yet charged to a batch
        self.waits: dict[float, float] = {}  # wait (s, 3 significant digits) -> batches
        self.au_min: float | None = None

    def add(self, nbytes: int, dt: float, counted: bool = True) -> None:
        """An interval's bytes; `counted=False` plays it (the warm-up) without grading it."""
        m = self.m
        if dt <= 0:
            return
        self.queue += nbytes / m.batch_bytes
        capacity = m.accelerators * dt / m.compute_s
        done = min(self.queue, capacity)
        self.queue = min(self.queue - done, m.prefetch)
        if not counted:
            return
        self.batches += done
        self.seconds += dt
        self.nbytes += nbytes
        if dt >= 0.5:  # fio's closing stub interval says little about a second's AU
            au = 100.0 * done / capacity
            self.au_min = au if self.au_min is None else min(self.au_min, au)
        per_accelerator = done / m.accelerators
        idle = self.carry + dt - per_accelerator * m.compute_s
        idle = idle if idle > 1e-9 else 0.0  # float noise of a fully busy interval
        if per_accelerator > 1e-9:
            wait = float(f"{idle / per_accelerator:.3g}")
            self.waits[wait] = self.waits.get(wait, 0.0) + done
            self.carry = 0.0
        else:
            self.carry = idle

    @property
    def au(self) -> float | None:
        if not self.seconds:
            return None
        return 100.0 * self.batches * self.m.compute_s / (self.m.accelerators * self.seconds)

    def figures(self) -> dict[str, float | None]:
        """The run's (or phase's) training metrics; waits in ms."""
        points = list(self.waits.items())
        p50 = weighted_percentile(points, 50.0)
        p99 = weighted_percentile(points, 99.0)
        figures = {
            "au": self.au, "au_min": self.au_min, "au_target": self.m.au_target,
            "samples_s": (self.batches * self.m.batch_bytes / self.m.sample_bytes / self.seconds
                          if self.seconds else None),
            "batches": self.batches,
            "batch_wait_p50": None if p50 is None else p50 * 1000.0,
            "batch_wait_p99": None if p99 is None else p99 * 1000.0,
        }
        return {k: None if v is None else round(v, 4) for k, v in figures.items()}
