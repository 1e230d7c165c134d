"""`--metrics` refused before any IO when it cannot serve; a warning beyond the loopback; and
the `assay serve` verb's own start-up checks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from assay.exitcodes import UserError
from assay.observe.address import is_loopback, parse_address
from assay.observe.server import serving
from assay.plan import plan_text
from tests.observe.prom import free_port, http_get

SCENARIO = """\
name: tiny
workloads:
  db: {kind: oltp, data_iops: 100, log_iops: 10, dataset: 16MiB}
timeline: {warmup: 0s, duration: 2s}
"""


def assay(*args: str, results: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True,
                          text=True, timeout=timeout,
                          env={**os.environ, "ASSAY_RESULTS": str(results)})


def test_addresses() -> None:
    assert parse_address("9464", "--metrics") == ("127.0.0.1", 9464)
    assert parse_address("0.0.0.0:9464", "--metrics") == ("0.0.0.0", 9464)
    assert parse_address("[::1]:9464", "--metrics") == ("::1", 9464)
    for bad in ("", "x", "70000", "host:", "1.2.3.4:0"):
        with pytest.raises(ValueError, match=r"\[ADDRESS:\]PORT"):
            parse_address(bad, "--metrics")
    assert is_loopback("127.0.0.2") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.1")


@pytest.mark.parametrize("value", ["not-a-port", "127.0.0.1:99999"])
def test_bad_address_is_refused_before_any_io(tmp_path: Path, value: str) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    r = assay("run", str(tmp_path / "s.yaml"), "--metrics", value, results=tmp_path / "res")
    assert r.returncode == 2, r.stderr
    assert "--metrics" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "res").exists() or not any((tmp_path / "res").glob("2*"))


def test_port_in_use_is_refused_before_any_io(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = assay("run", str(tmp_path / "s.yaml"), "--metrics", str(port),
                  results=tmp_path / "res")
    assert r.returncode == 2, r.stderr
    assert f"127.0.0.1:{port}: cannot listen there" in r.stderr
    assert not any((tmp_path / "res").glob("2*")) if (tmp_path / "res").exists() else True


def test_beyond_the_loopback_warns_and_serves_only_metrics(tmp_path: Path) -> None:
    port = free_port()
    out = tmp_path / "console.txt"
    with open(out, "w") as fh:
        console = Console(file=fh, width=200)
        with serving(f"0.0.0.0:{port}", plan_text(SCENARIO, "s.yaml"), console) as m:
            assert m is not None
            status, headers, body = http_get(f"http://127.0.0.1:{port}/metrics")
            assert status == 200 and b'assay_phase{scenario="tiny",phase="prefill"} 1' in body
            assert http_get(f"http://127.0.0.1:{port}/")[0] == 404
    text = out.read_text()
    assert "warning:" in text and "beyond this machine" in text
    with pytest.raises(OSError):  # closed with the run
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_off_by_default_and_loopback_by_default(tmp_path: Path) -> None:
    quiet = Console(file=open(os.devnull, "w"))  # noqa: SIM115
    with serving(None, plan_text(SCENARIO, "s.yaml"), quiet) as m:
        assert m is None
    port = free_port()
    out = tmp_path / "console.txt"
    with open(out, "w") as fh, serving(str(port), plan_text(SCENARIO, "s.yaml"),
                                       Console(file=fh, width=200)):
        assert http_get(f"http://127.0.0.1:{port}/metrics")[0] == 200
    assert "warning" not in out.read_text()
    assert f"http://127.0.0.1:{port}/metrics" in out.read_text()


def test_serve_refuses_a_missing_directory_and_warns_beyond_the_loopback(tmp_path: Path) -> None:
    r = assay("serve", "--results", str(tmp_path / "none"), results=tmp_path)
    assert r.returncode == 2 and "no such directory" in r.stderr
    (tmp_path / "res").mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "assay", "serve", "--host", "0.0.0.0",
                             "--port", "0", "--results", str(tmp_path / "res")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline() if proc.stdout else ""
            lines.append(line)
            if "assay serve: http://" in line or not line:
                break
        text = " ".join("".join(lines).split())  # the console wraps lines
        assert "warning:" in text and "no authentication" in text, text
        port = int(text.split("http://0.0.0.0:")[1].split("/")[0])
        # beyond the loopback the Host header is not checked (the name is the user's)
        status, _, _ = http_get(f"http://127.0.0.1:{port}/")
        assert status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_user_errors_are_user_errors() -> None:
    quiet = Console(file=open(os.devnull, "w"))  # noqa: SIM115
    with pytest.raises(UserError, match="--metrics 'x'"), \
            serving("x", plan_text(SCENARIO, "s.yaml"), quiet):
        pass
