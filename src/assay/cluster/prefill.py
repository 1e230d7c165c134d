"""A cluster run's prefill: every host writes its stale files at once, and reuses the others.

A host's file is reused, as a local one is (prefill.py), when assay wrote it whole, with the
data pattern this run writes, and it is still there at its size. Each instance directory on a
host (`<host>.<k>/`, assay's own: cluster/hostcheck.py marks it) keeps a manifest of what assay
prefilled there, `.assay-prefill`, one line per file: `name size hash`. The hash is that of
the file's section of the host's prefill job file (its size, pattern and data options).
Before any write, the files about to be written leave the manifest (a prefill cut short
leaves no file to reuse); they join it when the prefill ends well. `--fresh` rewrites all.
"""

from __future__ import annotations

import hashlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from assay.cluster.group import RunnerGroup
from assay.console import LiveProgress
from assay.exitcodes import RunAborted
from assay.plan import PREFILL_JOB, Plan
from assay.plan.model import PREFILL_PREFIX
from assay.results.rundir import RunDir
from assay.scenario.units import format_size

MANIFEST = ".assay-prefill"
# $1 the target, $2 how many instance directories follow, then the files to size: prints
# "m <manifest line>" per manifest line, then "s <size> <file>" per file that exists
STATE = ('d=$1; n=$2; shift 2; while [ "$n" -gt 0 ]; do [ -f "$d/$1/' + MANIFEST + '" ] && '
         'sed "s/^/m /" "$d/$1/' + MANIFEST + '"; n=$((n - 1)); shift; done; '
         'for f; do [ -f "$d/$f" ] && echo "s $(stat -c %s -- "$d/$f") $f"; done; :')
# $1 the target, then pairs: an instance directory and its manifest's text
WRITE = ('d=$1; shift; while [ $# -ge 2 ]; do printf "%s" "$2" > "$d/$1/' + MANIFEST + '.tmp" '
         '&& mv -f -- "$d/$1/' + MANIFEST + '.tmp" "$d/$1/' + MANIFEST + '" || exit 3; '
         'shift 2; done')


@dataclass
class HostFiles:
    """One host's files: what its prefill job file would write, and what can be reused."""

    host: str
    target: str
    files: list[tuple[str, int]]
    hashes: dict[str, str]
    ends: dict[str, list[tuple[str, int]]]  # each file's paths to check, with their size
    kept: dict[str, tuple[int, str]] = field(default_factory=dict)  # manifest: size, hash
    sizes: dict[str, int] = field(default_factory=dict)  # what exists there now

    @property
    def on_device(self) -> bool:
        """A raw device (`assay_device`): no directory to keep a manifest in; always written."""
        return self.target.startswith("/dev/")

    def stale(self, fresh: bool) -> list[tuple[str, int]]:
        return [(n, s) for n, s in self.files
                if fresh or self.on_device or not self.reusable(n, s)]

    def reusable(self, name: str, size: int) -> bool:
        return self.kept.get(name) == (size, self.hashes[name]) and all(
            self.sizes.get(p, -1) >= want for p, want in self.ends[name])

    def manifests(self, names: list[str]) -> list[str]:
        """(instance directory, manifest text) pairs, flattened, for WRITE."""
        out: dict[str, list[str]] = {}
        for name, size in self.files:
            sub = name.split("/", 1)[0]
            out.setdefault(sub, [])
            if name in names:
                out[sub].append(f"{name} {size} {self.hashes[name]}\n")
        return [x for sub, lines in out.items() for x in (sub, "".join(lines))]


def host_files(plan: Plan, host: str) -> HostFiles:
    assert plan.cluster is not None
    hp = plan.cluster.hosts[host]
    text = plan.jobfiles[host][PREFILL_JOB]
    sets = plan.file_sets
    hashes, ends = {}, {}
    for name, size in hp.files:
        hashes[name] = section_hash(text, f"{PREFILL_PREFIX}{name}")
        count = sets.get(name.split("/", 1)[-1], 1)  # a set of small files: its two ends
        ends[name] = [(name, size)] if count == 1 else \
            [(name.replace("$filenum", str(i)), size // count) for i in (0, count - 1)]
    return HostFiles(host, str(hp.host.target), list(hp.files), hashes, ends)


def section_hash(jobfile: str, section: str) -> str:
    """A hash of one section of a job file (its file's size, pattern and data options)."""
    body = jobfile.split(f"\n[{section}]\n", 1)[-1].split("\n[", 1)[0]
    return hashlib.sha256(f"[{section}]\n{body}".encode()).hexdigest()[:16]


def _read(group: RunnerGroup, hf: HostFiles) -> None:
    if hf.on_device:
        return
    subs = sorted({n.split("/", 1)[0] for n, _ in hf.files})
    paths = [p for n, _ in hf.files for p, _ in hf.ends[n]]
    r = group.runners[hf.host].run(["sh", "-c", STATE, "assay-prefill", hf.target,
                                    str(len(subs)), *subs, *paths])
    for line in r.stdout.splitlines() if r.returncode == 0 else []:
        kind, _, rest = line.partition(" ")
        parts = rest.split(" ")
        if kind == "m" and len(parts) == 3 and parts[1].isdigit():
            hf.kept[parts[0]] = (int(parts[1]), parts[2])
        elif kind == "s" and len(parts) >= 2 and parts[0].isdigit():
            hf.sizes[" ".join(parts[1:])] = int(parts[0])


def _write(group: RunnerGroup, hf: HostFiles, names: list[str]) -> None:
    if hf.on_device:
        return
    r = group.runners[hf.host].run(["sh", "-c", WRITE, "assay-prefill", hf.target,
                                    *hf.manifests(names)])
    if r.returncode != 0:
        raise RunAborted(f"{hf.host}: cannot write the prefill manifest in {hf.target}: "
                         f"{r.stderr.strip() or r.returncode}")


def _each(fn: Any, items: list[Any]) -> list[Any]:
    if not items:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(items))) as pool:
        return list(pool.map(fn, items))


def prefill(plan: Plan, group: RunnerGroup, rd: RunDir, console: Console,
            fresh: bool = False) -> dict[str, Any]:
    """Every host writes its stale files at once; run.json's `prefill`, with each host's."""
    assert plan.cluster is not None
    hosts = [host_files(plan, h) for h in plan.cluster.hosts]
    _each(lambda hf: _read(group, hf), hosts)
    todo = {hf.host: hf.stale(fresh) for hf in hosts}
    total = sum(s for t in todo.values() for _, s in t)
    per_host = {hf.host: {"files": len(todo[hf.host]),
                          "bytes": sum(s for _, s in todo[hf.host]),
                          "reused_files": len(hf.files) - len(todo[hf.host])} for hf in hosts}
    info: dict[str, Any] = {"files": sum(len(t) for t in todo.values()), "bytes": total,
                            "reused_files": sum(v["reused_files"] for v in per_host.values()),
                            "fresh": fresh, "hosts": per_host}
    if not total:
        rd.event("prefill", outcome="reused", files=info["reused_files"])
        console.print(f"prefill: reusing {info['reused_files']} files on "
                      f"{len(hosts)} hosts; --fresh rewrites them")
        info["seconds"] = 0.0
        return info
    # the files about to be written leave the manifests first: a cut prefill reuses none
    _each(lambda hf: _write(group, hf, [n for n, _ in hf.files
                                        if n not in dict(todo[hf.host])]),
          [hf for hf in hosts if todo[hf.host]])
    t0 = time.monotonic()
    rd.event("prefill", outcome="started", bytes=total, files=info["files"],
             hosts=sum(1 for t in todo.values() if t), reused_files=info["reused_files"])
    sections = {h: [f"{PREFILL_PREFIX}{n}" for n, _ in t] for h, t in todo.items() if t}
    fio = group.start(PREFILL_JOB, {}, sections=sections)
    fio.started  # noqa: B018 - records the skew of the prefill phase
    try:
        with LiveProgress(console, "prefill", total) as bar:
            for doc in fio.documents():
                if doc is None:
                    continue
                written = sum(j["write"]["io_bytes"] for j in doc.get("jobs", []))
                bar.update(written, f"{format_size(written)} "
                                    f"{written / max(time.monotonic() - t0, 1e-3) / 1e6:.0f}"
                                    f" MB/s on {len(fio.active)} hosts")
    except BaseException:
        fio.stop()
        fio.wait()
        raise
    rc = fio.wait()
    if group.lost or rc != 0:
        why = "; ".join(f"{h}: {v['reason']}" for h, v in group.lost.items()) \
            or fio.stderr_tail()
        raise RunAborted(f"prefill failed: {why}")
    _each(lambda hf: _write(group, hf, [n for n, _ in hf.files]), hosts)
    info["seconds"] = round(time.monotonic() - t0, 2)
    rd.event("prefill", outcome="done", seconds=info["seconds"])
    return info
