"""`WORKLOAD.PARAM=value` overrides applied to a scenario's raw YAML data, then re-planned.

The parameter is checked against the workload kind's model before any run, so a typo is an
error naming it; values are parsed as YAML scalars (400 → int, 1.5 → float, 4GiB → str) and
the model's own validation does the rest. Errors of the re-plan keep the line of the user's
file and say which override caused them.
"""

from __future__ import annotations

import copy
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from assay import workloads
from assay.exitcodes import UserError
from assay.plan import Plan, plan_text
from assay.scenario.yamlsource import Issue, ScenarioInvalid, YamlSource, load_yaml


@dataclass(frozen=True)
class Param:
    """A resolved `WORKLOAD.PARAM` address."""

    text: str  # as the user wrote it: db.load.scale
    workload: str
    path: tuple[str, ...]  # inside the workload: ("load", "scale")
    integer: bool  # the model wants an int (mailboxes, threads)
    current: Any  # the value in the scenario, or None


def _unwrap(annotation: Any) -> list[Any]:
    """The concrete types an annotation allows (Optional/Union/Annotated peeled off)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for a in typing.get_args(annotation) for t in _unwrap(a)]
    return [annotation]


def resolve_param(source: YamlSource, text: str) -> Param:
    """Check `text` names a scalar of a workload in this scenario; raise UserError if not."""
    parts = text.strip().split(".")
    data = source.data if isinstance(source.data, dict) else {}
    wls = data.get("workloads") or {}
    if len(parts) < 2 or not all(parts):
        raise UserError(f"{text!r}: give WORKLOAD.PARAM, e.g. db.data_iops or mail.mailboxes")
    name, path = parts[0], tuple(parts[1:])
    if name not in wls or not isinstance(wls[name], dict):
        raise UserError(f"{text!r}: no workload {name!r} in {source.file} "
                        f"(workloads: {', '.join(wls) or 'none'})")
    kind = str(wls[name].get("kind"))
    kinds = workloads.kinds()
    if kind not in kinds:
        raise UserError(f"{text!r}: workload {name!r} has unknown kind {kind!r}")
    model: type[BaseModel] | None = kinds[kind]
    allowed: list[Any] = []
    for i, key in enumerate(path):
        if model is None:  # inside a free-form mapping (e.g. fio options): anything goes
            allowed = [Any]
            continue
        field = model.model_fields.get(key)
        if field is None or key == "kind":
            known = ", ".join(k for k in model.model_fields if k != "kind")
            where = ".".join((name, *path[:i])) or name
            raise UserError(f"{text!r}: {where} ({kind}) has no parameter {key!r} "
                            f"(known: {known})")
        allowed = _unwrap(field.annotation)
        sub = [t for t in allowed if isinstance(t, type) and issubclass(t, BaseModel)]
        dicts = [t for t in allowed if typing.get_origin(t) is dict or t is dict]
        model = sub[0] if sub else None
        if i < len(path) - 1 and not sub and not dicts:
            raise UserError(f"{text!r}: {'.'.join((name, *path[:i + 1]))} is a value, "
                            f"not a mapping")
    if model is not None:
        raise UserError(f"{text!r}: is a mapping; name one of its keys "
                        f"({', '.join(model.model_fields)})")
    scalars = [t for t in allowed if t is not type(None)]
    integer = bool(scalars) and all(t is int for t in scalars)
    current: Any = wls[name]
    for key in path:
        current = current.get(key) if isinstance(current, dict) else None
    return Param(text.strip(), name, path, integer, current)


def parse_value(text: str) -> Any:
    """A command-line value as a YAML scalar: 400 → 400, 1.5 → 1.5, closed → 'closed'."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, str | int | float | bool) or value is None else text


def apply(data: Any, overrides: list[tuple[Param, Any]]) -> Any:
    """A deep copy of raw scenario data with each override set (missing mappings created)."""
    out = copy.deepcopy(data)
    for param, value in overrides:
        node = out["workloads"][param.workload]
        for key in param.path[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        node[param.path[-1]] = value
    return out


def describe(overrides: list[tuple[Param, Any]]) -> str:
    return ", ".join(f"{p.text}={v}" for p, v in overrides)


class Scenario:
    """A scenario read once, planned many times with different overrides."""

    def __init__(self, text: str, file: str, base_dir: Path | None):
        self.text, self.file, self.base_dir = text, file, base_dir
        self.source = load_yaml(text, file)

    def param(self, text: str) -> Param:
        return resolve_param(self.source, text)

    def plan(self, overrides: list[tuple[Param, Any]], duration: float | None = None,
             graded: bool = True, warmup: float | None = None) -> Plan:
        """Plan with overrides; a validation problem is a ScenarioInvalid located in the
        user's file and naming the override. `graded=False` drops the thresholds (a probe
        that only measures, e.g. closed loop where rate thresholds mean nothing)."""
        if not overrides and graded:
            return plan_text(self.text, self.file, self.base_dir, duration, warmup)
        data = apply(self.source.data, overrides)
        if not graded:
            data["thresholds"] = {}
        text = (f"# {self.file} with {describe(overrides)}\n"
                + yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
        try:
            return plan_text(text, self.file, self.base_dir, duration, warmup)
        except ScenarioInvalid as e:
            raise ScenarioInvalid([self._relocate(i, overrides) for i in e.issues]) from None

    def _relocate(self, issue: Issue, overrides: list[tuple[Param, Any]]) -> Issue:
        path: list[str | int] = []
        for part in issue.field.replace("[", ".").replace("]", "").split("."):
            if part:
                path.append(int(part) if part.isdigit() else part)
        line = self.source.line_of(tuple(path)) if path else issue.line
        return Issue(self.file, line, issue.field,
                     f"{issue.message} (with {describe(overrides)})")
