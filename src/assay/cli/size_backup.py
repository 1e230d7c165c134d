"""`assay size backup`: the options; the sizing is assay.sizing.backup."""

from __future__ import annotations

import click

from assay.cli.size_common import (
    DURATION,
    RATE,
    SIZE,
    check_duration,
    emit_option,
    finish,
    output,
    state_units,
)
from assay.sizing import backup, emit


@click.command("backup")
@output([
    click.option("--dataset", type=SIZE, help="Data to back up (e.g. 2TB)."),
    click.option("--window", type=DURATION, help="Backup window (e.g. 4h): the throughput "
                                                 "required is dataset / window."),
    click.option("--required", type=RATE, help="Throughput required (e.g. 500MB/s), instead "
                                               "of --dataset/--window."),
    click.option("--spindles", type=int, help="Drives the backup writes to (the writing side)."),
    click.option("--per-spindle", type=RATE, default="25MB/s", show_default=True,
                 help="Backup throughput one HDD takes (seed 004: ~25-30 MB/s)."),
    click.option("--databases", type=int, default=1, show_default=True,
                 help="Databases backed up in parallel (the reading side)."),
    click.option("--per-database", type=RATE,
                 help="Throughput one database streams (seed 000's ESRP: 215MB/s)."),
    click.option("--throughput", type=RATE, help="Throughput you measured (e.g. 120MB/s)."),
    click.option("--targets", type=int, default=4, show_default=True,
                 help="Backup target files (SQL Server: more targets, more IOs in flight)."),
    click.option("--outstanding", type=click.IntRange(1, 2), default=2, show_default=True,
                 help="IOs in flight per target (SQL Server keeps 1-2)."),
    click.option("--duration", default="10m", show_default=True,
                 help="Measured time of the emitted scenario."),
    click.option("--warmup", default="1m", show_default=True,
                 help="Warm-up of the emitted scenario."),
    emit_option("one backup stream graded on the throughput it must sustain"),
])
def command(dataset: int | None, window: float | None, required: int | None,
            spindles: int | None, per_spindle: int, databases: int, per_database: int | None,
            throughput: int | None, targets: int, outstanding: int, duration: str, warmup: str,
            emit_path: str | None, as_json: bool, explain: bool) -> None:
    """Backup stream: throughput per spindle, database and target, outstanding IOs, time to
    back up, and the spindles a window needs."""
    d = backup.BackupDesign(dataset=dataset, window_s=window, required=required,
                            spindles=spindles, per_spindle=per_spindle, databases=databases,
                            per_database=per_database, throughput=throughput, targets=targets,
                            outstanding=outstanding)
    result = backup.size(d)
    scenario = None
    if emit_path:
        for opt, text in (("--duration", duration), ("--warmup", warmup)):
            check_duration(opt, text)
        scenario = emit.backup_scenario(d, result, duration, warmup)
    finish(result, as_json, explain, scenario, emit_path)


state_units(command)
