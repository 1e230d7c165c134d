"""The run record (run.json) as one typed model, so readers use attributes, not `.get`.

The engine builds the record as a plain dict, validates it with `RunRecord.model_validate` and
writes it with `RunDir.write_record`; every reader opens it with `read_record`. A renamed field
is then a type error in the reader (mypy), not a silently empty column.

Versions: 2 is the first typed record. Version 1 records (and the earliest ones, which carried
no `schema_version`) have the same shape with fewer keys, so they load as they are: a key they
lack takes its default below.

Unknown keys are kept (`extra="allow"`), on every model: a record written by a newer assay
must still open here, and a read-modify-write by this version (a sweep stamping `repeat`
statistics) must not drop what the newer one added. Readers cannot reach such keys as
attributes, so the typing of known fields is not weakened.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.exitcodes import UserError

SCHEMA_VERSION = 2

# completed: ran to the end with no threshold to grade; incomplete: ran to the end, but its
# samples grade too few of the measured seconds for a verdict (metrics/coverage.py)
Status = Literal["running", "passed", "failed", "completed", "incomplete", "aborted",
                 "interrupted"]


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


class BlockDevice(Record):
    device: str | None = None
    size_bytes: int | None = None
    rotational: bool | None = None
    scheduler: str | None = None
    model: str | None = None
    loop_backing_file: str | None = None


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


class RunRecord(Record):
    """run.json. Written at the start (status `running`) and again at the end."""

    schema_version: int = 1  # absent: a record from before versioning, shaped as version 1
    id: str
    status: Status
    started: float
    pid: int | None = None  # of the assay process that wrote a `running` record
    boot_id: str | None = None  # a `running` record from another boot is a crashed run
    scenario: ScenarioInfo
    plan: PlanInfo
    components: dict[str, ComponentPlan] = Field(default_factory=dict)
    target: TargetInfo = Field(default_factory=TargetInfo)
    environment: Environment = Field(default_factory=Environment)
    parent: str | None = None  # the search or sweep this run is a trial of
    intended_latency: str | None = None  # how (or why not) latency from due times was measured
    warnings: list[str] = Field(default_factory=list)
    prefill: Prefill | None = None
    events: list[StepEvent] = Field(default_factory=list)
    phases: list[PhaseWindow] = Field(default_factory=list)
    phase_totals: dict[str, PhaseTotal] = Field(default_factory=dict)
    recovery: list[Recovery] = Field(default_factory=list)
    reason: str = ""
    elapsed_s: float | None = None
    ended: float | None = None
    measured_window_s: tuple[float, float] | None = None
    measured_s: float | None = None  # the measured window's length, up to where the run ended
    graded_s: float | None = None  # the seconds of it the samples grade (metrics/coverage.py)
    stats: dict[str, ComponentStats] = Field(default_factory=dict)
    thresholds: list[ThresholdResult] = Field(default_factory=list)
    verdict: Verdict | None = None  # None until graded
    repeat: RepeatStats | None = None
    # host -> utilisation over the measured window: metric means and `<metric>_max` (1 s);
    # the per-second rows are in hosts.ndjson
    hosts: dict[str, dict[str, float]] = Field(default_factory=dict)
    # integrity mode: settings, files, verify passes, worst counts (assay.integrity.session)
    integrity: dict[str, Any] | None = None

    def headline(self) -> tuple[str, str]:
        """The verdict in words, as every summary says it: (`PASSED`, `(3 thresholds passed,
        0 failed)`); a run with nothing to grade is no pass, an incomplete one no verdict."""
        v = self.verdict or Verdict()
        if self.status == "completed":
            return "COMPLETED: nothing graded", "(no thresholds declared)"
        if self.status == "incomplete":
            return "INCOMPLETE: not graded", f"({v.not_graded or len(self.thresholds)} " \
                f"thresholds not graded)"
        if self.status in ("passed", "failed") and self.verdict is not None:
            return self.status.upper(), f"({v.passed} thresholds passed, {v.failed} failed)"
        return self.status.upper(), ""

    def measured_window(self) -> tuple[float, float]:
        """[warm-up end, run end] in seconds on the series clock; from the plan while the run
        has not finished."""
        if self.measured_window_s is not None:
            return self.measured_window_s
        return self.plan.warmup_s, self.plan.warmup_s + self.plan.duration_s


class RecordError(UserError, ValueError):
    """run.json is missing, not JSON, or not a run record: a message for the user (exit 2),
    and a ValueError to callers that catch those."""


def explain(e: ValidationError, where: str) -> RecordError:
    """Every problem on one line each, as `field.path: message`."""
    lines = [f"{'.'.join(str(p) for p in err['loc']) or '(record)'}: {err['msg']}"
             for err in e.errors()[:10]]
    more = f"\n  ... and {e.error_count() - 10} more" if e.error_count() > 10 else ""
    return RecordError(f"{where} is not a valid run record:\n  " + "\n  ".join(lines) + more)


def parse_record(data: Any, where: str = "run.json") -> RunRecord:
    """A decoded run.json (any version) as a RunRecord, or a RecordError saying what is wrong."""
    if not isinstance(data, dict):
        raise RecordError(f"{where} is not a run record: a JSON object was expected")
    try:
        return RunRecord.model_validate(data)
    except ValidationError as e:
        raise explain(e, where) from None


def record_schema() -> dict[str, Any]:
    """The JSON Schema of run.json (`assay schema run`)."""
    schema = RunRecord.model_json_schema()
    schema["title"] = "assay run record"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
