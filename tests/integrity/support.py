"""A written integrity file and its journal, for the tests of this package."""

from __future__ import annotations

from pathlib import Path

from assay.integrity.session import Session
from assay.scenario.models import IntegritySpec

BLOCK = 8192


def written(tmp_path: Path, blocks: int = 256, rate: float = 1000, seconds: float = 0.0,
            direct: bool = True) -> Session:
    """A session whose file is prefilled (and written `seconds` longer by its writer), stopped."""
    import time

    (tmp_path / "target").mkdir(exist_ok=True)
    s = Session("run-1", IntegritySpec(size=blocks * BLOCK, block=BLOCK, rate=rate), ["db"],
                tmp_path / "target", tmp_path / "run", direct, seed=7)
    s.prefill()
    if seconds:
        s.start()
        time.sleep(seconds)
    s.stop()
    return s


def flip(path: Path, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x5A]))
