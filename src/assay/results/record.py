"""The run record (run.json) as one typed model, so readers use attributes, not `.get`; its
parts (one model per section) are in results/recordparts.py.

The engine builds the record as a plain dict, validates it with `RunRecord.model_validate` and
writes it with `RunDir.write_record`; every reader opens it with `read_record`. A renamed field
is then a type error in the reader (mypy), not a silently empty column.

Versions: 2 is the first typed record. Version 1 records (and the earliest ones, which carried
no `schema_version`) have the same shape with fewer keys, so they load as they are: a key they
lack takes its default below.

Unknown keys are kept (`extra="allow"`, results/recordparts.py): a record written by a newer
assay must still open here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from assay.exitcodes import UserError
from assay.results.recordparts import (
    ComponentPlan,
    ComponentStats,
    Environment,
    PhaseTotal,
    PhaseWindow,
    PlanInfo,
    Prefill,
    Record,
    Recovery,
    RepeatStats,
    ScenarioInfo,
    StepEvent,
    TargetInfo,
    ThresholdResult,
    Verdict,
)

SCHEMA_VERSION = 2

# completed: ran to the end with no threshold to grade; incomplete: ran to the end, but its
# samples grade too few of the measured seconds for a verdict (metrics/coverage.py)
Status = Literal["running", "passed", "failed", "completed", "incomplete", "aborted",
                 "interrupted"]


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
