"""The `/metrics` endpoint over HTTP: on the loopback it answers only requests naming this
machine (no DNS rebinding, the rule `assay serve` follows), and every method but GET and HEAD
is 405, as docs/observability.md says (not http.server's 501)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from assay.observe.live import LiveMetrics
from assay.observe.server import MetricsServer
from tests.observe.prom import free_port


@contextmanager
def endpoint(host: str = "127.0.0.1") -> Iterator[int]:
    port = free_port()
    server = MetricsServer(LiveMetrics("tiny"), host, port).start()
    try:
        yield port
    finally:
        server.stop()


def request(port: int, line: str, host: str | None = "127.0.0.1") -> tuple[int, dict[str, str],
                                                                         bytes]:
    """One request sent byte for byte: (status, headers, body)."""
    head = f"{line}\r\n" + (f"Host: {host}\r\n" if host is not None else "")
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"{head}Connection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    top, _, body = data.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    headers = dict(x.split(": ", 1) for x in lines[1:] if ": " in x)
    return int(lines[0].split()[1]), headers, body


def test_a_host_header_naming_another_machine_is_refused() -> None:
    with endpoint() as port:
        for host in ("127.0.0.1", f"127.0.0.1:{port}", f"localhost:{port}", "[::1]:9464"):
            status, _, body = request(port, "GET /metrics HTTP/1.1", host)
            assert status == 200 and b"assay_" in body, host
        for host in ("attacker.example", f"attacker.example:{port}", "127.0.0.1.nip.io",
                     "localhost.attacker.example", "", None):
            status, _, body = request(port, "GET /metrics HTTP/1.1", host)
            assert status == 403 and b"assay_" not in body, host
        assert request(port, "HEAD /metrics HTTP/1.1", "evil.example")[0] == 403


def test_beyond_the_loopback_the_name_is_the_users() -> None:
    with endpoint("0.0.0.0") as port:
        status, _, body = request(port, "GET /metrics HTTP/1.1", "metrics.lab.example:9464")
        assert status == 200 and b"assay_" in body


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE",
                                    "CONNECT", "PROPFIND", "BREW"])
def test_other_methods_are_405_with_allow(method: str) -> None:
    with endpoint() as port:
        status, headers, _ = request(port, f"{method} /metrics HTTP/1.1")
        assert status == 405, method
        assert headers.get("Allow") == "GET, HEAD"
        assert request(port, "GET /nothing HTTP/1.1")[0] == 404
        assert request(port, "HEAD /metrics HTTP/1.1")[0] == 200


def test_the_host_rule_is_one_rule() -> None:
    from assay.observe.address import local_host_header  # serve's rule too (serve/app.py)

    assert local_host_header("LOCALHOST:8080") and local_host_header("[::1]")
    assert local_host_header("::1") and local_host_header(" 127.0.0.1 ")
    assert not local_host_header("[::2]:80") and not local_host_header(None)
    assert not local_host_header("127.0.0.2") and not local_host_header("localhost.")
