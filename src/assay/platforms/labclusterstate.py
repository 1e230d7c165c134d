"""A lab cluster's state (`cluster.json`): its hosts and what was made for each, shared by
creation (labcluster.py) and teardown (labcluster_teardown.py)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from assay.exitcodes import UserError

STATE = "cluster.json"


@dataclass
class ClusterHost:
    name: str
    netns: str
    veth: str  # this machine's end, on the bridge; the namespace's end is eth0
    address: str
    image: str = ""
    loop: str = ""
    mountpoint: str = ""
    sshd_config: str = ""
    pidfile: str = ""

    @property
    def path(self) -> str:
        return str(Path(self.mountpoint) / "assay")


@dataclass
class Cluster:
    name: str
    root: str
    subnet: str  # the first three octets: 10.213.X
    bridge: str
    size: int
    hosts: list[ClusterHost] = field(default_factory=list)
    status: str = "creating"
    created: float = field(default_factory=time.time)
    kind: str = "cluster"

    @property
    def key(self) -> str:
        return str(Path(self.root) / "id_ed25519")

    @property
    def known_hosts(self) -> str:
        return str(Path(self.root) / "known_hosts")

    @property
    def inventory(self) -> str:
        return str(Path(self.root) / "inventory.ini")

    def save(self) -> None:
        tmp = Path(self.root) / f".{STATE}.tmp"
        tmp.write_text(json.dumps({"schema_version": 1, **asdict(self)}, indent=2) + "\n",
                       encoding="utf-8")
        tmp.replace(Path(self.root) / STATE)

    def host(self, name: str) -> ClusterHost:
        for h in self.hosts:
            if h.name == name:
                return h
        raise UserError(f"cluster {self.name} has no host {name!r} "
                        f"({', '.join(h.name for h in self.hosts)})")
