"""The integrity writer: a stream of self-describing blocks beside fio's load.

One thread per writing workload picks a random block of its file, gives it the next generation,
writes it with O_DSYNC (and O_DIRECT where the target takes it), and only once the write
returns records it in the journal: the journal holds acknowledged writes, nothing else. A
failed write makes the block "unknown" (it may hold the old block, the new one or garbage) and
is counted. The lock is held around each write, so a verify pass that takes it per chunk sees
the disk and the journal agree.
"""

from __future__ import annotations

import random
import threading
import time

from .area import Area, aligned
from .block import fill
from .journal import Journal

PREFILL_CHUNK = 1 << 20
FLUSH_S = 0.2  # journal log flushes
FIRST_GENERATION = 1


class Writer:
    def __init__(self, area: Area, journal: Journal, rate: float, direct: bool, seed: int):
        self.area = area
        self.journal = journal
        self.rate = rate
        self.direct = direct
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.generation = FIRST_GENERATION
        self.acknowledged = 0
        self.errors = 0
        self.last_error = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def prefill(self) -> None:
        """Write every block at the first generation, sync, and journal them all."""
        a = self.area
        dev, self.direct = a.open_write(self.direct, create=True)
        per = max(1, PREFILL_CHUNK // a.block)
        buf = aligned(per * a.block)
        mv = memoryview(buf)
        try:
            for first in range(0, a.blocks, per):
                n = min(per, a.blocks - first)
                for i in range(n):
                    fill(mv, i * a.block, a.block, (first + i) * a.block, FIRST_GENERATION,
                         a.writer)
                with mv[:n * a.block] as part:  # released on ENOSPC too: `buf` closes
                    dev.write(part, first * a.block)
            dev.sync()
        finally:
            mv.release()
            buf.close()
            dev.close()
        for b in range(a.blocks):
            self.journal.gens[b] = FIRST_GENERATION
        self.journal.checkpoint()

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"integrity-{self.area.workload}",
                                        daemon=True)
        self._thread.start()

    def stop(self, wait: float = 10.0) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(wait)
        with self.lock:
            self.journal.flush()

    def _run(self) -> None:
        a = self.area
        dev, _ = a.open_write(self.direct)
        buf = aligned(a.block)
        mv = memoryview(buf)[:a.block]
        interval = 1.0 / self.rate
        due = last_flush = time.monotonic()
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if due > now and self._stop.wait(due - now):
                    break
                due = max(due + interval, time.monotonic() - 1.0)  # no burst after a stall
                block = self.rng.randrange(a.blocks)
                self.generation += 1
                fill(mv, 0, a.block, block * a.block, self.generation, a.writer)
                with self.lock:
                    try:
                        dev.write(mv, block * a.block)
                    except OSError as e:
                        self.journal.forget(block)
                        self.errors += 1
                        self.last_error = f"{e.strerror or e} at offset {block * a.block}"
                    else:
                        self.journal.ack(block, self.generation)
                        self.acknowledged += 1
                    if time.monotonic() - last_flush >= FLUSH_S:
                        self.journal.flush()
                        last_flush = time.monotonic()
        finally:
            mv.release()
            buf.close()
            dev.close()
