"""`assay serve`: browse the results directory in a web browser (read-only, local).

It imports neither cli.common nor anything that runs: the server process holds no engine."""

from __future__ import annotations

import socket
from pathlib import Path

import click

from assay.console import make_console
from assay.exitcodes import UserError
from assay.observe.address import is_loopback
from assay.results.rundir import default_results_root
from assay.serve.app import ResultsServer


@click.command("serve")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True,
              help="Port to listen on (0: any free port, printed).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but a loopback address lets other machines "
                   "read every result (no authentication): a warning says so.")
@click.option("--results", "results", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Results directory (default: $ASSAY_RESULTS or ./results).")
def command(port: int, host: str, results: Path | None) -> None:
    """Browse the results directory: runs with filters, each run's report (live while it
    runs), search and sweep records, and overlays of two or more runs as `assay compare`
    draws them (their URL names them; downloadable as one HTML file).

    Read-only: it serves only files of the results directory, and GET only.
    Ctrl-C stops it. See docs/observability.md.
    """
    console = make_console(False)
    root = results or default_results_root()
    if not root.is_dir():
        raise UserError(f"--results {root}: no such directory (run something first, or give "
                        "--results DIR)")
    local = is_loopback(host)
    server_cls = type("Server", (ResultsServer,), {
        "address_family": socket.AF_INET6 if ":" in host else socket.AF_INET})
    try:
        server = server_cls((host, port), root.resolve(), local_only=local)
    except OSError as e:
        raise UserError(f"--host {host} --port {port}: cannot listen there: "
                        f"{e.strerror or e}") from None
    if not local:
        console.print(f"[yellow]warning:[/] listening on {host}, beyond this machine: anyone "
                      "who reaches it reads every result in the directory (no authentication)")
    bound_host, bound_port = (str(x) for x in server.server_address[:2])
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    console.print(f"assay serve: http://{shown}:{bound_port}/  (results: {root}; Ctrl-C stops)",
                  highlight=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
