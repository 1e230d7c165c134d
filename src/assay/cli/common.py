"""Options and helpers shared by verbs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from assay.exitcodes import UserError
from assay.results.catalogue import Catalogue
from assay.results.rundir import default_results_root, read_json
from assay.scenario.units import UnitError, parse_duration
from assay.scenario.yamlsource import ScenarioInvalid

results_option = click.option(
    "--results", "results", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Results directory (default: $ASSAY_RESULTS or ./results).")


def results_root(value: Path | None) -> Path:
    return value or default_results_root()


def duration_value(text: str | None, flag: str = "--duration") -> float | None:
    if text is None:
        return None
    try:
        seconds = parse_duration(text)
    except UnitError as e:
        raise UserError(f"{flag}: {e}") from None
    if seconds <= 0:
        raise UserError(f"{flag}: must be more than zero")
    return seconds


def scenario_error(e: ScenarioInvalid) -> UserError:
    n = len(e.issues)
    head = f"the scenario has {n} problem{'s' if n != 1 else ''}:"
    return UserError(head + "\n  " + "\n  ".join(str(i) for i in e.issues))


def find_run(ref: str, results: Path | None) -> tuple[Path, dict[str, Any]]:
    """A run by path, id, id prefix/suffix or `last`."""
    root = results_root(results)
    path = Catalogue(root).find(ref)
    if path is None or not (path / "run.json").exists():
        raise UserError(f"no run {ref!r} in {root} (see `assay runs`)")
    try:
        return path, read_json(path / "run.json")
    except (OSError, ValueError) as e:
        raise UserError(f"cannot read {path / 'run.json'}: {e}") from None
