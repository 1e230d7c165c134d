"""`assay hosts check` on a real 3-host lab cluster: what passes, what is refused, exit codes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from assay.platforms.labcluster import Cluster
from tests.conftest import assay_in_process
from tests.sshlab import cluster, needs_netns  # noqa: F401

pytestmark = needs_netns


def assay(*args: str) -> subprocess.CompletedProcess[str]:
    # in this process (tests/conftest.py): `hosts check` is never signalled, no start-up each
    return assay_in_process(*args)


def test_every_host_of_the_lab_passes(cluster: Cluster) -> None:  # noqa: F811
    r = assay("hosts", "check", "--hosts", cluster.inventory, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["ok"] and doc["warnings"] == [] and len(doc["hosts"]) == 3
    for h, made in zip(doc["hosts"], cluster.hosts, strict=True):
        assert h["ok"] and h["reachable"] and h["errors"] == []
        assert h["fio"].startswith("fio-3.")
        assert h["python"].startswith("3.")  # assay's agent ran there
        assert not [w for w in h["warnings"] if "bash" in w]  # fio starts from bash's wait
        assert abs(h["clock_offset_s"]) < 0.005 and h["clock_rtt_s"] < 0.1
        assert h["target"] == made.path and h["free_bytes"] > 100 << 20
        assert h["host"]["address"] == made.address
        assert h["host"]["key_file"] == cluster.key  # the key's path, never the key
    assert "PRIVATE KEY" not in r.stdout
    table = assay("hosts", "check", "--hosts", cluster.inventory)
    assert table.returncode == 0 and "3 of 3 host(s) ready" in table.stdout
    assert table.stdout.count("PASS") == 3


def test_failures_are_named_per_host(cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    n1, n2, n3 = cluster.hosts
    known = Path(cluster.known_hosts).read_text().splitlines()
    known[2] = known[0].replace(n1.address, n3.address)  # n3 "presents" n1's key
    bad_known = tmp_path / "known_hosts"
    bad_known.write_text("\n".join(known) + "\n")
    inv = tmp_path / "inv.ini"
    inv.write_text(
        f"n1 ansible_host={n1.address} assay_path=/nonexistent-{n1.name}/deeper/assay\n"
        f"n2 ansible_host={n2.address} assay_device={n2.loop}\n"
        f"n3 ansible_host={n3.address} assay_path={n3.path}\n"
        f"[all:vars]\nansible_user=root\nansible_ssh_private_key_file={cluster.key}\n"
        f"assay_known_hosts={bad_known}\n")
    r = assay("hosts", "check", "--hosts", str(inv), "--json")
    assert r.returncode == 1, r.stdout + r.stderr
    hosts = {h["host"]["name"]: h for h in json.loads(r.stdout)["hosts"]}
    assert hosts["n1"]["errors"] == ["n1: target /nonexistent-n1/deeper/assay: its parent "
                                     "/nonexistent-n1/deeper does not exist there"]
    [refused] = hosts["n2"]["errors"]  # the host's own mounted ext4: never written to
    assert refused.startswith(f"n2: refusing to write to {n2.loop}: it type ext4")
    assert "is mounted" in refused and hosts["n2"]["free_bytes"] == cluster.size
    [mismatch] = hosts["n3"]["errors"]
    assert not hosts["n3"]["reachable"]
    assert f"does not match the one in {bad_known} line 3; refused" in mismatch
    table = assay("hosts", "check", "--hosts", str(inv))
    assert table.returncode == 1 and "0 of 3 host(s) ready" in table.stdout
    assert "Traceback" not in table.stdout + table.stderr


def test_a_host_without_a_python_for_the_agent_is_named(cluster: Cluster,  # noqa: F811
                                                       tmp_path: Path) -> None:
    lines = Path(cluster.inventory).read_text().splitlines()
    inv = tmp_path / "inv.ini"
    inv.write_text("\n".join(ln + " ansible_python_interpreter=/nonexistent/python3"
                             if ln.startswith("n2 ") else ln for ln in lines) + "\n")
    r = assay("hosts", "check", "--hosts", str(inv), "--json")
    assert r.returncode == 1, r.stdout + r.stderr
    hosts = {h["host"]["name"]: h for h in json.loads(r.stdout)["hosts"]}
    assert hosts["n1"]["ok"] and hosts["n3"]["ok"] and hosts["n2"]["python"] is None
    [error] = hosts["n2"]["errors"]
    assert error.startswith("n2: /nonexistent/python3 does not run there; assay's agent "
                            "(latency from the due time, integrity mode) needs Python 3.9")


def test_bad_input_exits_2_with_file_and_line(tmp_path: Path) -> None:
    inv = tmp_path / "inv.ini"
    inv.write_text("n1 ansible_host=10.0.0.1 ansible_port=twenty-two\n")
    r = assay("hosts", "check", "--hosts", str(inv))
    assert r.returncode == 2
    assert f"{inv}:1: n1.ansible_port: 'twenty-two' is not a port number" in r.stderr
    assert "Traceback" not in r.stderr
    missing = assay("hosts", "check", "--hosts", str(tmp_path / "none.ini"))
    assert missing.returncode == 2 and "cannot read inventory" in missing.stderr
    assert assay("hosts", "check").returncode == 2  # --hosts is required
