"""The real fio behind a wrapper that logs each fio started (ASSAY_FIO): its start and end
times and its arguments, to count the fios a check starts and see them overlap."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest


def logged_fio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Sets ASSAY_FIO to the wrapper; returns its log. FIO_SLEEP delays each fio's start."""
    log = tmp_path / "fio-calls.txt"
    wrapper = tmp_path / "fio-logged"
    wrapper.write_text(f"#!/bin/sh\nt0=$(date +%s.%N)\nsleep \"${{FIO_SLEEP:-0}}\"\n"
                       f"fio \"$@\"; rc=$?\necho \"$t0 $(date +%s.%N) $*\" >> {log}\nexit $rc\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("ASSAY_FIO", str(wrapper))
    return log


def started(log: Path) -> list[list[str]]:
    """Each fio's job files, as `<parent directory>/<name>` (--parse-only dropped)."""
    if not log.exists():
        return []
    return [[Path(a).parent.name + "/" + Path(a).name for a in ln.split()[3:]]
            for ln in log.read_text().splitlines()]
