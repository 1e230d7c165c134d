"""fio's own check (`fio --parse-only`) of many job files: a cluster's hosts, each with its own.

A fio started costs about 0.2 s whatever it reads (it calibrates its clock first), so 1,024
hosts checked one file at a time took minutes. Here each distinct text is checked once, many
files to one fio and a few fios at once. fio reads each file of its command line with its own
[global], as if alone, and with --parse-only adds no job (init.c's add_job returns first), so
no check of one job against another (wait_for, a group's options) spans two files. It stops
at the first file it refuses and does not say which: the files of a refused batch are checked
again one by one, so that each complaint is a file's own.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from assay.fio.process import Checks, find_fio, parse_only

BATCH_FILES = 64  # a refused batch costs that many single checks more


def workers() -> int:
    """fio's check is CPU-bound: one fio per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 2


def check_texts(texts: Sequence[str], names: Sequence[str], env: Mapping[str, str],
                pool: int | None = None) -> list[str | None]:
    """fio's complaint about each job file text (None where fio accepts it), in order. Each
    distinct text is checked once, in a file called as its first `names` entry is (what fio
    quotes where it names the file), by up to `pool` fios at once (one per core)."""
    first: dict[str, int] = {}
    for i, text in enumerate(texts):
        first.setdefault(text, i)
    if not first:
        return []
    find_fio()  # its UserError once, before any thread
    with tempfile.TemporaryDirectory(prefix="assay-check-") as tmp:
        paths: dict[str, Path] = {}
        for k, (text, i) in enumerate(first.items()):
            path = Path(tmp) / str(k) / Path(names[i]).name
            path.parent.mkdir()
            path.write_text(text, encoding="utf-8")
            paths[text] = path
        found = _check(list(paths.values()), env, pool or workers())
    return [found[paths[t]] for t in texts]


def _check(files: list[Path], env: Mapping[str, str],
           pool: int) -> dict[Path, str | None]:
    batches = _batches(files, pool)
    checks = Checks()
    with ThreadPoolExecutor(max_workers=pool, thread_name_prefix="fio-check") as ex:
        try:
            verdicts = list(ex.map(lambda b: parse_only(b, env, checks=checks), batches))
            again = [p for b, v in zip(batches, verdicts, strict=True) if v and len(b) > 1
                     for p in b]
            alone = dict(zip(again, ex.map(lambda p: parse_only(p, env, checks=checks), again),
                             strict=True))
        except BaseException:  # Ctrl-C, SIGTERM: no fio left checking, no batch started
            ex.shutdown(wait=False, cancel_futures=True)
            checks.end()
            raise
    out: dict[Path, str | None] = {}
    for batch, verdict in zip(batches, verdicts, strict=True):
        for path in batch:
            out[path] = alone[path] if len(batch) > 1 and verdict else verdict
    return out


def _batches(files: list[Path], pool: int) -> list[list[Path]]:
    """Files grouped for one fio each: enough groups to keep `pool` fios busy, none larger
    than BATCH_FILES."""
    size = max(1, min(BATCH_FILES, -(-len(files) // pool)))
    return [files[i:i + size] for i in range(0, len(files), size)]
