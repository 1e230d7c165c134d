"""Command line: one file per verb, registered in VERBS. Nothing imports this package."""

from __future__ import annotations

import importlib
import signal
import sys

import click

from assay import __version__
from assay.exitcodes import AssayError, ExitCode

# verb name -> module under assay.cli that defines `command` (a click.Command)
VERBS = {
    "run": "run",
    "plan": "plan",
    "schema": "schema",
    "scenarios": "scenarios",
    "runs": "runs",
    "show": "show",
    "size": "size",
    "report": "report",
    "compare": "compare",
    "export": "export",
    "search": "search",
    "sweep": "sweep",
    "lab": "lab",
    "hosts": "hosts",
    "clean": "clean",
    "verify": "verify",
    "serve": "serve",
}


class LazyGroup(click.Group):
    """Imports a verb's module only when that verb is used (fast `--help`, small start-up)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(VERBS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = VERBS.get(cmd_name)
        if module is None:
            return None
        return importlib.import_module(f"assay.cli.{module}").command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="assay")
def cli() -> None:
    """assay: prove a storage platform against real application workloads.

    \b
    Quick start:
      assay scenarios                 list the built-in scenarios
      assay plan exchange-quick       show the fio jobs a scenario will run, without IO
      assay run exchange-quick        run it on a temporary directory and grade it
      assay runs                      list stored runs
    """


def _crash_report() -> str:
    """Write the traceback to a file (or stderr with ASSAY_DEBUG=1) and say where."""
    import os
    import tempfile
    import traceback

    if os.environ.get("ASSAY_DEBUG"):
        traceback.print_exc()
        return "the traceback above"
    fd, path = tempfile.mkstemp(prefix="assay-crash-", suffix=".txt")
    with os.fdopen(fd, "w") as fh:
        traceback.print_exc(file=fh)
    return path


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM ends a verb as Ctrl-C does: by an exception, so every `with` and `finally` on
    the way out runs (temporary directories removed), and exit 130 `interrupted`. A verb with
    handlers of its own (run, search, sweep, verify) sets them for its life and restores this
    one after."""
    raise KeyboardInterrupt()


def main() -> None:
    # Ctrl-C works whatever we inherited (a script's `cmd &` starts us with SIGINT ignored)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # SIGTERM too, unless it was ignored on purpose (nohup-like): its default would end us
    # at once, leaving what a `with` was to remove (`assay plan`'s scratch directory)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)
    try:
        rc = cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except click.ClickException as e:
        e.show()
        sys.exit(ExitCode.INVALID_INPUT)
    except AssayError as e:
        click.secho(f"error: {e}", fg="red", err=True)
        sys.exit(e.code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as e:  # a bug: say so plainly, keep the traceback out of the user's way
        click.secho(f"internal error: {type(e).__name__}: {e}", fg="red", err=True)
        click.echo(f"This is a bug in assay; please report it with {_crash_report()}", err=True)
        sys.exit(ExitCode.INTERNAL)
    sys.exit(rc if isinstance(rc, int) else 0)
