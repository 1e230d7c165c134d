"""`integrity SPEC`: integrity mode's writers and verify passes on this host.

SPEC is a JSON object: {"areas": [{"workload", "path", "block", "blocks", "writer"}, ...],
"rate", "direct", "seed", "journal", "rbd"} (the journal's directory, relative to the run's remote
directory: the journal stays on the host during the run; `rbd`: {"conf", "client",
"keyring"} when the areas are RBD images, rbdarea.py). The areas are prefilled at once
(a row {"prefilled", "pid"}), then the command takes its orders as signals, because a remote
command's stdin is not ours (hosts/ssh.py) and `kill` reaches a process the same way here and
on a host (ORDERS):

    start   the writers start; a row each second: {"t", "acknowledged", "errors"}
    verify  a pass over every area beside the writers: {"pass": record}
    stop    the writers stop: {"stopped": {workload: counts and journal digest}}
    end     (SIGTERM) the writers stop, each journal comes back compressed
            ({"journal": workload, "gen", "log"}, base64), and the command ends
"""

from __future__ import annotations

import base64
import json
import os
import signal
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

from .area import Area
from .blockpass import run_pass
from .journal import Journal
from .writer import Writer

ROW_S = 1.0
ORDERS = {"start": "ALRM", "verify": "USR1", "stop": "USR2", "end": "TERM"}  # `kill -s`
_OUT = threading.Lock()


def emit(row: dict[str, Any]) -> None:
    with _OUT:
        sys.stdout.write(json.dumps(row, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def main(argv: list[str]) -> int:
    try:
        spec = json.loads(argv[0])
        areas = [Area(a["workload"], Path(a["path"]), int(a["block"]), int(a["blocks"]),
                      int(a["writer"])) for a in spec["areas"]]
    except (IndexError, ValueError, KeyError, TypeError) as e:
        print(f"integrity: a JSON spec of areas is needed: {e}", file=sys.stderr)
        return 2
    journal_dir = Path(spec.get("journal") or "integrity")
    if spec.get("rbd"):  # the areas are RBD images: how to reach the cluster
        from . import rbdarea

        rbdarea.SETTINGS.update({k: str(v) for k, v in spec["rbd"].items()})
    writers: dict[str, Writer] = {}
    began = time.monotonic()
    try:
        for i, a in enumerate(areas):
            w = Writer(a, Journal.create(journal_dir, a.workload, a.blocks),
                       float(spec.get("rate") or 100), bool(spec.get("direct", True)),
                       int(spec.get("seed") or 0) * 1000 + i)
            w.prefill()
            writers[a.workload] = w
    except OSError as e:
        emit({"error": f"prefill: {e.strerror or e}: {e.filename or ''}".rstrip(": ")})
        return 1
    host = Host(areas, writers)
    host.listen()  # before the row that gives our pid: an order's signal must not kill us
    emit({"prefilled": {n: {"direct": w.direct, "blocks": w.area.blocks}
                        for n, w in writers.items()},
          "seconds": round(time.monotonic() - began, 3), "pid": os.getpid()})
    return host.serve()


class Host:
    def __init__(self, areas: list[Area], writers: dict[str, Writer]):
        self.areas = areas
        self.writers = writers
        self.done = threading.Event()
        self.writing = False
        self.verifying = threading.Lock()  # one pass at a time
        self.passes: list[threading.Thread] = []
        self.orders: list[str] = []
        self.wake = threading.Event()

    def listen(self) -> None:
        """Take orders from now on (signals queue them for serve)."""
        by_signal = {int(getattr(signal, f"SIG{n}")): o for o, n in ORDERS.items()}

        def take(signum: int, _frame: Any) -> None:
            self.orders.append(by_signal[signum])
            self.wake.set()

        for signum in by_signal:
            signal.signal(signum, take)

    def serve(self) -> int:
        orders, wake = self.orders, self.wake
        ended = False
        try:
            while not ended:
                wake.wait(0.2)
                wake.clear()
                while orders:
                    order = orders.pop(0)
                    if order == "start" and not self.writing:
                        for w in self.writers.values():
                            w.start()
                        self.writing = True
                        threading.Thread(target=self._rows, daemon=True).start()
                    elif order == "verify":
                        t = threading.Thread(target=self._verify, args=(len(self.passes),))
                        t.start()
                        self.passes.append(t)
                    elif order == "stop":
                        self._stop()
                    elif order == "end":
                        ended = True
        finally:
            self._stop()
            for t in self.passes:
                t.join()
            self._journals()
        return 0

    def _rows(self) -> None:
        while not self.done.wait(ROW_S):
            emit(self._counts())

    def _counts(self) -> dict[str, Any]:
        return {"t": round(time.time(), 3),
                "acknowledged": {n: w.acknowledged for n, w in self.writers.items()},
                "errors": {n: w.errors for n, w in self.writers.items()}}

    def _verify(self, n: int) -> None:
        with self.verifying:
            record = run_pass(self.areas, {n: w.journal.gens for n, w in self.writers.items()},
                              all(w.direct for w in self.writers.values()), f"pass {n}",
                              locks={n: w.lock for n, w in self.writers.items()})
        emit({"pass": record, "n": n})

    def _stop(self) -> None:
        if self.done.is_set():
            return
        self.done.set()
        for w in self.writers.values():
            w.stop()
        emit({**self._counts(), "stopped": {n: {
            "acknowledged": w.acknowledged, "write_errors": w.errors,
            "direct_writes": w.direct, "journal_digest": w.journal.digest(),
            **({"last_error": w.last_error} if w.last_error else {})}
            for n, w in self.writers.items()}})

    def _journals(self) -> None:
        for n, w in self.writers.items():
            emit({"journal": n, "gen": pack(w.journal.gen_path.read_bytes()),
                  "log": pack(w.journal.log_path.read_bytes())})


def pack(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data)).decode("ascii")


def unpack(text: str) -> bytes:
    return zlib.decompress(base64.b64decode(text))
