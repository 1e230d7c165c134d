"""Medians of per-second values (X-Ray judges the median of its 1 s samples): of a list, and
a running one in memory that does not grow with the run.
"""

from __future__ import annotations

import bisect


def median(values: list[float]) -> float | None:
    if not values:
        return None
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


class RunningMedian:
    """The median of values added one at a time, in memory that does not grow with their
    number: values are counted per 3 significant digits (within 0.5 %), so there are at most
    900 counters per decade of values. The keys stay sorted and a cursor follows the middle
    one as values come, so asking for the median every second costs the same all run."""

    def __init__(self) -> None:
        self._counts: dict[float, int] = {}
        self._keys: list[float] = []  # sorted
        self._i = 0  # the key that holds the lower middle value
        self._below = 0  # values under self._keys[self._i]
        self._n = 0

    def add(self, x: float) -> None:
        key = float(f"{x:.3g}")
        if key not in self._counts:
            at = bisect.bisect_left(self._keys, key)
            self._keys.insert(at, key)
            self._counts[key] = 0
            if self._n and at <= self._i:
                self._i += 1
        self._counts[key] += 1
        self._n += 1
        if key < self._keys[self._i]:
            self._below += 1
        rank = (self._n - 1) // 2  # move the cursor to the key holding this rank
        while self._below > rank:
            self._i -= 1
            self._below -= self._counts[self._keys[self._i]]
        while self._below + self._counts[self._keys[self._i]] <= rank:
            self._below += self._counts[self._keys[self._i]]
            self._i += 1

    def __len__(self) -> int:
        return self._n

    def value(self) -> float | None:
        if not self._n:
            return None
        lo = self._keys[self._i]
        # the upper middle value (n even) is in the same key or the next one
        hi = lo if self._below + self._counts[lo] > self._n // 2 else self._keys[self._i + 1]
        return (lo + hi) / 2
