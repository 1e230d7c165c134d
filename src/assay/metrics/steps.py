"""A target that steps during the run: staggered instances starting and ending, a cluster's
lost host. Both the sampler's schedule and the summary's windows read it the same way."""

from __future__ import annotations

from collections.abc import Sequence

Steps = tuple[tuple[float, float | None], ...]  # (from this second on, the target)


def stepped(base: float | None, steps: Sequence[tuple[float, float | None]],
            t: float) -> float | None:
    """The target at `t`: `base` until the first step, then each step's value from its time."""
    target = base
    for since, value in steps:
        if t >= since:
            target = value
    return target
