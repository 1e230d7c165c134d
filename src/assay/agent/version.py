"""`version`: what the host runs the agent with (hosts check refuses a Python too old)."""

from __future__ import annotations

import json
import platform
import sys

from . import VERSION

OLDEST = (3, 9)


def main(argv: list[str]) -> int:
    print(json.dumps({"agent": VERSION, "python": platform.python_version(),
                      "ok": sys.version_info[:2] >= OLDEST}), flush=True)
    return 0 if sys.version_info[:2] >= OLDEST else 1
