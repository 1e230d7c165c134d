"""`assay size vdi`: the options; the sizing is assay.sizing.vdi."""

from __future__ import annotations

import click

from assay.cli.size_common import (
    NODE_OPTIONS,
    SIZE,
    check_duration,
    emit_option,
    finish,
    output,
    state_units,
)
from assay.sizing import emit, vdi


@click.command("vdi")
@output([
    click.option("--desktops", type=int, required=True, help="Virtual desktops."),
    click.option("--profile", type=click.Choice(sorted(vdi.IOPS_PER_DESKTOP)),
                 default="knowledge", show_default=True,
                 help="Login VSI worker profile: task 8, knowledge 12, power 26 IOPS steady."),
    click.option("--os", "os_", type=click.Choice(sorted(vdi.USERS_PER_CORE)), default="win10",
                 show_default=True, help="Desktop OS, for the users-per-core density."),
    click.option("--vcpus", type=int, default=2, show_default=True,
                 help="vCPUs per desktop (recorded; cores come from the density)."),
    click.option("--ram", type=SIZE, default="2GiB", show_default=True,
                 help="RAM per desktop."),
    click.option("--images", type=int, default=1, show_default=True, help="Master images."),
    click.option("--image-size", type=SIZE, default="40GiB", show_default=True,
                 help="Size of one master image (3 versions are kept)."),
    click.option("--cache", type=SIZE, default="6GiB", show_default=True,
                 help="Write cache / clone delta per desktop."),
    click.option("--profile-size", type=SIZE, default="0", show_default=True,
                 help="User profile data per desktop kept on the cluster."),
    *NODE_OPTIONS,
    click.option("--latency", default="20ms", show_default=True,
                 help="p99 read and write latency threshold in the emitted scenario."),
    emit_option(),
])
def command(desktops: int, profile: str, os_: str, vcpus: int, ram: int, images: int,
            image_size: int, cache: int, profile_size: int, nodes: int | None, failures: int,
            duration: str, warmup: str, latency: str, emit_path: str | None, as_json: bool,
            explain: bool) -> None:
    """Virtual desktops: IOPS (steady, login and boot storms), cores, RAM and capacity."""
    d = vdi.VdiDesign(desktops=desktops, profile=profile, os=os_, vcpus=vcpus, ram=ram,
                      images=images, image_size=image_size, cache=cache,
                      profile_size=profile_size, nodes=nodes, failures=failures)
    result = vdi.size(d)
    scenario = None
    if emit_path:
        for opt, text in (("--latency", latency), ("--duration", duration),
                          ("--warmup", warmup)):
            check_duration(opt, text)
        scenario = emit.vdi_scenario(d, result, latency, duration, warmup)
    finish(result, as_json, explain, scenario, emit_path)


state_units(command)
