"""Documented examples are real: every scenario in the docs plans."""

import re
from pathlib import Path

import pytest

from assay.plan import plan_text

DOCS = Path(__file__).parents[2] / "docs"
README = Path(__file__).parents[2] / "README.md"


def yaml_blocks(path: Path) -> list[str]:
    return [b for b in re.findall(r"```yaml\n(.*?)```", path.read_text(), re.S) if "name:" in b]


EXAMPLES = [(p.name, i, b) for p in [README, DOCS / "scenarios.md"]
            for i, b in enumerate(yaml_blocks(p))]


@pytest.mark.parametrize("doc,index,text", EXAMPLES, ids=[f"{d}#{i}" for d, i, _ in EXAMPLES])
def test_documented_scenarios_plan(doc, index, text):
    plan = plan_text(text, f"{doc}#{index}")
    assert plan.components


def test_there_are_documented_examples():
    assert len(EXAMPLES) >= 6


def test_readme_size_commands_run_and_emit_a_plannable_scenario(tmp_path):
    import shlex
    import subprocess
    import sys

    commands = [ln.split("#")[0].strip() for ln in README.read_text().splitlines()
                if ln.startswith("assay size ")]
    assert commands
    for command in commands:
        args = shlex.split(command)[1:]
        r = subprocess.run([sys.executable, "-m", "assay", *args], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode in (0, 1), (command, r.stderr)  # 1: a design rule fails
        if "--emit-scenario" in args:
            emitted = tmp_path / args[args.index("--emit-scenario") + 1]
            assert plan_text(emitted.read_text(), str(emitted)).components
