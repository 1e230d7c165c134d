"""PostgreSQL runs that end badly say why in the server's words, and leave nothing in the
temporary directory (issue 21, item 12). Real server, real pgbench, a real full filesystem."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path

from assay import leftovers as run_leftovers
from tests.postgres.conftest import needs_postgres
from tests.postgres.test_engine_postgres import assay_with_pgbench_running
from tests.realfs import Machine

pytestmark = needs_postgres

FULL = """\
name: pg-full
workloads:
  pg: {kind: postgres, scale: 1, clients: 4, rate: 300}
timeline: {duration: 40s}
"""


def test_a_full_target_gives_the_servers_reason_not_only_pgbenchs_status(
        pg_machine: Machine, run_scenario, results):
    _, mnt = pg_machine.filesystem("xfs", size="300M")
    target = mnt / "t"

    def fill() -> None:
        end = time.monotonic() + 90
        while time.monotonic() < end:
            events = list(results.glob("*/events.ndjson"))
            if events and '"kind":"load"' in events[0].read_text():
                time.sleep(2)  # pgbench commits, then every free byte goes
                subprocess.run(["dd", "if=/dev/zero", f"of={mnt}/filler", "bs=1M"],
                               capture_output=True, check=False)
                return
            time.sleep(0.1)

    filler = threading.Thread(target=fill, daemon=True)
    filler.start()
    outcome, record = run_scenario(FULL, target_dir=target)
    filler.join(30)
    assert outcome.status == "aborted", record.get("reason")
    assert "No space left on device" in outcome.reason, outcome.reason
    assert "the server: " in outcome.reason


def test_clean_removes_the_socket_directory_a_killed_run_left(tmp_path):
    proc, results = assay_with_pgbench_running(tmp_path, "pg-sock", 50)
    (found,) = results.glob("*/postgres/pg/cluster.json")
    sock = Path(json.loads(found.read_text())["socket"])
    assert sock.is_dir() and sock.name.startswith("assay-pg-")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    end = time.monotonic() + 15  # the parent-death signal ends the server
    while any(sock.iterdir()) and time.monotonic() < end:
        time.sleep(0.1)
    assert sock.is_dir()  # what `assay clean` is for
    done = run_leftovers.clean(results)
    assert any(f"removed the PostgreSQL socket directory {sock}" in x for x in done), done
    assert not sock.exists()
