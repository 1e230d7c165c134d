"""The workload's own blocks made self-checking: in integrity mode every fio job that writes a
data file writes fio's verify header (`verify=crc32c`) every `verify_interval` bytes, and so
does the prefill of that file, so every block of the file carries a header from the prefill
on. fio itself never reads them back (`do_verify=0`, no `verify_backlog`) and keeps no state
files (`verify_state_save=0`): the checksum pass (checksum.py) reads them after the load.

The interval is one grid per file: the greatest common divisor of every block size written to
it, so that a 32k write over 8k ones rewrites whole 8k blocks, each with its own header. A file
whose writes assay cannot lay on one grid (a user's fio job file, odd sizes, trims) is left
without headers and said so in the plan.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from assay.fio.jobfile import Options
from assay.integrity.fioheader import MIN_INTERVAL
from assay.workloads.base import Stream

WRITES = {"write", "randwrite", "rw", "readwrite", "randrw"}
PREFILL_BS = 1 << 20  # the prefill writes 1m (plan/model.py, prefill_jobs)
_SIZE = re.compile(r"(\d+)([km]?)i?b?", re.IGNORECASE)
_SCALE = {"": 1, "k": 1 << 10, "m": 1 << 20}
# options that move or reshape writes off one grid: such a file gets no headers
_UNGRIDDED = ("bsrange", "blocksize_range", "bs_unaligned", "blocksize_unaligned", "ba",
              "blockalign", "offset_increment", "zonemode", "trim_percentage",
              "verify", "verify_interval", "verify_offset")


@dataclass(frozen=True)
class HeadedFile:
    """A data file whose every `interval` bytes carry a fio verify header."""

    workload: str
    name: str  # relative to the target directory
    size: int
    interval: int

    def to_json(self) -> dict[str, str | int]:
        return {"workload": self.workload, "path": self.name, "size": self.size,
                "interval": self.interval}


def header_options(interval: int) -> Options:
    return {"verify": "crc32c", "verify_interval": interval, "do_verify": 0,
            "verify_state_save": 0}


def _size(text: str) -> int | None:
    m = _SIZE.fullmatch(text.strip())
    return int(m.group(1)) * _SCALE[m.group(2).lower()] if m else None


def block_sizes(options: Options) -> list[int] | None:
    """Every block size a job writes, and where its region starts (`offset`: the grid must
    hold there too), or None when they are not a plain `bs` or `bssplit` and a byte offset."""
    if "bssplit" in options:
        text = str(options["bssplit"])
        if "," in text:
            return None
        sizes = [_size(part.split("/")[0]) for part in text.split(":") if part]
    else:
        sizes = [_size(str(options.get("bs", "4k")))]
    if options.get("offset") not in (None, 0, "0"):
        sizes.append(_size(str(options["offset"])))
    return None if not sizes or None in sizes else [s for s in sizes if s is not None]


def _writes(options: Options) -> bool:
    return str(options.get("rw", "read")) in WRITES or "trim" in str(options.get("rw", ""))


def apply(streams: list[Stream], workloads: list[str], kinds: dict[str, str]) -> list[str]:
    """Give every writing job of `workloads` (name -> kind in `kinds`) verify headers; the
    notes for the plan about files left without them."""
    grids: dict[str, int] = {}  # file -> grid, 0 when its writes fall on none
    for s in streams:
        if s.workload not in workloads:
            continue
        for job in s.jobs:
            if not _writes(job.options) or "filename" not in job.options:
                continue
            name = str(job.options["filename"])
            sizes = block_sizes(job.options)
            plain = kinds.get(s.workload) != "fio" and sizes is not None \
                and "trim" not in str(job.options.get("rw")) \
                and not any(k in job.options for k in _UNGRIDDED)
            grid = math.gcd(*sizes) if plain and sizes else 0
            known = grids.get(name, grid)
            grids[name] = math.gcd(known, grid) if known and grid else 0
    ends = {f.name: f.size for s in streams for f in s.files}
    for name, grid in grids.items():
        # the prefill's 1 MiB writes and the file's end must fall on the grid too, or fio
        # would lay the prefill's headers elsewhere (it takes the gcd of its sizes instead)
        if not grid or grid % MIN_INTERVAL or PREFILL_BS % grid or ends.get(name, 0) % grid:
            grids[name] = 0
    notes = [f"integrity: {name} is written in sizes or places that do not fall on one grid of "
             f"whole 512-byte sectors that divides 1 MiB (or by a user's fio job file): no "
             f"checksum pass over it" for name, grid in grids.items() if not grid]
    deduped: set[str] = set()
    for s in streams:
        for job in s.jobs:
            grid = grids.get(str(job.options.get("filename")), 0)
            if grid and _writes(job.options):
                job.options.update(header_options(grid))
                if job.options.get("dedupe_percentage"):
                    deduped.add(s.workload)
    notes += [f"integrity: fio fills the buffers of writes with verify headers itself and does "
              f"not apply dedupe_percentage to them: {w}'s data will not dedupe as "
              f"`data.dedupe` asks (compressibility is kept)" for w in sorted(deduped)]
    return notes


def headed_files(streams: list[Stream]) -> list[HeadedFile]:
    """The data files whose writes carry headers (as `apply` left the jobs), in plan order."""
    out: dict[str, HeadedFile] = {}
    sizes = {f.name: f.size for s in streams for f in s.files}
    for s in streams:
        for job in s.jobs:
            name = str(job.options.get("filename"))
            if job.options.get("verify") == "crc32c" and name in sizes and name not in out:
                out[name] = HeadedFile(s.workload, name, sizes[name],
                                       int(str(job.options["verify_interval"])))
    return list(out.values())


def prefill_options(streams: list[Stream]) -> dict[str, Options]:
    """The prefill of a headed file writes headers on the same grid: file name -> options."""
    return {f.name: header_options(f.interval) for f in headed_files(streams)}
