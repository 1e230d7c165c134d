"""An instance's share of a cluster plan: its sub-directory on its host, its streams moved
there and delayed, its own random seed. Placement (placement.py) and failover (failover.py)
both lay out instances with these."""

from __future__ import annotations

import copy
import re
from dataclasses import replace

from assay.fio.jobfile import FioJob, fio_seconds
from assay.hosts.inventory import Host
from assay.plan.model import Plan
from assay.workloads.base import DataFile, Stream

UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def host_dir(host: str, k: int) -> str:
    """The sub-directory of instance `k` on `host`: unique per host and instance."""
    return f"{UNSAFE.sub('_', host)[:48]}.{k}"


def in_subdir(streams: list[Stream], subdir: str) -> None:
    """A workload's files go to `subdir/` of the target (e.g. its own btrfs subvolume)."""
    moved: set[int] = set()  # streams share a file (a database's reads and writes): move it once
    for s in streams:
        for f in s.files:
            if id(f) not in moved:
                moved.add(id(f))
                f.name = f"{subdir}/{f.name}"
        for job in s.jobs:
            if "filename" in job.options:
                names = str(job.options["filename"]).split(":")
                job.options["filename"] = ":".join(f"{subdir}/{n}" for n in names)


def own_copy(streams: list[Stream]) -> list[Stream]:
    """Streams an instance may change: their files (one its streams share stays one), jobs and
    options copied. A deep copy of every option took most of a 1,024-host plan; options
    hold numbers and text only, so a copy of each job's dict is one of its own."""
    files: dict[int, DataFile] = {}
    return [replace(s, files=[files.setdefault(id(f), replace(f)) for f in s.files],
                    jobs=[FioJob(j.name, dict(j.options)) for j in s.jobs],
                    components=copy.deepcopy(s.components))
            for s in streams]


def instance_streams(streams: list[Stream], subdir: str, delay: float, seed: int | None,
              warmup: float = 0.0, duration: float = 0.0) -> list[Stream]:
    out = own_copy(streams)
    in_subdir(out, subdir)
    for s in out:
        for job in s.jobs:
            job.options.pop("write_lat_log", None)  # instances would share a log name
            if "write_iolog" in job.options:  # the issue log: one per instance
                job.options["write_iolog"] = f"{subdir}.{job.options['write_iolog']}"
            if seed is not None:  # a second instance on a host: its own random sequence
                job.options["randseed"] = seed
            if delay:
                start = float(str(job.options.get("startdelay", "0")).rstrip("s") or 0)
                job.options["startdelay"] = fio_seconds(start + delay)
                if warmup and duration and "runtime" not in job.options:
                    # its own warm-up, not graded: fio counts no IO (lat_ns.N) in ramp_time,
                    # then runs the measured time (ramp_time adds to runtime)
                    job.options["ramp_time"] = fio_seconds(warmup)
                    job.options["runtime"] = fio_seconds(duration)
    return out


def ranks(placed: dict[str, list[Host]]) -> dict[str, dict[str, int]]:
    """workload -> host name -> the host's index among the workload's hosts: looked up, not
    searched (on.index() once per host made a plan quadratic in hosts)."""
    return {w: {h.name: i for i, h in enumerate(on)} for w, on in placed.items()}


def delays(plan: Plan, workload: str, nth: int) -> float:
    """The start delay of a workload's `nth` instance cluster-wide (`stagger`)."""
    return float(plan.resolved.workloads[workload].stagger) * nth


def reseed(text: str, seed: int, new: int) -> str:
    """Each host its own random seed (offsets, buffer contents): identical data on every
    host would flatter a platform that dedupes across them."""
    return text.replace(f"\nrandseed={seed}\n", f"\nrandseed={new}\n", 1)
