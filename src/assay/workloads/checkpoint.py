"""Checkpoints, the MLPerf Storage way: a model's checkpoint written in parallel streams, one
file per stream with an fsync at its end, then read back (the restore).

Presets by model size (mlcommons/storage Rules.md Table 2: Llama3 8B 105 GB, 70B 912 GB,
405B 5.29 TB, 1T 18 TB), scaled with `fraction` so that a lab can write one. One save at `at`,
or one every `every` beside a training workload, as a trainer does. Graded on the time to save
(`ckpt.save_s < 60s`) and GB/s while saving and restoring (`save_gbps`, `restore_gbps`).

Each save is a fio job per stream (not time-based: it ends when its file is written and
fsynced) started at its time; each restore job waits for its stream's save (`wait_for`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from assay.fio.jobfile import FioJob, fio_seconds
from assay.metrics.sampler import ComponentSpec
from assay.scenario.models import Duration, Size, WorkloadBase
from assay.scenario.units import format_size
from assay.workloads.base import BuildContext, DataFile, Stream, data_options, format_fio_size

MiB = 1 << 20
# Rules.md Table 2: checkpoint bytes and the processes (TP x PP x DP) that write them
MODELS: dict[str, tuple[float, int]] = {
    "llama3-8b": (105e9, 8), "llama3-70b": (912e9, 64),
    "llama3-405b": (5.29e12, 512), "llama3-1t": (18e12, 1024),
}
NOT_FOR_CHECKPOINT = ("access", "load", "start", "stop")


class Params(WorkloadBase):
    kind: Literal["checkpoint"] = "checkpoint"
    model: Literal["llama3-8b", "llama3-70b", "llama3-405b", "llama3-1t"] | None = Field(
        None, description="checkpoint size of the model (MLPerf Storage Table 2)")
    size: Size | None = Field(None, description="checkpoint bytes, instead of a model")
    fraction: float = Field(1.0, gt=0, le=1, description="share of the checkpoint written "
                                                         "(a lab's size)")
    streams: int = Field(8, ge=1, le=1024, description="parallel writers, one file each (MLPerf "
                                                      "subset mode: 8 per host)")
    block: Size = Field(MiB, description="bytes per write and read")
    iodepth: int = Field(4, ge=1, le=256, description="IOs in flight per stream")
    restore: bool = Field(True, description="read each checkpoint back after it is saved")
    at: Duration = Field(0.0, ge=0, description="first save, after the measured start")
    every: Duration | None = Field(None, gt=0, description="save again every interval "
                                                           "(beside training)")

    @model_validator(mode="after")
    def _applies(self) -> Params:
        given = [k for k in NOT_FOR_CHECKPOINT if k in self.model_fields_set]
        if given:
            raise ValueError(f"{', '.join(given)} do not apply to a checkpoint (use `at` and "
                             f"`every`)")
        if (self.model is None) == (self.size is None):
            raise ValueError("give either `model` or `size`")
        if self.dataset is not None:
            raise ValueError("a checkpoint's size is `model` × `fraction` or `size`, not "
                             "`dataset`")
        if self.block < 4096 or self.block % 4096:
            raise ValueError("`block` must be a multiple of 4k")
        return self

    @property
    def bytes(self) -> int:
        whole = self.size if self.size is not None else MODELS[self.model or ""][0]
        return int(whole * self.fraction)


def saves(p: Params, ctx: BuildContext) -> list[float]:
    """Start times of the saves (seconds after fio starts): one, or one every `every`."""
    first = ctx.warmup + p.at
    end = ctx.warmup + ctx.duration
    if p.at >= ctx.duration:
        raise ValueError(f"`at` ({p.at:g}s) is not before the end of the run "
                         f"({ctx.duration:g}s measured)")
    if p.every is None:
        return [first]
    times, t = [], first
    while t < end:
        times.append(t)
        t += p.every
    return times


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    per_stream = max(p.block, p.bytes // p.streams // p.block * p.block)
    files = [DataFile(f"{name}.ckpt.{s + 1}.pt", per_stream) for s in range(p.streams)]
    save_jobs, restore_jobs = [], []
    starts = saves(p, ctx)
    for k, start in enumerate(starts):
        for s, f in enumerate(files):
            save = FioJob(f"{name}.save.{k + 1}.{s + 1}", {
                "filename": f.name, "size": f.size, "rw": "write",
                "bs": format_fio_size(p.block), "iodepth": p.iodepth,
                "time_based": 0, "end_fsync": 1,
                **({"startdelay": fio_seconds(start)} if start else {}),
                **data_options(p),
            })
            save_jobs.append(save)
            if p.restore:
                restore_jobs.append(FioJob(f"{name}.restore.{k + 1}.{s + 1}", {
                    "filename": f.name, "size": f.size, "rw": "read",
                    "bs": save.options["bs"], "iodepth": p.iodepth, "time_based": 0,
                    "wait_for": save.name,
                }))
    first = ctx.warmup + p.at
    what = (f"{p.model} × {p.fraction:g}" if p.model else "checkpoint") + \
        f" = {format_size(per_stream * p.streams)} in {p.streams} streams"
    streams = [Stream(name, "save", files, save_jobs,
                      [ComponentSpec(f"{name}.save.write", [j.name for j in save_jobs], "write",
                                     start_s=first, timed=True)],
                      description=f"{what}, fsync per file" +
                      (f", every {p.every:g}s" if p.every else ""))]
    if p.restore:
        streams.append(Stream(name, "restore", files, restore_jobs,
                              [ComponentSpec(f"{name}.restore.read",
                                             [j.name for j in restore_jobs], "read",
                                             start_s=first, timed=True)],
                              transactional=False,
                              description="restore: each stream reads its file back"))
    ctx.notes.append(f"{name}: {len(starts)} save{'s' if len(starts) > 1 else ''} of {what}"
                     + (", each read back" if p.restore else "") + "; save_s times the first "
                     "write to the last stream's end (docs/ai.md#checkpoint)")
    return streams
