"""The errors of platform operations and timeline actions, in one place (imported by drivers,
actions and the timeline alike; fsbase.py still offers them to older imports)."""

from __future__ import annotations


class ActionFailed(Exception):
    """A platform operation did not work; the message says what and shows its output."""


class StepTimeout(ActionFailed):
    pass
