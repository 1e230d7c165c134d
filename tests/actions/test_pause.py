"""`pause`: a step that only lasts its window, and ends when the run does."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from assay.actions import pause
from assay.actions.context import Stopped
from assay.platforms.fsbase import StepTimeout
from tests.actions.support import context, local_platform


def test_params_read_for_as_a_duration() -> None:
    assert pause.Params.model_validate({"for": "250ms"}).window == 0.25
    assert pause.Params.model_validate({"for": "2m"}).window == 120
    with pytest.raises(ValidationError, match="for"):
        pause.Params.model_validate({"for": 0})
    with pytest.raises(ValidationError):
        pause.Params.model_validate({})
    assert pause.requires(pause.Params.model_validate({"for": 1})) == set()


def test_waits_its_window(tmp_path: Path) -> None:
    p = pause.Params.model_validate({"for": "0.4s"})
    t0 = time.monotonic()
    out = pause.run(p, context(local_platform(tmp_path), p))
    assert 0.38 < time.monotonic() - t0 < 2
    assert out == "paused 0.4s"


def test_the_end_of_the_run_ends_the_pause(tmp_path: Path) -> None:
    p = pause.Params.model_validate({"for": "60s"})
    ctx = context(local_platform(tmp_path), p)
    threading.Timer(0.2, ctx.stop.set).start()
    t0 = time.monotonic()
    with pytest.raises(Stopped):
        pause.run(p, ctx)
    assert time.monotonic() - t0 < 2


def test_a_timeout_shorter_than_the_window(tmp_path: Path) -> None:
    p = pause.Params.model_validate({"for": "60s", "timeout": "0.3s"})
    ctx = context(local_platform(tmp_path), p, timeout=0.3)
    t0 = time.monotonic()
    with pytest.raises(StepTimeout):
        pause.run(p, ctx)
    assert 0.25 < time.monotonic() - t0 < 2
