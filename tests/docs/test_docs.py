"""Documented examples are real: every scenario in the docs plans."""

import re
from pathlib import Path

import pytest

from assay.plan import plan_text

DOCS = Path(__file__).parents[2] / "docs"
README = Path(__file__).parents[2] / "README.md"


def yaml_blocks(path: Path) -> list[str]:
    return [b for b in re.findall(r"```yaml\n(.*?)```", path.read_text(), re.S) if "name:" in b]


EXAMPLES = [(p.name, i, b) for p in [README, DOCS / "scenarios.md", DOCS / "integrity.md",
                                   DOCS / "ai.md", DOCS / "files.md"]
            for i, b in enumerate(yaml_blocks(p))]


@pytest.mark.parametrize("doc,index,text", EXAMPLES, ids=[f"{d}#{i}" for d, i, _ in EXAMPLES])
def test_documented_scenarios_plan(doc, index, text):
    plan = plan_text(text, f"{doc}#{index}")
    assert plan.components


def test_there_are_documented_examples():
    assert len(EXAMPLES) >= 6


def test_readme_size_commands_run_and_emit_a_plannable_scenario(tmp_path):
    import shlex

    from tests.conftest import assay_in_process

    commands = [ln.split("#")[0].strip() for ln in README.read_text().splitlines()
                if ln.startswith("assay size ")]
    assert commands
    for command in commands:
        args = shlex.split(command)[1:]
        r = assay_in_process(*args, cwd=tmp_path)  # no signal: no interpreter start-up each
        assert r.returncode in (0, 1), (command, r.stderr)  # 1: a design rule fails
        if "--emit-scenario" in args:
            emitted = tmp_path / args[args.index("--emit-scenario") + 1]
            assert plan_text(emitted.read_text(), str(emitted)).components


def readme_commands(prefix: str) -> list[list[str]]:
    import shlex

    return [shlex.split(ln.split("#")[0])[1:] for ln in README.read_text().splitlines()
            if ln.startswith(prefix)]


def test_every_readme_verb_exists_and_every_run_plans(tmp_path):
    """The README's `assay run` lines plan as written (options a plan cannot take, such as a
    lab that does not exist here, are left out); every verb it shows answers --help."""
    import subprocess

    from tests.conftest import assay_in_process

    def assay(*args: str) -> subprocess.CompletedProcess[str]:  # nothing here is signalled
        return assay_in_process(*args, cwd=tmp_path)

    for verb in sorted({args[0] for args in readme_commands("assay ")}):
        assert assay(verb, "--help").returncode == 0, verb
    runs = [args[1:] for args in readme_commands("assay run ")]
    assert len(runs) >= 5
    run_only = {"--lab": 1, "--path": 1, "--json": 0, "--keep": 0, "--fresh": 0, "--force": 0,
                "--metrics": 1}
    for args in runs:
        kept, i = [], 1
        while i < len(args):
            if args[i] in run_only:
                i += 1 + run_only[args[i]]
                continue
            kept.append(args[i])
            i += 1
        scenario = args[0]
        if scenario.endswith(".yaml"):
            continue  # the README's own example file
        if "--hosts" in kept:  # the README's own inventory
            inventory = re.findall(r"```ini\n(.*?)```", README.read_text(), re.S)[0]
            (tmp_path / kept[kept.index("--hosts") + 1]).write_text(inventory)
        r = assay("plan", scenario, *kept, "--no-check")
        assert r.returncode == 0, (args, r.stderr)
