"""fio's fixed-rate jobs, read from a rendered job file: those whose due times can be
rebuilt (metrics/duetime.py), as the agent that reads their issue logs is told of them
(agent/issuelog.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any


def fio_size(text: str) -> int:
    text = str(text).strip().lower().rstrip("ib")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def fio_time(value: object) -> float:
    """Seconds of a fio time as assay writes them (`10s`, `1500ms`, `250us`, a number)."""
    text = str(value or "0").strip()
    for unit, scale in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float(text)


def min_block(options: Mapping[str, Any]) -> int:
    if options.get("bssplit"):
        return min(fio_size(part.split("/")[0]) for part in str(options["bssplit"]).split(":"))
    return fio_size(str(options.get("bs") or "4k").split(",")[0].split("-")[0])


@dataclass
class PacedJob:
    """A fixed-rate fio job whose issue log the agent reads (agent/issuelog.py's job)."""

    name: str
    bps: int
    min_bs: int
    poisson: bool
    thread_number: int
    direction: int  # 0 read, 1 write
    start_s: float = 0.0  # its startdelay: when its second 1 begins on the run's axis
    log: str = ""  # its write_iolog, relative to fio's working directory
    randseed: int = 0

    def spec(self) -> dict[str, Any]:
        """The agent's description of the job."""
        return asdict(self)


# fio's issue log of a file engine holds the files' `add` lines only, no operations (3.33)
FILE_ENGINES = ("filecreate", "filestat", "filedelete", "dircreate", "dirstat", "dirdelete")


def paced_jobs(jobs: Mapping[str, Mapping[str, Any]]) -> dict[str, PacedJob]:
    """The jobs (name -> options, in job-file order) whose due times can be rebuilt."""
    return {p.name: p for p in paced_list(list(jobs.items()))}


def paced_list(jobs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[PacedJob]:
    """The jobs (in job-file order; a cluster host's instances repeat a name) whose due
    times can be rebuilt: a fixed rate, one direction, one clone. fio numbers jobs from 1 in
    file order, clones included."""
    out: list[PacedJob] = []
    number = 0
    for name, o in jobs:
        clones = int(o.get("numjobs") or 1)
        number += 1
        this, number = number, number + clones - 1
        rw = str(o.get("rw") or o.get("readwrite") or "read")
        if clones > 1 or "rw" in rw.replace("write", "") or "trim" in rw:
            continue
        if str(o.get("ioengine") or "") in FILE_ENGINES:
            continue
        rate, iops = o.get("rate"), o.get("rate_iops")
        if not rate and not iops or "," in str(rate or iops):
            continue
        bs = min_block(o)
        bps = fio_size(str(rate)) if rate else int(float(str(iops))) * bs
        process = str(o.get("rate_process") or "linear")
        if bps <= 0 or process not in ("linear", "poisson"):
            continue
        out.append(PacedJob(name, bps, bs, process == "poisson", this,
                            1 if "write" in rw else 0, fio_time(o.get("startdelay")),
                            str(o.get("write_iolog") or ""), int(o.get("randseed") or 0)))
    return out


def job_sections(text: str) -> list[tuple[str, dict[str, str]]]:
    """The jobs of a rendered fio job file, in order, each with the [global] options under
    its own (a cluster host's instances repeat a section name: kept apart)."""
    glob: dict[str, str] = {}
    out: list[tuple[str, dict[str, str]]] = []
    current: dict[str, str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("[") and line.endswith("]"):
            name = line[1:-1].strip()
            current = glob if name == "global" else {}
            if name != "global":
                out.append((name, current))
            continue
        if current is not None:
            key, _, value = line.partition("=")
            current[key.strip()] = value.strip()
    return [(name, {**glob, **options}) for name, options in out]


def logged_jobs(jobfile: str) -> list[PacedJob]:
    """The fixed-rate jobs of a job file that write an issue log: the agent's list."""
    return [p for p in paced_list(job_sections(jobfile)) if p.log]
