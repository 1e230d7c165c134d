"""Stored text made safe for a terminal: a run made by an older assay, or a run.json edited by
hand, may hold escape sequences in its names; printed raw they would rewrite the screen of
whoever lists the run. Characters that are not seen as themselves become visible escapes
(`\\x1b`, `\\u202e`): controls (Cc), format characters (Cf: the bidirectional overrides and
isolates that show a name reordered, zero-width spaces and joiners that hide in one), line and
paragraph separators (Zl, Zp), and lone surrogates (Cs: they cannot even be written as UTF-8,
so printing one would fail)."""

from __future__ import annotations

import unicodedata
from typing import Any

HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _hidden(c: str, keep: str) -> bool:
    return unicodedata.category(c) in HIDDEN and c not in keep


def printable(text: str, keep: str = "") -> str:
    """`text` with every hidden character (controls, bidi and zero-width format characters,
    separators, lone surrogates) but those in `keep` written as an escape."""
    if text.isprintable() or not any(_hidden(c, keep) for c in text):
        return text
    return "".join(c.encode("unicode_escape", "backslashreplace").decode("ascii")
                   if _hidden(c, keep) else c for c in text)


def printable_tree(data: Any) -> Any:
    """Every string of decoded JSON (keys too) printable; newlines and tabs of messages kept.
    Recursive: callers hand it documents whose depth is bounded (record.MAX_DEPTH)."""
    if isinstance(data, str):
        return printable(data, "\n\t")
    if isinstance(data, list):
        return [printable_tree(v) for v in data]
    if isinstance(data, dict):
        return {printable_tree(k): printable_tree(v) for k, v in data.items()}
    return data
