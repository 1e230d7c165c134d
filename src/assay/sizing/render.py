"""Terminal rendering of a sizing `Result`: failing design rules first, then the figures, then
(with --explain) the formula, inputs and source behind every number."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from assay.sizing.explain import Result, SideBySide, describe_inputs, fmt

TITLES = {"exchange": "Exchange sizing", "oltp": "OLTP sizing", "vdi": "VDI sizing",
          "cluster": "Cluster sizing", "backup": "Backup sizing"}


def rules_table(r: Result) -> Table:
    t = Table(title="Design rules", title_justify="left", show_lines=False, expand=False)
    t.add_column("", no_wrap=True)
    t.add_column("Rule")
    t.add_column("Finding")
    for c in sorted(r.checks, key=lambda c: c.ok):  # failing rules first
        status = Text("FAIL", style="bold red") if not c.ok else Text("ok", style="green")
        t.add_row(status, Text(c.rule, style="red" if not c.ok else ""), Text(c.message))
    return t


def figures_table(r: Result) -> Table:
    t = Table(title=TITLES.get(r.kind, r.kind), title_justify="left")
    t.add_column("Figure")
    t.add_column("Value", justify="right", no_wrap=True)
    for f in r.figures.values():
        t.add_row(Text(f.label), Text(fmt(f.value, f.unit, f.binary)))
    return t


def side_by_side(r: Result, v: SideBySide) -> Table:
    """E.g. the Jetstress target per server in normal operation beside the N-1 one."""
    t = Table(title=v.title, title_justify="left", caption=f"rule: {v.source}",
              caption_justify="left")
    t.add_column("")
    for c in v.columns:
        t.add_column(c, justify="right", no_wrap=True)
    for label, keys in v.rows:
        cells = [r.figures[k] for k in keys]
        t.add_row(Text(label), *(Text(fmt(f.value, f.unit, f.binary)) for f in cells))
    return t


def explanations(r: Result) -> Group:
    parts: list[Text] = [Text("How each number was computed", style="bold")]
    for key, f in r.figures.items():
        block = Text()
        block.append(f"{f.label} = {fmt(f.value, f.unit, f.binary)}", style="bold")
        block.append(f"  [{key}]\n", style="dim")
        block.append(f"    formula: {f.formula}\n")
        if f.inputs:
            block.append(f"    inputs:  {describe_inputs(f)}\n")
        if f.source:
            block.append(f"    source:  {f.source}", style="dim")
        parts.append(block)
    return Group(*parts)


def render(r: Result, console: Console, explain: bool = False) -> None:
    failed = r.failed
    if failed:
        console.print(Text(f"{len(failed)} design rule(s) fail:", style="bold red"))
        for c in failed:
            console.print(Text(f"  - {c.rule}: {c.message}", style="red"))
        console.print()
    if r.checks:
        console.print(rules_table(r))
    console.print(figures_table(r))
    for view in r.views:
        console.print(side_by_side(r, view))
    if explain:
        console.print(explanations(r))
    for note in r.notes:
        console.print(Text(f"note: {note}", style="dim"))
