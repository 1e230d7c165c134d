"""docs/reliability.md names a test for every promise: each one it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CITED = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")


def test_every_cited_test_exists() -> None:
    cited = CITED.findall((ROOT / "docs" / "reliability.md").read_text(encoding="utf-8"))
    assert len(cited) > 40
    missing = []
    for path, name in cited:
        file = ROOT / path
        if not file.is_file():
            missing.append(path)
        elif name and name not in {n.name for n in ast.walk(ast.parse(file.read_text()))
                                   if isinstance(n, ast.FunctionDef)}:
            missing.append(f"{path}::{name}")
    assert not missing, missing
