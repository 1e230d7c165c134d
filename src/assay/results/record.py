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

A damaged record spoils only itself: `decode` refuses what no run.json can be (larger than
MAX_BYTES, nested deeper than MAX_DEPTH, not UTF-8, NaN or Infinity, not a JSON object) and the
model refuses times no run can have, each as a RecordError that names the file and the reason;
the catalogue lists such a run as damaged (`Listed`: only the fields a listing shows) and goes
on with the others.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
MAX_BYTES = 64 << 20  # a record of the largest run (docs/scale.md) is a few MiB
MAX_DEPTH = 64  # of nested objects and lists; assay writes fewer than 10
EPOCH_MAX = 32503680000.0  # 3000-01-01 UTC: a later time is no time a run was at (nor
# one the platform's time functions all convert)

# epoch seconds and lengths of time: finite, from 1970 on, and before EPOCH_MAX
Timestamp = Annotated[float, Field(ge=0, le=EPOCH_MAX, allow_inf_nan=False)]
Seconds = Annotated[float, Field(ge=0, le=EPOCH_MAX, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0, le=1 << 31)]
Name = Annotated[str, Field(max_length=4096)]  # a listed name: a path at the most

# completed: ran to the end with no threshold to grade; incomplete: ran to the end, but its
# samples grade too few of the measured seconds for a verdict (metrics/coverage.py)
Status = Literal["running", "passed", "failed", "completed", "incomplete", "aborted",
                 "interrupted"]


class RunRecord(Record):
    """run.json. Written at the start (status `running`) and again at the end."""

    schema_version: int = 1  # absent: a record from before versioning, shaped as version 1
    id: str
    status: Status
    started: Timestamp
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
    elapsed_s: Seconds | None = None
    ended: Timestamp | None = None
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


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def depth(data: Any) -> int:
    """How deeply `data` nests (a scalar 0, `[]` 1), counted without recursion."""
    deepest, todo = 0, [(data, 1)]
    while todo:
        value, level = todo.pop()
        items = value.values() if isinstance(value, dict) else value \
            if isinstance(value, list) else None
        if items is None:
            continue
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            break  # deep enough to refuse: the rest need not be walked
        todo.extend((v, level + 1) for v in items)
    return deepest


def decode(raw: bytes, where: str) -> dict[str, Any]:
    """The bytes of a stored JSON document (run.json, a search record) as its object, or a
    RecordError naming `where` and what is wrong. Python's json has no depth limit of its own
    (it recurses until RecursionError) and reads NaN and Infinity, which are not JSON."""
    if len(raw) > MAX_BYTES:
        raise RecordError(f"{where} is damaged: larger than {MAX_BYTES >> 20} MiB")
    if not raw.strip():
        raise RecordError(f"{where} is damaged: empty")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RecordError(f"{where} is damaged: not UTF-8 text (byte {e.start})") from None
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise RecordError(f"{where} is damaged: nested more than {MAX_DEPTH} levels deep") \
            from None
    except ValueError as e:  # also a number of more digits than int() converts
        raise RecordError(f"{where} is corrupt: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{where} is damaged: a JSON object was expected, not "
                          f"{_kind(data)}")
    if depth(data) > MAX_DEPTH:
        raise RecordError(f"{where} is damaged: nested more than {MAX_DEPTH} levels deep")
    return data


def _kind(data: Any) -> str:
    return "an array" if isinstance(data, list) else "a string" if isinstance(data, str) \
        else "null" if data is None else "a boolean" if isinstance(data, bool) else "a number"


def _validate(model: type[BaseModel], data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise RecordError(f"{where} is not a run record: a JSON object was expected")
    if depth(data) > MAX_DEPTH:  # a document not read through `decode`
        raise RecordError(f"{where} is damaged: nested more than {MAX_DEPTH} levels deep")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise explain(e, where) from None
    except RecursionError:
        raise RecordError(f"{where} is damaged: nested too deeply to validate") from None


def parse_record(data: Any, where: str = "run.json") -> RunRecord:
    """A decoded run.json (any version) as a RunRecord, or a RecordError saying what is wrong."""
    record: RunRecord = _validate(RunRecord, data, where)
    return record


class _Listed(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ListedScenario(_Listed):
    name: Name | None = None


class ListedTarget(_Listed):
    path: Name | None = None
    device: Name | None = None
    platform: Name | None = None


class ListedVerdict(_Listed):
    passed: Count | None = None
    failed: Count | None = None
    not_graded: Count | None = None


class Listed(_Listed):
    """The fields of run.json a listing shows (`assay runs`, the browser), typed as RunRecord
    types them; absent or null ones (an older record) are empty, wrong ones make the run
    damaged."""

    status: Annotated[str, Field(max_length=64)] | None = None
    started: Timestamp | None = None
    elapsed_s: Seconds | None = None
    parent: Name | None = None
    scenario: ListedScenario = Field(default_factory=ListedScenario)
    target: ListedTarget = Field(default_factory=ListedTarget)
    verdict: ListedVerdict = Field(default_factory=ListedVerdict)


def parse_listed(data: Any, where: str = "run.json") -> Listed:
    """The listed fields of a decoded run.json, or a RecordError saying which is wrong."""
    listed: Listed = _validate(Listed, data, where)
    return listed


def sane_time(value: Any) -> float | None:
    """`value` as epoch seconds or a length of time a run can have, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        t = float(value)
    except OverflowError:
        return None
    return t if math.isfinite(t) and 0 <= t <= EPOCH_MAX else None


def record_schema() -> dict[str, Any]:
    """The JSON Schema of run.json (`assay schema run`)."""
    schema = RunRecord.model_json_schema()
    schema["title"] = "assay run record"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
