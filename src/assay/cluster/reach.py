"""Is a silent host still there? A TCP connection to its SSH port, tried in the background.

fio reports nothing while all its IO is stuck: on Ceph, every client's IO freezes for ~25 s
while the monitors decide that a lost node's OSDs are down, and every fio goes silent. A host
that still accepts a connection is then frozen IO, measured as such, not a lost host; a host
that does not (powered off, its link cut) is lost.
"""

from __future__ import annotations

import socket
import threading
import time

TIMEOUT_S = 1.2  # asked after 1 s of silence: the answer is in before the 2.5 s limit


class Reach:
    def __init__(self, targets: dict[str, tuple[str, int]]):
        self.targets = targets
        self.ok: dict[str, float] = {}  # host -> monotonic time of its last answer
        self.failed: dict[str, float] = {}  # host -> when a probe last went unanswered
        self.busy: set[str] = set()
        self.lock = threading.Lock()

    def answers(self, host: str, since: float) -> bool:
        """False once a probe started after `since` (when the host fell silent) got no answer
        and none answered after it; True meanwhile (a probe is started if none runs)."""
        if host not in self.targets:
            return False
        with self.lock:
            failed = self.failed.get(host, 0.0)
            if failed > since and failed > self.ok.get(host, 0.0):
                return False
            if host not in self.busy:
                self.busy.add(host)
                threading.Thread(target=self._probe, args=(host,), daemon=True).start()
            return True

    def _probe(self, host: str) -> None:
        began = time.monotonic()
        try:
            with socket.create_connection(self.targets[host], timeout=TIMEOUT_S):
                answered = True
        except OSError:
            answered = False
        with self.lock:
            (self.ok if answered else self.failed)[host] = began
            self.busy.discard(host)
