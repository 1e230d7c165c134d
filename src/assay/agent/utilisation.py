"""`utilisation`: the host's CPU, memory and network each second, as rows.

    {"t": 1795797400.51, "cpu_pct": 41.2, "cpu_user_pct": 30.1, "cpu_system_pct": 9.8,
     "cpu_iowait_pct": 1.3, "mem_used_pct": 52.0, "net.eth0.rx_mbps": 12.5, ...}

A platform that holds its IOPS at 95 % CPU is not the one that holds them at 30 %: X-Ray
charts each node's CPU and network during every test, Jetstress reports host CPU and memory.
Read from /proc; each `sample()` covers the time since the previous one. `t` is the host's
clock (the controller places a row by when it arrives). The same Probe measures this machine
(assay.hosts.utilisation).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .stopping import stop_event

INTERVAL_S = 1.0
PROC = Path("/proc")


def _cpu() -> list[int]:
    """Jiffies of the aggregate cpu line: user nice system idle iowait irq softirq steal."""
    first = (PROC / "stat").read_text().splitlines()[0].split()
    return [int(x) for x in first[1:9]]


def _memory() -> dict[str, int]:
    out = {}
    for line in (PROC / "meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        out[key] = int(rest.split()[0]) * 1024
    return out


def _net() -> dict[str, tuple[int, int]]:
    """NIC -> (received, sent) bytes; the loopback is left out."""
    out = {}
    for line in (PROC / "net" / "dev").read_text().splitlines()[2:]:
        name, _, rest = line.partition(":")
        name = name.strip()
        if name == "lo":
            continue
        cols = rest.split()
        out[name] = (int(cols[0]), int(cols[8]))
    return out


class Probe:
    def __init__(self) -> None:
        self._cpu = _cpu()
        self._net = _net()
        self._t = time.monotonic()

    def sample(self) -> dict[str, float]:
        """Utilisation since the last call: `cpu_pct`, `cpu_user_pct`, `cpu_system_pct`,
        `cpu_iowait_pct`, `mem_used_pct`, and `net.<nic>.rx_mbps` / `tx_mbps` (MB/s)."""
        cpu, net, now = _cpu(), _net(), time.monotonic()
        d = [b - a for a, b in zip(self._cpu, cpu)]  # noqa: B905 - python 3.9 there
        total = sum(d) or 1
        user, nice, system, idle, iowait, irq, softirq, steal = d
        mem = _memory()
        dt = max(now - self._t, 1e-3)
        out = {
            "cpu_pct": round(100.0 * (total - idle - iowait) / total, 2),
            "cpu_user_pct": round(100.0 * (user + nice) / total, 2),
            "cpu_system_pct": round(100.0 * (system + irq + softirq) / total, 2),
            "cpu_iowait_pct": round(100.0 * iowait / total, 2),
            "mem_used_pct": round(100.0 * (1 - mem.get("MemAvailable", 0) /
                                           max(mem.get("MemTotal", 1), 1)), 2),
        }
        for nic, (rx, tx) in net.items():
            rx0, tx0 = self._net.get(nic, (rx, tx))
            out[f"net.{nic}.rx_mbps"] = round((rx - rx0) / dt / 1e6, 4)
            out[f"net.{nic}.tx_mbps"] = round((tx - tx0) / dt / 1e6, 4)
        self._cpu, self._net, self._t = cpu, net, now
        return out


def main(argv: list[str]) -> int:
    interval = float(argv[0]) if argv else INTERVAL_S
    stop = stop_event()
    try:
        probe = Probe()
    except (OSError, ValueError, IndexError) as e:
        print(f"utilisation: cannot read /proc: {e}", file=sys.stderr)
        return 2
    try:
        while not stop.wait(interval - time.time() % interval):  # on the second
            row = {"t": round(time.time(), 3), **probe.sample()}
            sys.stdout.write(json.dumps(row, separators=(",", ":")) + "\n")
            sys.stdout.flush()
    except BrokenPipeError:  # the controller went away: nobody to tell
        return 1
    return 0
