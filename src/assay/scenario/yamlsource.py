"""YAML loading that remembers where every value came from (file:line for error messages)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

Path_ = tuple[str | int, ...]


@dataclass
class Issue:
    """One validation problem, located in the source file."""

    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        if self.field:
            return f"{where}: {self.field}: {self.message}"
        return f"{where}: {self.message}"


class ScenarioInvalid(Exception):
    """All problems found in a scenario, reported together."""

    def __init__(self, issues: list[Issue]):
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))


@dataclass
class YamlSource:
    """Parsed YAML data plus a map from value paths to 1-based line numbers."""

    data: Any
    file: str
    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, path: Path_) -> int | None:
        """The line of `path`, or of its nearest ancestor that has one."""
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return self.lines.get((), None)

    def issue(self, path: Path_, message: str) -> Issue:
        return Issue(self.file, self.line_of(path), dotted(path), message)


def dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def load_yaml(text: str, file: str = "<scenario>") -> YamlSource:
    """Parse `text`; a syntax error or duplicate key becomes a ScenarioInvalid with a line."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else None
        raise ScenarioInvalid([Issue(file, line, "", f"YAML syntax: {e.problem or e}")]) from None
    if node is None:
        raise ScenarioInvalid([Issue(file, 1, "", "the file is empty")])
    src = YamlSource(data=None, file=file)
    issues: list[Issue] = []
    src.data = _construct(node, (), src, issues)
    if issues:
        raise ScenarioInvalid(issues)
    return src


_constructor = yaml.SafeLoader("")


def _construct(node: yaml.Node, path: Path_, src: YamlSource, issues: list[Issue]) -> Any:
    src.lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _constructor.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool):
                issues.append(Issue(src.file, key_node.start_mark.line + 1, dotted(path),
                                    "mapping keys must be plain values"))
                continue
            key = str(key) if not isinstance(key, str) else key
            if key in out:
                issues.append(Issue(src.file, key_node.start_mark.line + 1, dotted((*path, key)),
                                    "duplicate key"))
                continue
            src.lines[(*path, key)] = key_node.start_mark.line + 1
            out[key] = _construct(value_node, (*path, key), src, issues)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(v, (*path, i), src, issues) for i, v in enumerate(node.value)]
    return _constructor.construct_object(node, deep=True)
