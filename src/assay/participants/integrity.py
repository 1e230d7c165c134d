"""Integrity mode's writers and verify passes (integrity/): every acknowledged write journaled
while the load runs, every block verified at its end (docs/integrity.md)."""

from __future__ import annotations

from typing import Any

from assay.integrity import lifecycle
from assay.participants.base import ParticipantBase


class Integrity(ParticipantBase):
    name = "integrity"

    def __init__(self, session: lifecycle.AnySession, seconds: float):
        self.session = session
        self.seconds = seconds  # the load's end on its axis: the final pass's time

    def prefill(self) -> None:
        self.session.prefill()  # each area written whole, before the writers journal it

    def start(self) -> None:
        self.session.start()

    def end(self, t: float) -> None:
        self.seconds = t

    def finish(self, now: float, rc: int) -> list[Any]:
        self.session.finish(self.seconds)  # the writers stop, then the final pass
        return []

    def collect(self, status: str) -> dict[str, Any] | None:
        """Before the session's clean-up, which may remove a temporary target."""
        return lifecycle.close(self.session, status)
