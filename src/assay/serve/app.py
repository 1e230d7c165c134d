"""HTTP for `assay serve`: GET and HEAD only, every answer built from the results directory.

    /                          runs, filtered by the query (catalog.Filters), and records
    /runs/ID/                  the run's report (rebuilt while it runs, refreshing itself)
    /runs/ID/files/PATH        a file of the run directory, as plain text
    /compare?run=A&run=B       the overlay of two or more runs (report/compare.py); its URL
                               names it, `&download=1` saves it as one HTML file
    /records/KIND/ID           a search or sweep record

A run is found by its exact directory name in the catalogue, and must be a directory of the
results directory itself: a run directory that is a symbolic link is listed as such and not
served. Every file of it that is read is opened inside the run directory held open, one
component at a time, never through a symbolic link, and only if it is a regular file; what is
served or shown as written (report.html, scenario.yaml, hosts/*/run.fio, /files/PATH) must
also have a single link, since a hard link to a file elsewhere looks like any other file
(results/safeopen.py). Nothing outside the results directory is served. A page built from the
run directory's files by path (the live report, overlays) is dropped if the directory was
replaced while it was built.
"""

from __future__ import annotations

import contextlib
import re
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from assay.observe.address import local_host_header
from assay.report.compare import CompareError, build_compare, load_views
from assay.report.html import build_report
from assay.results import safeopen
from assay.results.catalogue import Catalogue
from assay.results.liveness import effective_status
from assay.results.record import MAX_BYTES, RecordError, decode
from assay.serve import catalog
from assay.serve.page import page, with_bar

HTML_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
MAX_OVERLAY = 8
LINKED = "symlinked, not served"  # the status a run directory that is a link is listed with


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
        self.send_response(405, "read-only: GET only")
        data = b"read-only: GET only\n"
        self.send_header("Allow", "GET, HEAD")
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def __getattr__(self, name: str) -> Any:
        # every other method (POST, TRACE, made-up ones) is 405 as documented, not the 501
        # http.server gives a method it has no do_ for
        if name.startswith("do_"):
            return self._refuse
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _answer(self, body: bool) -> None:
        if self.server.local_only and not local_host_header(self.headers.get("Host")):
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

    # -- routes ---------------------------------------------------------------------------
    def _route(self, path: str, query: dict[str, list[str]]) \
            -> tuple[int, str, bytes, dict[str, str]]:
        root = self.server.root
        parts = [urllib.parse.unquote(p) for p in path.split("/")[1:]]
        if path == "/":
            return self._html(runs_page(root, catalog.Filters.from_query(query)))
        if len(parts) >= 2 and parts[0] == "runs":
            with self._run(parts[1]) as (run_dir, held):
                if len(parts) == 2 or (len(parts) == 3 and parts[2] == ""):
                    return self._html(run_page(run_dir, held))
                if len(parts) >= 4 and parts[2] == "files":
                    return 200, "text/plain; charset=utf-8", run_file(held, parts[3:]), {}
        if path == "/compare":
            ids = [i for i in query.get("run", []) if i]
            if not 2 <= len(ids) <= MAX_OVERLAY:
                raise ValueError(f"select 2 to {MAX_OVERLAY} runs to overlay (got {len(ids)})")
            with contextlib.ExitStack() as stack:
                opened = [stack.enter_context(self._run(i)) for i in ids]
                views = load_views([run_dir for run_dir, _ in opened])
                text, _ = build_compare(views, (query.get("align") or ["start"])[0])
                for run_dir, held in opened:
                    unchanged(run_dir, held)
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

    @contextlib.contextmanager
    def _run(self, name: str) -> Iterator[tuple[Path, safeopen.Inside]]:
        """A run by its exact directory name: (its path, the directory held open). A run
        directory that is a symbolic link is not found (the list marks it)."""
        root = self.server.root
        if not safeopen.valid_name(name) or name not in Catalogue(root).run_dirs():
            raise NotFound
        try:
            with safeopen.Inside(root) as results:
                held = results.sub(name)  # O_NOFOLLOW: a linked run directory is refused
        except OSError:
            raise NotFound from None
        with held:
            yield root / name, held

    @staticmethod
    def _html(text: str) -> tuple[int, str, bytes, dict[str, str]]:
        return 200, "text/html; charset=utf-8", text.encode(), {}


def runs_page(root: Path, f: catalog.Filters) -> str:
    rows, choices, notice = catalog.runs(root, f)
    hidden = {name: why for name in Catalogue(root).run_dirs()
              if (why := not_served(root / name))}
    if hidden:  # nothing read through their links reaches the page
        rows, choices = _without_links(root, f, rows, hidden)
    return page("assay: results", {"kind": "runs", "runs": rows, "filters": f.as_dict(),
                                   "choices": choices, "records": catalog.records(root),
                                   "notice": notice})


def not_served(run_dir: Path) -> tuple[str, str] | None:
    """(status, reason) for the list when a run directory is a link or its run.json is not a
    regular file of it (a link): none of its pages is served; None otherwise."""
    if safeopen.is_symlink(run_dir):
        return LINKED, "the run directory is a symbolic link: not served"
    try:
        with safeopen.Inside(run_dir, follow=False) as held:
            held.open("run.json", hard_links_ok=True).close()
    except FileNotFoundError:
        return None  # gone meanwhile: the catalogue says so
    except OSError as e:
        return "unreadable", f"run.json: {e.strerror or e}: not read"
    return None


def _without_links(root: Path, f: catalog.Filters, rows: list[dict[str, Any]],
                   hidden: dict[str, tuple[str, str]]) \
        -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """The rows of runs not served, named and marked but emptied of what their run.json
    (read through a link) says; listed only when no filter is set, since a filter would
    match what the link points at; and the filter choices drawn without them."""
    def shown(r: dict[str, Any]) -> dict[str, Any]:
        if r["id"] not in hidden:
            return r
        status, reason = hidden[r["id"]]
        return {**r, "scenario": r["id"], "description": "", "status": status,
                "reason": reason, "started": None, "duration_s": None, "platform": "",
                "target": "", "hosts": [], "parent": None, "passed": None, "failed": None}

    filtered = any(f.as_dict().values())
    rows = [shown(r) for r in rows if r["id"] not in hidden or not filtered]
    every = [shown(r) for r in catalog.runs(root, catalog.Filters())[0]]
    choices = {"platform": sorted({str(r["platform"]) for r in every} - {""}),
               "status": sorted({str(r["status"]) for r in every} - {""}),
               "host": sorted({str(h) for r in every for h in r["hosts"]} - {""})}
    return rows, choices


def unchanged(run_dir: Path, held: safeopen.Inside) -> None:
    """After a page was built from the run directory's files by path: refuse it (not found)
    if the directory was replaced meanwhile (by a link, or another directory)."""
    if not held.same_as(run_dir):
        raise NotFound


def _record(held: safeopen.Inside) -> dict[str, Any]:
    """run.json as a document, through the guarded parse (record.decode: depth, size, NaN);
    a damaged one is the report's to refuse (400, naming why)."""
    try:
        with held.open("run.json", hard_links_ok=True) as fh:  # parsed, not shown
            return decode(fh.read(MAX_BYTES + 1), "run.json")
    except OSError:
        return {}


def run_page(run_dir: Path, held: safeopen.Inside | None = None) -> str:
    """The run's report: the stored one for a finished run, rebuilt from what the run has
    written so far (and refreshing itself) for a run still going. Its files are read inside
    `held`, the run directory held open (opened here, refusing a link, when not given)."""
    if held is None:
        with safeopen.Inside(run_dir, follow=False) as opened:
            return run_page(run_dir, opened)
    status = effective_status(_record(held), run_dir)
    live = status == "running"
    text = None
    if not live:
        with contextlib.suppress(OSError):  # missing, a link, not regular: rebuilt instead
            text = held.read_text("report.html")
    if text is None:  # build_report refuses a linked run.json
        text = build_report(run_dir, held)
        unchanged(run_dir, held)
    files = [(f"/runs/{urllib.parse.quote(run_dir.name)}/files/{n}", n)
             for n in ("run.json", "scenario.yaml", "events.ndjson") if held.is_file(n)]
    return with_bar(text, [("/", "← all runs"), *files],
                    "live: refreshes every few seconds" if live else "", refresh=live)


def run_file(held: safeopen.Inside, parts: list[str]) -> bytes:
    """A regular file inside the run directory, opened without following any link; a name
    that is no name (`..`, empty, with `/` or NUL), a link, or anything but a singly linked
    regular file is not found."""
    if not parts or not all(safeopen.valid_name(p) for p in parts):
        raise NotFound
    try:
        return held.read_bytes(*parts)
    except OSError:
        raise NotFound from None


class ResultsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], root: Path, local_only: bool):
        super().__init__(address, Handler)
        self.root = root
        self.local_only = local_only
