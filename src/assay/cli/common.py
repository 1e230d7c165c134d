"""Options and helpers shared by verbs."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from assay.exitcodes import ExitCode, UserError
from assay.results.catalogue import Catalogue
from assay.results.printable import printable
from assay.results.record import RunRecord
from assay.results.rundir import default_results_root, read_record
from assay.scenario.units import UnitError, parse_duration
from assay.scenario.yamlsource import ScenarioInvalid

if TYPE_CHECKING:  # a verb that reads stored runs starts without the planner's imports
    from assay.plan import Plan
    from assay.search.store import Group

results_option = click.option(
    "--results", "results", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Results directory (default: $ASSAY_RESULTS or ./results).")


def hosts_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--hosts FILE (an Ansible inventory: run across its hosts) and --accept-new."""
    f = click.option("--accept-new", is_flag=True,
                     help="With --hosts: trust a host key seen for the first time (added to "
                          "known_hosts); a changed key is refused whatever this says.")(f)
    return click.option("--hosts", "hosts_file", type=click.Path(dir_okay=False, exists=True,
                                                                 path_type=Path),
                        help="Ansible inventory (INI or YAML): run across its hosts over SSH, "
                             "each on its assay_path (see docs/hosts.md).")(f)


def results_root(value: Path | None) -> Path:
    """The results directory; one that exists as something else is refused (exit 2), not
    read as a directory holding no runs."""
    root = value or default_results_root()
    if root.exists() and not root.is_dir():
        given = "--results" if value else "ASSAY_RESULTS" if os.environ.get("ASSAY_RESULTS") \
            else "the default results directory"
        raise UserError(f"{given}: {root} is not a directory")
    return root


def duration_value(text: str | None, flag: str = "--duration",
                   allow_zero: bool = False) -> float | None:
    if text is None:
        return None
    try:
        seconds = parse_duration(text)
    except UnitError as e:
        raise UserError(f"{flag}: {e}") from None
    if seconds < 0 or (seconds == 0 and not allow_zero):
        raise UserError(f"{flag}: must be more than zero")
    if 0 < seconds < 1 and not allow_zero:  # a measured time: assay grades per second
        raise UserError(f"{flag}: at least 1s")
    return seconds


def scenario_error(e: ScenarioInvalid) -> UserError:
    n = len(e.issues)
    head = f"the scenario has {n} problem{'s' if n != 1 else ''}:"
    return UserError(head + "\n  " + "\n  ".join(str(i) for i in e.issues))


def find_run(ref: str, results: Path | None) -> tuple[Path, RunRecord]:
    """A run by path, id, id prefix/suffix or `last`, and its record (a RecordError, exit 2,
    when run.json is unreadable)."""
    root = results_root(results)
    catalogue = Catalogue(root)
    path = catalogue.find(ref)
    if path is None and len(several := catalogue.matches(ref)) > 1:
        shown = "\n  ".join(printable(r["id"]) for r in several[:10])
        more = f"\n  ... and {len(several) - 10} more" if len(several) > 10 else ""
        raise UserError(f"{ref!r} is ambiguous: {len(several)} runs match; give more of "
                        f"the id:\n  {shown}{more}")
    if path is None or not (path / "run.json").exists():
        raise UserError(f"no run {ref!r} in {root} (see `assay runs`)")
    return path, read_record(path)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt()


@contextmanager
def group_session(group: Group, console: Console, first: Plan, target_path: str | None,
                  resume: str) -> Iterator[str | None]:
    """The life of a search or sweep: SIGTERM counts as Ctrl-C, the trials share one scratch
    target (yielded), and an interruption marks the group so it can resume (exit 130)."""
    from assay.search.limit import SearchInterrupted
    from assay.search.trials import shared_target

    old = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        with shared_target(first, target_path) as path:
            yield path
    except ScenarioInvalid as e:
        raise scenario_error(e) from None
    except (KeyboardInterrupt, SearchInterrupted):
        group.record["status"] = "interrupted"
        group.save()
        console.print(f"[yellow]interrupted[/]: resume with `{resume}` (or run the same "
                      f"command again)")
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    finally:
        signal.signal(signal.SIGTERM, old)
