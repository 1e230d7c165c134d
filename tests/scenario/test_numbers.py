"""Numbers a scenario cannot mean (NaN, infinity, more than fio holds) and the wording of
every refusal: file:line, the field, and assay's words, never a library's (issue 21, 8 & 11)."""

import json
import subprocess

import pytest

from tests.conftest import assay_in_process


def assay(*args: str, cwd=None, env=None) -> subprocess.CompletedProcess[str]:
    # in this process (tests/conftest.py): nothing here is signalled, no start-up per call
    return assay_in_process(*args, cwd=cwd, env=env)


def scenario(tmp_path, text: str, name: str = "s.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


OLTP = "name: n\nworkloads:\n  db: {kind: oltp, %s}\ntimeline: {duration: 5s}\n"
INFINITE = [  # (workload, the field's dotted name)
    ("kind: oltp, data_iops: .inf, log_iops: 10", "workloads.db.data_iops"),
    ("kind: oltp, preset: standard, load: {scale: .inf}", "workloads.db.load.scale"),
    ("kind: exchange, mailboxes: 10, iops_per_mailbox: .inf", "workloads.db.iops_per_mailbox"),
    ("kind: vdi, desktops: 5, iops_per_desktop: .inf", "workloads.db.iops_per_desktop"),
    ("kind: dss, streams: 1, stream_iops: .inf", "workloads.db.stream_iops"),
    ("kind: oltp, data_iops: .nan, log_iops: 10", "workloads.db.data_iops"),
    ("kind: oltp, preset: standard, access: {distribution: zipf, theta: .inf}",
     "workloads.db.access.theta"),
]


@pytest.mark.parametrize("workload,field", INFINITE, ids=[f for _, f in INFINITE])
def test_nan_and_infinity_are_refused_with_file_line_and_field(tmp_path, workload, field):
    text = "name: n\nworkloads:\n  db: {" + workload + "}\ntimeline: {duration: 5s}\n"
    r = assay("plan", scenario(tmp_path, text), "--no-check")
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"s.yaml:3: {field}: must be a finite number" in r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr


def test_an_infinite_postgres_rate_is_refused_not_written_as_infinity(tmp_path):
    text = "name: n\nworkloads:\n  pg: {kind: postgres, scale: 1, rate: .inf}\n" \
           "timeline: {duration: 5s}\n"
    r = assay("plan", scenario(tmp_path, text), "--no-check", "--json")
    assert r.returncode == 2, r.stdout
    assert "s.yaml:3: workloads.pg.rate: must be a finite number" in r.stderr


@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_set_inf_is_refused_in_plan_and_run_before_any_io(tmp_path, value):
    results = tmp_path / "results"
    for verb in ("plan", "run"):
        extra = ["--results", str(results)] if verb == "run" else ["--no-check"]
        r = assay(verb, "oltp-standard", "--set", f"db.load.scale={value}", *extra)
        assert r.returncode == 2, (verb, r.stderr)
        assert "workloads.db.load.scale: must be a finite number" in r.stderr
        assert "OverflowError" not in r.stderr
    assert not results.exists() or not any(results.iterdir())


def test_a_rate_fio_cannot_hold_names_the_field_not_fios_parse_error(tmp_path):
    r = assay("plan", scenario(tmp_path, OLTP % "data_iops: 1e300, log_iops: 10"))
    assert r.returncode == 2
    assert "s.yaml:3: workloads.db.data_iops: 1e+300 is too large" in r.stderr
    assert "failed parsing" not in r.stderr and "fio rejected" not in r.stderr
    # finite but more than fio's 32-bit rate_iops, which would wrap to another rate
    r = assay("plan", scenario(tmp_path, OLTP % "data_iops: 1e15, log_iops: 10"))
    assert r.returncode == 2
    assert "s.yaml:3: workloads.db.data_iops: this rate asks fio job db.data.1.read.8k" \
        in r.stderr and "4294967295 IO/s per job" in r.stderr
    r = assay("plan", "oltp-standard", "--set", "db.load.scale=1e12", "--no-check")
    assert r.returncode == 2 and "workloads.db.load.scale: this rate asks fio" in r.stderr


def test_a_huge_seed_is_refused_in_assays_words(tmp_path):
    text = "name: n\nseed: 100000000000000000000000000\n" \
           "workloads:\n  db: {kind: oltp, preset: standard}\n"
    r = assay("plan", scenario(tmp_path, text))
    assert r.returncode == 2
    assert "s.yaml:2: seed: 100000000000000000000000000 is too large: at most " \
           "9223372036854775807" in r.stderr
    assert "failed parsing" not in r.stderr
    largest = text.replace("100000000000000000000000000", "9223372036854775807")
    ok = assay("plan", scenario(tmp_path, largest), "--json")  # fio reads it
    assert ok.returncode == 0, ok.stderr
    assert "randseed=9223372036854775807" in json.loads(ok.stdout)["jobfile"]


@pytest.mark.parametrize("thresholds", ["5", "true", "[5]", "{db.iops: [1]}"])
def test_wrongly_typed_thresholds_are_said_in_assays_words(tmp_path, thresholds):
    text = OLTP % "preset: standard" + f"thresholds: {thresholds}\n"
    r = assay("plan", scenario(tmp_path, text), "--no-check")
    assert r.returncode == 2
    problems = [line for line in r.stderr.splitlines() if line.startswith("  ")]
    assert len(problems) == 1, r.stderr
    assert "s.yaml:5: thresholds: " in problems[0] and "expected `metric: condition`" \
        in problems[0]
    for library in ("dict[str", "list[union", "Input should", "valid dictionary"):
        assert library not in r.stderr


def test_a_missing_kind_or_action_says_the_key_is_missing(tmp_path):
    text = "name: n\nworkloads:\n  db: {preset: standard}\n" \
           "timeline:\n  steps:\n    - {at: 1s}\n"
    r = assay("plan", scenario(tmp_path, text), "--no-check")
    assert r.returncode == 2
    assert "s.yaml:3: workloads.db.kind: required key is missing (known: " in r.stderr
    assert "s.yaml:6: timeline.steps[0].action: required key is missing (known: " in r.stderr \
        or "s.yaml:6: timeline.steps.0.action: required key is missing" in r.stderr
    assert "None" not in r.stderr
    r = assay("plan", scenario(tmp_path, text.replace("{preset", "{kind: [1], preset")),
              "--no-check")
    assert r.returncode == 2 and "unknown workload kind [1]" in r.stderr


@pytest.mark.parametrize("value,said", [("fast", "expected a number, got 'fast'"),
                                        ("0", "must be more than 0, got 0")])
def test_a_wrong_number_is_said_in_assays_words(tmp_path, value, said):
    r = assay("plan", scenario(tmp_path, OLTP % f"data_iops: {value}"), "--no-check")
    assert r.returncode == 2
    assert f"s.yaml:3: workloads.db.data_iops: {said}" in r.stderr
    assert "Input should" not in r.stderr


# -- 9, 10: control characters in names and paths, refused in planning ------------------------

NAMED = [  # (scenario text, the field)
    ('name: "a\\e[31mb"\nworkloads:\n  db: {kind: oltp, preset: standard}\n', "s.yaml:1: name"),
    ('name: n\nworkloads:\n  db: {kind: oltp, preset: standard, host: "lo\\e]0;xcal"}\n',
     "s.yaml:3: workloads.db.host"),
    ('name: n\nworkloads:\n  db: {kind: oltp, preset: standard}\n'
     'timeline:\n  steps:\n    - {action: annotate, text: x, at: 1s, name: "s\\x9bt"}\n',
     "s.yaml:6: timeline.steps"),
    ('name: n\ndescription: "one\\e[2J"\nworkloads:\n  db: {kind: oltp, preset: standard}\n',
     "s.yaml:2: description"),
    ('name: n\ntarget: {path: "/srv/a\\nb"}\nworkloads:\n  db: {kind: oltp, preset: standard}\n',
     "s.yaml:2: target.path"),
]


@pytest.mark.parametrize("text,where", NAMED, ids=[w for _, w in NAMED])
def test_control_characters_in_names_and_paths_are_refused_by_plan(tmp_path, text, where):
    r = assay("plan", scenario(tmp_path, text), "--no-check")
    assert r.returncode == 2, r.stdout[:300]
    assert where in r.stderr and "control character" in r.stderr, r.stderr
    assert "\x1b" not in r.stdout + r.stderr and "\x9b" not in r.stdout + r.stderr


def test_a_description_keeps_its_newlines(tmp_path):
    text = 'name: n\ndescription: "line one\\nline two\\tend"\n' \
           'workloads:\n  db: {kind: oltp, preset: standard}\n'
    assert assay("plan", scenario(tmp_path, text), "--no-check").returncode == 0


def test_a_path_with_a_newline_from_the_command_line_is_refused_before_any_directory(tmp_path):
    results, target = tmp_path / "results", tmp_path / "a\nb"
    r = assay("run", "oltp-standard", "--path", str(target), "--results", str(results))
    assert r.returncode == 2 and "target.path: fio cannot use the target path" in r.stderr
    assert not target.exists() and (not results.exists() or not any(results.iterdir()))


def test_control_characters_in_an_inventory_are_refused_and_shown_escaped(tmp_path):
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("n1 assay_path=/mnt/a\x1b]0;t\x07\nn2 ansible_host=h\x1b[2J "
                         "assay_path=/mnt/a\n")
    r = assay("plan", "oltp-cluster", "--hosts", str(inventory), "--no-check")
    assert r.returncode == 2, r.stdout[-300:]
    assert "n1.assay_path: '/mnt/a\\x1b]0;t\\x07' holds the control character" in r.stderr
    assert "n2.ansible_host: " in r.stderr
    assert not any(c in r.stdout + r.stderr for c in ("\x1b", "\x07"))
