"""Stored text made safe for a terminal: a run made by an older assay, or a run.json edited by
hand, may hold escape sequences in its names; printed raw they would rewrite the screen of
whoever lists the run. Control characters become visible escapes (`\\x1b`)."""

from __future__ import annotations

import unicodedata
from typing import Any


def printable(text: str, keep: str = "") -> str:
    """`text` with every control character but those in `keep` written as an escape."""
    if not any(unicodedata.category(c) == "Cc" and c not in keep for c in text):
        return text
    return "".join(c.encode("unicode_escape").decode("ascii")
                   if unicodedata.category(c) == "Cc" and c not in keep else c for c in text)


def printable_tree(data: Any) -> Any:
    """Every string of decoded JSON (keys too) printable; newlines and tabs of messages kept."""
    if isinstance(data, str):
        return printable(data, "\n\t")
    if isinstance(data, list):
        return [printable_tree(v) for v in data]
    if isinstance(data, dict):
        return {printable_tree(k): printable_tree(v) for k, v in data.items()}
    return data
