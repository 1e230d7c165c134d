"""Every verb answers --help; schema, plan and scenarios work without IO."""

import json
import shutil
import subprocess
import sys

import pytest

from assay.cli import VERBS
from tests.conftest import assay_in_process


def assay(*args: str) -> subprocess.CompletedProcess[str]:
    # in this process (tests/conftest.py): nothing here is signalled, no start-up per call
    return assay_in_process(*args)


def python_m_assay(*args: str) -> subprocess.CompletedProcess[str]:
    """The entry point itself, as a user starts it."""
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_verb_has_help(verb):
    r = assay(verb, "--help")
    assert r.returncode == 0, r.stderr
    assert "Usage:" in r.stdout and len(r.stdout.splitlines()) > 3


def test_top_level_help_lists_the_verbs():
    r = python_m_assay("--help")
    assert r.returncode == 0
    for verb in ("run", "plan", "scenarios", "runs", "show", "size", "schema"):
        assert verb in r.stdout


def test_schema_describes_every_workload_kind():
    schema = json.loads(assay("schema").stdout)
    text = json.dumps(schema)
    for kind in ("exchange", "oltp", "dss", "vdi", "backup", "micro", "fio"):
        assert f'"const": "{kind}"' in text or f'"{kind}"' in text
    assert schema["additionalProperties"] is False


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_plan_shows_the_job_file_checked_by_fio():
    r = assay("plan", "oltp-standard")
    assert r.returncode == 0, r.stderr
    assert "[db.data.1.read.8k]" in r.stdout and "rate_process=poisson" in r.stdout  # as X-Ray
    assert "fio --parse-only: ok" in r.stdout
    doc = json.loads(assay("plan", "exchange-quick", "--json").stdout)
    assert doc["fio_check"] == "ok"
    assert {c["name"] for c in doc["components"]} == {
        "mail.db.read", "mail.db.write", "mail.log.write", "mail.bdm.read",
        # each of the 2 databases graded on its own, as Jetstress
        "mail.db1.read", "mail.db1.write", "mail.db2.read", "mail.db2.write",
        "mail.log1.write", "mail.log2.write"}


def test_scenarios_lists_and_prints_builtins():
    r = assay("scenarios")
    for name in ("exchange-quick", "oltp-standard", "four-corners", "backup"):
        assert name in r.stdout
    assert assay("scenarios", "backup").stdout.startswith("#")
    bad = assay("scenarios", "nope")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_unknown_scenario_name_is_a_clear_error():
    r = assay("run", "exchange-quik")
    assert r.returncode == 2
    assert "no such scenario file or built-in" in r.stderr and "exchange-quick" in r.stderr
