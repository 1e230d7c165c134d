"""Programs assay runs on a host, beside fio: the remote participants' own half.

Work that must happen where the IO happens (reading fio's issue log for due-time latency,
the integrity writer and its verify pass, ...) runs on the host itself, and only small
per-second rows come back (histograms and counters, never per-IO data).

This package is shipped to each host for each run, the way Ansible ships its modules: a
zipapp built from these files (runners/agent.py), written into the run's remote directory and
run there with the host's `python3`. So it must run on a plain Python 3.9 with nothing but the
standard library: it imports nothing from assay outside this package (the import contract in
pyproject.toml keeps it so), and its modules import each other relatively.

    python3 agent.pyz <command> [arguments]      # on a host, in the run's remote directory
    python -m assay.agent <command> [arguments]  # the same program, here

A command is one module here, `<command>.py`, with `main(argv) -> int`. It writes one JSON
object per line on stdout (a row, usually one per second), messages on stderr, and ends with
its exit status; it stops cleanly on SIGTERM or when its stdin closes (the session ended).
"""

VERSION = 1  # bumped when a command's rows change: the controller refuses an older agent
