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
