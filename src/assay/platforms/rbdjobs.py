"""fio job files on RBD images: one image per workload instance, its files laid end to end.

A `ceph` target without a `path` runs on RBD: each workload instance (`<host>.<k>/` in a
cluster run, the whole run on one host) gets an image `assay.<scenario>.<instance>`, made by
the driver (platforms/cephimages.py) before the prefill and removed at the end. A job's file
becomes a region of its instance's image, as files on a raw device do:

    ioengine=rbd  clientname=admin  pool=assay  rbdname=assay.oltp.n1.0  offset=0  size=1g

This module only renders; nothing here talks to Ceph.
"""

from __future__ import annotations

import re

from assay.exitcodes import UserError
from assay.fio.jobfile import FioJob, Options
from assay.scenario.models import Target

ROOT = "run"  # the instance name of files outside any sub-directory (a one-host run)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
ALIGN = 4 << 20  # images end on an object boundary


def on_rbd(target: Target) -> bool:
    """A ceph target drives RBD images unless it names a (CephFS) directory."""
    return target.platform == "ceph" and not target.path and not target.device


def image_name(scenario: str, instance: str) -> str:
    return f"assay.{_UNSAFE.sub('_', scenario)[:60]}.{instance}"


def instance_of(file: str) -> str:
    return file.split("/", 1)[0] if "/" in file else ROOT


def layout(files: list[tuple[str, int]]) -> dict[str, tuple[str, int]]:
    """file -> (its instance, its byte offset in the instance's image)."""
    at: dict[str, int] = {}
    out: dict[str, tuple[str, int]] = {}
    for name, size in files:
        inst = instance_of(name)
        out[name] = (inst, at.get(inst, 0))
        at[inst] = at.get(inst, 0) + size
    return out


def images(scenario: str, files: list[tuple[str, int]]) -> dict[str, int]:
    """image name -> its size in bytes (the instance's files, rounded up to 4 MiB)."""
    sizes: dict[str, int] = {}
    for name, size in files:
        key = image_name(scenario, instance_of(name))
        sizes[key] = sizes.get(key, 0) + size
    return {k: -(-v // ALIGN) * ALIGN for k, v in sizes.items()}


def global_options(target: Target) -> Options:
    return {"ioengine": "rbd", "clientname": str(target.options.get("client") or "admin"),
            "pool": str(target.options.get("pool") or "rbd")}


def on_images(scenario: str, files: list[tuple[str, int]], jobs: list[FioJob]) \
        -> list[FioJob]:
    """Each job on its file's region of its instance's image (`files`: the plan's)."""
    where = layout(files)
    out = []
    for j in jobs:
        name = str(j.options.get("filename", ""))
        if ":" in name or name not in where:
            raise UserError(f"job {j.name}: {name!r} is not one file of the plan: on RBD each "
                            f"job drives one file (a region of its instance's image)")
        inst, offset = where[name]
        opts = {k: v for k, v in j.options.items() if k != "filename"}
        out.append(FioJob(j.name, {"rbdname": image_name(scenario, inst), **opts,
                                   "offset": offset}))
    return out
