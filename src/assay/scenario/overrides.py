"""`WORKLOAD.PARAM=value` overrides applied to a scenario's raw YAML data (`--set`).

The parameter is checked against the workload kind's model before any run, so a typo is an
error naming it; values are parsed as YAML scalars (400 → int, 1.5 → float, 4GiB → str) and
the model's own validation does the rest when the result is planned (assay.plan.variants).
"""

from __future__ import annotations

import copy
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import BaseModel

from assay.scenario.yamlsource import Issue, YamlSource


class OverrideError(ValueError):
    """A `--set` that names nothing, or names a mapping instead of a value."""


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


def resolve_param(source: YamlSource, text: str,
                  kinds: Mapping[str, type[BaseModel]]) -> Param:
    """Check `text` names a scalar of a workload in this scenario; raise OverrideError if not."""
    parts = text.strip().split(".")
    data = source.data if isinstance(source.data, dict) else {}
    wls = data.get("workloads") or {}
    if len(parts) < 2 or not all(parts):
        raise OverrideError(f"{text!r}: give WORKLOAD.PARAM, e.g. db.data_iops or mail.mailboxes")
    name, path = parts[0], tuple(parts[1:])
    if name not in wls or not isinstance(wls[name], dict):
        raise OverrideError(f"{text!r}: no workload {name!r} in {source.file} "
                        f"(workloads: {', '.join(wls) or 'none'})")
    kind = str(wls[name].get("kind"))
    if kind not in kinds:
        raise OverrideError(f"{text!r}: workload {name!r} has unknown kind {kind!r}")
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
            raise OverrideError(f"{text!r}: {where} ({kind}) has no parameter {key!r} "
                            f"(known: {known})")
        allowed = _unwrap(field.annotation)
        sub = [t for t in allowed if isinstance(t, type) and issubclass(t, BaseModel)]
        dicts = [t for t in allowed if typing.get_origin(t) is dict or t is dict]
        model = sub[0] if sub else None
        if i < len(path) - 1 and not sub and not dicts:
            raise OverrideError(f"{text!r}: {'.'.join((name, *path[:i + 1]))} is a value, "
                            f"not a mapping")
    if model is not None:
        raise OverrideError(f"{text!r}: is a mapping; name one of its keys "
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


def relocate(source: YamlSource, issue: Issue, overrides: list[tuple[Param, Any]]) -> Issue:
    """An issue found in the overridden text, moved to the line of the user's file and naming
    the overrides that caused it."""
    path: list[str | int] = []
    for part in issue.field.replace("[", ".").replace("]", "").split("."):
        if part:
            path.append(int(part) if part.isdigit() else part)
    line = source.line_of(tuple(path)) if path else issue.line
    return Issue(source.file, line, issue.field, f"{issue.message} (with {describe(overrides)})")
