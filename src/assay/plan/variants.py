"""A scenario file read once and planned many times, with `--set` overrides (run, search,
sweep). Errors of a re-plan keep the line of the user's file and name the override."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from assay import workloads
from assay.exitcodes import UserError
from assay.hosts.inventory import Host
from assay.plan.build import TargetEdit, plan_text
from assay.plan.model import Plan
from assay.plan.sources import read_scenario
from assay.scenario.overrides import (
    OverrideError,
    Param,
    apply,
    describe,
    parse_value,
    relocate,
    resolve_param,
)
from assay.scenario.yamlsource import ScenarioInvalid, load_yaml


class ScenarioFile:
    def __init__(self, text: str, file: str, base_dir: Path | None):
        self.text, self.file, self.base_dir = text, file, base_dir
        self.source = load_yaml(text, file)

    @classmethod
    def read(cls, ref: str) -> ScenarioFile:
        """A built-in name or a file path."""
        return cls(*read_scenario(ref))

    def param(self, text: str) -> Param:
        try:
            return resolve_param(self.source, text, workloads.kinds())
        except OverrideError as e:
            raise UserError(str(e)) from None

    def overrides(self, sets: tuple[str, ...] | list[str]) -> list[tuple[Param, Any]]:
        """`WORKLOAD.PARAM=VALUE` items (the command line's --set) → checked overrides."""
        out = []
        for item in sets:
            key, sep, value = item.partition("=")
            if not sep:
                raise UserError(f"--set {item!r}: give WORKLOAD.PARAM=VALUE, "
                                f"e.g. mail.dataset=64GiB")
            out.append((self.param(key), parse_value(value)))
        return out

    def plan(self, overrides: list[tuple[Param, Any]], duration: float | None = None,
             graded: bool = True, warmup: float | None = None,
             target: TargetEdit | None = None, hosts: list[Host] | None = None) -> Plan:
        """Plan with overrides; a validation problem is a ScenarioInvalid located in the
        user's file and naming the override. `graded=False` drops the thresholds (a probe
        that only measures, e.g. closed loop where rate thresholds mean nothing)."""
        if not overrides and graded:
            return plan_text(self.text, self.file, self.base_dir, duration, warmup, target,
                             hosts)
        data = apply(self.source.data, overrides)
        if not graded:
            data["thresholds"] = {}
        text = (f"# {self.file} with {describe(overrides)}\n"
                + yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
        try:
            return plan_text(text, self.file, self.base_dir, duration, warmup, target, hosts)
        except ScenarioInvalid as e:
            raise ScenarioInvalid([relocate(self.source, i, overrides)
                                   for i in e.issues]) from None
