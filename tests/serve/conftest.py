"""`assay serve` started as the user starts it, on a free loopback port; stopped by its pid."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.observe.prom import free_port, http_get
from tests.serve.results import build


class Served:
    def __init__(self, root: Path, url: str, runs: dict[str, Path]):
        self.root, self.url, self.runs = root, url, runs


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("serve") / "results"
    runs = build(root)
    with serving(root) as url:
        yield Served(root, url, runs)


@contextmanager
def serving(root: Path) -> Iterator[str]:
    """`assay serve --results ROOT` on a free port: its base URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "assay", "serve", "--port", str(port),
                             "--results", str(root)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "ASSAY_RESULTS": str(root)})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if http_get(url + "/")[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"assay serve did not start: {proc.stdout.read()}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
