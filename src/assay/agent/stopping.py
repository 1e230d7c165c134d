"""When a long-running agent command stops: SIGTERM, or its stdin closing (a pipe from the
controller; over SSH the session's end reaches the host as the group's TERM)."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import threading


def stop_event() -> threading.Event:
    """An event set on SIGTERM or when stdin, a pipe, reaches its end."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def until_stdin_closes() -> None:
        with contextlib.suppress(OSError, ValueError):
            while sys.stdin.buffer.read(4096):
                pass
        stop.set()

    if stat.S_ISFIFO(os.fstat(0).st_mode):
        threading.Thread(target=until_stdin_closes, daemon=True).start()
    return stop


def leave(code: int) -> None:
    """End the process now, as a command that ends by itself while stdin is still open does:
    the interpreter's normal exit would abort on the stdin lock the watcher's read holds."""
    with contextlib.suppress(OSError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)
