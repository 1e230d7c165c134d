"""pgbench's per-transaction logs folded into one small row per second: on a host, by its
agent (pgbench.py), and on this machine for a local run (postgres/load.py), so both make the
same seconds (postgres/hostrows.py makes them samples).

Each `pgbench -l` line is one transaction
(`client tx_no latency_us|skipped|failed script_no end_epoch end_us [schedule_lag_us] ...`);
only per-second counts and histograms leave the host. Latencies go into buckets of 128 per
power of two (`bucket`: under 0.4 % error), so hosts, seconds and threads merge exactly. With
`-R`, pgbench measures latency from the transaction's scheduled start: it already is the
latency from the due time; the schedule lag is how late the transaction began.

A row: {"s": k, "streams": {"tx": {"n": commits, "f": failed, "ls": latency sum ns,
"lm": latency max ns, "h": {bucket: count}, "gs"/"gm"/"g": the schedule lag's}, TYPE: ...}}
for second k after pgbench's start. pgbench writes its logs through stdio buffers: a second
is emitted once it is GRACE_S old; a transaction that arrives for an emitted second counts in
the next one.
"""

from __future__ import annotations

from pathlib import Path

GRACE_S = 3
SUB_BUCKET_BITS = 7


def bucket(ns: int) -> int:
    """The bucket value of a latency: 2^7 buckets per power of two, the bucket's middle."""
    bits = ns.bit_length()
    if bits <= SUB_BUCKET_BITS + 1:
        return ns
    shift = bits - SUB_BUCKET_BITS - 1
    return ((ns >> shift) << shift) + (1 << (shift - 1))


def _second() -> dict:
    return {"n": 0, "f": 0, "ls": 0, "lm": 0, "h": {}, "gs": 0, "gm": 0, "g": {}}


class Fold:
    """Reads the growing logs `prefix.*` and hands out finished seconds as rows."""

    def __init__(self, prefix: Path, start: float, streams: dict[int, str], lag: bool):
        self.prefix = prefix
        self.start = start  # pgbench's launch (epoch s): second k is [start+k, start+k+1)
        self.streams = streams  # script number -> transaction type (the TPC-C-like mix)
        self.lag = lag
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}
        self._pending: dict[int, dict[str, dict]] = {}
        self._next = 0
        self.totals = {"commits": 0, "failed": 0, "skipped": 0}

    def _read(self) -> None:
        for path in sorted(self.prefix.parent.glob(self.prefix.name + ".*")):
            with open(path, "rb") as f:
                f.seek(self._offsets.get(path, 0))
                chunk = f.read()
            self._offsets[path] = self._offsets.get(path, 0) + len(chunk)
            lines = (self._partial.pop(path, b"") + chunk).split(b"\n")
            if lines[-1]:
                self._partial[path] = lines[-1]
            for line in lines[:-1]:
                self._line(line.split())

    def _line(self, f: list[bytes]) -> None:
        if len(f) < 6:
            return
        end = int(f[4]) + int(f[5]) / 1e6
        sec = max(int(end - self.start), self._next)
        streams = self._pending.setdefault(sec, {})
        script = int(f[3])
        for name in ["tx"] + ([self.streams[script]] if script in self.streams else []):
            s = streams.setdefault(name, _second())
            if f[2] in (b"skipped", b"failed"):
                s["f"] += 1
                continue
            ns = int(f[2]) * 1000
            s["n"] += 1
            s["ls"] += ns
            s["lm"] = max(s["lm"], ns)
            b = bucket(ns)
            s["h"][b] = s["h"].get(b, 0) + 1
            if self.lag and len(f) > 6:
                lag = int(f[6]) * 1000
                s["gs"] += lag
                s["gm"] = max(s["gm"], lag)
                b = bucket(lag)
                s["g"][b] = s["g"].get(b, 0) + 1
        word = {b"skipped": "skipped", b"failed": "failed"}.get(f[2], "commits")
        self.totals[word] += 1

    def rows(self, now: float, final: bool = False) -> list[dict]:
        """The rows of every second finished by `now` (all of them when `final`)."""
        self._read()
        last = max(self._pending, default=-1) if final else int(now - self.start) - GRACE_S
        out = []
        while self._next <= last:
            out.append({"s": self._next, "streams": self._pending.pop(self._next, {})})
            self._next += 1
        return out
