"""`ansible_ssh_common_args` and `ansible_ssh_extra_args`: options added to every ssh call
(a bastion: `-J user@bastion`, `-o ProxyCommand="ssh -W %h:%p -q bastion"`), split like a
shell as Ansible splits them.

They go after assay's own options, and ssh keeps the first value it is given for an option,
so they can add (a proxy, a config file, ciphers) but never weaken what assay sets (batch
mode, host key checking, the control socket). Options that would change how assay drives
ssh itself (`-f`, `-N`, `-n`, `-t`, `-O`, `-S`, `-W`, `-M`, a command or a destination) are
refused with the reason, and so are their `-o` forms, which assay does not set first
(`RequestTTY`, `StdinNull`, `SessionType`, `ForkAfterAuthentication`, `RemoteCommand`,
`Tunnel`), read as ssh reads an option: the keyword in any case, then `=` or spaces
(`-oRequestTTY=yes`, `-o "requesttty force"`), also inside grouped flags (`-qoRequestTTY=yes`).
"""

from __future__ import annotations

import re
import shlex

FLAGS = set("46AaCgKkqTvXxYy")  # take no argument
WITH_ARGUMENT = set("BbcDEeFIiJLlmopR")  # take one, in the same word or the next
DRIVEN = {  # what assay needs ssh to keep doing
    "f": "would send ssh to the background", "N": "would run no command",
    "n": "would close stdin, which ends remote commands when assay goes",
    "t": "would give the remote command a terminal",
    "O": "controls assay's own master connection", "S": "would replace assay's control socket",
    "M": "would make every call a master connection", "W": "would forward stdio, not run fio",
    "s": "would run a subsystem, not fio", "G": "would print the configuration and exit",
    "V": "would print the version and exit", "Q": "would query and exit",
    "w": "would open a tunnel device",
}
# -o KEYWORD=VALUE forms of those (keyword in lower case): the values that change nothing
OPTIONS = {
    "requesttty": ({"no", "false", "auto"}, "t"),
    "stdinnull": ({"no", "false"}, "n"),
    "sessiontype": ({"default"}, "N"),
    "forkafterauthentication": ({"no", "false"}, "f"),
    "tunnel": ({"no", "false"}, "w"),
    "remotecommand": ({"none"}, "command"),
}
KEYWORD = re.compile(r"^\s*([A-Za-z0-9]+)\s*(?:=\s*|\s+|$)(.*)$", re.S)


def option_problem(text: str) -> str | None:
    """Why `-o TEXT` cannot be passed on (None: it can), read as ssh reads a config line: a
    keyword (any case), `=` or whitespace, then the value (quotes removed)."""
    m = KEYWORD.match(text)
    if not m:
        return None  # ssh says what is wrong with it
    keyword, rest = m.group(1).lower(), m.group(2).strip()
    if keyword not in OPTIONS:
        return None
    try:
        words = shlex.split(rest)
    except ValueError:
        words = rest.split()
    value = words[0].lower() if words else ""
    allowed, flag = OPTIONS[keyword]
    if value in allowed:
        return None
    if flag not in DRIVEN:
        return f"-o {text.strip()}: a command of its own would replace assay's"
    flag = "s" if keyword == "sessiontype" and value == "subsystem" else flag
    return f"-o {text.strip()}: like -{flag}, it {DRIVEN[flag]}"


def split_ssh_args(text: str) -> list[str]:
    """The words of an ssh argument string; ValueError says why they cannot be used."""
    try:
        words = [w.strip() for w in shlex.split(text) if w.strip()]
    except ValueError as e:
        raise ValueError(f"cannot split {text!r} like a shell: {e}") from None
    expect_value: str | None = None  # the option whose value the next word is
    for word in words:
        if expect_value is not None:
            if expect_value == "o" and (why := option_problem(word)):
                raise ValueError(why)
            expect_value = None
            continue
        if not word.startswith("-") or word in ("-", "--"):
            raise ValueError(f"{word!r} is not an ssh option (a destination or a command "
                             "would replace assay's)")
        for i, c in enumerate(word[1:], 1):
            if c in DRIVEN:
                raise ValueError(f"-{c} {DRIVEN[c]}")
            if c in WITH_ARGUMENT:
                if i == len(word) - 1:
                    expect_value = c
                elif c == "o" and (why := option_problem(word[i + 1:])):
                    raise ValueError(why)
                break
            if c not in FLAGS:
                raise ValueError(f"-{c} is not an ssh option assay passes on")
    if expect_value is not None:
        raise ValueError(f"{words[-1]} needs a value")
    return words
