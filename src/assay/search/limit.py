"""`assay search`: find the largest value of one parameter whose run passes every threshold.

The loop asks `bisect.decide` for the next value, runs it as a trial (an ordinary run whose
parent is the search), stores the trial in search.json and repeats. Resuming replays the
finished trials, so no finished trial is run twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from assay.exitcodes import RunAborted
from assay.plan import ScenarioFile
from assay.scenario.overrides import Param
from assay.search import bisect
from assay.search.store import Group
from assay.search.trials import TrialSettings, run_trial

FINISHED = ("passed", "failed")
CURVE_FRACTIONS = (0.1, 0.5, 0.7, 0.8, 0.9, 1.0)  # vdbench's curve points, as % of the maximum

TrialHook = Callable[[dict[str, Any]], None]


class SearchInterrupted(Exception):
    pass


@dataclass
class LimitSearch:
    scenario: ScenarioFile
    param: Param
    space: bisect.Space
    group: Group
    settings: TrialSettings
    console: Console
    duration: float | None = None
    on_trial: TrialHook = field(default=lambda r: None)

    @property
    def trials(self) -> list[dict[str, Any]]:
        return self.group.record.setdefault("trials", [])

    def resume_cleanup(self) -> int:
        """Drop trials that never finished (killed, interrupted); return how many remain."""
        kept = [t for t in self.trials if t.get("status") in FINISHED]
        dropped = [t for t in self.trials if t.get("status") not in FINISHED]
        self.group.record["trials"] = kept
        self.group.record.setdefault("abandoned", []).extend(dropped)
        curve = self.group.record.get("curve") or []
        self.group.record["curve"] = [t for t in curve if t.get("status") in FINISHED]
        return len(kept)

    def points(self) -> list[bisect.Point]:
        return [bisect.Point(t["value"], t["passed"], t.get("delivered")) for t in self.trials]

    def run(self) -> bisect.Answer:
        self.group.record["status"] = "running"
        while True:
            step = bisect.decide(self.points(), self.space)
            if isinstance(step, bisect.Answer):
                self.group.record["answer"] = answer_json(step)
                self.group.save()
                return step
            self._trial(step, self.trials, stop_early=True)

    def curve(self, top: float, fractions: tuple[float, ...] = CURVE_FRACTIONS) \
            -> list[dict[str, Any]]:
        """Fixed-rate runs at fractions of `top`: the latency-against-load curve."""
        done = self.group.record.setdefault("curve", [])
        for fraction in fractions:
            value = round(top * fraction) if self.param.integer else float(f"{top * fraction:.4g}")
            if any(t["fraction"] == fraction or t["value"] == value for t in done) \
                    or value <= 0:
                continue
            self._trial(value, done, stop_early=False, fraction=fraction)
        return done

    def _trial(self, value: float, into: list[dict[str, Any]], stop_early: bool,
               **extra: Any) -> dict[str, Any]:
        v: int | float = int(value) if self.param.integer else value
        plan = self.scenario.plan([(self.param, v)], self.duration)
        record: dict[str, Any] = {"value": v, **extra, "status": "running",
                                  "started": time.time()}
        into.append(record)
        self.group.save()
        settings = TrialSettings(**{**self.settings.__dict__, "stop_early": stop_early})
        record.update(run_trial(plan, settings, self.console))
        self.group.save()
        self.on_trial(record)
        if record["status"] == "interrupted":
            self.group.record["status"] = "interrupted"
            self.group.save()
            raise SearchInterrupted()
        if record["status"] in ("aborted", "incomplete"):  # no verdict to bisect on
            self.group.record["status"] = "aborted"
            self.group.save()
            raise RunAborted(f"trial {self.param.text}={v} {record['status']}: {record['reason']} "
                             f"(run {record['run_id']}); fix it and resume with --resume "
                             f"{self.group.id}")
        return record

    def finish(self) -> None:
        self.group.record["status"] = "done"
        self.group.record["ended"] = time.time()
        self.group.save()


def answer_json(a: bisect.Answer) -> dict[str, Any]:
    return {"status": a.status, "last_pass": a.last_pass, "first_fail": a.first_fail,
            "precision": None if a.precision is None else round(a.precision, 5)}
