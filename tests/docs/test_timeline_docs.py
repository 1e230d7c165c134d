"""docs/timeline.md: every YAML example plans; the built-in timeline scenarios plan too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.plan import load, plan_text

DOC = Path(__file__).parents[2] / "docs" / "timeline.md"
BLOCKS = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
BUILTINS = ["snapshot-impact", "rebuild-impact", "compression-impact", "slow-disk", "colocation",
            "disk-failure"]


def test_the_doc_has_examples() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("text", BLOCKS, ids=[f"block{i + 1}" for i in range(len(BLOCKS))])
def test_doc_example_plans(text: str) -> None:
    plan = plan_text(text, "docs/timeline.md")
    assert plan.resolved.steps


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_plans_without_a_lab(name: str) -> None:
    plan = load(name)
    assert plan.resolved.steps and plan.thresholds
    assert "assay lab create" in plan.scenario.description
    assert "--lab" in plan.scenario.description
