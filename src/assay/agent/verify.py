"""`verify SPEC_FILE`: a pass over a finished run's integrity blocks on this host, against the
journal its writers left, which the controller sends (`assay verify RUN --hosts`).

SPEC_FILE, in the run's remote directory, is a JSON object: {"areas": [{"workload", "path",
"block", "blocks", "writer"}, ...], "direct", "gens": {workload: its journal's generations,
zlib and base64}}. Rows: {"pid"} first, {"progress": bytes read} at most once a second and
once at the end, then {"pass": record}, or {"error"} when an area cannot be checked (its file
gone, or rewritten by a later run). SIGTERM or stdin closing stops the pass: its record says
interrupted, with what it had counted.
"""

from __future__ import annotations

import json
import os
import sys
import time
from array import array
from pathlib import Path

from .area import Area, later_writer
from .blockpass import run_pass
from .integrity import emit, unpack
from .stopping import leave, stop_event

LABEL = "assay verify"


def main(argv: list[str]) -> int:
    try:
        spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
        areas = [Area(a["workload"], Path(a["path"]), int(a["block"]), int(a["blocks"]),
                      int(a["writer"])) for a in spec["areas"]]
        gens = {w: array("I", unpack(text)) for w, text in spec["gens"].items()}
    except (IndexError, OSError, ValueError, KeyError, TypeError) as e:
        print(f"verify: a JSON spec file of areas and journals is needed: {e}", file=sys.stderr)
        return 2
    stop = stop_event()
    emit({"pid": os.getpid()})
    for a in areas:
        why = later_writer(a) or (None if len(gens.get(a.workload, ())) == a.blocks else
                                  f"the journal of workload {a.workload!r} does not match its "
                                  f"{a.blocks} blocks")
        if why:
            emit({"error": why})
            leave(1)
    done, last = [0], [time.monotonic()]

    def progress(n: int) -> None:
        done[0] += n
        if time.monotonic() - last[0] >= 1.0:
            last[0] = time.monotonic()
            emit({"progress": done[0]})

    record = run_pass(areas, gens, bool(spec.get("direct", True)), LABEL, stop=stop,
                      progress=progress)
    emit({"progress": done[0]})  # all it read: the controller's bar ends where the pass did
    emit({"pass": record})
    leave(0)
    return 0
