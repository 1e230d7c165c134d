"""Fuzzing: whatever a scenario or command line holds, assay answers with an exit code a user
can act on (0-3), never a traceback, and writes nothing outside its results directory.

The CLI runs in-process through `assay.cli.main`, the same exception → exit-code mapping a
user sees. `assay run` stops at the engine (a stub here), so an accepted case does no IO;
cases built with an ingredient known to be invalid must be refused before it.
"""

import math
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assay.cli.run as run_verb
from assay.cli import main

CASES = 800  # at least 500 must run; the whole test takes about 20 s on one core

NASTY_TEXT = ["8 GB", "8GiB", "4k", "0", "-1", "1e400", "10 parsecs", "12d", "31d", "100PiB",
              "0.0000001s", "$(rm -rf /)", "`reboot`", "; rm -rf ~", "a|b && c", "../../x",
              "/dev/sda", "%s%n", "{{7*7}}", "\u202e", "☃ ünï", "NaN", ".inf", "1:0", "2:1",
              "100%", "-5%", "a:b;c#d", "${HOME}", "\t", "", " ", "null", "~", "yes", "0x10",
              "\x1b[2J\x1b]0;x\x07", "a\nb", "\x9b31m", ".nan", "-.inf", "1e300"]
# values whose rejection is certain: a case holding one must never reach the engine
REFUSED = {"31d", "100000000d", "0.5s", "abc", "-1", "10 minutes"}
KNOWN_BAD_DATASET = ["0", "100PiB", "-1", "8 Gi", "1e400"]
KINDS = {
    "exchange": {"mailboxes": 10, "databases": 1},
    "oltp": {"preset": "standard"},
    "micro": {},
    "vdi": {"desktops": 5},
    "dss": {"streams": 1},
    "backup": {},
}
PATHS = [("name",), ("seed",), ("description",), ("workloads", "w", "dataset"),
         ("workloads", "w", "mailboxes"), ("workloads", "w", "data", "compressibility"),
         ("workloads", "w", "access", "distribution"), ("workloads", "w", "access", "theta"),
         ("workloads", "w", "load", "iodepth"), ("workloads", "w", "load", "scale"),
         ("workloads", "w", "start"), ("workloads", "w", "stop"), ("workloads", "w", "subdir"),
         ("workloads", "w", "no_such_key"), ("workloads", "w", "kind"), ("workloads", "w"),
         ("workloads",), ("timeline", "duration"), ("timeline", "warmup"),
         ("timeline", "steps"), ("target", "path"), ("target", "throttle"), ("thresholds",),
         ("timeline",), ("unknown",), ("schema_version",)]

scalars = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70), st.floats(), st.booleans(), st.none(),
    st.text(max_size=20), st.sampled_from(NASTY_TEXT))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8)
durations = st.one_of(st.sampled_from(sorted(REFUSED) + ["12d", "30d", "1h30m", "2s", "1.5s",
                                                         "0", "1e9", "∞", ""]),
                      st.text(max_size=8), st.integers().map(str), st.floats().map(str))


def _set(data: dict, path: tuple, value) -> None:
    for key in path[:-1]:
        if not isinstance(data.get(key), dict):
            data[key] = {}
        data = data[key]
    data[path[-1]] = value


def billion_laughs(levels: int) -> str:
    text = 'lol0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, levels):
        text += f"lol{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]\n"
    return text


@st.composite
def scenario_texts(draw) -> tuple[str, bool]:
    """(YAML text, whether it certainly holds an invalid value)."""
    kind = draw(st.sampled_from(sorted(KINDS)))
    data = {"name": "fuzz", "workloads": {"w": {"kind": kind, **KINDS[kind]}},
            "timeline": {"duration": "2s"}}
    bad = False
    for path, value in draw(st.lists(st.tuples(st.sampled_from(PATHS), values), max_size=3)):
        _set(data, path, value)
    if draw(st.booleans()):
        dataset = draw(st.sampled_from(KNOWN_BAD_DATASET))
        _set(data, ("workloads", "w", "dataset"), dataset)
        bad = isinstance(data.get("workloads"), dict) and \
            isinstance(data["workloads"].get("w"), dict)
    text = yaml.safe_dump(data, allow_unicode=draw(st.booleans()))
    damage = draw(st.sampled_from(["none", "none", "laughs", "nesting", "truncate", "garbage",
                                   "alias", "tab"]))
    if damage == "laughs":
        text += billion_laughs(draw(st.integers(1, 9)))
    elif damage == "nesting":
        # depths around MAX_DEPTH (64) and two far beyond PyYAML's 1,024-character simple-key
        # window, where its scan of flow nesting is quadratic (0.3 s a case, whatever the depth
        # beyond): what a draw from 1-3000 reached (2 in 3 of those far beyond) at a third of
        # the time, each boundary drawn, not hoped for
        n = draw(st.sampled_from([1, 2, 63, 64, 65, 66, 200, 1100, 3000]))
        text += "deep: " + "[" * n + "]" * n + "\n"
    elif damage == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif damage == "garbage":
        text = draw(st.text(max_size=200))
    elif damage == "alias":
        text = "x: &x {a: [1, 2]}\ny: *x\nz: &z [*z]\n" + text
    elif damage == "tab":
        text = text.replace("  ", "\t", 1)
    return text, bad


@st.composite
def command_lines(draw) -> tuple[str, list[str], bool]:
    """(verb, arguments after the scenario, whether refusal before IO is certain)."""
    verb = draw(st.sampled_from(["plan", "plan", "plan", "run"]))
    args: list[str] = []
    refused = False
    if draw(st.booleans()):
        d = draw(durations)
        args += ["--duration", d]
        refused |= d in REFUSED
    if verb == "plan":
        args += ["--json"] if draw(st.booleans()) else []
        args += [] if draw(st.integers(0, 9)) == 0 else ["--no-check"]  # fio runs 1 time in 10
        return verb, args, refused
    if draw(st.booleans()):
        w = draw(durations)
        args += ["--warmup", w]
        refused |= w in REFUSED and w != "0"
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(["w.dataset", "w.mailboxes", "w.load.scale", "nope",
                                    "w.nope.x", "", "w", "w.data.compressibility"]))
        args += ["--set", f"{key}={draw(st.sampled_from(NASTY_TEXT))}"]
    if draw(st.booleans()):
        args += ["--path", draw(st.sampled_from(NASTY_TEXT[10:20] + ["rel/dir", "a:b"]))]
    return verb, args, refused


class ReachedEngine(BaseException):
    """Not an Exception: `main` would report it as a bug (exit 4)."""


class StubEngine:
    """Where a real run would begin its IO."""

    def __init__(self, *args, **kwargs):
        raise ReachedEngine()


def run_main(args: list[str], env: dict[str, str]) -> tuple[int | str, str]:
    """`assay ARGS` in-process: (exit code, stdout + stderr)."""
    runner = CliRunner()
    with runner.isolation(env=env) as (_, _, output):
        old_argv, sys.argv = sys.argv, ["assay", *args]
        try:
            main()
            code: int | str = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else str(e.code)
        except ReachedEngine:
            code = "engine"
        finally:
            sys.argv = old_argv
        return code, output.getvalue().decode("utf-8", "replace")


def test_fuzz_scenarios_and_command_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(run_verb, "Engine", StubEngine)
    work, tmp, results = tmp_path / "work", tmp_path / "tmp", tmp_path / "results"
    for d in (work, tmp):
        d.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    # ASSAY_DEBUG: a bug's traceback goes to the output (and fails the test) instead of a file
    env = {"ASSAY_RESULTS": str(results), "TMPDIR": str(tmp), "HOME": str(work),
           "ASSAY_DEBUG": "1", "NO_COLOR": "1"}
    stats: Counter[str] = Counter()

    @settings(max_examples=CASES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(scenario=scenario_texts(), cli=command_lines(),
           ref=st.sampled_from(["file"] * 8 + ["exchange-quick", "exchange-quik", "-", "."]))
    def one(scenario, cli, ref):
        text, bad_scenario = scenario
        verb, args, bad_args = cli
        source = tmp_path / "in.yaml"
        source.write_text(text, encoding="utf-8", errors="surrogateescape")
        target = str(source) if ref == "file" else ref
        code, output = run_main([verb, target, *args, "--results", str(results)]
                                if verb == "run" else [verb, target, *args], env)
        stats[f"{verb} exit {code}"] += 1
        assert code in (0, 1, 2, 3, "engine"), (code, args, text[:300], output[-2000:])
        assert "Traceback" not in output and "internal error" not in output, output[-2000:]
        assert not any(c in output for c in ("\x1b", "\x07", "\x9b")), output[-2000:]
        overridden = any(a.startswith("w.dataset=") for a in args)  # --set replaces it
        if verb == "run" and ref == "file" and ((bad_scenario and not overridden) or bad_args):
            assert code == 2, ("must be refused before IO", args, text[:300], output[-1000:])
        # nothing written: not in the working directory, the temp directory or the results
        assert sorted(os.listdir(work)) == [] and sorted(os.listdir(tmp)) == []
        assert not results.exists() or not any(results.iterdir())

    one()
    total = sum(stats.values())
    print(f"\nfuzz: {total} cases: " + ", ".join(f"{k}: {v}" for k, v in sorted(stats.items())))
    assert total >= 500
    assert stats["plan exit 0"] and stats["plan exit 2"] and stats["run exit 2"]


def test_the_fuzz_harness_sees_a_traceback(monkeypatch):
    """The harness itself: an exception inside a verb is exit 4, which the fuzz test rejects."""
    monkeypatch.setattr(run_verb, "Engine", StubEngine)

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(run_verb, "planned", boom)
    monkeypatch.setenv("ASSAY_DEBUG", "1")  # the traceback goes to stderr, not a file
    code, output = run_main(["run", "exchange-quick"], {"ASSAY_DEBUG": "1"})
    assert code == 4 and "internal error" in output
    assert Path(tempfile.gettempdir()).exists()


# -- every field, every hostile value (issue 21: NaN, infinity, huge numbers, control characters)

NOT_FINITE = [float("nan"), float("inf"), float("-inf")]
HUGE = [1e300, -1e300, 10**30, 2**64]
CONTROL = ["a\x1b[31mb", "x\x07y", "a\x9bb"]  # ESC sequence, BEL, a C1 CSI
RAW = ("\x1b", "\x07", "\x9b")
BASE_KINDS = {**KINDS, "hcibench": {}, "postgres": {"scale": 1}, "fio": {"job": "j.fio"}}
REQUIRED = {"op": "fail", "run": "true", "text": "x", "window": "1s", "host": "n1"}


def _fields(model, path=()):
    """Every field of a model, nested models walked into: (path, field name)."""
    import typing

    from pydantic import BaseModel
    for name, f in model.model_fields.items():
        args = typing.get_args(f.annotation) or (f.annotation,)
        sub = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        if sub:
            yield from _fields(sub[0], (*path, name))
        else:
            yield (*path, name)


def _every_field():
    """(scenario data, path of the field to spoil): each scenario key, each workload kind's
    own keys (the keys all kinds share once), each action's keys (a step's shared keys once)."""
    from assay import actions, workloads
    from assay.scenario.models import IntegritySpec, Scenario, StepBase, WorkloadBase

    def scenario(**extra):
        return {"name": "fuzz", "workloads": {"w": {"kind": "oltp", "preset": "standard"}},
                "timeline": {"duration": "2s"}, **extra}

    shared = set(WorkloadBase.model_fields) | {("data",), ("access",), ("load",)}
    for path in _fields(Scenario):
        if path[0] not in ("workloads", "integrity"):
            yield scenario(), path
    for path in _fields(IntegritySpec):
        yield scenario(integrity={}), ("integrity", *path)
    yield scenario(target={"throttle": [{"device": "/dev/null"}]}), \
        ("target", "throttle", 0, "read_iops")
    for kind, model in workloads.kinds().items():
        for path in _fields(model):
            if kind == "oltp" or (path[0] not in shared and path[0] != "kind"):
                data = scenario()
                data["workloads"]["w"] = {"kind": kind, **BASE_KINDS.get(kind, {})}
                yield data, ("workloads", "w", *path)
    for action, model in actions.actions().items():
        step = {"action": action, "at": "1s", **{k: v for k, v in REQUIRED.items()
                                                 if k in model.model_fields
                                                 and model.model_fields[k].is_required()}}
        for path in _fields(model):
            if action == "annotate" or path[0] not in StepBase.model_fields:
                yield scenario(timeline={"duration": "2s", "steps": [dict(step)]}), \
                    ("timeline", "steps", 0, *path)
    yield scenario(), ("workloads", "w\x1b[2J")  # a workload's name is a key
    yield scenario(), ("thresholds", "w.data.read.iops\x1b")


def _spoil(data, path, value):
    node = data
    for key in path[:-1]:
        node = node[key] if isinstance(key, int) else node.setdefault(key, {})
    if path[-1] == "w\x1b[2J":
        data["workloads"] = {path[-1]: {"kind": "oltp", "preset": "standard"}}
    else:
        node[path[-1]] = value


def test_nan_infinity_huge_numbers_and_control_characters_in_every_field(tmp_path, monkeypatch):
    """NaN and infinity are refused (exit 2) wherever they are put, as is a control character;
    a huge number is refused or planned, never a traceback; nothing raw reaches the terminal."""
    import copy
    import json as jsonlib

    monkeypatch.setattr(run_verb, "Engine", StubEngine)
    monkeypatch.chdir(tmp_path)
    env = {"ASSAY_RESULTS": str(tmp_path / "results"), "ASSAY_DEBUG": "1", "NO_COLOR": "1"}
    source = tmp_path / "s.yaml"
    (tmp_path / "j.fio").write_text("[j]\nrw=randread\nsize=1m\n")  # the fio kind's job
    seen: Counter[str] = Counter()
    bases: dict[str, int | str] = {}
    for base, path in _every_field():
        text = yaml.safe_dump(base)
        if text not in bases:  # each unspoiled scenario plans: the spoiled value is refused
            source.write_text(text)
            bases[text] = run_main(["plan", str(source), "--no-check"], env)[0]
        for value in [*NOT_FINITE, *HUGE, *CONTROL]:
            data = copy.deepcopy(base)
            _spoil(data, path, value)
            # JSON is YAML: NaN and Infinity become .nan and .inf through yaml.safe_dump
            source.write_text(yaml.safe_dump(jsonlib.loads(jsonlib.dumps(data)),
                                             allow_unicode=True))
            code, output = run_main(["plan", str(source), "--no-check"], env)
            seen[f"exit {code}"] += 1
            where = (path, value, output[-600:])
            assert "Traceback" not in output and "internal error" not in output, where
            assert not any(c in output for c in RAW), where
            if value in CONTROL or (isinstance(value, float) and not math.isfinite(value)):
                assert code == 2, where
            else:
                assert code in (0, 1, 2, 3), where
    print(f"\nevery field: {sum(seen.values())} cases, {dict(seen)}; unspoiled: "
          f"{Counter(bases.values())}")
    assert sum(seen.values()) > 1000 and seen["exit 2"]
