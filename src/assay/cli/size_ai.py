"""`assay size ai`: the options; the sizing is assay.sizing.ai."""

from __future__ import annotations

import click

from assay.cli.size_common import SIZE, check_duration, emit_option, finish, output, state_units
from assay.sizing import ai
from assay.workloads.ai_training import MODELS


@click.command("ai")
@output([
    click.option("--accelerators", type=int, required=True,
                 help="Simulated accelerators in all (MLPerf Storage's load unit)."),
    click.option("--model", type=click.Choice(sorted(MODELS)), default="unet3d",
                 show_default=True, help="Training workload (DLIO's parameters)."),
    click.option("--accelerator", type=click.Choice(["h100", "a100", "b200"]), default="h100",
                 show_default=True, help="Accelerator type: the compute time per batch."),
    click.option("--hosts", type=int, default=1, show_default=True,
                 help="Client hosts, the accelerators spread evenly over them."),
    click.option("--memory", type=SIZE, default="512GB", show_default=True,
                 help="Memory per host: the data set is at least 5 x all of it."),
    click.option("--duration", default="10m", show_default=True,
                 help="Measured time of the emitted scenario."),
    click.option("--warmup", default="1m", show_default=True,
                 help="Warm-up of the emitted scenario."),
    emit_option("one host's accelerators graded by MLPerf's AU rule"),
])
def command(accelerators: int, model: str, accelerator: str, hosts: int, memory: int,
            duration: str, warmup: str, emit_path: str | None, as_json: bool,
            explain: bool) -> None:
    """AI training (MLPerf Storage-like): the read GB/s N accelerators need, the data set that
    keeps caches out, and the scenario that validates one host."""
    d = ai.AiDesign(accelerators, model, accelerator, hosts, memory)
    result = ai.size(d)
    scenario = None
    if emit_path:
        for opt, text in (("--duration", duration), ("--warmup", warmup)):
            check_duration(opt, text)
        scenario = ai.scenario(d, result, duration, warmup)
    finish(result, as_json, explain, scenario, emit_path)


state_units(command)
