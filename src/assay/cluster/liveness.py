"""Is a host of a cluster run lost, or only late? Silence, then a probe.

A host is heard when its heartbeat arrives (an SSH host says it is alive twice a second, on
a line of its own: runners/sshfio.py), or, for a runner without one, a status dump of its
fio (a busy controller parses the hosts' big json+ dumps late, so a dump's arrival says
late that a host went quiet; the heartbeat does not lag behind them). A host
silent for LOSS_S while another is heard is asked over SSH (a line down a session kept open
for it, echoed back: nothing spawned): no answer (nor heartbeat) within PROBE_S and it is
lost; an answer and it is only late (counted,
run.json `cluster.late`). A host cut off the network answers nothing, so a cut is declared
within LOSS_S + PROBE_S (3.5 s) of its last heartbeat, and a busy machine loses no host.
A host that answers but whose fio sends nothing for STALL_S is lost too (fio hung).
Runners of recorded output (no clock measured: not a real host) are lost without a probe.
A host whose fio ended badly (fio or its SSH session died) is lost too: `ended_why` says why.

A dump counts from when the host sent it (its timestamp), and silence is measured from the
controller's position on the hosts' clock (now less its lag, `Lag`): a controller behind
its queue of dumps finds every host as late as itself, and loses none for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from assay.runners.base import FioRun, Powers, Runner

LOSS_S = 1.5  # silent this long while another host is heard: probed
PROBE_S = 2.0  # no answer to the probe within this: lost
# no dump parsed for this long, the host answering: lost (fio hung). Well beyond the IO
# freeze of a distributed platform deciding a node is gone (Ceph: ~25 s, osd_heartbeat_grace
# 20 s; docs/platforms.md), in which every fio is silent but its host is there.
STALL_S = 90.0
LAG_S = 1.0  # the controller this far behind the hosts' dumps: lagging (said live, run.json)
# this far behind, it cannot keep up: the run is aborted with that reason, not hosts lost
LAG_ABORT_S = 30.0


class Lag:
    """How far the controller is behind the hosts: the age of the dump it reads now (when its
    host sent it) as it takes it; 0 when it has read everything. Recorded in run.json's
    `cluster.controller_lag`: the worst, and how long it was behind by more than LAG_S."""

    def __init__(self) -> None:
        self.now_s = 0.0
        self.max_s = 0.0
        self.over_s = 0.0  # seconds spent behind by more than LAG_S
        self.episodes = 0  # times it fell behind by more than LAG_S
        self._at = time.monotonic()

    def seen(self, age_s: float) -> None:
        t = time.monotonic()
        if self.now_s > LAG_S:
            self.over_s += t - self._at
        elif age_s > LAG_S:
            self.episodes += 1
        self._at = t
        self.now_s = max(0.0, age_s)
        self.max_s = max(self.max_s, self.now_s)

    def note(self) -> str:
        """The console's word on it, while it lags."""
        return f"controller {self.now_s:.1f} s behind the hosts" if self.now_s > LAG_S else ""

    def record(self) -> dict[str, float | int]:
        return {"bound_s": LAG_S, "max_s": round(self.max_s, 3),
                "behind_s": round(self.over_s, 3), "episodes": self.episodes}


class Liveness:
    def __init__(self, runs: dict[str, FioRun], runners: dict[str, Runner],
                 real: Callable[[str], bool], grace: float, gone: Callable[[str], bool],
                 lag: Lag | None = None):
        self.runs = runs
        self.lag = lag or Lag()
        self.gone = gone  # lost, or its fio ended: not heard any more, and rightly
        self.runners = runners
        self.real = real
        now = time.monotonic() + grace  # before the first dump is due
        self.dumped: dict[str, float] = {h: now for h in runs}  # a whole dump arrived
        self.answered: dict[str, float] = {h: now for h in runs}  # a probe answered
        self.probing: set[str] = set()

    def dump(self, host: str, sent: float | None = None) -> None:
        """A whole dump arrived; `sent` (epoch s): when its host sent it, by its timestamp
        (a replay faster than real time sends ahead of our clock: then now)."""
        now = time.monotonic()
        late = 0.0 if sent is None else max(0.0, time.time() - sent)
        self.dumped[host] = now - late

    def position(self) -> float:
        """Now on the hosts' clock as far as the controller has read them (monotonic)."""
        return time.monotonic() - self.lag.now_s

    def heard(self, host: str) -> float:
        """When the host was last heard from (monotonic)."""
        beat = self.runs[host].last_beat
        said = self.dumped[host] if beat is None else beat
        return max(said, self.answered[host])

    def silence(self, host: str) -> float:
        return max(0.0, self.position() - self.heard(host))

    def check(self, waiting: list[str], alone: bool,
              probed: Callable[[str, bool, float], None]) -> list[tuple[str, str]]:
        """The hosts lost now, with why; starts probes of silent ones (their answer comes
        back through `probed(host, answered, silent_s)`, from another thread)."""
        now = self.position()
        fresh = [h for h in waiting if now - self.heard(h) < LOSS_S]
        lost: list[tuple[str, str]] = []
        for h in waiting:
            silent = now - self.heard(h)
            if now - self.dumped[h] >= STALL_S:
                lost.append((h, f"no status from fio for {STALL_S:g} s, the host answering "
                                f"(fio hung?)"))
            elif silent >= LOSS_S and (fresh or alone) and h not in self.probing:
                if not self.real(h):
                    lost.append((h, f"no status from fio for {silent:.1f} s "
                                    f"(host or network down)"))
                    continue
                self.probing.add(h)
                threading.Thread(target=self._probe, args=(h, silent, probed),
                                 daemon=True).start()
        return lost

    def _probe(self, host: str, silent: float,
               probed: Callable[[str, bool, float], None]) -> None:
        began = time.monotonic()
        runner = self.runners[host]
        try:
            ok = runner.ping(PROBE_S) if Powers.SESSION in runner.powers else \
                runner.run(["true"], timeout=PROBE_S).returncode == 0
        except Exception:  # noqa: BLE001 - an unreachable host, however it fails
            ok = False
        # a heartbeat that came while we asked says the same as an answer; and when no other
        # host was heard lately either, this machine is what stalled: not a verdict
        now = self.position()
        others = [h for h in self.runs if h != host and not self.gone(h)]
        ok = ok or self.heard(host) > began or \
            bool(others) and all(now - self.heard(h) >= LOSS_S for h in others)
        probed(host, ok, silent + time.monotonic() - began)

    def answer(self, host: str, ok: bool) -> None:
        self.probing.discard(host)
        if ok:
            self.answered[host] = time.monotonic()


def ended_why(run: FioRun, rc: int) -> str:
    """Why a host's fio ended badly: its SSH session ended (ssh's 255, no status from the
    host), or fio's own status, with the last lines it (or ssh) wrote."""
    tail = run.stderr_tail(2)
    if run.session_ended:
        return "the SSH session ended (ssh exit status 255: connection lost or host " \
               "down) before the host reported fio's end" + (f": {tail}" if tail else "")
    return f"fio ended with status {rc}" + (f": {tail}" if tail else "")
