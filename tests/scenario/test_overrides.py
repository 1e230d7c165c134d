"""WORKLOAD.PARAM overrides: addressing, type-preserving values, errors that name the param."""

from __future__ import annotations

import pytest

from assay.exitcodes import UserError
from assay.plan import ScenarioFile
from assay.scenario.overrides import parse_value
from assay.scenario.yamlsource import ScenarioInvalid

TEXT = """\
name: two
workloads:
  db:
    kind: oltp
    data_iops: 400
    dataset: 64MiB
  mail:
    kind: exchange
    mailboxes: 100
    dataset: 64MiB
thresholds:
  db: rate
"""


def scenario() -> ScenarioFile:
    return ScenarioFile(TEXT, "two.yaml", None)


@pytest.mark.parametrize("name,path,integer", [
    ("db.data_iops", ("data_iops",), False),
    ("db.load.scale", ("load", "scale"), False),
    ("db.load.threads", ("load", "threads"), True),
    ("mail.mailboxes", ("mailboxes",), True),
    ("db.data.compressibility", ("data", "compressibility"), False),
])
def test_resolves_nested_and_knows_integers(name, path, integer):
    p = scenario().param(name)
    assert (p.workload, p.path, p.integer) == (name.split(".")[0], path, integer)


@pytest.mark.parametrize("name,says", [
    ("nosuch.x", "no workload 'nosuch'"),
    ("db.nope", "has no parameter 'nope'"),
    ("db.load.nope", "has no parameter 'nope'"),
    ("db.load", "is a mapping"),
    ("db.data_iops.x", "is a value, not a mapping"),
    ("db", "give WORKLOAD.PARAM"),
    ("db.kind", "has no parameter 'kind'"),
])
def test_unknown_params_are_clear_errors(name, says):
    with pytest.raises(UserError, match=says):
        scenario().param(name)


def test_values_keep_their_type():
    assert parse_value("400") == 400 and isinstance(parse_value("400"), int)
    assert parse_value("1.5") == 1.5
    assert parse_value("4GiB") == "4GiB"
    assert parse_value("closed") == "closed"


def test_override_reaches_the_plan_without_touching_the_source():
    s = scenario()
    plan = s.plan([(s.param("db.data_iops"), 800), (s.param("mail.mailboxes"), 200)])
    db = [c.target_iops for c in plan.components if c.name.startswith("db.data")]
    assert sum(db) == pytest.approx(800)
    assert plan.resolved.workloads["mail"].mailboxes == 200  # type: ignore[attr-defined]
    assert "db.data_iops=800" in plan.resolved.text.splitlines()[0]
    base = s.plan([])
    assert sum(c.target_iops or 0 for c in base.components if c.name.startswith("db.data")) \
        == pytest.approx(400)


def test_nested_override_creates_the_mapping():
    s = scenario()
    plan = s.plan([(s.param("db.load.scale"), 0.5)])
    assert plan.resolved.workloads["db"].load.scale == 0.5


def test_replan_error_names_the_override_and_the_users_line():
    s = scenario()
    with pytest.raises(ScenarioInvalid) as e:
        s.plan([(s.param("db.data_iops"), -3)])
    issue = e.value.issues[0]
    assert issue.file == "two.yaml" and issue.line == 5  # the data_iops line of TEXT
    assert "data_iops" in issue.field and "db.data_iops=-3" in issue.message
