"""`assay serve` shows only regular files inside the run directory: a report.html,
scenario.yaml, run.json or host job file that is a symbolic link (or a hard link to a file
elsewhere) is neither served nor embedded, a run directory that is a link is listed as such
and not served, also when it is swapped in while the server runs; `..` in every part of a URL
that names a path is refused; methods other than GET and HEAD are 405."""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.report.html import write_report
from tests.serve.conftest import Served, serving
from tests.serve.results import copy_run
from tests.serve.test_http import raw

SECRET = "SECRET-OUTSIDE-RESULTS"
PASSWD = b"root:x:0:0"
PLAIN = "20261101-100000_plain_aaaaa1"  # a run as assay writes it
REPORT_LINK = "20261102-100000_reportlink_aaaaa2"  # report.html -> /etc/passwd
HARD = "20261103-100000_hardlink_aaaaa3"  # report.html hard-linked to a file outside
FILES = "20261104-100000_filelinks_aaaaa4"  # scenario.yaml, run.fio, hosts/evil linked
JSON_LINK = "20261105-100000_jsonlink_aaaaa5"  # run.json -> a record elsewhere
DIR_LINK = "20261106-100000_dirlink_aaaaa6"  # the run directory itself is a link
SWAPPED = "20261107-100000_swapped_aaaaa7"  # replaced by a link while served


class Site(Served):
    def __init__(self, root: Path, url: str, elsewhere: Path):
        super().__init__(root, url, {})
        self.elsewhere = elsewhere

    def get(self, path: str) -> tuple[int, bytes]:
        """A request sent byte for byte (no client normalises the path)."""
        return raw(self, f"GET {path} HTTP/1.1")


def plain(root: Path, name: str, **edit: object) -> Path:
    d = copy_run(root, name, status="passed", **edit)
    write_report(d)
    return d


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    base = tmp_path_factory.mktemp("links")
    root, elsewhere = base / "results", base / "elsewhere"
    root.mkdir()
    (elsewhere / "host").mkdir(parents=True)
    (elsewhere / "secret.txt").write_text(SECRET)
    (elsewhere / "host" / "run.fio").write_text(f"[global]\nsecret={SECRET}\n")
    (elsewhere / "report.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{SECRET}\n")
    plain(root, PLAIN)
    d = plain(root, REPORT_LINK)
    (d / "report.html").unlink()
    (d / "report.html").symlink_to("/etc/passwd")
    d = plain(root, HARD)
    (d / "report.html").unlink()
    os.link(elsewhere / "report.html", d / "report.html")
    d = plain(root, FILES)
    (d / "report.html").unlink()  # rebuilt by the server: the embeds are read then
    for name, target in (("scenario.yaml", elsewhere / "secret.txt"),
                         ("hosts/local/run.fio", elsewhere / "host" / "run.fio")):
        (d / name).unlink()
        (d / name).symlink_to(target)
    (d / "hosts" / "evil").symlink_to(elsewhere / "host")
    d = plain(root, JSON_LINK)
    (d / "report.html").unlink()
    record = json.loads((d / "run.json").read_text())
    (elsewhere / "record.json").write_text(json.dumps({**record, "reason": SECRET}))
    (d / "run.json").unlink()
    (d / "run.json").symlink_to(elsewhere / "record.json")
    # a run directory elsewhere, linked into the results
    far = plain(elsewhere, DIR_LINK, scenario__description=SECRET)
    (far / "report.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{SECRET}\n")
    (root / DIR_LINK).symlink_to(far)
    plain(root, SWAPPED)
    with serving(root) as url:
        yield Site(root, url, elsewhere)


def test_a_run_page_serves_no_linked_report(site: Site) -> None:
    for run in (REPORT_LINK, HARD):
        status, body = site.get(f"/runs/{run}/")
        assert status == 200, (run, body[:300])  # rebuilt from the run's own files
        assert PASSWD not in body and SECRET.encode() not in body, run
        assert b'"kind":"run"' in body
        status, body = site.get(f"/runs/{run}/files/report.html")
        assert status == 404 and PASSWD not in body and SECRET.encode() not in body
    status, body = site.get(f"/runs/{PLAIN}/")
    assert status == 200 and b'"kind":"run"' in body  # the stored report, as before


def test_a_run_page_embeds_no_linked_file(site: Site) -> None:
    status, body = site.get(f"/runs/{FILES}/")
    assert status == 200, body[:300]
    assert SECRET.encode() not in body
    data = json.loads(re.search(rb'id="assay-data">(.*?)</script>', body, re.S).group(1))
    assert data["scenario_yaml"] == "" and data["job_files"] == {}
    assert f"/runs/{FILES}/files/scenario.yaml".encode() not in body  # no link to it either
    for path in ("scenario.yaml", "hosts/local/run.fio", "hosts/evil/run.fio"):
        status, body = site.get(f"/runs/{FILES}/files/{path}")
        assert status == 404 and SECRET.encode() not in body, path


def test_a_linked_run_json_is_not_read(site: Site) -> None:
    status, body = site.get(f"/runs/{JSON_LINK}/")
    assert status in (400, 404) and SECRET.encode() not in body
    status, body = site.get(f"/runs/{JSON_LINK}/files/run.json")
    assert status == 404 and SECRET.encode() not in body


def test_a_linked_run_directory_is_listed_and_not_served(site: Site) -> None:
    status, body = site.get("/")
    assert status == 200
    assert DIR_LINK.encode() in body and b"symlinked, not served" in body
    assert SECRET.encode() not in body  # nothing of what it points at
    assert b"unreadable" in body and JSON_LINK.encode() in body  # its run.json is a link
    status, body = site.get("/?status=passed")  # a filter never matches what a link says
    assert status == 200 and DIR_LINK.encode() not in body and PLAIN.encode() in body
    for path in (f"/runs/{DIR_LINK}/", f"/runs/{DIR_LINK}/files/run.json",
                 f"/runs/{DIR_LINK}/files/report.html", f"/compare?run={DIR_LINK}&run={PLAIN}"):
        status, body = site.get(path)
        assert status == 404 and SECRET.encode() not in body, path


def test_a_run_directory_swapped_for_a_link_while_served(site: Site) -> None:
    assert site.get(f"/runs/{SWAPPED}/")[0] == 200
    assert site.get(f"/runs/{SWAPPED}/files/run.json")[0] == 200
    target = site.elsewhere / "swapped-in"
    (site.root / SWAPPED).rename(target)  # the same run, now outside the results
    (target / "report.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{SECRET}\n")
    (site.root / SWAPPED).symlink_to(target)
    for path in (f"/runs/{SWAPPED}/", f"/runs/{SWAPPED}/files/report.html",
                 f"/compare?run={SWAPPED}&run={PLAIN}"):
        status, body = site.get(path)
        assert status == 404 and SECRET.encode() not in body, path
    listing = site.get("/")[1]
    assert SWAPPED.encode() in listing and b"symlinked, not served" in listing


def test_dot_dot_in_every_field_that_becomes_a_path(site: Site) -> None:
    q = urllib.parse.quote
    attempts = [
        "/runs/../elsewhere/secret.txt", "/runs/%2e%2e/files/elsewhere/secret.txt",
        f"/runs/{q('../elsewhere/' + DIR_LINK, safe='')}/",
        f"/runs/{q('../elsewhere/' + DIR_LINK, safe='')}/files/report.html",
        f"/runs/{PLAIN}/files/hosts/..%2f..%2f..%2felsewhere%2fsecret.txt",
        f"/runs/{PLAIN}/files/hosts/%2e%2e/%2e%2e/%2e%2e/elsewhere/secret.txt",
        f"/runs/{PLAIN}/files/hosts/local/..%2f..%2frun.json",
        f"/runs/{PLAIN}/files/hosts/./local/run.fio",
        f"/runs/{PLAIN}/files/{q('/etc/passwd', safe='')}",
        f"/compare?run=..&run={q('../elsewhere/' + DIR_LINK, safe='')}",
        f"/compare?run={PLAIN}&run={q('../elsewhere/' + DIR_LINK, safe='')}",
        "/records/..%2fresults/x", "/records/search/..",
    ]
    for path in attempts:
        status, body = site.get(path)
        assert status in (400, 404), (path, status)
        assert SECRET.encode() not in body and PASSWD not in body, path
    assert site.get(f"/runs/{PLAIN}/files/hosts/local/run.fio")[0] == 200


def test_other_methods_are_405_not_501(site: Site) -> None:
    for method in ("TRACE", "CONNECT", "PROPFIND", "BREW", "POST"):
        assert raw(site, f"{method} / HTTP/1.1")[0] == 405, method
