"""`assay size`: application profile -> requirements -> resilient cluster -> validating scenario.

One module per subcommand (size_exchange, size_oltp, size_vdi, size_cluster, size_backup),
shared option types and output in size_common; the sizing itself is assay.sizing.
"""

from __future__ import annotations

import click

from assay.cli import size_ai, size_backup, size_cluster, size_exchange, size_oltp, size_vdi


@click.group("size", context_settings={"help_option_names": ["-h", "--help"]})
def command() -> None:
    """Size a deployment from its application profile and emit the scenario that proves it.

    \b
    Sizes are decimal, as drives and quotas are quoted: 800MB = 800 x 10^6
    bytes, 3.84TB = 3.84 x 10^12 bytes. Binary sizes need MiB/GiB/TiB.

    \b
    Exit codes: 0 every design rule holds, 1 at least one fails (the numbers
    and the scenario are still produced), 2 invalid input.

    \b
    Examples:
      assay size exchange --mailboxes 60000 --messages 150 --mailbox-size 800MB \\
          --servers 3 --copies 2 --databases-per-server 8 --explain
      assay size exchange --iops 8798 --messages 150 --servers 3
      assay size oltp --tpm 1.05M --data-iops 6000 --instances 4 --nodes 4
      assay size backup --spindles 4 --dataset 2TB
      assay size cluster --node-cores 32 --node-ram 512GiB --drives 6 \\
          --drive-size 3.84TB --workload exchange.json --rf 2
    """


for _sub in (size_exchange, size_oltp, size_vdi, size_cluster, size_backup, size_ai):
    command.add_command(_sub.command)
