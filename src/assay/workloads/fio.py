"""A user's own fio job file as a workload: every section becomes a stream of this workload.

assay owns where the data lives and how long the load runs, so `filename`, `directory`,
`runtime`, `time_based` and output options in the file are replaced; everything else is kept.
"""

from __future__ import annotations

import configparser
from pathlib import Path
from typing import Literal

from pydantic import Field

from assay.fio.jobfile import FioJob, Options
from assay.metrics.sampler import ComponentSpec
from assay.scenario.models import WorkloadBase
from assay.workloads.base import BuildContext, DataFile, Stream

OWNED = {"filename", "directory", "runtime", "time_based", "output", "output-format",
         "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "ramp_time"}


class Params(WorkloadBase):
    kind: Literal["fio"] = "fio"
    job: str = Field(..., description="fio job file, relative to the scenario file")
    base_dir: str = Field("", exclude=True, description="set by the loader")


def read_jobfile(path: Path) -> tuple[Options, dict[str, Options]]:
    parser = configparser.ConfigParser(allow_no_value=True, strict=False, interpolation=None,
                                       delimiters=("=",), comment_prefixes=(";", "#"))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"cannot read fio job file {path}: {e.strerror}") from None
    except configparser.Error as e:
        raise ValueError(f"fio job file {path}: {e.message}") from None
    def opts(section: str) -> Options:
        return {k: (True if v is None else v) for k, v in parser[section].items()
                if k not in OWNED}
    glob = opts("global") if parser.has_section("global") else {}
    jobs = {s: {k: v for k, v in opts(s).items() if k not in glob or glob[k] != v}
            for s in parser.sections() if s != "global"}
    if not jobs:
        raise ValueError(f"fio job file {path} has no job sections")
    return glob, jobs


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    glob, sections = read_jobfile(Path(p.base_dir or ".") / p.job)
    total = 1 << 30 if p.dataset is None else p.dataset
    streams = []
    for section, opts in sections.items():
        stream = section.replace(".", "_").replace(" ", "_")
        f = DataFile(f"{name}.{stream}.dat", max(1 << 20, total // len(sections)))
        merged: Options = {**glob, **opts, "filename": f.name}
        merged.setdefault("size", f.size)
        job = FioJob(f"{name}.{stream}", merged)
        comps = [ComponentSpec(f"{name}.{stream}.{d}", [job.name], d) for d in ("read", "write")]
        streams.append(Stream(name, stream, [f], [job], comps, description=f"fio job [{section}]"))
    return streams
