"""The `/metrics` endpoint: the standard library's HTTP server in a daemon thread.

It answers GET /metrics (and HEAD) and nothing else: other paths 404, other methods 405. It
binds to the loopback unless told otherwise, and there answers only requests whose Host header
names this machine (observe/address.py, the rule `assay serve` follows: no DNS rebinding).
Each scrape renders from LiveMetrics, negotiating OpenMetrics or text 0.0.4 from the
scraper's Accept header as Prometheus' own client libraries do.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rich.console import Console

from assay.exitcodes import UserError
from assay.metrics.duetime import due_windows
from assay.metrics.exposition import OPENMETRICS, TEXT, wants_openmetrics
from assay.observe.address import is_loopback, local_host_header, parse_address
from assay.observe.live import LiveMetrics
from assay.plan import Plan


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "assay"
    sys_version = ""

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def _refuse(self) -> None:
        self.send_response(405, "only GET /metrics")
        data = b"only GET /metrics\n"
        self.send_header("Allow", "GET, HEAD")
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def __getattr__(self, name: str) -> Any:
        # every other method (TRACE, CONNECT, made-up ones) is 405 as documented, not the
        # 501 http.server gives a method it has no do_ for
        if name.startswith("do_"):
            return self._refuse
        raise AttributeError(name)

    def _answer(self, body: bool) -> None:
        if self.server.local_only and not local_host_header(self.headers.get("Host")):
            self.send_error(403, "unexpected Host header")  # a rebound DNS name
            return
        if self.path.split("?", 1)[0] != "/metrics":
            self.send_error(404, "only /metrics")
            return
        om = wants_openmetrics(self.headers.get("Accept"))
        try:
            data = self.server.metrics.text(om).encode()
        except Exception as e:  # a scrape never takes the run down
            self.send_error(500, type(e).__name__)
            return
        self.send_response(200)
        self.send_header("Content-Type", OPENMETRICS if om else TEXT)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    metrics: LiveMetrics
    local_only = True  # on the loopback: only requests naming this machine


class MetricsServer:
    def __init__(self, metrics: LiveMetrics, host: str, port: int):
        self.metrics = metrics
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        server = type("_Server", (_Server,), {"address_family": family})
        try:
            self.httpd: _Server = server((host, port), _Handler)
        except OSError as e:
            raise UserError(f"--metrics {host}:{port}: cannot listen there: "
                            f"{e.strerror or e}") from None
        self.httpd.metrics = metrics
        # beyond the loopback the name is the user's to choose, as for `assay serve`
        self.httpd.local_only = is_loopback(host)
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="assay-metrics",
                                        daemon=True)

    @property
    def address(self) -> str:
        host, port = (str(x) for x in self.httpd.server_address[:2])
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


LINGER_S = 2.0  # after the run: a scraper at 1 s still sees the final values once


@contextlib.contextmanager
def serving(address: str | None, plan: Plan, console: Console) -> Iterator[LiveMetrics | None]:
    """`assay run --metrics ADDRESS`: the endpoint for the length of the run (None: off)."""
    if not address:
        yield None
        return
    try:
        host, port = parse_address(address, "--metrics")
    except ValueError as e:
        raise UserError(str(e)) from None
    metrics = LiveMetrics(plan.name, {c: jobs for c, (jobs, _, _) in due_windows(plan).items()})
    server = MetricsServer(metrics, host, port).start()
    if not is_loopback(host):
        console.print(f"[yellow]warning:[/] --metrics listens on {server.address}, beyond "
                      "this machine: anyone who reaches it reads the run's metrics (no "
                      "authentication)", markup=True, highlight=False)
    console.print(f"  metrics  http://{server.address}/metrics", highlight=False)
    try:
        yield metrics
        metrics.ended()
        time.sleep(LINGER_S)  # not after an exception: that run is already over
    finally:
        server.stop()
