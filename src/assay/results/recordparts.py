"""The parts of the run record (results/record.py: run.json): one typed model per section,
the scenario and plan, the target and host, and the statistics, thresholds and phases.

Unknown keys are kept (`extra="allow"`), on every model: a record written by a newer assay
must still open here, and a read-modify-write by this version (a sweep stamping `repeat`
statistics) must not drop what the newer one added. Readers cannot reach such keys as
attributes, so the typing of known fields is not weakened.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Record(BaseModel):
    model_config = ConfigDict(extra="allow")

    def stored(self) -> dict[str, Any]:
        """The keys as stored (what was set, and unknown keys), for JSON outputs that embed a
        part of the record verbatim: defaults a file lacked are not invented."""
        return self.model_dump(mode="json", exclude_unset=True)


class ScenarioInfo(Record):
    name: str
    file: str | None = None
    description: str = ""
    sha256: str | None = None
    seed: int | None = None


class StreamInfo(Record):
    key: str
    description: str = ""
    transactional: bool = True
    jobs: int = 0
    files: list[str] = Field(default_factory=list)


class PlanInfo(Record):
    duration_s: float
    warmup_s: float = 0.0
    # each workload as its kind's model dumps it: the keys differ per kind
    workloads: dict[str, dict[str, Any]] = Field(default_factory=dict)
    streams: list[StreamInfo] = Field(default_factory=list)
    thresholds: list[str] = Field(default_factory=list)
    hosts: list[str] = Field(default_factory=lambda: ["local"])  # older runs were all local
    variables: dict[str, str] = Field(default_factory=dict)


class ComponentPlan(Record):
    """What the plan knows about one component (`workload.stream.direction`)."""

    target_iops: float | None = None
    poisson: bool = False
    start_s: float = 0.0
    end_s: float | None = None
    transactional: bool = True
    jobs: int = 1  # not recorded before intended latency was
    view: bool = False  # a view of load another component counts (metrics/sampler.py)


class BlockDevice(Record):
    device: str | None = None
    size_bytes: int | None = None
    rotational: bool | None = None
    scheduler: str | None = None
    model: str | None = None
    loop_backing_file: str | None = None


class MadeTarget(Record):
    """The proof that a temporary target is its run's (platforms/base.py): the token of the mark
    inside it and the directory's device and inode, as made. Runs before it have none, and
    their temporary targets are never removed by `assay clean`."""

    token: str
    dev: int
    ino: int


class TargetInfo(Record):
    """The scenario's target, the platform driver's facts (more keys per platform, kept as
    extras) and the filesystem under the data files."""

    platform: str = "local"
    path: str | None = None
    device: str | None = None
    direct: bool | None = None
    ioengine: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    throttle: list[dict[str, Any]] = Field(default_factory=list)
    temporary: bool = False
    mountpoint: str | None = None
    source: str | None = None
    fstype: str | None = None
    mount_options: str | None = None
    backing: BlockDevice = Field(default_factory=BlockDevice)
    free_bytes: int | None = None
    total_bytes: int | None = None
    dataset_bytes: int | None = None
    dataset_to_ram: float | None = None
    direct_io: bool | None = None
    blkio_limits: dict[str, str] = Field(default_factory=dict)
    removed: bool = False
    made: MadeTarget | None = None  # a temporary target's proof that it is this run's


class Environment(Record):
    """The host fingerprint; a fact that could not be read is null."""

    hostname: str | None = None
    cpu_model: str | None = None
    cpu_count: int | None = None
    mem_bytes: int | None = None
    kernel: str | None = None
    os: str | None = None
    python: str | None = None
    assay_version: str | None = None
    fio_version: str | None = None


class Prefill(Record):
    files: int = 0
    bytes: int = 0
    reused_files: int = 0
    fresh: bool = False
    seconds: float | None = None  # absent when every file was reused


class IntendedLatency(Record):
    """Latency from each IO's due time (coordinated omission), for even-paced components."""

    lat_intended_p50_ms: float | None = None
    lat_intended_p99_ms: float | None = None
    lat_intended_p999_ms: float | None = None
    lat_intended_max_ms: float | None = None
    late_20ms_pct: float | None = None


class ComponentStats(Record):
    """`metrics.component.Stats.to_json`: one component over a window (latencies in ms)."""

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
    rate_tolerance: float
    intended: IntendedLatency | None = None
    achieved_pct: float | None = None
    lat_max_sample_ms: float | None = None  # largest 15 s average latency (Jetstress)
    iops_median: float | None = None  # median of the 1 s IOPS samples (X-Ray)
    lat_avg_median_ms: float | None = None  # median of the 1 s average latencies (X-Ray)
    training: dict[str, float | None] | None = None  # au, samples_s, batch waits (ai-training)
    bursts: dict[str, float | None] | None = None  # busy_max_s, busy_gbps (checkpoints)


class ThresholdResult(Record):
    """`thresholds.evaluate.Result.to_json`: one threshold on one component."""

    expr: str
    component: str
    metric: str
    observed: float | None
    bound: float
    passed: bool
    note: str = ""
    source: str = ""
    graded: bool = True  # False: the run was incomplete, the threshold neither passed nor failed


class Verdict(Record):
    passed: int = 0
    failed: int = 0
    not_graded: int = 0


class StepEvent(Record):
    """A timeline step as events.ndjson records it; an action's own details are extras."""

    kind: str = "step"
    time: float | None = None
    name: str | None = None
    action: str | None = None
    n: int | None = None
    t_due: float | None = None
    t_start: float | None = None
    t_end: float | None = None
    seconds: float | None = None
    outcome: str = ""
    output: str = ""
    error: str | None = None
    annotate: bool = True


class PhaseWindow(Record):
    """One window of `metrics.phases`: before / during / between / after."""

    name: str
    step: str | None = None
    action: str | None = None
    n: int | None = None
    start: float
    end: float
    stats: dict[str, ComponentStats] = Field(default_factory=dict)


class PhaseTotal(Record):
    seconds: float = 0.0
    stats: dict[str, ComponentStats] = Field(default_factory=dict)


class Recovery(Record):
    """Seconds each component took to get back near its `before` level (null: never)."""

    step: str | None = None
    action: str | None = None
    n: int | None = None
    t_end: float | None = None
    components: dict[str, float | None] = Field(default_factory=dict)


class MeanStdev(Record):
    mean: float | None = None
    stdev: float | None = None


class RepeatStats(Record):
    """A sweep's `--repeat` statistics of this run's point, stamped after the sweep."""

    group: str = ""
    n: int
    runs: list[str] = Field(default_factory=list)
    stats: dict[str, dict[str, MeanStdev]] = Field(default_factory=dict)  # component -> metric
