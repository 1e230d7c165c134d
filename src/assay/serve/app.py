"""HTTP for `assay serve`: GET and HEAD only, every answer built from the results directory.

    /                          runs, filtered by the query (catalog.Filters), and records
    /runs/ID/                  the run's report (rebuilt while it runs, refreshing itself)
    /runs/ID/files/PATH        a file of the run directory, as plain text
    /compare?run=A&run=B       the overlay of two or more runs (report/compare.py); its URL
                               names it, `&download=1` saves it as one HTML file
    /records/KIND/ID           a search or sweep record

A run is found by its exact directory name in the catalogue, a file by a path that must stay
inside that run's directory once resolved: nothing outside the results directory is served.
"""

from __future__ import annotations

import re
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from assay.report.compare import CompareError, build_compare, load_views
from assay.report.html import build_report
from assay.results.catalogue import Catalogue
from assay.results.liveness import effective_status
from assay.results.record import RecordError
from assay.serve import catalog
from assay.serve.page import page, with_bar

HTML_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
LOCAL_NAMES = {"localhost", "127.0.0.1", "[::1]", "::1"}
MAX_OVERLAY = 8


class NotFound(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    server: ResultsServer
    server_version = "assay"
    sys_version = ""

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def _refuse(self) -> None:
        self.send_error(405, "read-only: GET only")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse  # noqa: N815

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _answer(self, body: bool) -> None:
        if self.server.local_only and not self._local_host():
            self.send_error(403, "unexpected Host header")  # a rebound DNS name
            return
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        try:
            status, ctype, data, extra = self._route(url.path, query)
        except NotFound:
            status, ctype, data, extra = 404, "text/plain; charset=utf-8", b"not found\n", {}
        except (CompareError, RecordError, ValueError) as e:
            status, ctype, extra = 400, "text/plain; charset=utf-8", {}
            data = f"{e}\n".encode()
        except OSError as e:  # a file gone or unreadable between listing and reading
            status, ctype, extra = 404, "text/plain; charset=utf-8", {}
            data = f"cannot read: {e.strerror or e}\n".encode()
        except Exception as e:  # a run this version cannot draw: say so, keep serving
            status, ctype, extra = 500, "text/plain; charset=utf-8", {}
            data = f"internal error: {type(e).__name__}: {e}\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy",
                         HTML_CSP if ctype.startswith("text/html") else "sandbox")
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _local_host(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name in LOCAL_NAMES or host in LOCAL_NAMES

    # -- routes ---------------------------------------------------------------------------
    def _route(self, path: str, query: dict[str, list[str]]) \
            -> tuple[int, str, bytes, dict[str, str]]:
        root = self.server.root
        parts = [urllib.parse.unquote(p) for p in path.split("/")[1:]]
        if path == "/":
            return self._html(runs_page(root, catalog.Filters.from_query(query)))
        if len(parts) >= 2 and parts[0] == "runs":
            run_dir = self._run(parts[1])
            if len(parts) == 2 or (len(parts) == 3 and parts[2] == ""):
                return self._html(run_page(run_dir))
            if len(parts) >= 4 and parts[2] == "files":
                return 200, "text/plain; charset=utf-8", run_file(run_dir, parts[3:]), {}
        if path == "/compare":
            ids = [i for i in query.get("run", []) if i]
            views = load_views([self._run(i) for i in ids]) if 2 <= len(ids) <= MAX_OVERLAY \
                else None
            if views is None:
                raise ValueError(f"select 2 to {MAX_OVERLAY} runs to overlay (got {len(ids)})")
            text, _ = build_compare(views, (query.get("align") or ["start"])[0])
            if (query.get("download") or [""])[0]:
                name = "assay-compare-" + "-".join(re.sub(r"[^A-Za-z0-9_.-]", "_", i)[-24:]
                                                   for i in ids)[:180] + ".html"
                return 200, "text/html; charset=utf-8", text.encode(), {
                    "Content-Disposition": f'attachment; filename="{name}"'}
            here = "/compare?" + urllib.parse.urlencode([("run", i) for i in ids])
            return self._html(with_bar(text, [("/", "← all runs"),
                                              (here + "&download=1", "download this overlay")],
                                       f"this overlay's address: {here}"))
        if len(parts) == 3 and parts[0] == "records":
            rec = catalog.record(root, parts[1], parts[2])
            if rec is None:
                raise NotFound
            return self._html(page(f"assay: {parts[1]} {parts[2]}",
                                   {"kind": "record", "record_kind": parts[1],
                                    "id": parts[2], "record": rec}))
        raise NotFound

    def _run(self, name: str) -> Path:
        run_dir = Catalogue(self.server.root).run_dirs().get(name)
        if run_dir is None:
            raise NotFound
        return run_dir

    @staticmethod
    def _html(text: str) -> tuple[int, str, bytes, dict[str, str]]:
        return 200, "text/html; charset=utf-8", text.encode(), {}


def runs_page(root: Path, f: catalog.Filters) -> str:
    rows, choices, notice = catalog.runs(root, f)
    return page("assay: results", {"kind": "runs", "runs": rows, "filters": f.as_dict(),
                                   "choices": choices, "records": catalog.records(root),
                                   "notice": notice})


def run_page(run_dir: Path) -> str:
    """The run's report: the stored one for a finished run, rebuilt from what the run has
    written so far (and refreshing itself) for a run still going."""
    status = effective_status(catalog.read_json(run_dir / "run.json"), run_dir)
    stored = run_dir / "report.html"
    live = status == "running"
    text = stored.read_text(encoding="utf-8") if stored.is_file() and not live \
        else build_report(run_dir)
    files = [(f"/runs/{urllib.parse.quote(run_dir.name)}/files/{n}", n)
             for n in ("run.json", "scenario.yaml", "events.ndjson")
             if (run_dir / n).is_file()]
    return with_bar(text, [("/", "← all runs"), *files],
                    "live: refreshes every few seconds" if live else "", refresh=live)


def run_file(run_dir: Path, parts: list[str]) -> bytes:
    """A file inside the run directory; anything that resolves outside it is not found."""
    if any(p in ("", ".", "..") or "/" in p or "\x00" in p for p in parts):
        raise NotFound
    base = run_dir.resolve()
    target = base.joinpath(*parts).resolve()
    if not target.is_relative_to(base) or not target.is_file():
        raise NotFound
    return target.read_bytes()


class ResultsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], root: Path, local_only: bool):
        super().__init__(address, Handler)
        self.root = root
        self.local_only = local_only
