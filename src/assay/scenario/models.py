"""Typed scenario models. Unknown keys are errors (extra=forbid) so typos never pass silently.

Workload kinds and actions extend `WorkloadBase` / `StepBase` in their own packages; the loader
receives those models from its caller, so this package imports nothing else of assay.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationInfo,
    field_validator,
    model_validator,
)

from assay.scenario import messages, units
from assay.scenario.yamlsource import YamlSource


def _size(v: Any) -> int:
    return units.parse_size(v)


def _duration(v: Any) -> float:
    return units.parse_duration(v)


def _ratio(v: Any) -> float:
    return units.parse_ratio(v)


def _percent(v: Any) -> float:
    return units.parse_percent(v)


Size = Annotated[int, BeforeValidator(_size), PlainSerializer(units.format_size, when_used="json")]
Duration = Annotated[float, BeforeValidator(_duration)]
Ratio = Annotated[float, BeforeValidator(_ratio)]
Percent = Annotated[float, BeforeValidator(_percent)]

MAX_DATASET = 1 << 50  # 1 PiB: more is a typo, not a test anyone can prefill
MAX_NUMBER = (1 << 63) - 1  # the largest number fio reads (a signed 64-bit integer)
FREE_TEXT = ("description", "command", "run", "text")  # may hold newlines and tabs
MIN_DURATION = 1.0  # seconds: assay measures and grades per second


class Strict(BaseModel):
    # NaN and infinity are no number a user can ask for (an infinite rate overflows fio's
    # integers): refused here once for every float of every scenario model
    model_config = ConfigDict(extra="forbid", validate_default=True, allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _plain(cls, v: Any, info: ValidationInfo) -> Any:
        """Every number fits the 64-bit integers fio reads (a seed of 1e26 was fio's parse
        error); no name or path holds a control character (an escape sequence would rewrite
        the terminal of whoever lists the run), free text only newlines and tabs."""
        if isinstance(v, int | float) and not isinstance(v, bool) and abs(v) > MAX_NUMBER:
            raise ValueError(f"{messages.show(v)} is too large: at most {MAX_NUMBER}")
        allowed = "\n\t" if info.field_name in FREE_TEXT else ""
        for text in (v if isinstance(v, list) else [v]):
            if isinstance(text, str) and (bad := messages.control(text, allowed)):
                raise ValueError(f"{messages.show(text)} holds the control character "
                                 f"{bad!r}: not allowed here")
        return v


class DataSpec(Strict):
    """What the written data looks like to a platform's data reduction."""

    compressibility: Ratio = Field(1.0, description="compression ratio of written data; 1 = random")
    dedupe: Ratio = Field(1.0, description="deduplication ratio of written data; 1 = all unique")


class AccessSpec(Strict):
    """Where in the dataset IO lands: uniform, or skewed onto a hot part."""

    distribution: Literal["uniform", "zipf", "pareto", "hotcold"] = "uniform"
    theta: float | None = Field(None, gt=0, description="zipf θ (default 1.2) or pareto h (0.9)")
    hot_io: Percent = Field(80, description="hotcold: share of IO that hits the hot zone")
    hot_data: Percent = Field(20, description="hotcold: share of the dataset that is hot")


class LoadSpec(Strict):
    """How IO is issued: at a fixed rate (open loop) or as fast as it goes (closed loop)."""

    model: Literal["fixed", "closed"] | None = Field(
        None, description="default: fixed when the workload has a target rate, else closed")
    pacing: Literal["poisson", "even"] = Field(
        "poisson", description="fixed rate: exponential (Poisson) or evenly spaced arrivals")
    threads: int | None = Field(None, ge=1, le=1024, description="closed loop: jobs per stream")
    iodepth: int | None = Field(None, ge=1, le=4096, description="outstanding IO per job")
    scale: float = Field(1.0, gt=0, description="multiply every target rate (search, sweeps)")


class FailoverSpec(Strict):
    """A cluster's answer to a lost host (X-Ray's HA restart, an Exchange DAG's activation):
    the lost host's instances start again on the surviving hosts (docs/hosts.md)."""

    after: Duration = Field(..., ge=0, description="how long after the loss is detected the "
                                                   "lost host's instances start again on "
                                                   "the survivors")
    to: str | list[str] | None = Field(None, description="the hosts that may take them, "
                                                         "picked as `hosts` picks; default "
                                                         "every other host of the run")


class WorkloadBase(Strict):
    """Keys every workload kind accepts. Kinds subclass this with their own parameters."""

    kind: str
    dataset: Size | None = Field(None, description="total bytes of the workload's files")
    data: DataSpec = Field(default_factory=DataSpec)
    access: AccessSpec = Field(default_factory=AccessSpec)
    load: LoadSpec = Field(default_factory=LoadSpec)
    prefill: bool = Field(True, description="write the dataset before measuring")
    host: str = Field("local", description="which host runs this workload")
    hosts: str | list[str] | None = Field(
        None, description='cluster placement (with --hosts): all, "0", "1:", ":n/2", a list '
                          'of host names, or an inventory group; default all')
    count_per_host: int = Field(1, ge=1, le=256, description="instances on each host, each "
                                                             "with its own files and rate")
    stagger: Duration = Field(0.0, ge=0, description="delay between instance starts")
    failover: FailoverSpec | None = Field(None, description="cluster runs: restart a lost "
                                                            "host's instances on the "
                                                            "survivors")
    subdir: str | None = Field(None, pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$",
                               description="sub-directory of the target for this workload's "
                                           "files (e.g. a btrfs subvolume)")
    start: Duration = Field(0.0, ge=0, description="when it begins, after the measured start "
                                                   "(a noisy neighbour arriving)")
    stop: Duration | None = Field(None, gt=0, description="when it ends, after the measured "
                                                          "start; default: with the run")
    verify: bool | None = Field(None, description="integrity mode for this workload "
                                                  "(docs/integrity.md); default: the scenario's "
                                                  "`integrity`")

    @field_validator("dataset")
    @classmethod
    def _dataset(cls, v: int | None) -> int | None:
        if v is not None and v <= 0:
            raise ValueError("must be more than 0 (leave it out for the kind's default size)")
        if v is not None and v > MAX_DATASET:
            raise ValueError(f"{units.format_size(v)} is more than the 1PiB limit")
        return v

    @model_validator(mode="after")
    def _window(self) -> WorkloadBase:
        if self.stop is not None and self.stop <= self.start:
            raise ValueError("`stop` must come after `start`")
        return self


class WaitUntil(Strict):
    """After its action, a step lasts until a condition holds (or its `timeout` passes)."""

    done: Literal["rebuild", "balance", "scrub", "replace"] | None = Field(
        None, description="the platform's background operation has finished")
    command: str | None = Field(None, description="a shell command returns 0")
    poll: Duration = Field(1.0, gt=0, description="seconds between checks")

    @model_validator(mode="after")
    def _one(self) -> WaitUntil:
        if (self.done is None) == (self.command is None):
            raise ValueError("give either `done` or `command`")
        return self


class StepBase(Strict):
    """One timeline step: an action at a time, every interval, or after another step."""

    action: str
    name: str | None = None
    at: Duration | None = Field(None, description="seconds after the measured start")
    every: Duration | None = Field(None, gt=0, description="repeat interval")
    count: int | None = Field(None, ge=1, description="how many times with `every`")
    after: str | None = Field(None, description="start when the named step ends")
    annotate: bool = True
    timeout: Duration | None = Field(None, gt=0)
    wait_until: WaitUntil | None = Field(None, description="the step ends when this holds")

    @model_validator(mode="after")
    def _when(self) -> StepBase:
        if self.at is not None and self.after is not None:
            raise ValueError("give either `at` or `after`, not both")
        if self.count is not None and self.every is None:
            raise ValueError("`count` needs `every`")
        return self


def step_names(steps: list[StepBase]) -> list[str]:
    """The step's `name`, else its action (numbered when an action appears more than once)."""
    actions = [s.action for s in steps]
    return [s.name or (s.action if actions.count(s.action) == 1 else f"{s.action}{i + 1}")
            for i, s in enumerate(steps)]


class Timeline(Strict):
    duration: Duration = Field(60.0, gt=0, description="measured time, after warm-up")
    warmup: Duration = Field(0.0, ge=0, description="load before measuring, not graded")
    steps: list[dict[str, Any]] = Field(default_factory=list)

    @field_validator("duration")
    @classmethod
    def _at_least_a_second(cls, v: float) -> float:
        if v < MIN_DURATION:
            raise ValueError("at least 1s: assay measures per second")
        return v


class Throttle(Strict):
    """A blkio cap on a block device for the run's fio processes (cgroup v1)."""

    device: str = Field(..., description="block device node, e.g. /dev/loop3")
    read_iops: int = Field(0, ge=0)
    write_iops: int = Field(0, ge=0)
    read_bps: Size = Field(0)
    write_bps: Size = Field(0)


class Target(Strict):
    """Where the IO goes. Default: a temporary directory on the local host."""

    platform: str = "local"
    path: str | None = Field(None, description="directory for data files (created if missing)")
    device: str | None = Field(None, description="raw block device (destructive; needs --force)")
    direct: bool | None = Field(None, description="O_DIRECT; default on where supported")
    ioengine: str | None = Field(None, description="fio ioengine; default libaio")
    options: dict[str, Any] = Field(default_factory=dict, description="platform driver settings")
    throttle: list[Throttle] = Field(default_factory=list,
                                     description="device caps for the whole run (known capacity)")

    @model_validator(mode="after")
    def _one_place(self) -> Target:
        if self.path and self.device:
            raise ValueError("give either `path` or `device`, not both")
        return self


ThresholdsSpec = dict[str, str] | list[str | dict[str, str]]


class IntegritySpec(Strict):
    """`integrity:` — on for every writing workload (`on`), or with settings (docs/integrity.md)."""

    size: Size = Field(64 << 20, description="bytes of self-checking blocks per workload")
    block: Size = Field(8192, description="bytes per block (a multiple of 512); 8k: a "
                                          "database page")
    rate: float = Field(100.0, gt=0, le=100000, description="acknowledged writes per second "
                                                           "per workload, beside fio's load")
    final: bool = Field(True, description="verify every block when the load ends")

    @model_validator(mode="after")
    def _shape(self) -> IntegritySpec:
        if self.block < 512 or self.block % 512 or self.block > (1 << 20):
            raise ValueError("`block` must be a multiple of 512 bytes, at most 1MiB")
        if self.size < self.block:
            raise ValueError("`size` must hold at least one block")
        return self


class Scenario(Strict):
    schema_version: int = 1
    name: str = Field(..., min_length=1, max_length=200)
    description: str = ""
    seed: int = Field(1, ge=0, description="random seed for fio, recorded in the result")
    target: Target = Field(default_factory=Target)
    workloads: dict[str, dict[str, Any]] = Field(..., min_length=1)
    timeline: Timeline = Field(default_factory=Timeline)
    thresholds: ThresholdsSpec = Field(default_factory=dict)
    integrity: IntegritySpec | None = Field(None, description="integrity mode for every "
                                                              "writing workload: on, off or "
                                                              "settings")

    @field_validator("integrity", mode="before")
    @classmethod
    def _integrity(cls, v: Any) -> Any:
        """`on` / `off` (YAML reads them as booleans) or the settings."""
        if isinstance(v, str) and v.lower() in ("on", "off", "true", "false", "yes", "no"):
            v = v.lower() in ("on", "true", "yes")
        if v is True:
            return {}
        return None if v is False else v

    @field_validator("thresholds", mode="before")
    @classmethod
    def _thresholds(cls, v: Any) -> Any:
        entry = "`metric: condition` entries or a list of \"metric condition\" lines"
        if not isinstance(v, dict | list):
            raise ValueError(f"expected {entry}, got {messages.show(v)}")
        items = v.items() if isinstance(v, dict) else \
            [kv for e in v for kv in (e.items() if isinstance(e, dict) else [("", e)])]
        for key, value in items:
            if not isinstance(key, str) or not isinstance(value, str):
                wrong = value if isinstance(key, str) else key
                raise ValueError(f"expected {entry}, got {messages.show(wrong)}")
        return v

    @model_validator(mode="after")
    def _names(self) -> Scenario:
        for name in self.workloads:
            if not name.replace("_", "").replace("-", "").isalnum() or "." in name:
                raise ValueError(f"workload name {name!r}: use letters, digits, - and _")
        return self


class ResolvedScenario(BaseModel):
    """A scenario whose workloads and steps are validated into their kinds' models."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    scenario: Scenario
    workloads: dict[str, WorkloadBase]
    steps: list[StepBase]
    source: YamlSource
    text: str

    @property
    def file(self) -> str:
        return self.source.file
