"""AI training sizing, the MLPerf Storage way: the read throughput N accelerators need and the
data set that keeps caches out of it, and the scenario that validates one host of it.

Read throughput = accelerators × batch size × sample size / compute time per batch (DLIO's
parameters, workloads/ai_training.py). The storage passes when it keeps AU at the model's
level (90 %; CosmoFlow 70 %), so it must deliver at least that share of the demand.
Capacity: the data set must be at least 5 × the clients' memory and hold at least 500
steps of an epoch (MLPerf Storage's rules against caching).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from assay.exitcodes import UserError
from assay.sizing.explain import GB, Bytes, Figure, Result, ceil_div
from assay.sizing.scenario_text import document, header, scalar, size_value
from assay.workloads.ai_training import MEMORY_FACTOR, MIN_STEPS, MODELS, Params, shape

SRC_DEMAND = ("DLIO: each accelerator sleeps computation_time per batch (mlcommons/storage "
              "configs/dlio/workload/<model>_<accelerator>.yaml)")
SRC_AU = "MLPerf Storage: AU >= 90 % (U-Net3D, ResNet-50), 70 % (CosmoFlow)"
SRC_DATA = "MLPerf Storage: data set >= 5 x the clients' memory and >= 500 steps per epoch"


@dataclass(frozen=True)
class AiDesign:
    accelerators: int
    model: str = "unet3d"
    accelerator: str = "h100"
    hosts: int = 1
    memory: float = 512 * GB  # bytes of memory per host


def size(d: AiDesign) -> Result:
    if d.model not in MODELS:
        raise UserError(f"--model {d.model!r}: one of {', '.join(MODELS)}")
    if d.accelerators < 1 or d.hosts < 1:
        raise UserError("--accelerators and --hosts must be at least 1")
    if d.accelerators % d.hosts:
        raise UserError(f"--accelerators {d.accelerators} over --hosts {d.hosts}: MLPerf "
                        f"places an identical count on every host")
    m = MODELS[d.model]
    try:
        s = shape(Params.model_validate({"kind": "ai-training", "model": d.model,
                                         "accelerator": d.accelerator}))
    except ValueError as e:
        raise UserError(str(e)) from None
    r = Result("ai", inputs={k: v for k, v in vars(d).items()})
    demand = d.accelerators * s.batch_bytes / s.compute_s
    r.add("read_throughput", Figure(
        "Read throughput the accelerators need", demand / GB, "GB/s",
        "accelerators x batch_size x sample / compute_time",
        {"accelerators": d.accelerators, "batch_size": m.batch_size,
         "sample": Bytes(s.sample_bytes), "compute_time": s.compute_s}, SRC_DEMAND))
    r.add("read_at_au", Figure(
        "Read throughput at the AU pass level", demand * m.au_target / 100 / GB, "GB/s",
        "read_throughput x au_target", {"au_target": m.au_target / 100}, SRC_AU))
    r.add("per_host", Figure("Read throughput per host", demand / d.hosts / GB, "GB/s",
                             "read_throughput / hosts", {"hosts": d.hosts}, SRC_DEMAND))
    r.add("samples_s", Figure("Samples per second", d.accelerators * m.batch_size / s.compute_s,
                              "samples/s", "accelerators x batch_size / compute_time", {},
                              SRC_DEMAND))
    by_memory = MEMORY_FACTOR * d.hosts * d.memory
    by_steps = MIN_STEPS * m.batch_size * d.accelerators * s.sample_bytes
    dataset = max(by_memory, by_steps)
    files = math.ceil(dataset / s.file_bytes)
    r.add("capacity", Figure(
        "Data set (capacity)", files * s.file_bytes / GB, "GB",
        "max(5 x hosts x memory, 500 steps x batch x accelerators x sample), whole files",
        {"memory": Bytes(d.memory), "hosts": d.hosts, "files": files}, SRC_DATA))
    r.add("hosts_rate", Figure("Accelerators per host", ceil_div(d.accelerators, d.hosts),
                               "accelerators", "accelerators / hosts", {}, SRC_DEMAND))
    r.notes.append("GB and GB/s are decimal (10^9 bytes). Not an MLPerf Storage result: the "
                   "emitted scenario runs one host's share with fio (docs/ai.md).")
    return r


def scenario(d: AiDesign, r: Result, duration: str = "10m", warmup: str = "1m") -> str:
    """One host's accelerators, graded by MLPerf's AU rule; the data set from the host's
    memory (the kind's default) unless that is more than the sizing's share."""
    per_host = d.accelerators // d.hosts
    dataset = r.figures["capacity"].value * 1e9 / d.hosts
    wl = ["  train:", "    kind: ai-training", f"    model: {d.model}",
          f"    accelerator: {d.accelerator}", f"    accelerators: {per_host}   # one host's",
          "    # one host's share of the data set: at least 5 x its memory",
          f"    dataset: {size_value(dataset)}",
          f"    memory: {size_value(d.memory)}"]
    need = r.figures["per_host"]
    desc = (f"{per_host} simulated {d.accelerator.upper()}s training {d.model} on one host: "
            f"{need.value:.2f} GB/s of reads, AU at the MLPerf pass level")
    return document("ai-validation", desc, wl, f"{{duration: {duration}, warmup: {warmup}}}",
                    [f"  train: {scalar('mlperf')}"],
                    header(r, ("read_throughput", "read_at_au", "per_host", "capacity")))
