"""A stored run whose per-second data was damaged since: the verbs that read it (show,
report, export, compare) still give what is left, then say what was lost and exit 2, so that
neither a person nor a script takes the rest for the whole run."""

from __future__ import annotations

from pathlib import Path

from assay.exitcodes import UserError
from assay.results.damage import losses
from assay.results.liveness import effective_status
from assay.results.printable import printable
from assay.results.record import RunRecord


class DamagedRun(UserError):
    """Exit 2 after the output: the run's stored seconds are not all there."""


def damage_report(runs: list[tuple[Path, RunRecord]]) -> str | None:
    """What the runs lost, one line per loss, or None when nothing was."""
    lines = []
    for path, record in runs:
        status = effective_status(record.stored(), path)
        end = record.measured_window_s[1] if record.measured_window_s else None
        lines += [f"{printable(path.name)}: {loss}" for loss in losses(path, status, end)]
    if not lines:
        return None
    return ("stored seconds were lost, so what was given covers only the rest:\n  " +
            "\n  ".join(lines))


def refuse_damage(runs: list[tuple[Path, RunRecord]]) -> None:
    message = damage_report(runs)
    if message:
        raise DamagedRun(message)
