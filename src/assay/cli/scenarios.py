"""`assay scenarios`: the built-in scenarios."""

from __future__ import annotations

import click
import yaml

from assay.console import make_console
from assay.exitcodes import UserError
from assay.plan import builtin_scenarios


@click.command("scenarios")
@click.argument("name", required=False)
def command(name: str | None) -> None:
    """List the built-in scenarios, or print one (to copy and adapt)."""
    builtins = builtin_scenarios()
    if name:
        if name not in builtins:
            raise UserError(f"no built-in scenario {name!r} (known: {', '.join(builtins)})")
        click.echo(builtins[name], nl=False)
        return
    con = make_console()
    for key, text in builtins.items():
        desc = (yaml.safe_load(text) or {}).get("description", "")
        con.print(f"[bold]{key:<20}[/] {desc}")
    con.print("\nRun one with `assay run NAME`; print it with `assay scenarios NAME`.")
