"""A plan: what a run will do, decided before any IO and never changed afterwards.

The job files are rendered once, here, per host. What differs from one run to the next (the
target directory, whether it takes O_DIRECT) is not written into them: they read it from two
variables that the runner sets when it starts fio, so `assay plan` prints the very file a run
stores, and a user can rerun it by hand:

    ASSAY_TARGET=/mnt/pool/assay ASSAY_DIRECT=1 fio run.fio
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from assay.exitcodes import UserError
from assay.fio.jobfile import FioJob, Options, fio_seconds, render
from assay.hosts.inventory import Host, fio_path_problem
from assay.integrity.fiojobs import prefill_options
from assay.metrics.sampler import ComponentSpec
from assay.metrics.summary import ComponentInfo
from assay.platforms import rbdjobs
from assay.scenario.models import ResolvedScenario, Scenario
from assay.scenario.units import format_duration, format_size
from assay.thresholds.grammar import Threshold
from assay.workloads.base import Stream

LOCAL = "local"
TARGET_VAR = "ASSAY_TARGET"  # the target directory, escaped for fio (`:` as `\:`)
DIRECT_VAR = "ASSAY_DIRECT"  # 1 for O_DIRECT, 0 where the target does not support it
RUN_JOB = "run.fio"
PREFILL_JOB = "prefill.fio"
PREFILL_PREFIX = "prefill."  # a prefill section is PREFILL_PREFIX + file name
VARIABLES_NOTE = (f"${{{TARGET_VAR}}} and ${{{DIRECT_VAR}}} are set by assay when it starts fio "
                  f"(run.json records their values)")


def variables(directory: Path, direct: bool) -> dict[str, str]:
    """The values of the job files' variables for a run. fio reads `:` in `directory=` as a
    separator (escaped `\\:`); `;` and `#`, comments in a job file, are safe in a variable's
    value. A path fio would still read as something else is refused (UserError)."""
    text = str(directory)
    if problem := fio_path_problem(text):
        raise UserError(problem)
    return {TARGET_VAR: text.replace(":", "\\:"), DIRECT_VAR: str(int(direct))}


@dataclass(frozen=True)
class Instance:
    """One instance of a workload as planned on its host."""

    workload: str
    host: str
    k: int
    window: tuple[float, float]  # its load on the run's axis (s): its start, its end
    text: str  # its fio job file, from its own start (no start delay)
    components: tuple[ComponentSpec, ...]  # one instance's components and their rates


@dataclass(frozen=True)
class Move:
    """Where an instance starts again when its host is lost."""

    instance: Instance
    to: str
    after: float  # s after the loss is detected
    text: str  # its job file on `to`: the standby copy's files


@dataclass(frozen=True)
class HostPlan:
    """What one host runs: instances per workload, the files (relative to its target)."""

    host: Host
    instances: dict[str, int]  # workload -> count on this host
    files: list[tuple[str, int]]
    subdirs: list[str]
    specs: list[ComponentSpec]  # its components, targets scaled to its instances
    # workload -> each instance's load on the run's axis (s), when `stagger` delays them
    windows: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterPlan:
    hosts: dict[str, HostPlan] = field(default_factory=dict)  # in inventory order
    skew_limit_ms: float | None = None  # `start_skew: "< 10ms"`: the worst start skew
    # each host's instances (a recovered host restarts them) and, per host, where its
    # `failover` instances start again when it is lost (plan/failover.py)
    instances: dict[str, list[Instance]] = field(default_factory=dict)
    moves: dict[str, list[Move]] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(self.hosts)

    def to_json(self) -> dict[str, object]:
        return {name: {**hp.host.public(), "instances": hp.instances,
                       "files": len(hp.files),
                       **({"windows": {w: [list(x) for x in v] for w, v in hp.windows.items()}}
                          if hp.windows else {}),
                       **({"failover": [{"workload": m.instance.workload, "instance":
                                         m.instance.k, "to": m.to, "after_s": m.after}
                                        for m in self.moves[name]]}
                          if self.moves.get(name) else {})}
                for name, hp in self.hosts.items()}


@dataclass(frozen=True)
class Plan:
    resolved: ResolvedScenario
    streams: list[Stream]
    thresholds: list[Threshold]
    duration: float  # measured seconds
    warmup: float
    notes: list[str]
    intended_note: str = ""  # how latency from the due time will be measured, or why not
    jobfiles: dict[str, dict[str, str]] = field(default_factory=dict)  # host -> name -> text
    cluster: ClusterPlan | None = None  # the hosts of a cluster run (plan/placement.py)
    host_thresholds: list[Threshold] = field(default_factory=list)  # `each_host.` ones
    stagger_s: float = 0.0  # the last instance's start delay (placement's `stagger`)
    warnings: list[str] = field(default_factory=list)  # what may spoil the run (run.json's too)

    @property
    def scenario(self) -> Scenario:
        return self.resolved.scenario

    @property
    def name(self) -> str:
        return self.resolved.scenario.name

    @property
    def hosts(self) -> list[str]:
        return list(self.jobfiles)

    @property
    def total_seconds(self) -> float:
        """The load's length: warm-up, measured time, and the stagger of the last
        instance of a cluster run (each instance runs warm-up + measured time)."""
        return self.warmup + self.duration + self.stagger_s

    def ending(self, t: float | None) -> Plan:
        """The plan as it ran when the load ended at `t` on its axis (the timeline's `end`,
        before `duration` was over): graded up to there; itself when `t` is None."""
        if t is None or t >= self.total_seconds:
            return self
        return replace(self, duration=max(t - self.warmup - self.stagger_s, 0.0))

    @property
    def specs(self) -> list[ComponentSpec]:
        return [c for s in self.streams for c in s.components]

    @property
    def jobs(self) -> dict[str, FioJob]:
        return {j.name: j for s in self.streams for j in s.jobs}

    @property
    def components(self) -> list[ComponentInfo]:
        return [ComponentInfo(c.component, c.target_iops, c.poisson, c.start_s, c.end_s,
                              s.transactional, len(c.jobs), target_steps=c.target_steps,
                              training=c.training, timed=c.timed, view=c.view)
                for s in self.streams for c in s.components]

    @property
    def files(self) -> list[tuple[str, int]]:
        seen: dict[str, int] = {}
        for s in self.streams:
            for f in s.files:
                seen[f.name] = max(seen.get(f.name, 0), f.size)
        return list(seen.items())

    @property
    def file_count(self) -> int:
        """Files of the data set, the members of sets of small files counted one by one."""
        sets = self.file_sets
        return sum(sets.get(name, 1) for name, _ in self.files)

    @property
    def file_sets(self) -> dict[str, int]:
        """Files that are sets of small files (a fio filename_format) -> how many."""
        return {f.name: f.count for s in self.streams for f in s.files if f.count > 1}

    @property
    def dataset_bytes(self) -> int:
        return sum(size for _, size in self.files)

    def jobfile(self, host: str = LOCAL, name: str = RUN_JOB) -> str:
        return self.jobfiles[host][name]


def render_jobfiles(plan: Plan) -> dict[str, dict[str, str]]:
    """The job files of every host; called once, when the plan is made."""
    return {LOCAL: {RUN_JOB: _run_jobfile(plan), PREFILL_JOB: _prefill_jobfile(plan)}}


def run_jobfile(plan: Plan) -> str:
    return _run_jobfile(plan)


def prefill_jobfile(plan: Plan) -> str:
    return _prefill_jobfile(plan)


def _global_options(plan: Plan) -> Options:
    target = plan.scenario.target
    if rbdjobs.on_rbd(target):  # fio's rbd engine on images (platforms/rbdjobs.py)
        return rbdjobs.global_options(target)
    opts: Options = {"ioengine": target.ioengine or "libaio", "direct": f"${{{DIRECT_VAR}}}"}
    if not target.device:
        opts["directory"] = f"${{{TARGET_VAR}}}"
    return opts


def device_offsets(plan: Plan) -> dict[str, int]:
    """On a raw block device the files are laid end to end: name -> byte offset."""
    offsets, at = {}, 0
    for name, size in plan.files:
        offsets[name] = at
        at += size
    return offsets


def device_problem(streams: list[Stream]) -> tuple[str, str] | None:
    """(workload, why) when a workload's files cannot be laid end to end on a raw device:
    each fio job there reads one file's region (`offset`), not a set of small files or
    several files, which only a filesystem holds."""
    for s in streams:
        if any(f.count > 1 for f in s.files) or any(
                "filename" not in j.options for j in s.jobs):
            return s.workload, "its jobs read sets of small files (fio's filename_format)"
        if any(":" in str(j.options["filename"]) for j in s.jobs):
            return s.workload, "its jobs each read several files"
    return None


def _on_device(plan: Plan, jobs: list[FioJob]) -> list[FioJob]:
    device = plan.scenario.target.device
    if rbdjobs.on_rbd(plan.scenario.target):
        return rbdjobs.on_images(plan.name, plan.files, jobs)
    if not device:
        return jobs
    offsets = device_offsets(plan)
    return [FioJob(j.name, {**j.options, "filename": device,
                            "offset": offsets[str(j.options["filename"])]}) for j in jobs]


def _run_jobfile(plan: Plan) -> str:
    device = plan.scenario.target.device
    header = (f"assay run of scenario {plan.name!r}: {format_duration(plan.warmup)} warm-up + "
              f"{format_duration(plan.duration)} measured\n"
              f"dataset {format_size(plan.dataset_bytes)} in {plan.file_count} files"
              + (f" laid out on {device}" if device else "") + f"\n{VARIABLES_NOTE}")
    glob: Options = {
        **_global_options(plan),
        "time_based": True,
        "runtime": fio_seconds(plan.warmup + plan.duration),
        "lat_percentiles": 1,  # bins for total latency (submit -> completion)
        "fallocate": "none",  # see _prefill_jobfile
        "randseed": plan.scenario.seed,
        "thread": False,
    }
    return render(glob, _on_device(plan, [j for s in plan.streams for j in s.jobs]), header)


def prefill_jobs(plan: Plan) -> list[FioJob]:
    """Sequential 1 MiB writes of each file with its workload's data pattern; one section per
    file, so a run writes only the stale ones (fio --section) from the same job file. A file
    the load writes with verify headers (integrity mode) gets them from the prefill on."""
    # a stream's data pattern once, not once per file: a checkpoint's 1,000 streams' files
    # each scanned its 20,000 jobs
    data_opts = {f.name: opts for s in plan.streams
                 for opts in [_write_data_options(s)] for f in s.files}
    headers = prefill_options(plan.streams)
    sets = plan.file_sets
    return [FioJob(f"{PREFILL_PREFIX}{name}", {
        "filename": name, "size": size, "rw": "write", "bs": "1m", "iodepth": 8,
        **data_opts.get(name, {}), **headers.get(name, {}),
    } if name not in sets else {
        # a set of small files: one job lays them all out, one at a time
        "filename_format": name, "nrfiles": sets[name], "filesize": size // sets[name],
        "size": size, "openfiles": 1, "rw": "write", "bs": min(1 << 20, size // sets[name]),
        "iodepth": 8, **data_opts.get(name, {}),
    }) for name, size in plan.files]


def _prefill_jobfile(plan: Plan) -> str:
    glob: Options = {**_global_options(plan), "randseed": plan.scenario.seed, "end_fsync": 1,
                     # fio preallocates by default; btrfs writes into preallocated extents in
                     # place and never compresses them: the data pattern would be lost
                     "fallocate": "none"}
    return render(glob, _on_device(plan, prefill_jobs(plan)),
                  f"assay prefill for scenario {plan.name!r}\n{VARIABLES_NOTE}")


def _write_data_options(stream: Stream) -> Options:
    keys = ("buffer_compress_percentage", "buffer_compress_chunk", "dedupe_percentage",
            "refill_buffers")
    for job in stream.jobs:
        if any(k in job.options for k in keys):
            return {k: job.options[k] for k in keys if k in job.options}
    return {"refill_buffers": True}
