"""How long a component's bursts of IO take: a checkpoint's save and restore (kind
checkpoint). A burst is a run of status intervals with IO; its first and last intervals count
only the part the burst's own middle rate needs for their bytes, so a save that starts late
in one second and ends early in another is not rounded up to whole seconds."""

from __future__ import annotations


class Bursts:
    def __init__(self) -> None:
        self.current: list[tuple[int, float]] = []  # (bytes, dt) of the burst under way
        self.longest = 0.0
        self.seconds = 0.0
        self.nbytes = 0
        self.count = 0

    def add(self, ios: int, nbytes: int, dt: float) -> None:
        if ios > 0:
            self.current.append((nbytes, dt))
        else:
            self._close()

    def _close(self) -> None:
        if self.current:
            seconds = duration(self.current)
            self.longest = max(self.longest, seconds)
            self.seconds += seconds
            self.nbytes += sum(b for b, _ in self.current)
            self.count += 1
            self.current = []

    def figures(self) -> dict[str, float | None]:
        """busy_max_s: the longest burst; busy_gbps: GB/s while busy; bursts: how many. A
        burst under way counts as it stands (the live verdict asks every second)."""
        longest, seconds, nbytes, count = self.longest, self.seconds, self.nbytes, self.count
        if self.current:
            now = duration(self.current)
            longest, seconds, count = max(longest, now), seconds + now, count + 1
            nbytes += sum(b for b, _ in self.current)
        return {"busy_max_s": round(longest, 3) if count else None,
                "busy_gbps": round(nbytes / seconds / 1e9, 4) if seconds else None,
                "bursts": float(count)}


def duration(parts: list[tuple[int, float]]) -> float:
    """Seconds of a burst: its middle intervals whole, its edges at the middle's rate."""
    middle = parts[1:-1]
    rate = sum(b for b, _ in middle) / sum(d for _, d in middle) if middle else 0.0
    seconds = sum(d for _, d in middle)
    for b, d in (parts[0], parts[-1]) if len(parts) > 1 else (parts[0],):
        seconds += min(d, b / rate) if rate > 0 else d
    return seconds
