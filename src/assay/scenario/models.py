"""Typed scenario models: the scenario file's top level (its timeline and steps, target,
thresholds and integrity settings) and the scenario resolved into its kinds' models. Unknown
keys are errors (scenario/strict.py: every model's base and the field types with units);
the keys every workload accepts are in scenario/workloadbase.py.

Workload kinds and actions extend `WorkloadBase` / `StepBase` in their own packages; the loader
receives those models from its caller, so this package imports nothing else of assay.
"""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from assay.scenario import messages, units
from assay.scenario.strict import Duration as Duration  # many import it from here
from assay.scenario.strict import Size as Size  # many import it from here
from assay.scenario.strict import Strict
from assay.scenario.workloadbase import WorkloadBase as WorkloadBase  # many import it from here
from assay.scenario.yamlsource import YamlSource

MIN_DURATION = 1.0  # seconds: assay measures and grades per second


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


class EndRule(NamedTuple):
    """`timeline.end: after STEP + 10s`: the load ends `delay` seconds after step STEP ends
    (its last occurrence, for a step repeated `count` times), `duration` at the latest."""

    step: str
    delay: float

    @classmethod
    def parse(cls, text: str) -> EndRule:
        m = re.fullmatch(r"after\s+(?P<step>[^\s+]+)\s*(?:\+\s*(?P<delay>\S.*))?", text.strip())
        if not m:
            raise ValueError(f"expected `after STEP` or `after STEP + 10s`, got "
                             f"{messages.show(text)}")
        return cls(m["step"], units.parse_duration(m["delay"]) if m["delay"] else 0.0)


class Timeline(Strict):
    duration: Duration = Field(60.0, gt=0, description="measured time, after warm-up; with "
                                                       "`end`, the longest it runs")
    warmup: Duration = Field(0.0, ge=0, description="load before measuring, not graded")
    steps: list[dict[str, Any]] = Field(default_factory=list)
    end: str | None = Field(None, description="end the load a time after a step ends: "
                                              "`after STEP + 10s`")

    @field_validator("duration")
    @classmethod
    def _at_least_a_second(cls, v: float) -> float:
        if v < MIN_DURATION:
            raise ValueError("at least 1s: assay measures per second")
        return v

    @field_validator("end")
    @classmethod
    def _end_rule(cls, v: str | None) -> str | None:
        if v is not None:
            EndRule.parse(v)
        return v

    @property
    def end_rule(self) -> EndRule | None:
        return EndRule.parse(self.end) if self.end is not None else None


class Throttle(Strict):
    """A blkio cap on a block device for the run's fio processes (cgroup v1)."""

    device: str = Field(..., description="block device node as each host sees it, e.g. "
                                         "/dev/loop3, or `target`: the one under the target")
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
