"""A Ceph lab's state (`ceph.json`), shared by creation (labceph.py) and teardown
(labceph_teardown.py)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError

STATE = "ceph.json"
POOL = "assay"


@dataclass
class CephLab:
    name: str
    root: str
    fsid: str = ""
    mon: str = ""  # the first host's address: monitor and manager
    pool: str = POOL
    osds: dict[str, int] = field(default_factory=dict)  # host -> its OSD id
    status: str = "creating"
    bringup_s: float = 0.0
    cephfs: str = ""  # where CephFS is mounted on this machine (--cephfs: platforms/labcephfs.py)

    @property
    def conf(self) -> str:
        return str(Path(self.root) / "ceph.conf")

    @property
    def keyring(self) -> str:
        return str(Path(self.root) / "keyring")

    def save(self) -> None:
        tmp = Path(self.root) / f".{STATE}.tmp"
        tmp.write_text(json.dumps({"schema_version": 1, **asdict(self)}, indent=2) + "\n",
                       encoding="utf-8")
        tmp.replace(Path(self.root) / STATE)

    def target(self) -> dict[str, Any]:
        """The scenario target for runs on this lab (the driver in platforms/ceph.py)."""
        return {"platform": "ceph", "options": {"conf": self.conf, "keyring": self.keyring,
                                                "pool": self.pool, "client": "admin",
                                                "lab": self.root}}


def load_dir(d: Path) -> CephLab:
    try:
        data = json.loads((d / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UserError(f"{d} is not a Ceph lab ({STATE}: {e})") from None
    data.pop("schema_version", None)
    return CephLab(**data)
