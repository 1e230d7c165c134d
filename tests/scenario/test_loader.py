
import pytest

from assay.plan import builtin_scenarios, plan_text
from assay.scenario.yamlsource import ScenarioInvalid
from tests.cluster import example_hosts
from tests.conftest import assay_in_process

BAD = """\
name: broken
workloads:
  db:
    kind: oltp
    preset: standard
    datset: 4GiB
  mail:
    kind: exchange
    mailboxes: 100
    mailbox_size: 2 gigs
timeline:
  duration: 10 minutes
thresholds:
  db.data.read.lat_p98: "< 20ms"
"""


def issues_of(text: str) -> list[str]:
    with pytest.raises(ScenarioInvalid) as e:
        plan_text(text, "s.yaml")
    return [str(i) for i in e.value.issues]


def test_all_problems_are_reported_at_once_with_file_line_and_field():
    issues = issues_of(BAD)
    assert "s.yaml:6: workloads.db.datset: unknown key" in issues
    assert any(i.startswith("s.yaml:10: workloads.mail.mailbox_size:") and "size" in i
               for i in issues)
    assert any(i.startswith("s.yaml:12: timeline.duration:") for i in issues)
    assert len(issues) == 3  # thresholds are checked once the structure is valid


def test_unknown_threshold_metric_names_the_line():
    text = BAD.replace("    datset: 4GiB\n", "").replace("2 gigs", "2GiB").replace(
        "10 minutes", "10m")
    issues = issues_of(text)
    assert len(issues) == 1
    assert issues[0].startswith("s.yaml:13: thresholds.db.data.read.lat_p98:")
    assert "unknown metric 'lat_p98'" in issues[0]


def test_threshold_on_a_component_that_does_not_exist():
    text = "name: x\nworkloads:\n  db: {kind: oltp, preset: standard}\nthresholds:\n" \
           "  db.log.read.lat_avg: '< 5ms'\n"
    (issue,) = issues_of(text)
    assert "matches no component" in issue and ":5:" in issue


def test_unknown_kind_lists_the_known_ones():
    (issue,) = issues_of("name: x\nworkloads:\n  w: {kind: oracle}\n")
    assert "unknown workload kind 'oracle'" in issue and "exchange" in issue


def test_yaml_syntax_error_has_a_line():
    (issue,) = issues_of("name: x\nworkloads:\n  w: {kind: oltp\n")
    assert issue.startswith("s.yaml:") and "YAML syntax" in issue


def test_duplicate_key_is_an_error_not_a_silent_override():
    (issue,) = issues_of("name: x\nname: y\nworkloads:\n  w: {kind: oltp, preset: high}\n")
    assert issue == "s.yaml:2: name: duplicate key"


def test_cli_exits_2_with_located_errors_and_no_traceback(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    r = assay_in_process("run", str(path))  # refused before any IO: no process needed
    assert r.returncode == 2
    assert f"{path}:6: workloads.db.datset: unknown key" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout


@pytest.mark.parametrize("name", sorted(builtin_scenarios()))
def test_every_builtin_scenario_plans(name):
    plan = plan_text(builtin_scenarios()[name], name,
                     hosts=example_hosts(builtin_scenarios()[name]))
    assert plan.streams and plan.components
