"""YAML loading that remembers where every value came from (file:line for error messages)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from assay.scenario.messages import control

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
        text = f"{where}: {self.field}: {self.message}" if self.field else \
            f"{where}: {self.message}"
        return escaped(text)  # a key or a value may hold an escape sequence: not the terminal's


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


def escaped(text: str) -> str:
    """Control characters as visible escapes (`\\x1b`); the rest as it is."""
    if control(text) is None:
        return text
    return "".join(c.encode("unicode_escape").decode("ascii") if control(c) else c
                   for c in text)


def dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


MAX_BYTES = 1 << 20  # a scenario is a page of YAML; 1 MiB leaves room for generated ones
MAX_NODES = 20_000  # values, aliases expanded (a big scenario has hundreds): no "billion laughs"
MAX_DEPTH = 64  # nesting; PyYAML and the models recurse per level


def check_size(nbytes: int, file: str) -> None:
    """Refuse a scenario larger than MAX_BYTES before reading or parsing it."""
    if nbytes > MAX_BYTES:
        raise ScenarioInvalid([Issue(file, 1, "", f"the file is {nbytes:,} bytes; a scenario "
                                                  f"is at most {MAX_BYTES:,} (1 MiB)")])


def load_yaml(text: str, file: str = "<scenario>") -> YamlSource:
    """Parse `text`; a syntax error, duplicate key or a file beyond the limits above becomes a
    ScenarioInvalid with a line."""
    check_size(len(text.encode("utf-8", "surrogatepass")), file)
    try:
        node = yaml.compose(text, Loader=_Composer)
        if node is not None:
            _expanded_size(node, {})
    except _TooBig as e:
        raise ScenarioInvalid([Issue(file, e.line, "", e.message)]) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else None
        raise ScenarioInvalid([Issue(file, line, "", f"YAML syntax: {e.problem or e}")]) from None
    except yaml.YAMLError as e:  # e.g. a character YAML does not allow, without a mark
        raise ScenarioInvalid([Issue(file, None, "", f"YAML syntax: {e}")]) from None
    if node is None:
        raise ScenarioInvalid([Issue(file, 1, "", "the file is empty")])
    src = YamlSource(data=None, file=file)
    issues: list[Issue] = []
    src.data = _Builder(src, issues).construct(node, ())
    if issues:
        raise ScenarioInvalid(issues)
    return src


class _TooBig(Exception):
    def __init__(self, line: int, message: str):
        self.line, self.message = line, message


class _Composer(yaml.SafeLoader):
    """Stops at MAX_DEPTH and MAX_NODES while parsing: PyYAML composes recursively, scans deep
    flow nesting in quadratic time (5,000 `[` took 28 s before the stack ran out) and is slow
    on a megabyte of keys; stopping early keeps every file under about a second."""

    depth = nodes = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self.depth += 1
        self.nodes += 1
        try:
            if self.depth > MAX_DEPTH or self.nodes > MAX_NODES:
                line = self.peek_event().start_mark.line + 1  # type: ignore[no-untyped-call,unused-ignore]
                raise _TooBig(line, f"nested more than {MAX_DEPTH} levels deep"
                                    if self.depth > MAX_DEPTH else
                                    f"more than {MAX_NODES:,} values; a scenario needs far fewer")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _expanded_size(node: yaml.Node, seen: dict[int, tuple[int, int]], depth: int = 1) \
        -> tuple[int, int]:
    """(values, levels) of `node` once its aliases are expanded, counted on the composed graph
    (an alias is the same node object again), so nothing is expanded to count it. Aliases can
    nest deeper than the text (a chain of anchors), so the depth is checked here too."""
    line = node.start_mark.line + 1
    if depth > MAX_DEPTH:
        raise _TooBig(line, f"nested more than {MAX_DEPTH} levels deep (through aliases)")
    if id(node) in seen:
        size, height = seen[id(node)]
        if size < 0:
            raise _TooBig(line, "an alias (*name) refers to a value that contains it")
        if depth + height - 1 > MAX_DEPTH:
            raise _TooBig(line, f"nested more than {MAX_DEPTH} levels deep (through aliases)")
        return size, height
    seen[id(node)] = (-1, 0)  # being counted: meeting it again below it is a cycle
    children: list[yaml.Node] = []
    if isinstance(node, yaml.SequenceNode):
        children = node.value
    elif isinstance(node, yaml.MappingNode):
        children = [n for pair in node.value for n in pair]
    size, height = 1, 1
    for child in children:
        s, h = _expanded_size(child, seen, depth + 1)
        size, height = size + s, max(height, h + 1)
        if size > MAX_NODES:
            raise _TooBig(line, f"this value expands to more than {MAX_NODES:,} values through "
                                f"YAML aliases (*name); a scenario needs far fewer")
    seen[id(node)] = (size, height)
    return size, height


class _Builder:
    """Nodes → plain data, noting the line of every value and collecting every problem."""

    def __init__(self, src: YamlSource, issues: list[Issue]):
        self.src, self.issues = src, issues
        self.scalars = yaml.SafeLoader("")  # one per load: it caches every node it constructs

    def construct(self, node: yaml.Node, path: Path_) -> Any:
        if isinstance(node, yaml.SequenceNode):
            self.src.lines.setdefault(path, node.start_mark.line + 1)
            return [self.construct(v, (*path, i)) for i, v in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, path)
        return self.scalar(node, path)

    def mapping(self, node: yaml.MappingNode, path: Path_) -> dict[str, Any]:
        src, out = self.src, {}
        src.lines.setdefault(path, node.start_mark.line + 1)
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            key = self.scalar(key_node, path) if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str | int | float | bool):
                self.issues.append(Issue(src.file, line, dotted(path),
                                         "mapping keys must be plain values"))
                continue
            key = str(key) if not isinstance(key, str) else key
            if key in out:
                self.issues.append(Issue(src.file, line, dotted((*path, key)), "duplicate key"))
                continue
            src.lines[(*path, key)] = line
            out[key] = self.construct(value_node, (*path, key))
        return out

    def scalar(self, node: yaml.Node, path: Path_) -> Any:
        self.src.lines.setdefault(path, node.start_mark.line + 1)
        try:
            return self.scalars.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError) as e:
            # a bad tag (`!!python/object`), `!!int abc`, a 5000-digit integer
            problem = getattr(e, "problem", None) or str(e)
            self.issues.append(Issue(self.src.file, node.start_mark.line + 1, dotted(path),
                                     f"cannot read this value: {problem}"))
            return None
