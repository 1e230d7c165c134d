"""docs/observability.md: its series table is the exporter's catalogue, its scrape config is
valid for promtool, and its commands run as written on a recorded run."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.metrics.families import catalogue
from tests.observe.prom import PROMTOOL, needs_prometheus

DOC = Path(__file__).parents[2] / "docs" / "observability.md"
RUN = Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture"


def sample_name(kind: str, name: str) -> str:
    return {"counter": f"{name}_total", "info": f"{name}_info"}.get(kind, name)


def test_the_series_table_is_the_catalogue() -> None:
    rows = re.findall(r"^\| `(assay_[a-z0-9_]+)` \| (\w+) \|", DOC.read_text(), re.M)
    documented = dict(rows)
    exposed = {sample_name(f.kind, f.name): f.kind for f in catalogue().values()}
    assert documented == exposed


@needs_prometheus
def test_the_scrape_config_is_valid(tmp_path: Path) -> None:
    (config,) = re.findall(r"```yaml\n(scrape_configs:.*?)```", DOC.read_text(), re.S)
    (tmp_path / "prometheus.yml").write_text(config)
    r = subprocess.run([str(PROMTOOL), "check", "config", str(tmp_path / "prometheus.yml")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_commands_parse_and_the_export_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) \
        -> None:
    results = tmp_path / "results"
    shutil.copytree(RUN, results / RUN.name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_RESULTS", str(results))
    commands = [ln[2:].split() for ln in re.findall(r"^\$ (assay .*)$", DOC.read_text(), re.M)]
    assert {c[1] for c in commands} == {"run", "export", "serve"}
    for args in commands:
        if args[1] == "export":
            r = CliRunner().invoke(cli, args[1:], catch_exceptions=False)
            assert r.exit_code == 0, r.output
            assert (tmp_path / "run.om").read_text().endswith("# EOF\n")
        else:  # a run and a server: their options exist (--help lists them)
            help_text = CliRunner().invoke(cli, [args[1], "--help"]).output
            for option in [a for a in args if a.startswith("--")]:
                assert option in help_text, (args, option)
