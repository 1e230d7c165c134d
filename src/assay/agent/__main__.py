"""`python3 agent.pyz <command> ...`: runs one command module of this package."""

from __future__ import annotations

import importlib
import sys

# each a module of this package with main(argv) -> int
COMMANDS = (
    "version",
    "integrity",
    "issuelog",
    "pgbackup",
    "pgbench",
    "pgclean",
    "utilisation",
    "verify",
)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: agent.pyz {{{','.join(COMMANDS)}}} [arguments]", file=sys.stderr)
        return 2
    package = __package__ or "assay_agent"
    module = importlib.import_module(f"{package}.{argv[0]}")
    result: int = module.main(argv[1:])
    return result


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
