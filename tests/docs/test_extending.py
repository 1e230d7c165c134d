"""docs/extending.md: its example package is written out, installed, tested and planned.

Every code block that starts with a `# path` comment is a file; the pyproject.toml's entry
points become a .dist-info, as `pip install` would make them.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

from assay import actions, participants, platforms, workloads
from assay.cli import cli
from tests.plugin_dist import install

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "extending.md"
FILES = dict(re.findall(r"```(?:python|toml|yaml)\n# (\S+)\n(.*?)```",
                        DOC.read_text(encoding="utf-8"), re.S))
EXPORTER = "src/assay/report/exports/markdown.py"


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_tests(path: Path, tmp_path: Path) -> list[str]:
    """Call each test function of a test file, as pytest would (tmp_path is the one fixture)."""
    module = load(path, f"extending_{path.stem}")
    ran = []
    for name, fn in inspect.getmembers(module, inspect.isfunction):
        if name.startswith("test_") and fn.__module__ == module.__name__:
            wanted = inspect.signature(fn).parameters
            fn(**({"tmp_path": tmp_path} if "tmp_path" in wanted else {}))
            ran.append(name)
    return ran


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "assay-randmix"
    pyproject = tomllib.loads(FILES["pyproject.toml"])
    install(root, monkeypatch, pyproject["project"]["entry-points"], FILES,
            name=pyproject["project"]["name"])
    return root


def test_the_doc_has_a_file_for_each_plugin_and_its_test() -> None:
    for stem in ("randmix", "sync", "mounted", "meminfo"):
        assert f"assay_randmix/{stem}.py" in FILES and f"tests/test_{stem}.py" in FILES
    assert EXPORTER in FILES and "tests/report/test_markdown.py" in FILES


def test_the_example_plugins_register_and_their_tests_pass(package: Path,
                                                           tmp_path: Path) -> None:
    assert "randmix" in workloads.names()
    assert "sync" in actions.names()
    assert platforms.driver("mounted").name == "mounted"
    assert "meminfo" in participants.REGISTRY.names()
    ran = [t for stem in ("randmix", "sync", "mounted", "meminfo")
           for t in run_tests(package / "tests" / f"test_{stem}.py", tmp_path)]
    assert len(ran) == 4


def test_assay_plan_shows_the_plugins_fio_jobs_and_step(package: Path) -> None:
    args = ["plan", str(package / "randmix.yaml"), "--json"]
    if shutil.which("fio") is None:
        args.append("--no-check")  # fio would check the job file; without it, plan only
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert "[db.mix.1.read.8k]" in out["jobfile"] and "[db.mix.4.write.8k]" in out["jobfile"]
    assert [s["action"] for s in out["steps"]] == ["sync"]
    assert {c["name"]: c["target_iops"] for c in out["components"]} == {
        "db.mix.read": 700, "db.mix.write": 300}


def test_the_exporter_example_renders_a_stored_run(package: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a plug-in yet: run its test as if the module were in assay's exports package."""
    module = load(package / EXPORTER, "assay.report.exports.markdown")
    assert isinstance(module.SUFFIX, str) and callable(module.render)
    monkeypatch.setitem(sys.modules, "assay.report.exports.markdown", module)
    shutil.copytree(ROOT / "tests" / "fixtures" / "runs" / "exchange-fixture",
                    package / "tests" / "fixtures" / "runs" / "exchange-fixture")
    assert run_tests(package / "tests" / "report" / "test_markdown.py", tmp_path) == [
        "test_markdown_has_a_row_per_threshold"]
