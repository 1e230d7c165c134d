"""The console assay prints to: not a terminal (a log, CI), a line stays one line."""

from __future__ import annotations

import subprocess
import sys


def test_a_long_line_is_not_folded_when_not_a_terminal() -> None:
    """A reason naming a file under a long path was folded at 120 columns, the file's name
    cut in two: a log then could not be searched for it (seen under pytest's workers)."""
    path = "/" + "/".join(["d" * 40] * 6) + "/series.ndjson"
    code = ("from assay.console import make_console; c = make_console(); "
            f"c.print('[red]error:[/] could not write the results: No space left on device: "
            f"{path}'); c.print('x ' * 100)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    lines = out.splitlines()
    assert lines[0] == f"error: could not write the results: No space left on device: {path}"
    assert lines[1].rstrip() == ("x " * 100).rstrip() and len(lines) == 2
