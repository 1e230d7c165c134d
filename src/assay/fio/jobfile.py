"""fio job files: what assay runs is always a plain job file the user can read and rerun."""

from __future__ import annotations

from dataclasses import dataclass, field

Options = dict[str, str | int | float | bool | None]


@dataclass
class FioJob:
    name: str
    options: Options = field(default_factory=dict)


def _line(key: str, value: str | int | float | bool | None) -> str | None:
    if value is None or value is False:
        return None
    if value is True:
        return key
    return f"{key}={value}"


def render(global_options: Options, jobs: list[FioJob], header: str = "") -> str:
    """Render a job file; `None`/`False` options are left out, `True` is a bare flag."""
    out = [f"; {h}" for h in header.splitlines()] if header else []
    sections = [("global", global_options)] + [(j.name, j.options) for j in jobs]
    for name, opts in sections:
        out.append(f"[{name}]")
        out.extend(line for k, v in opts.items() if (line := _line(k, v)) is not None)
        out.append("")
    return "\n".join(out)
