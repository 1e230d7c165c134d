"""Debian's Prometheus in a test: a free port on the loopback, its own storage directory,
stopped (by its own pid) whatever happens."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
needs_prometheus = pytest.mark.skipif(PROMETHEUS is None or PROMTOOL is None,
                                      reason="prometheus is not installed (apt-get install "
                                      "prometheus, or `make system`)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy


def http_get(url: str, headers: dict[str, str] | None = None, timeout: float = 30.0,
             method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with _DIRECT.open(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


class Prometheus:
    def __init__(self, port: int):
        self.url = f"http://127.0.0.1:{port}"

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        params = {"query": expr, **({"time": f"{at:.3f}"} if at else {})}
        status, _, body = http_get(f"{self.url}/api/v1/query?{urllib.parse.urlencode(params)}")
        doc = json.loads(body)
        assert status == 200 and doc["status"] == "success", doc
        result: list[dict[str, Any]] = doc["data"]["result"]
        return result


@contextmanager
def prometheus(tmp: Path, scrape: str | None = None, storage: Path | None = None) \
        -> Iterator[Prometheus]:
    """Prometheus scraping `scrape` (host:port) every second, or serving `storage` alone."""
    assert PROMETHEUS
    port = free_port()
    config = tmp / f"prometheus-{port}.yml"
    jobs = "" if scrape is None else (
        "scrape_configs:\n  - job_name: assay\n    static_configs:\n"
        f"      - targets: ['{scrape}']\n")
    config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n" + jobs)
    data = storage or tmp / f"prometheus-data-{port}"
    log = open(tmp / f"prometheus-{port}.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([PROMETHEUS, f"--config.file={config}",
                             f"--storage.tsdb.path={data}", "--storage.tsdb.retention.time=100y",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        prom = Prometheus(port)
        deadline = time.monotonic() + 60
        while True:
            try:
                if http_get(f"{prom.url}/-/ready", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("prometheus did not start: "
                                     + (tmp / f"prometheus-{port}.log").read_text()[-2000:])
            time.sleep(0.3)
        yield prom
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
