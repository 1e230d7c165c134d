"""A damaged run.json spoils only itself: whatever a run.json holds (deep nesting, huge
numbers, NaN, wrong types, binary, invalid UTF-8, a huge file, nothing at all), the run is
listed as damaged with its reason and every verb on the other runs keeps working; the verbs on
the damaged run itself refuse it plainly (exit 2, the file and the reason, no traceback)."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.cli import cli
from assay.exitcodes import AssayError
from assay.results.catalogue import Catalogue
from assay.results.printable import printable
from tests.observe.prom import http_get
from tests.serve.conftest import serving

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture"
GOOD = "20260101-000000_good_aaaaaa"
BAD = "20260102-000000_bad_bbbbbb"


def good_record(name: str = GOOD, started: float = 1_700_000_000.0) -> dict[str, Any]:
    return {"schema_version": 2, "id": name, "status": "passed", "started": started,
            "elapsed_s": 12.0, "scenario": {"name": "good"}, "plan": {"duration_s": 10},
            "target": {"platform": "local", "path": "/data"},
            "verdict": {"passed": 1, "failed": 0}}


def results_with(root: Path, bad: bytes) -> Path:
    """A results directory of one good run and one whose run.json holds `bad`."""
    (root / GOOD).mkdir(parents=True)
    (root / GOOD / "run.json").write_text(json.dumps(good_record()))
    (root / BAD).mkdir()
    (root / BAD / "run.json").write_bytes(bad)
    return root


def assay(*args: str) -> tuple[int, str, str]:
    """A verb in this process, exit code as `assay` gives it; any other exception escapes."""
    r = CliRunner().invoke(cli, list(args), catch_exceptions=True)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        if not isinstance(r.exception, AssayError):
            raise r.exception
        return int(r.exception.code), r.stdout, r.stderr + f"error: {r.exception}\n"
    return r.exit_code, r.stdout, r.stderr


def strict_json(text: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} in the output")
    return json.loads(text, parse_constant=refuse)


def listed(root: Path) -> dict[str, dict[str, Any]]:
    code, out, err = assay("runs", "--json", "--results", str(root))
    assert code == 0, err
    return {r["id"]: r for r in strict_json(out)}


def assert_spoils_only_itself(root: Path, reason: str = "") -> None:
    code, out, err = assay("runs", "--results", str(root))  # the table
    assert code == 0 and GOOD in out and BAD in out, err
    assert f"damaged: {BAD}: " in err and reason in err
    rows = listed(root)
    assert rows[GOOD]["status"] == "passed" and rows[GOOD]["damaged"] is None
    assert rows[BAD]["status"] == "unreadable"
    assert reason in rows[BAD]["damaged"]
    for verb in ("show", "export"):
        code, out, err = assay(verb, GOOD, "--results", str(root))
        assert code == 0, err
        code, out, err = assay(verb, BAD, "--results", str(root))
        assert code == 2, err
        assert f"error: {root / BAD / 'run.json'}" in err and reason in err
    code, out, err = assay("show", "last", "--results", str(root))  # the newest readable
    assert code == 0 and "good" in out, err


def refused(root: Path, verb: str, *more: str) -> str:
    """The message a verb on the damaged run exits 2 with."""
    r = CliRunner().invoke(cli, [verb, BAD, "--results", str(root), *more])
    assert isinstance(r.exception, AssayError) and r.exception.code == 2, r.output
    return str(r.exception)


# -- the two found on main ------------------------------------------------------------------

def test_deep_nesting_spoils_only_its_own_run(tmp_path):
    root = results_with(tmp_path / "results", b"[" * 100_000 + b"]" * 100_000)
    assert_spoils_only_itself(root, "nested more than")
    message = refused(root, "show")
    assert str(root / BAD / "run.json") in message and "nested more than" in message
    rows = {r["id"]: r for r in Catalogue(root).list()}
    assert rows[BAD]["damaged"] and rows[GOOD]["status"] == "passed"


def test_deep_nesting_inside_a_record_spoils_only_its_own_run(tmp_path):
    record = json.dumps({**good_record(BAD), "warnings": "HOLE"})
    bad = record.replace('"HOLE"', "[" * 900 + "]" * 900).encode()  # under json's own limit
    root = results_with(tmp_path / "results", bad)
    assert_spoils_only_itself(root, "nested more than")


def test_a_start_in_the_year_300_billion_spoils_only_its_own_run(tmp_path):
    root = results_with(tmp_path / "results",
                        json.dumps({**good_record(BAD), "started": 1e19}).encode())
    assert_spoils_only_itself(root, "started")
    for verb in ("show", "report", "export"):
        message = refused(root, verb, *(["--format", "junit"] if verb == "export" else []))
        assert str(root / BAD / "run.json") in message and "started" in message
    for name in ("20260103-000000_mail_cccccc", "20260104-000000_mail_dddddd"):
        shutil.copytree(FIXTURE, root / name)
    code, out, err = assay("compare", "20260103-000000_mail_cccccc",
                           "20260104-000000_mail_dddddd", "--json", "--results", str(root))
    assert code == 0, err
    code, out, err = assay("compare", "20260103-000000_mail_cccccc", BAD, "--results",
                           str(root))
    assert code == 2 and "started" in err


@pytest.mark.parametrize("what, bad, reason", [
    ("empty", b"", "empty"),
    ("an array", b"[1, 2, 3]", "object was expected"),
    ("binary", bytes(range(256)) * 4, "not UTF-8"),
    ("invalid UTF-8", b'{"scenario": {"name": "\xff\xfe"}}', "not UTF-8"),
    ("NaN", b'{"status": "passed", "started": NaN}', "NaN"),
    ("Infinity", b'{"status": "passed", "started": -Infinity}', "Infinity"),
    ("a huge integer", b'{"started": 1' + b"0" * 400 + b"}", "started"),
    ("too many digits", b'{"started": 1' + b"0" * 5000 + b"}", "not valid JSON"),
    ("a wrong type", b'{"status": ["passed"], "scenario": "x", "verdict": {"passed": "a"}}',
     "status"),
    ("a negative time", b'{"status": "passed", "started": -5, "elapsed_s": -1}', "started"),
])
def test_a_damaged_record_is_listed_with_its_reason(tmp_path, what, bad, reason):
    root = results_with(tmp_path / "results", bad)
    assert_spoils_only_itself(root, reason)


def test_a_huge_run_json_is_not_read(tmp_path):
    root = results_with(tmp_path / "results", b"")
    with open(root / BAD / "run.json", "wb") as fh:
        fh.truncate(65 << 20)  # sparse: larger than any record, nothing on disk
    assert_spoils_only_itself(root, "larger than")


def test_a_name_that_is_not_unicode_is_listed_escaped(tmp_path):
    """A lone surrogate (JSON `\\ud800`) cannot be written to SQLite nor to a terminal."""
    root = results_with(tmp_path / "results",
                        json.dumps({**good_record(BAD), "scenario": {"name": "a\ud800b"}})
                        .encode())
    rows = listed(root)
    assert rows[BAD]["scenario"] == "a\\ud800b" and rows[GOOD]["status"] == "passed"
    code, out, err = assay("runs", "--results", str(root))
    assert code == 0 and "a\\ud800b" in out, err


def test_a_run_directory_whose_name_is_not_utf8_spoils_nothing(tmp_path):
    root = results_with(tmp_path / "results", json.dumps(good_record(BAD)).encode())
    odd = root / b"20260103-000000_odd\xff_cccccc".decode("utf-8", "surrogateescape")
    odd.mkdir()
    (odd / "run.json").write_text(json.dumps(good_record(odd.name)), "utf-8", "surrogateescape")
    rows = listed(root)
    assert {GOOD, BAD} <= set(rows)
    assert rows["20260103-000000_odd\\udcff_cccccc"]["damaged"]


def test_serve_lists_a_damaged_run_beside_a_good_one(tmp_path):
    root = results_with(tmp_path / "results", json.dumps(good_record(BAD)).encode())
    with serving(root) as url:  # started on good runs; then two are damaged
        (root / BAD / "run.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
        (root / "20260103-000000_late_cccccc").mkdir()
        (root / "20260103-000000_late_cccccc" / "run.json").write_text(
            json.dumps({**good_record("20260103-000000_late_cccccc"), "started": 1e19}))
        status, _, body = http_get(url + "/")
        assert status == 200, body[:500]
        page = body.decode()
        assert GOOD in page and BAD in page and "nested more than" in page
        assert "20260103-000000_late_cccccc" in page
        status, headers, body = http_get(f"{url}/runs/{BAD}/")  # refused, as text
        assert status == 400 and headers["Content-Type"].startswith("text/plain")
        assert b"nested more than" in body and b"Traceback" not in body
        assert http_get(f"{url}/runs/{GOOD}/files/run.json")[0] == 200


# -- names a terminal would show as something else ------------------------------------------

@pytest.mark.parametrize("hidden", ["\u202e", "\u2066", "\u200b", "\u200d", "\ufeff", "\u2028",
                                    "\x1b", "\x9b", "\x7f", "\ud800"])
def test_bidi_zero_width_and_control_characters_are_escaped(hidden):
    shown = printable(f"run{hidden}gnp.exe")
    assert hidden not in shown and shown.isprintable() and shown.startswith("run\\")
    assert printable("naïve 日本 ✓") == "naïve 日本 ✓"
    assert printable("a\nb", "\n") == "a\nb"


def test_a_listed_name_with_a_bidi_override_is_escaped_in_the_table(tmp_path):
    root = results_with(tmp_path / "results", json.dumps(
        {**good_record(BAD), "scenario": {"name": "evil\u202etxt.exe"},
         "target": {"path": "/d\u200bata\x1b[2J"}}).encode())
    code, out, err = assay("runs", "--results", str(root))
    assert code == 0, err
    assert "\u202e" not in out and "\u200b" not in out and "\x1b[2J" not in out
    assert "evil\\u202etxt.exe" in out
    code, out, err = assay("show", BAD, "--results", str(root))
    assert code == 0 and "\u202e" not in out and "evil\\u202etxt.exe" in out, err


# -- any run.json at all --------------------------------------------------------------------

LISTED = ("status", "started", "elapsed_s", "parent", "scenario", "target", "verdict", "id",
          "pid", "boot_id", "plan", "environment", "stats", "measured_window_s")
leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10 ** 300,
                                                         max_value=10 ** 400),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e19, -1e19, 1e308]),
    st.text(alphabet=st.characters(codec=None), max_size=30),
    st.sampled_from(["\ud800", "\x1b]0;owned\x07", "\u202e", "running", "passed"]))
values = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20)
deep = st.integers(min_value=60, max_value=3000).map(lambda n: "[" * n + "]" * n)


@st.composite
def damaged_records(draw: st.DrawFn) -> bytes:
    how = draw(st.sampled_from(["field", "section", "deep", "bytes", "json"]))
    record = good_record(BAD)
    if how == "bytes":
        return draw(st.binary(max_size=200))
    if how == "json":
        return json.dumps(draw(values)).encode("utf-8", "surrogatepass")
    key = draw(st.sampled_from(LISTED))
    if how == "deep":
        text = json.dumps({**record, key: "HOLE"})
        return text.replace('"HOLE"', draw(deep)).encode()
    if how == "section" and isinstance(record.get(key), dict):
        record[key] = {**record[key], draw(st.sampled_from(["name", "path", "platform",
                                                             "passed", "device"])): draw(values)}
    else:
        record[key] = draw(values)
    return json.dumps(record).encode("utf-8", "surrogatepass")


def _tree(base: Path) -> dict[str, bytes]:
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*"))
            if p.is_file() and p.name != "catalogue.sqlite"}


def _crash_files() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("assay-crash-*")}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(bad=damaged_records())
def test_any_run_json_spoils_only_itself(tmp_path_factory, bad):
    base = tmp_path_factory.mktemp("fuzz")
    root = results_with(base / uuid.uuid4().hex / "results", bad)
    before, crashes = _tree(base), _crash_files()
    rows = {r["id"]: r for r in Catalogue(root).list()}
    assert rows[GOOD]["status"] == "passed" and rows[GOOD]["damaged"] is None
    code, out, err = assay("runs", "--json", "--results", str(root))
    assert code == 0, err
    cli_rows = {r["id"]: r for r in strict_json(out)}
    assert set(cli_rows) == {GOOD, BAD} and cli_rows[GOOD]["status"] == "passed"
    row = cli_rows[BAD]
    if row["damaged"] is not None:  # damaged: said why, listed as unreadable
        assert row["status"] == "unreadable" and row["damaged"].strip()
    else:  # readable for a listing: every listed value is one a reader can use
        assert isinstance(row["status"], str) and isinstance(row["scenario"], str)
        for key in ("started", "duration_s"):
            v = row[key]
            assert v is None or (isinstance(v, float) and math.isfinite(v) and v >= 0)
        time.localtime(row["started"] or 0)  # the table converts it
    code, out, err = assay("runs", "--results", str(root))
    assert code == 0 and GOOD in out, err
    code, _, err = assay("show", GOOD, "--results", str(root))
    assert code == 0, err
    code, _, err = assay("show", BAD, "--results", str(root))
    assert code in (0, 2), err  # the run itself: shown, or refused plainly
    assert _tree(base) == before and _crash_files() == crashes  # nothing written but the index
