"""What every `assay size` subcommand shares: unit-aware option types, --json/--explain,
--emit-scenario, and printing the result. The sizing itself lives in assay.sizing."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

import click
from rich.console import Console

from assay.exitcodes import UserError
from assay.scenario import units as scenario_units
from assay.sizing import units
from assay.sizing.explain import Result
from assay.sizing.render import render
from assay.sizing.scenario_text import write


class Unit(click.ParamType):
    """A size, rate, count, duration or ratio; a bad value is a one-line error naming the
    option (no traceback)."""

    def __init__(self, name: str, parse: Callable[[str], Any]):
        self.name = name
        self._parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return self._parse(value)
        except (UserError, scenario_units.UnitError) as e:
            opt = param.opts[0] if param is not None and param.opts else "value"
            raise UserError(f"{opt}: {e}") from None


SIZE = Unit("size", units.parse_size)  # decimal: 800MB = 800 x 10^6; binary needs MiB
RATE = Unit("rate", units.parse_rate)
COUNT = Unit("count", units.parse_count)
DURATION = Unit("duration", scenario_units.parse_duration)
RATIO = Unit("ratio", scenario_units.parse_ratio)
DECIMAL = "Sizes are decimal (800MB = 800 x 10^6 bytes, 3.84TB = 3.84 x 10^12); binary needs " \
          "MiB/GiB/TiB."


# oltp and vdi: where the servers run and the emitted scenario's timeline
NODE_OPTIONS = [
    click.option("--nodes", type=int,
                 help="Nodes the servers run on (needed for --emit-scenario: N-1 load)."),
    click.option("--failures", type=int, default=1, show_default=True,
                 help="Nodes lost in the worst failure."),
    click.option("--duration", default="1h", show_default=True,
                 help="Measured time of the emitted scenario."),
    click.option("--warmup", default="5m", show_default=True,
                 help="Warm-up of the emitted scenario."),
]


def state_units(cmd: click.Command) -> None:
    """Append the units rule to a subcommand's --help."""
    cmd.help = f"{inspect.cleandoc(cmd.help or '')}\n\n{DECIMAL}"


def output(options: list[Any]) -> Callable[[Any], Any]:
    """The subcommand's own options, then --json and --explain, shared by every subcommand."""
    def decorate(f: Any) -> Any:
        f = click.option("--json", "as_json", is_flag=True,
                         help="Print one JSON document (figures with formulas, checks, demand) "
                              "instead of tables.")(f)
        f = click.option("--explain", is_flag=True,
                         help="Show the formula, inputs and source behind every number.")(f)
        for o in reversed(options):
            f = o(f)
        return f
    return decorate


def emit_option(what: str = "one server's/node's load after the worst failure") -> Any:
    return click.option("--emit-scenario", "emit_path", metavar="FILE",
                        help=f"Write the scenario YAML that validates this design: {what}. "
                             f"Run it with `assay run FILE`.")


def check_duration(opt: str, text: str) -> str:
    try:
        scenario_units.parse_duration(text)
    except scenario_units.UnitError as e:
        raise UserError(f"{opt}: {e}") from None
    return text


def finish(result: Result, as_json: bool, explain: bool, scenario: str | None,
           emit_path: str | None) -> None:
    """Print the result (tables or JSON), write the scenario; exit 1 if a design rule fails."""
    written = None
    if scenario is not None and emit_path:
        written = str(write(emit_path, scenario))
    if as_json:
        doc = result.to_json()
        doc["scenario_file"] = written
        click.echo(json.dumps(doc, indent=2))
    else:
        console = Console(highlight=False)
        render(result, console, explain=explain)
        if written:
            console.print(f"scenario written to {written}: run it with `assay run {written}`",
                          markup=False)
    if result.failed:
        click.get_current_context().exit(1)
