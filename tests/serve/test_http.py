"""`assay serve` over plain HTTP: read-only, nothing outside the results directory, user text
inert in every page, overlays named by their URL and downloadable as one file."""

from __future__ import annotations

import re
import socket
import urllib.parse
from pathlib import Path

from tests.observe.prom import http_get
from tests.serve.conftest import Served
from tests.serve.results import HOSTILE, HOSTILE_DESC, LIVE, RUNS


def raw(served: Served, request_line: str, host: str = "127.0.0.1") -> tuple[int, bytes]:
    """A request sent byte for byte (no client normalises the path)."""
    port = int(served.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"{request_line}\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_path_traversal_is_refused(served: Served, tmp_path: Path) -> None:
    secret = served.root.parent / "secret.txt"
    secret.write_text("SECRET-OUTSIDE-RESULTS")
    run = RUNS[0][0]
    (served.runs[run] / "leak").symlink_to(secret)  # a link out of the run directory
    (served.runs[run] / "etc-link").symlink_to("/etc")
    attempts = [
        f"/runs/{run}/files/../../secret.txt",
        f"/runs/{run}/files/..%2f..%2fsecret.txt",
        f"/runs/{run}/files/%2e%2e/%2e%2e/secret.txt",
        f"/runs/{run}/files/leak",
        f"/runs/{run}/files/etc-link/passwd",
        f"/runs/{run}/files//etc/passwd",
        "/runs/../secret.txt",
        "/runs/..%2fsecret.txt/files/x",
        f"/runs/{run}/../../secret.txt",
        "/records/search/..%2f..%2fsecret.txt",
        "/records/../secret.txt/x",
        "/compare?run=..&run=../..",
        "/../../etc/passwd",
        f"/runs/{run}/files/run.json%00.txt",
    ]
    for path in attempts:
        status, body = raw(served, f"GET {path} HTTP/1.1")
        assert status in (400, 404), (path, status)
        assert b"SECRET-OUTSIDE-RESULTS" not in body and b"root:x:0:0" not in body, path
    # a file of the run directory is served, as plain text in a sandbox
    status, headers, body = http_get(f"{served.url}/runs/{run}/files/run.json")
    assert status == 200 and body.startswith(b"{")
    assert headers["Content-Type"].startswith("text/plain")
    assert headers["Content-Security-Policy"] == "sandbox"
    status, _, body = http_get(f"{served.url}/runs/{run}/files/hosts/local/run.fio")
    assert status == 200 and b"[global]" in body


def test_read_only_and_local(served: Served) -> None:
    for method in ("POST", "PUT", "DELETE"):
        assert raw(served, f"{method} / HTTP/1.1")[0] == 405
    assert raw(served, "GET / HTTP/1.1", host="attacker.example")[0] == 403  # DNS rebinding
    assert raw(served, "GET / HTTP/1.1", host="localhost:8080")[0] == 200


def test_user_text_never_becomes_markup(served: Served) -> None:
    hostile_id = RUNS[3][0]
    pages = ["/", f"/runs/{urllib.parse.quote(hostile_id)}/",
             "/records/search/20261115-100000_mail-btrfs_ccccc1",
             f"/compare?run={urllib.parse.quote(hostile_id)}&run={RUNS[0][0]}"]
    for path in pages:
        status, headers, body = http_get(served.url + path)
        text = body.decode()
        assert status == 200, path
        assert "script-src 'unsafe-inline'" in headers["Content-Security-Policy"]
        assert "default-src 'none'" in headers["Content-Security-Policy"]  # nothing fetched
        for needle in ("<img src=x", "<b>y", "<script>alert(2)", "</script><script>"):
            assert needle not in text, (path, needle)
        # but the text is there, as inert JSON escapes
        assert "\\u003cimg src=x onerror=alert(1)\\u003e" in text or path == "/compare", path
        assert not re.search(r"<(script|link|img)[^>]+src=\"?https?:", text), path


def test_overlay_is_named_by_its_url_and_downloads_as_one_file(served: Served) -> None:
    a, b = RUNS[0][0], RUNS[1][0]
    url = f"{served.url}/compare?run={a}&run={b}"
    status, _, body = http_get(url)
    page = body.decode()
    assert status == 200 and f'href="/compare?run={a}&amp;run={b}&amp;download=1"' in page
    assert '"kind":"compare"' in page and "compressibility" in page  # the config diff
    status, headers, body = http_get(url + "&download=1")
    assert status == 200
    assert headers["Content-Disposition"].startswith("attachment; filename=\"assay-compare-")
    saved = body.decode()
    assert saved.startswith("<!DOCTYPE html>") and "serve-bar" not in saved
    assert '"kind":"compare"' in saved and "<script>" in saved and "src=" not in saved
    # the same URL gives the same overlay (its name), one run gives none
    assert http_get(url + "&download=1")[2].replace(b"generated", b"") != b""
    assert http_get(f"{served.url}/compare?run={a}")[0] == 400
    assert http_get(f"{served.url}/compare?run={a}&run=no-such-run")[0] == 404


def test_running_run_page_is_rebuilt_and_refreshes(served: Served) -> None:
    status, _, body = http_get(f"{served.url}/runs/{LIVE}/")
    page = body.decode()
    assert status == 200 and '<meta http-equiv="refresh"' in page
    assert '"status":"running"' in page and "live: refreshes" in page
    finished = http_get(f"{served.url}/runs/{RUNS[0][0]}/")[2].decode()
    assert 'http-equiv="refresh"' not in finished


def test_hostile_description_is_listed_as_data(served: Served) -> None:
    text = http_get(served.url + "/")[2].decode()
    assert HOSTILE_DESC.replace("<", "\\u003c").replace(">", "\\u003e") in text
    assert HOSTILE.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace('"', '\\"') in text


def test_the_server_process_holds_no_engine() -> None:
    """serve reads the store: neither it nor its verb imports what runs (engine, runners,
    plan, workloads, actions, fio, platforms)."""
    import subprocess
    import sys

    code = ("import sys, assay.cli.serve, assay.serve.app; print(' '.join(sorted(m for m in "
            "sys.modules if m.split('.')[:2][-1] in ('engine', 'runners', 'plan', 'workloads', "
            "'actions', 'fio', 'platforms', 'cluster', 'timeline', 'search'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "", r.stdout


def test_a_broken_run_is_listed_and_refused_plainly(served: Served) -> None:
    broken = served.root / "20261124-100000_broken_ddddd1"
    broken.mkdir()
    (broken / "run.json").write_text('{"id": "20261124-100000_broken_ddddd1", "status": ')
    listing = http_get(served.url + "/")[2].decode()
    assert "20261124-100000_broken_ddddd1" in listing and "unreadable" in listing
    status, headers, body = http_get(f"{served.url}/runs/{broken.name}/")
    assert status in (400, 500) and headers["Content-Type"].startswith("text/plain")
    assert b"Traceback" not in body
    assert http_get(served.url + "/")[0] == 200  # and the server goes on
