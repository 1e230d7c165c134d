"""Scenario → plan: the streams, fio jobs, graded components and thresholds of a run.

Everything that can be checked without IO is checked here, and every problem comes back at
once with file:line: a bad key, a bad unit, a threshold that names no component.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from assay import actions as action_registry
from assay import workloads
from assay.fio.jobfile import FioJob, Options, render
from assay.metrics.sampler import ComponentSpec
from assay.metrics.summary import ComponentInfo
from assay.platforms import DRIVER_MODULES, driver
from assay.scenario.loader import load_text
from assay.scenario.models import ResolvedScenario, Scenario, step_names
from assay.scenario.units import format_duration, format_size
from assay.scenario.yamlsource import Issue, ScenarioInvalid
from assay.thresholds.evaluate import expand, resolve
from assay.thresholds.grammar import Threshold, ThresholdError
from assay.workloads.base import BuildContext, Stream

PLACEHOLDER_DIR = "<target directory>"


@dataclass
class Plan:
    resolved: ResolvedScenario
    streams: list[Stream]
    thresholds: list[Threshold]
    duration: float  # measured seconds
    warmup: float
    notes: list[str]

    @property
    def scenario(self) -> Scenario:
        return self.resolved.scenario

    @property
    def name(self) -> str:
        return self.resolved.scenario.name

    @property
    def total_seconds(self) -> float:
        return self.warmup + self.duration

    @property
    def specs(self) -> list[ComponentSpec]:
        return [c for s in self.streams for c in s.components]

    @property
    def components(self) -> list[ComponentInfo]:
        return [ComponentInfo(c.component, c.target_iops, c.poisson, c.start_s, c.end_s,
                              s.transactional, len(c.jobs))
                for s in self.streams for c in s.components]

    @property
    def files(self) -> list[tuple[str, int]]:
        seen: dict[str, int] = {}
        for s in self.streams:
            for f in s.files:
                seen[f.name] = max(seen.get(f.name, 0), f.size)
        return list(seen.items())

    @property
    def dataset_bytes(self) -> int:
        return sum(size for _, size in self.files)

    def global_options(self, directory: str, direct: bool = True) -> Options:
        target = self.scenario.target
        return {
            "ioengine": target.ioengine or "libaio",
            "direct": int(direct),
            "directory": directory,
            "time_based": True,
            "runtime": f"{self.total_seconds:g}s",
            "lat_percentiles": 1,  # bins for total latency (submit → completion)
            "fallocate": "none",  # see prefill_jobfile
            "randseed": self.scenario.seed,
            "thread": False,
        }

    def device_offsets(self) -> dict[str, int]:
        """On a raw block device the files are laid end to end: name -> byte offset."""
        offsets, at = {}, 0
        for name, size in self.files:
            offsets[name] = at
            at += size
        return offsets

    def _on_device(self, jobs: list[FioJob], device: str | None) -> list[FioJob]:
        if not device:
            return jobs
        offsets = self.device_offsets()
        return [FioJob(j.name, {**j.options, "filename": device,
                                "offset": offsets[str(j.options["filename"])]}) for j in jobs]

    def jobfile(self, directory: str = PLACEHOLDER_DIR, direct: bool = True,
                device: str | None = None) -> str:
        header = (f"assay run of scenario {self.name!r}: "
                  f"{format_duration(self.warmup)} warm-up + "
                  f"{format_duration(self.duration)} measured\n"
                  f"dataset {format_size(self.dataset_bytes)} in {len(self.files)} files"
                  + (f" laid out on {device}" if device else ""))
        glob = self.global_options(directory, direct)
        if device:
            del glob["directory"]
        return render(glob, self._on_device([j for s in self.streams for j in s.jobs], device),
                      header)

    def prefill_jobfile(self, files: list[tuple[str, int]], directory: str,
                        direct: bool = True, device: str | None = None) -> str:
        """Sequential 1 MiB writes of each file with the workload's data pattern."""
        data_opts = {f.name: _write_data_options(s) for s in self.streams for f in s.files}
        jobs = [FioJob(f"prefill.{name}", {
            "filename": name, "size": size, "rw": "write", "bs": "1m", "iodepth": 8,
            **data_opts.get(name, {}),
        }) for name, size in files]
        glob: Options = {"ioengine": self.scenario.target.ioengine or "libaio",
                         "direct": int(direct), "directory": directory,
                         "randseed": self.scenario.seed, "end_fsync": 1,
                         # fio preallocates by default; btrfs writes into preallocated extents
                         # in place and never compresses them: the data pattern would be lost
                         "fallocate": "none"}
        if device:
            del glob["directory"]
        return render(glob, self._on_device(jobs, device),
                      f"assay prefill for scenario {self.name!r}")


def _write_data_options(stream: Stream) -> Options:
    keys = ("buffer_compress_percentage", "buffer_compress_chunk", "dedupe_percentage",
            "refill_buffers")
    for job in stream.jobs:
        if any(k in job.options for k in keys):
            return {k: job.options[k] for k in keys if k in job.options}
    return {"refill_buffers": True}


def builtin_scenarios() -> dict[str, str]:
    """Name → YAML text of the scenarios shipped with assay."""
    out = {}
    for entry in resources.files("assay.scenarios").iterdir():
        if entry.name.endswith(".yaml"):
            out[entry.name[:-5]] = entry.read_text(encoding="utf-8")
    return dict(sorted(out.items()))


def read_scenario(ref: str) -> tuple[str, str, Path | None]:
    """A built-in name or a file path → (text, display name, directory for relative paths)."""
    path = Path(ref)
    if path.is_file():
        try:
            return path.read_text(encoding="utf-8"), str(path), path.parent
        except (OSError, UnicodeDecodeError) as e:
            raise ScenarioInvalid([Issue(ref, None, "", f"cannot read: {e}")]) from None
    builtins = builtin_scenarios()
    if ref in builtins:
        return builtins[ref], f"<built-in {ref}>", None
    hint = "" if ref.endswith((".yaml", ".yml")) else \
        f" (built-in scenarios: {', '.join(builtins)})"
    raise ScenarioInvalid([Issue(ref, None, "", f"no such scenario file or built-in{hint}")])


def load(ref: str, duration: float | None = None, warmup: float | None = None) -> Plan:
    """Read, validate and plan a scenario (built-in name or file)."""
    text, display, base = read_scenario(ref)
    return plan_text(text, display, base, duration, warmup)


def plan_text(text: str, file: str, base_dir: Path | None = None,
              duration: float | None = None, warmup: float | None = None) -> Plan:
    """Plan scenario text; `duration` and `warmup` (seconds) override the timeline's."""
    resolved = load_text(text, file, workloads.kinds(), action_registry.actions())
    sc = resolved.scenario
    if warmup is not None:
        sc.timeline.warmup = warmup
    run_seconds = duration if duration is not None else sc.timeline.duration
    ctx = BuildContext(seed=sc.seed, duration=run_seconds, warmup=sc.timeline.warmup,
                       duration_overridden=duration is not None)
    streams: list[Stream] = []
    issues: list[Issue] = []
    src = resolved.source
    for name, params in resolved.workloads.items():
        if params.kind == "fio":
            params = params.model_copy(update={"base_dir": str(base_dir or Path.cwd())})
        module = workloads.kind_module(params.kind)
        try:
            built = module.build(name, params, ctx)
            if params.subdir:
                in_subdir(built, params.subdir)
            if params.start or params.stop is not None:
                if params.stop is not None and params.stop > run_seconds:
                    issues.append(src.issue(("workloads", name, "stop"),
                                            f"after the end of the run "
                                            f"({format_duration(run_seconds)} measured)"))
                in_window(built, sc.timeline.warmup, params.start, params.stop, run_seconds)
            streams.extend(built)
        except ValueError as e:
            issues.append(src.issue(("workloads", name), str(e)))
        if params.kind == "micro":
            run_seconds = max(run_seconds, module.duration(params, ctx))
    components = [ComponentInfo(c.component, c.target_iops) for s in streams
                  for c in s.components]
    thresholds = _thresholds(resolved, components, issues)
    issues.extend(check_steps(resolved, thresholds, run_seconds, ctx.notes))
    if issues:
        raise ScenarioInvalid(issues)
    return Plan(resolved, streams, thresholds, run_seconds, sc.timeline.warmup, ctx.notes)


def in_window(streams: list[Stream], warmup: float, start: float, stop: float | None,
              duration: float) -> None:
    """A workload that arrives or leaves during the run: fio's `startdelay` and `runtime`
    per job, and the components' windows (their schedule and statistics start with them)."""
    begin = warmup + start if start else 0.0  # starting with the run includes the warm-up
    end = warmup + (stop if stop is not None else duration)
    for s in streams:
        for job in s.jobs:
            if begin:
                job.options["startdelay"] = f"{begin:g}s"
            job.options["runtime"] = f"{end - begin:g}s"
        for c in s.components:
            c.start_s, c.end_s = begin, (end if stop is not None else None)


def in_subdir(streams: list[Stream], subdir: str) -> None:
    """A workload's files go to `subdir/` of the target (e.g. its own btrfs subvolume)."""
    for s in streams:
        for f in s.files:
            f.name = f"{subdir}/{f.name}"
        for job in s.jobs:
            if "filename" in job.options:
                names = str(job.options["filename"]).split(":")
                job.options["filename"] = ":".join(f"{subdir}/{n}" for n in names)


def check_steps(resolved: ResolvedScenario, thresholds: list[Threshold], duration: float,
                notes: list[str] | None = None) -> list[Issue]:
    """Timeline steps against each other, the platform driver and the phase thresholds."""
    src = resolved.source
    target = resolved.scenario.target
    issues: list[Issue] = []
    steps = resolved.steps
    names = step_names(steps)
    try:
        drv = driver(target.platform)
    except KeyError:
        issues.append(src.issue(("target", "platform"), f"unknown platform "
                                f"{target.platform!r} (known: {', '.join(DRIVER_MODULES)})"))
        return issues
    supported = drv.supports(target)
    raw = [i for i, r in enumerate(resolved.scenario.timeline.steps or [])
           if isinstance(r, dict)]
    for i, (step, name) in zip(raw, zip(steps, names, strict=True), strict=False):
        path = ("timeline", "steps", i)
        if names.count(name) > 1:
            issues.append(src.issue((*path, "name"), f"two steps are named {name!r}"))
        if step.after is not None and step.after not in names:
            issues.append(src.issue((*path, "after"), f"no step is named {step.after!r} "
                                    f"(steps: {', '.join(names)})"))
        elif step.after == name:
            issues.append(src.issue((*path, "after"), "a step cannot wait for itself"))
        missing = sorted(action_registry.requirements(step) - supported)
        if missing:
            can = ", ".join(sorted(supported)) or "no platform operations"
            issues.append(src.issue((*path, "action"), f"platform {target.platform!r} cannot "
                                    f"do {', '.join(missing)} (it supports: {can})"))
        if notes is not None and step.after is None and (step.at or 0) >= duration:
            notes.append(f"step {name!r} is at {format_duration(step.at or 0)}, after the "
                         f"{format_duration(duration)} measured: it will not run")
    labels = set(names) | {s.action for s in steps}
    for t in thresholds:
        if (t.phase or t.metric == "recovery") and not steps:
            issues.append(src.issue(("thresholds",), f"{t.text!r}: phases and recovery need "
                                    f"timeline steps, and this scenario has none"))
        elif t.phase_step and t.phase_step not in labels:
            issues.append(src.issue(("thresholds",), f"{t.text!r}: no step or action is "
                                    f"named {t.phase_step!r} (steps: {', '.join(names)})"))
    return issues


def _thresholds(resolved: ResolvedScenario, components: list[ComponentInfo],
                issues: list[Issue]) -> list[Threshold]:
    spec = resolved.scenario.thresholds
    src = resolved.source
    entries = (list(spec.items()) if isinstance(spec, dict)
               else [(i, e) for i, e in enumerate(spec)])
    out: list[Threshold] = []
    for key, value in entries:
        path = ("thresholds", key)
        try:
            parsed = expand({key: str(value)} if isinstance(key, str) else [value])
            for t in parsed:
                resolve(t, components)
            out.extend(parsed)
        except ThresholdError as e:
            issues.append(src.issue(path, str(e)))
    return out
