"""AI training data loading, the MLPerf Storage (DLIO) way: `accelerators` per host each read
batches of samples and then "compute" for a fixed time per batch.

Presets carry DLIO's published workload parameters (mlcommons/storage configs/dlio/workload/
*.yaml): sample size and file format, batch size, reader threads and the compute time per
batch on each accelerator type. fio's readers (`readers` per accelerator, one synchronous
sequential stream each, over a shuffled share of the sample files) read at the accelerators'
demand, batch bytes / compute time; metrics/training.py plays the accelerators against the
bytes fio delivered each second: AU, samples/s, the time each batch waited for its data. A
storage that delivers less keeps them waiting; `au >= target` (preset `mlperf`) grades it.

The data set is written once (the prefill, reused while unchanged) and must be at least
5 × the host's memory, MLPerf's rule against caching: refused below it unless
`dataset_rule: warn`. Not an MLPerf Storage result (docs/ai.md, docs/fidelity.md).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from assay.fio.jobfile import FioJob
from assay.metrics.sampler import ComponentSpec
from assay.metrics.training import Training
from assay.scenario.models import Duration, Size, WorkloadBase
from assay.scenario.units import format_size
from assay.workloads.base import BuildContext, DataFile, Stream, format_fio_size

MiB = 1 << 20
MEMORY_FACTOR = 5  # MLPerf Storage: data set >= 5 x the clients' memory
MIN_STEPS = 500  # ... and >= 500 steps per epoch
PREFETCH = 2  # batches each reader may hold ready (PyTorch DataLoader prefetch_factor)


@dataclass(frozen=True)
class Model:
    """DLIO's workload parameters for one model (configs/dlio/workload/<model>_<acc>.yaml)."""

    format: str
    samples_per_file: int
    sample_bytes: float  # record_length_bytes (mean)
    batch_size: int
    readers: int  # read_threads
    compute_s: dict[str, float]  # computation_time per batch, by accelerator type
    au_target: float  # metric: au
    block: int  # fio's read size: the file is read in these, so it is a whole number of them


MODELS = {
    "unet3d": Model("npz", 1, 146_600_628, 7, 4,
                    {"h100": 0.323, "a100": 0.636, "b200": 0.162}, 90.0, MiB),
    "resnet50": Model("tfrecord", 1251, 114_660.07, 400, 8,
                      {"h100": 0.224, "a100": 0.435}, 90.0, 256 << 10),
    "cosmoflow": Model("tfrecord", 1, 2_828_486, 1, 4,
                       {"h100": 0.00350, "a100": 0.00551}, 70.0, 64 << 10),
}


class Params(WorkloadBase):
    kind: Literal["ai-training"] = "ai-training"
    model: Literal["unet3d", "resnet50", "cosmoflow"] = Field(
        ..., description="MLPerf Storage training workload (DLIO's parameters)")
    accelerator: Literal["h100", "a100", "b200"] = Field(
        "h100", description="accelerator type: sets the compute time per batch")
    accelerators: int = Field(1, ge=1, le=4096, description="simulated accelerators per host: "
                                                           "the load unit")
    batch_size: int | None = Field(None, ge=1, description="samples per batch (default: the "
                                                            "model's)")
    compute_time: Duration | None = Field(None, gt=0, description="seconds per batch (default: "
                                                                  "the model's on `accelerator`)")
    readers: int | None = Field(None, ge=1, le=64, description="reader threads per accelerator "
                                                               "(default: the model's)")
    files: int | None = Field(None, ge=1, description="files in the data set (default: from "
                                                      "`dataset`, else 5 × memory)")
    memory: Size | None = Field(None, description="host memory for the 5 × rule (default: "
                                                  "this machine's)")
    dataset_rule: Literal["refuse", "warn"] = Field(
        "refuse", description="a data set below 5 × memory is refused, or run with a warning")


@dataclass(frozen=True)
class Shape:
    """What one host's accelerators read, after presets and overrides."""

    file_bytes: int
    sample_bytes: float  # file_bytes / samples per file: what one sample reads here
    batch_bytes: float
    compute_s: float
    readers: int
    block: int

    def demand(self, accelerators: float) -> float:
        return accelerators * self.batch_bytes / self.compute_s


def shape(p: Params) -> Shape:
    m = MODELS[p.model]
    compute = p.compute_time or m.compute_s.get(p.accelerator)
    if compute is None:
        raise ValueError(f"no published compute time for {p.model} on {p.accelerator} "
                         f"(published: {', '.join(m.compute_s)}); give `compute_time`")
    # a whole number of fio blocks per file (DLIO reads each file to its end)
    blocks = max(1, round(m.samples_per_file * m.sample_bytes / m.block))
    file_bytes = blocks * m.block
    sample = file_bytes / m.samples_per_file
    return Shape(file_bytes, sample, (p.batch_size or m.batch_size) * sample, compute,
                 p.readers or m.readers, m.block)


def host_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def file_count(p: Params, s: Shape, memory: int) -> int:
    if p.files is not None:
        n = p.files
    elif p.dataset is not None:
        n = p.dataset // s.file_bytes
    else:
        n = -(-MEMORY_FACTOR * memory // s.file_bytes)
    return max(n, 1)


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    m, s = MODELS[p.model], shape(p)
    memory = p.memory or host_memory()
    n = file_count(p, s, memory)
    total = n * s.file_bytes
    need = MEMORY_FACTOR * memory
    if total < need:
        what = (f"{name}: the data set ({format_size(total)}) is below 5 × the host's memory "
                f"({format_size(memory)}), MLPerf Storage's rule against caching")
        if p.dataset_rule == "refuse":
            raise ValueError(f"{what}: give `dataset` >= {format_size(need)}, or "
                             f"`dataset_rule: warn` to run anyway")
        ctx.notes.append(f"{what}: warned, not refused (`dataset_rule: warn`); reads may come "
                         f"from a cache, not the storage")
    steps = n * m.samples_per_file // ((p.batch_size or m.batch_size) * p.accelerators)
    if steps < MIN_STEPS:
        ctx.notes.append(f"{name}: {steps} steps per epoch; MLPerf Storage asks for >= "
                         f"{MIN_STEPS} (a larger data set)")
    # one set of n sample files, laid out by one prefill job (fio's filename_format): a data
    # set of tens of thousands of files would not fit in one fio job each
    samples = DataFile(f"{name}.data.$filenum.{m.format}", n * s.file_bytes, n)
    order = [samples.member(i) for i in range(n)]
    random.Random(ctx.seed).shuffle(order)  # DLIO's seeded file shuffle
    streams = p.accelerators * s.readers
    # load.scale (a search) scales the accelerators, so AU keeps its meaning
    accelerators = p.accelerators * p.load.scale
    rate = s.demand(accelerators) / streams
    jobs = []
    for a in range(p.accelerators):
        for r in range(s.readers):
            k = a * s.readers + r
            # its share of the files; more readers than files share them (the data set is
            # the scenario's, never a function of the readers)
            mine = order[k::streams] or [order[k % n]]
            jobs.append(FioJob(f"{name}.data.{a + 1}.{r + 1}", {
                "filename": ":".join(mine),
                "size": len(mine) * s.file_bytes, "file_service_type": "sequential",
                "rw": "read", "bs": format_fio_size(s.block), "iodepth": 1,
                "rate": max(1, round(rate)), "rate_process": "linear",
            }))
    # fio's readers are paced at the demand and cannot run ahead as DLIO's do: the
    # accelerators take a batch up to 1 s late (never more than DLIO's prefetch queue)
    slack = min(PREFETCH * s.readers * accelerators, max(accelerators, accelerators / s.compute_s))
    model = Training(accelerators, s.batch_bytes, s.compute_s, s.sample_bytes,
                     prefetch=slack, au_target=m.au_target)
    slack_s = slack * s.compute_s / accelerators
    if ctx.warmup < 10 * slack_s:
        ctx.notes.append(f"{name}: a warm-up of at least {10 * slack_s:.1f}s lets a storage "
                         f"that delivers 90 % of the demand or less use up the accelerators' "
                         f"{slack_s:.2f}s of tolerated lateness before AU is graded")
    spec = ComponentSpec(f"{name}.data.read", [j.name for j in jobs], "read",
                         target_iops=rate * streams / s.block, training=model)
    ctx.notes.append(
        f"{name}: {accelerators:g} × {p.model} on {p.accelerator}: batches of "
        f"{p.batch_size or m.batch_size} × {format_size(round(s.sample_bytes))} every "
        f"{s.compute_s:g} s = {s.demand(accelerators) / 1e6:,.0f} MB/s read "
        f"by {streams} readers; AU from the bytes delivered each second (docs/ai.md)")
    return [Stream(name, "data", [samples], jobs, [spec],
                   description=f"{p.model} {m.format} samples, {s.readers} readers per "
                               f"accelerator, {format_fio_size(s.block)} sequential reads")]
