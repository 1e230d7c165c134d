"""Install a plug-in package for one test, as pip would: its files, and a .dist-info that
declares its entry points, on sys.path. The registries reload their entry points."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import actions, participants, platforms, workloads
from assay.report import exports


def write(root: Path, entry_points: dict[str, dict[str, str]],
          files: dict[str, str] | None = None, name: str = "assay-example") -> None:
    """The package's files and its .dist-info under `root` (for PYTHONPATH)."""
    for rel, text in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    dist = root / f"{name.replace('-', '_')}-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for group, eps in entry_points.items()))


def install(root: Path, monkeypatch: pytest.MonkeyPatch, entry_points: dict[str, dict[str, str]],
            files: dict[str, str] | None = None, name: str = "assay-example") -> None:
    """`write`, then make it importable in this process until the test ends."""
    write(root, entry_points, files, name)
    monkeypatch.syspath_prepend(str(root))
    for registry in (workloads.REGISTRY, actions.REGISTRY, platforms.REGISTRY,
                     exports.REGISTRY, participants.REGISTRY):
        # None: load the entry points on next access; the old value is restored after the test
        monkeypatch.setattr(registry, "_plugins", None)
