"""The agent's archive (assay/agent/ as a zipapp) and its rows, for every runner.

Each runner starts the agent where its fio runs: LocalRunner as `python -m assay.agent` here,
SshRunner by writing this archive once into the run's remote directory and running it with
the host's Python (the inventory's `ansible_python_interpreter`, else `python3`), as Ansible
runs its modules. The archive is built from the installed package, byte for byte the same on
every call (fixed timestamps), so each host runs exactly the code of this assay.
"""

from __future__ import annotations

import functools
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.runners.base import Runner

ARCHIVE = "agent.pyz"
PACKAGE = "assay_agent"  # the package's name inside the archive (its imports are relative)
_MAIN = (f"import sys\nfrom {PACKAGE}.__main__ import main\n"
         "sys.exit(main(sys.argv[1:]))\n")
_EPOCH = (1980, 1, 1, 0, 0, 0)


@functools.cache
def archive() -> bytes:
    """The zipapp: the agent package's modules and a __main__ that runs a command."""
    source = Path(__file__).resolve().parent.parent / "agent"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(source.glob("*.py")):
            z.writestr(zipfile.ZipInfo(f"{PACKAGE}/{path.name}", _EPOCH), path.read_bytes())
        z.writestr(zipfile.ZipInfo("__main__.py", _EPOCH), _MAIN)
    return buffer.getvalue()


def rows(stream: IO[bytes]) -> Iterator[dict[str, Any]]:
    """The agent's rows as they come (one JSON object per line); a line that is not one is
    skipped (a command's stray output must not end the run)."""
    for line in stream:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            yield row


def agent_python(runner: Runner, need: str = "latency from the due time") \
        -> tuple[str | None, str | None]:
    """(the host's Python version, None) when the host runs the agent (its `version`
    command: python3 >= 3.9 there), else (its version if known, why not: naming the host
    and what needs it)."""
    try:
        proc = runner.agent("version")
        # its output first: closing its stdin would end it there (hosts/ssh.py popen)
        timer = threading.Timer(60, proc.kill)
        timer.start()
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()
        timer.cancel()
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait()
    except Exception as e:  # noqa: BLE001 - OSError, the runner's own (SSH)
        return None, f"{runner.host}: cannot run assay's agent there ({need} needs it): {e}"
    row = next(rows(io.BytesIO(out)), None)
    version = str(row["python"]) if row and "python" in row else None
    if proc.returncode == 0 and row and row.get("ok"):
        return version, None
    if version:
        return version, (f"{runner.host}: its python3 is {version}; {need} needs python3 3.9 "
                         f"or newer there (for assay's agent): install it, or name it with "
                         f"ansible_python_interpreter in the inventory")
    lines = [ln.strip() for ln in err.decode(errors="replace").splitlines() if ln.strip()]
    return None, (f"{runner.host}: python3 does not run assay's agent there ({need} needs "
                  f"python3 3.9 or newer; name another with ansible_python_interpreter): "
                  f"{lines[-1] if lines else f'exit status {proc.returncode}'}")
