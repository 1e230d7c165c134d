"""Inventories written by someone else: a host named `..`, ranges of millions of hosts, shell
characters in addresses and users, ssh options that would take a terminal, paths with spaces,
invisible characters. Each is refused at load, cleanly (file, line, field; exit 2), or passed
to ssh as ssh reads it; and a fuzz of every value loads or is refused, never a traceback."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.exitcodes import ExitCode, UserError
from assay.hosts import inventory
from assay.hosts.inventory import InventoryError
from assay.hosts.ssh import SshError, SshHost
from assay.hosts.sshargs import split_ssh_args
from tests.conftest import assay_in_process


def refused(text: str, file: str = "inv.ini") -> str:
    with pytest.raises(InventoryError) as e:
        inventory.parse(text, file)
    assert e.value.code == ExitCode.INVALID_INPUT
    return str(e.value)


def assay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # in this process (tests/conftest.py): nothing here is signalled, no start-up per call
    return assay_in_process(*args, cwd=cwd)


# -- a host named `..` or `.` ----------------------------------------------------------------

def test_a_host_named_dot_dot_is_refused_and_reads_nothing_beside_the_inventory(
        tmp_path: Path) -> None:
    """`..` would be the run directory's root (every second of its series written twice) and
    host_vars/.. the inventory's own directory."""
    (tmp_path / "host_vars").mkdir()
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "notes.yml").write_text("ansible_user: [not, for, you\n")  # read: an issue
    for text, file in (("n1 assay_path=/mnt/a\n.. assay_path=/mnt/a\n", "inv.ini"),
                       ("all:\n  hosts:\n    n1: {assay_path: /mnt/a}\n    ..: \n", "inv.yml"),
                       ("n1 assay_path=/mnt/a\n. assay_path=/mnt/a\n", "inv2.ini")):
        path = tmp_path / file
        path.write_text(text)
        with pytest.raises(InventoryError) as e:
            inventory.load(path)
        msg = str(e.value)
        assert f"{path}:" in msg and "is not a host name" in msg, msg
        assert "notes.yml" not in msg  # the inventory's directory was not read as host_vars
    # a group named `..` is refused too, and group_vars/.. is not read either
    path = tmp_path / "groups.ini"
    path.write_text("[..]\nn1 assay_path=/mnt/a\n")
    msg = str(pytest.raises(InventoryError, inventory.load, path).value)
    assert f"{path}:1: ..: a group name is" in msg and "notes.yml" not in msg, msg


def test_shell_characters_in_a_name_are_named_with_file_and_line() -> None:
    msg = refused("n1 assay_path=/mnt/a\n'a b$c' assay_path=/mnt/a\nx/y assay_path=/m\n")
    assert "inv.ini:2: a b$c: a host name is letters, digits and . _ - :, not ' ' '$'" in msg
    assert "inv.ini:3: x/y: a host name is letters, digits and . _ - :, not '/'" in msg
    msg = refused("all:\n  hosts:\n    'db;reboot': \n    -x: \n", "inv.yml")
    assert "inv.yml:3: db;reboot: a host name is letters, digits and . _ - :, not ';'" in msg
    assert "inv.yml:4: -x: a host name does not start with '-'" in msg
    msg = refused("h[1:3]$ assay_path=/mnt/a\n")  # one issue for the pattern, not three
    assert msg.count("not '$'") == 1 and "(and 2 more names of 'h[1:3]$')" in msg


# -- ranges: bounded, counted before they are expanded ---------------------------------------

def test_a_range_of_millions_is_refused_before_it_is_expanded() -> None:
    """`n[1:9]` eight times: 43 million names, 9.5 GB before; now refused at once."""
    start = time.monotonic()
    msg = refused("n[1:9]" * 8 + " assay_path=/mnt/a\n")
    assert time.monotonic() - start < 1.0
    assert "inv.ini:1: " in msg and "43,046,721 hosts" in msg and "at most 100,000" in msg
    msg = refused("all:\n  hosts:\n    'h[0:99999999999999999999999]': \n", "inv.yml")
    assert "inv.yml:3: " in msg and "at most 100,000 hosts" in msg


def test_the_hosts_of_all_patterns_are_bounded_together(monkeypatch: pytest.MonkeyPatch) -> None:
    msg = refused("[a]\nx[1:60000] assay_path=/mnt/a\n[b]\ny[1:60000] assay_path=/mnt/a\n")
    assert "inv.ini:4: y[1:60000]: more than 100,000 hosts" in msg
    # one host counted in many groups: the entries are bounded too (at 10 x the hosts; here
    # made small, to be quick)
    from assay.hosts import inventory_source

    monkeypatch.setattr(inventory_source, "MAX_ENTRIES", 1000)
    msg = refused("".join(f"[g{i}]\nh[1:99]\n" for i in range(12)))
    assert "inv.ini:22: h[1:99]: the groups list more than 1,000 hosts" in msg, msg


# -- ssh options: the -o forms of refused flags ----------------------------------------------

@pytest.mark.parametrize("args,flag", [
    ("-o RequestTTY=force", "-t"), ("-oRequestTTY=yes", "-t"), ('-o "RequestTTY yes"', "-t"),
    ("-o requesttty=FORCE", "-t"), ("-qoRequestTTY=yes", "-t"), ("-o 'RequestTTY = true'", "-t"),
    ("-o StdinNull=yes", "-n"), ("-o SessionType=none", "-N"),
    ("-o sessiontype=subsystem", "-s"), ("-o ForkAfterAuthentication=yes", "-f"),
    ("-o Tunnel=yes", "-w"), ("-tt", "-t")])
def test_the_o_forms_of_refused_flags_are_refused_as_the_flags_are(args: str, flag: str) -> None:
    """`-o RequestTTY=force` passed `hosts check` and hung the run 60 s into a traceback."""
    msg = refused(f"n1 ansible_host=10.0.0.1 assay_path=/mnt/a "
                  f"ansible_ssh_common_args={shlex.quote(args)}\n")
    assert "inv.ini:1: n1.ansible_ssh_common_args: " in msg, msg
    assert f"like {flag}, it" in msg or f": {flag} would" in msg, msg


def test_o_forms_that_change_nothing_are_passed_on() -> None:
    for args in ("-o RequestTTY=no", "-T", "-o SessionType=default", "-o StdinNull=no",
                 "-o ControlMaster=auto -o ControlPersist=60s", "-o RemoteCommand=none"):
        assert split_ssh_args(args) == shlex.split(args)
    with pytest.raises(ValueError, match="a command of its own"):
        split_ssh_args("-o RemoteCommand=reboot")


# -- addresses, users, ports -----------------------------------------------------------------

@pytest.mark.parametrize("address", [
    "$(touch /tmp/pwned)", "`id`", "a;b", "h|x", "host name", "-oProxyCommand=sh",
    "999.1.1.1", "10", "fe80::1%$(id)", "[10.0.0.1]", "a..b", "-lead.example.com",
    "x" * 64 + ".example.com", "ex&ample.com", "a'b"])
def test_an_address_with_shell_characters_is_refused(address: str) -> None:
    """With an older ssh and `ProxyCommand ... %h` these would run on this machine."""
    msg = refused(f"n1 ansible_host={shlex.quote(address)} assay_path=/mnt/a\n")
    assert "inv.ini:1: n1.ansible_host: " in msg and "is not a host address" in msg, msg


def test_addresses_that_are_addresses() -> None:
    text = "".join(f"h{i} ansible_host={a} assay_path=/mnt/a\n" for i, a in enumerate(
        ["10.0.0.1", "db-1.example.com.", "db_1", "fe80::1", "[fe80::2]", "fe80::3%eth0",
         "::ffff:10.0.0.1", "localhost"]))
    got = [h.address for h in inventory.parse(text, "inv.ini")]
    assert got == ["10.0.0.1", "db-1.example.com.", "db_1", "fe80::1", "fe80::2",
                   "fe80::3%eth0", "::ffff:10.0.0.1", "localhost"]  # brackets: ssh's form
    msg = refused("a:b assay_path=/mnt/a\n")  # the name is the address: it must be one
    assert "inv.ini:1: a:b: 'a:b' is not a host address" in msg and "ansible_host" in msg


@pytest.mark.parametrize("user", ["root;id", "$(id)", "-oProxyCommand=x", "a b", "`id`",
                                  "u" * 65, "é", "a@b"])
def test_a_user_that_is_not_a_portable_user_name_is_refused(user: str) -> None:
    msg = refused(f"n1 ansible_host=10.0.0.1 ansible_user={shlex.quote(user)} "
                  "assay_path=/mnt/a\n")
    assert "inv.ini:1: n1.ansible_user: " in msg and "is not a user name" in msg, msg


def test_users_that_are_user_names() -> None:
    text = "".join(f"h{i} ansible_host=10.0.0.{i} ansible_user={u} assay_path=/mnt/a\n"
                   for i, u in enumerate(["root", "ops.admin", "_svc", "a-b_c.d", "u" * 64]))
    assert [h.user for h in inventory.parse(text, "inv.ini")] == [
        "root", "ops.admin", "_svc", "a-b_c.d", "u" * 64]


@pytest.mark.parametrize("port", ["'２２'", "\"'2_2'\"", "0", "65536", "True", "22.0", "-1",
                                  "[22]"])
def test_a_port_is_1_to_65535_in_digits(port: str) -> None:
    msg = refused(f"n1 ansible_host=10.0.0.1 ansible_port={port} assay_path=/mnt/a\n")
    assert "inv.ini:1: n1.ansible_port: " in msg and "is not a port number (1-65535)" in msg


# -- what run refuses, plan and hosts check refuse -------------------------------------------

def test_plan_and_hosts_check_refuse_what_run_refuses(tmp_path: Path) -> None:
    """`${HOME}` in assay_path: fio would substitute it; `run` refused it, `plan` and `hosts
    check` did not."""
    inv = tmp_path / "hosts.ini"
    inv.write_text("n1 ansible_host=10.0.0.1 assay_path=/mnt/${HOME}/x\n"
                   "n2 ansible_host=10.0.0.2 assay_path=/mnt/a\n")
    for args in (("plan", "oltp-cluster", "--hosts", str(inv), "--no-check"),
                 ("hosts", "check", "--hosts", str(inv))):
        r = assay(*args, cwd=tmp_path)
        assert r.returncode == 2, (args, r.stdout[-300:], r.stderr[-300:])
        assert f"{inv}:1: n1.assay_path: fio cannot use the target path" in r.stderr
        assert "Traceback" not in r.stderr
    assert "fio cannot use" in refused("n1 assay_device=/dev/$ncpus\n")


# -- invisible characters --------------------------------------------------------------------

@pytest.mark.parametrize("ch", ["\u202e", "\u200b", "\u2066", "\ufeff", "\x1b", "\x07"])
def test_bidi_zero_width_and_control_characters_are_refused_and_shown_escaped(ch: str) -> None:
    for text, file in ((f"n{ch}1 assay_path=/mnt/a\n", "inv.ini"),
                       (f"[g{ch}]\nn1 assay_path=/mnt/a\n", "inv.ini"),
                       (f"n1 ansible_host=10.0.0.1 assay_path=/mnt/a{ch}\n", "inv.ini"),
                       (f"n1 ansible_host=10.0.0.1 ansible_ssh_common_args='-o X=a{ch}'\n",
                        "inv.ini"),
                       (f'all:\n  hosts:\n    "n\\u{ord(ch):04x}1": \n', "inv.yml")):
        with pytest.raises(InventoryError) as e:
            inventory.parse(text, file)
        msg = str(e.value)
        assert ch not in msg, msg
        assert ch.encode("unicode_escape").decode() in msg, msg


# -- paths with spaces (and %) reach ssh as ssh reads them -----------------------------------

@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A real sshd on this machine's own stdin and stdout (`sshd -i` as the ProxyCommand): no
    port, no network; keys and known_hosts in a directory whose name holds a space and a %."""
    sshd_bin = shutil.which("sshd") or "/usr/sbin/sshd"
    if not (os.path.exists(sshd_bin) and shutil.which("ssh") and shutil.which("ssh-keygen")):
        pytest.skip("needs OpenSSH's ssh, sshd and ssh-keygen (Debian: openssh-server)")
    srv, mine = tmp_path / "srv", tmp_path / "my keys %h"
    srv.mkdir()
    mine.mkdir()
    for key in (srv / "host", mine / "id key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                       check=True)
    (srv / "authorized").write_text((mine / "id key.pub").read_text())
    (srv / "config").write_text(f"HostKey {srv}/host\nAuthorizedKeysFile {srv}/authorized\n"
                                "StrictModes no\nUsePAM no\nPasswordAuthentication no\n"
                                "KbdInteractiveAuthentication no\nPidFile none\n")
    known = mine / "known hosts"
    known.write_text("h1 " + " ".join((srv / "host.pub").read_text().split()[:2]) + "\n")
    proxy = f"ProxyCommand={sshd_bin} -i -f {srv}/config -E {srv}/log"
    plain = subprocess.run(
        ["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o",
         "UserKnownHostsFile=/dev/null", "-o", f"IdentityFile={srv}/host", "-o", proxy, "h1",
         "true"], capture_output=True, text=True, timeout=30)
    if "Permission denied" not in plain.stderr and plain.returncode != 0:
        pytest.skip(f"sshd -i does not run here: {plain.stderr.strip()[-200:]}")
    # a temporary directory of its own, short (a socket's path has a bound), with a space
    tmp = Path(tempfile.mkdtemp(prefix="assay t%p "))
    saved = tempfile.tempdir
    tempfile.tempdir = str(tmp)
    try:
        yield {"key": str(mine / "id key"), "known_hosts": str(known), "proxy": proxy,
               "tmp": tmp}
    finally:
        tempfile.tempdir = saved
        shutil.rmtree(tmp, ignore_errors=True)


def test_a_key_known_hosts_and_tmpdir_with_spaces_reach_ssh(sshd: dict[str, Any]) -> None:
    """A space in the key's path, the known_hosts path or $TMPDIR broke ssh with ssh's own
    words; ssh splits UserKnownHostsFile at a space, so the key there was not found."""
    [h] = inventory.parse(f"h1 ansible_ssh_private_key_file={shlex.quote(sshd['key'])} "
                          f"assay_known_hosts={shlex.quote(sshd['known_hosts'])} "
                          f"assay_path=/mnt/a ansible_ssh_common_args="
                          f"{shlex.quote(shlex.join(['-o', sshd['proxy']]))}\n", "inv.ini")
    with SshHost(h) as ssh:
        assert str(ssh.control).startswith(str(sshd["tmp"]))  # the control socket is there
        r = ssh.run(["echo", "it works"])
        assert (r.returncode, r.stdout) == (0, "it works\n"), r.stderr


def test_the_advice_for_a_missing_host_key_names_the_file_quoted(sshd: dict[str, Any]) -> None:
    Path(sshd["known_hosts"]).write_text("")
    [h] = inventory.parse(f"h1 ansible_ssh_private_key_file={shlex.quote(sshd['key'])} "
                          f"assay_known_hosts={shlex.quote(sshd['known_hosts'])} "
                          f"ansible_ssh_common_args="
                          f"{shlex.quote(shlex.join(['-o', sshd['proxy']]))}\n", "inv.ini")
    with SshHost(h) as ssh, pytest.raises(SshError) as e:
        ssh.connect()
    msg = str(e.value)
    assert "its host key is not in" in msg, msg
    keyscan = msg.split("Add it (", 1)[1].split(", then compare", 1)[0]
    assert shlex.split(keyscan)[-2:] == [">>", sshd["known_hosts"]], keyscan


# -- a fuzz of every value, INI and YAML -----------------------------------------------------

HOSTILE = ["..", ".", "/", "a/b", "$(id)", "`id`", "a;b", "a b", "-oProxyCommand=x", "\u202e",
           "x\u200by", "\x1b[2J", "${HOME}", "{{ x }}", "n[1:9]" * 8, "h[1:99999999]",
           "h[1:3]", "[fe80::1]", "fe80::1%$(id)", "999.1.1.1", "~", "%h", '"', "'", "\\",
           "\n", "\r", "#", ";", "=", "", " ", "-o RequestTTY=force", "-tt", "-t",
           "-oRequestTTY=yes", '-o "RequestTTY yes"', "-J ops@b", "10.0.0.1", "db1", "root",
           "22", "65536", "/mnt/a", "/mnt/a b", "/dev/sdb", "/k/%u key", "[", "]", "[1:2",
           "x" * 300, "a:b", "-", "--", "*", "?", "!", "&", "|", ">", "<", "\x00", "\ud800"]
values = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=24),
                   st.text(alphabet="ab1.-_:[]/ $;'\"\\%=", max_size=16))
yaml_values = st.one_of(values, st.integers(-10, 70000), st.booleans(), st.none(),
                        st.floats(allow_nan=True), st.lists(st.integers(), max_size=2))
KEYS = ("ansible_host", "ansible_user", "ansible_port", "ansible_ssh_private_key_file",
        "assay_known_hosts", "assay_path", "assay_device", "ansible_ssh_common_args",
        "ansible_ssh_extra_args", "ansible_ssh_host", "ansible_connection")

_WATCH: list[Any] = []  # [tmp_path, writes outside it]: the audit hook's switch


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _WATCH or event != "open" or not isinstance(args[0], str | bytes | Path):
        return
    path, mode = os.fsdecode(args[0]), args[1]
    flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
    writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
        flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
    if writes and not os.path.realpath(path).startswith(str(_WATCH[0])):
        _WATCH[1].append(path)


sys.addaudithook(_audit)


def _check_result(hosts: list[inventory.Host]) -> None:
    from assay.hosts.inventory import address_problem, path_problem, user_problem
    from assay.hosts.inventory_source import invisible, name_problem

    for h in hosts:
        assert name_problem(h.name) is None
        assert address_problem(h.address)[1] is None
        assert h.user is None or user_problem(h.user) is None
        assert 1 <= h.port <= 65535
        for p in (h.path, h.device):
            assert p is None or path_problem(p) is None and invisible(p) is None
        if h.ssh_args:
            assert split_ssh_args(shlex.join(h.ssh_args)) == list(h.ssh_args)


def _load(path: Path) -> None:
    start = time.monotonic()
    try:
        _check_result(inventory.load(path))
    except UserError as e:
        assert e.code == ExitCode.INVALID_INPUT
        shown = str(e)
        assert not [c for c in shown if c != "\n" and unicodedata.category(c) in
                    ("Cc", "Cf", "Cs")], shown
    assert time.monotonic() - start < 10


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(name=values, group=values, hvars=st.dictionaries(st.sampled_from(KEYS), yaml_values,
                                                        max_size=6))
def test_fuzz_every_value_loads_or_is_refused_cleanly(tmp_path: Path, name: str, group: str,
                                                      hvars: dict[str, Any]) -> None:
    d = Path(tempfile.mkdtemp(dir=tmp_path))
    (d / "group_vars").mkdir()
    (d / "group_vars" / "all.yml").write_text(
        yaml.safe_dump({k: v for k, v in hvars.items() if k != "ansible_host"}))
    words = [shlex.quote(name)] + [f"{k}={shlex.quote(str(v))}" for k, v in hvars.items()]
    ini = d / "inv.ini"
    ini.write_text(f"[{group}]\n{' '.join(words)}\n", encoding="utf-8", errors="replace")
    yml = d / "inv.yml"
    yml.write_text(yaml.safe_dump({"all": {"children": {group: {"hosts": {name: hvars}}}}},
                                  allow_unicode=True), encoding="utf-8", errors="replace")
    _WATCH[:] = [os.path.realpath(tmp_path), []]
    try:
        _load(ini)
        _load(yml)
        written = _WATCH[1]
    finally:
        _WATCH.clear()
    assert written == []
