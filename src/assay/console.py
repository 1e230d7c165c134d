"""TTY-aware output: colours and a live progress line on a terminal, plain lines elsewhere.

Everything for humans goes to stderr when --json owns stdout.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

QUIET_S = 5.0  # no new live figures for this long: the bar says so instead of the last ones


def make_console(json_mode: bool = False) -> Console:
    console = Console(stderr=json_mode, highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = max(console.width, 120)  # logs and CI: no wrapping of tables
        console.soft_wrap = True  # nor of a line: a path or a file name is kept whole
    return console


class LiveProgress:
    """A progress bar with elapsed, ETA and live figures; one line every 10 s when not a TTY."""

    def __init__(self, console: Console, label: str, total: float, unit: str = "s"):
        self.console = console
        self.total = total
        self.unit = unit
        self.label = label
        self.tty = console.is_terminal
        self._last_plain = 0.0
        self._said_done = False
        self._live = ""
        self._heard: float | None = None  # when the live figures last came (monotonic)
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if self.tty:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(bar_width=28),
                TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn(),
                TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[live]}"),
                console=console, transient=False, refresh_per_second=4)

    def __enter__(self) -> LiveProgress:
        if self._progress:
            self._progress.start()
            self._task = self._progress.add_task(self.label, total=self.total, live="")
        return self

    def update(self, done: float, live: str | None = None) -> None:
        """Move the bar; `live` replaces the live figures (None keeps the last ones, QUIET_S at
        most: then the bar says how long none came, so that a frozen platform's last rate is
        not shown as if current; the figures are fio's seconds)."""
        now = time.monotonic()
        if live is not None:
            self._live, self._heard = live, now
        elif self._heard is not None and now - self._heard >= QUIET_S:
            self._live = f"no new second from fio for {now - self._heard:.0f}s"
        live = self._live
        if self._progress and self._task is not None:
            self._progress.update(self._task, completed=min(done, self.total), live=live)
            return
        done = min(done, self.total)
        if self._said_done:
            return
        if now - self._last_plain >= 10 or done >= self.total:
            self._last_plain = now
            pct = 100 * done / self.total if self.total else 100
            print(f"  {self.label}: {pct:3.0f}% {live}".rstrip(), file=self.console.file,
                  flush=True)
            self._said_done = done >= self.total

    def __exit__(self, *exc: object) -> None:
        if self._progress:
            self._progress.stop()

