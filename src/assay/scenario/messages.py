"""pydantic's errors in assay's words: what was expected, and the value that was given.

A user reads `workloads.db.rate: expected a number, got 'fast'`, never the validation
library's type names (`dict[str,str]`, `list[union[...]]`) or its phrasing.
"""

from __future__ import annotations

import unicodedata
from typing import Any

# a union's branch is named in the error's location (`dict[str,str]`): not a key of the file
_TYPE_NAMES = ("str", "int", "float", "bool", "none")
_TYPE_PREFIXES = ("dict[", "list[", "union[", "literal[", "function-", "tagged-union[")


def is_type_tag(part: object) -> bool:
    return isinstance(part, str) and (part in _TYPE_NAMES or part.startswith(_TYPE_PREFIXES))


def show(value: Any) -> str:
    """The offending value, cut short: a 5000-digit number is not readable."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


_EXPECTED = {
    "int_type": "a whole number", "int_parsing": "a whole number",
    "int_from_float": "a whole number", "float_type": "a number", "float_parsing": "a number",
    "bool_type": "true or false", "bool_parsing": "true or false", "string_type": "text",
    "dict_type": "a mapping of keys", "model_type": "a mapping of keys",
    "model_attributes_type": "a mapping of keys", "list_type": "a list",
}


def in_words(error: Any) -> str:
    """One pydantic error (a dict of `type`, `msg`, `ctx`, `input`) as assay says it."""
    kind, ctx, given = error["type"], error.get("ctx") or {}, error.get("input")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    if kind == "finite_number":
        return f"must be a finite number, got {show(given)}"
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got {show(given)}"
    bounds = {"greater_than": "more than", "greater_than_equal": "at least",
              "less_than": "less than", "less_than_equal": "at most"}
    if kind in bounds:
        bound = next(iter(ctx.values()), "")
        return f"must be {bounds[kind]} {_number(bound)}, got {show(given)}"
    if kind == "literal_error":
        return f"expected {ctx.get('expected', 'one of the documented values')}, " \
               f"got {show(given)}"
    if kind == "string_pattern_mismatch":
        return f"{show(given)} is not allowed here (letters, digits, _ . - only)"
    if kind in ("string_too_short", "too_short"):
        return "must not be empty"
    if kind in ("string_too_long", "too_long"):
        return f"too long: at most {ctx.get('max_length', '?')}"
    msg = str(error["msg"])
    return msg[len("Value error, "):] if msg.startswith("Value error, ") else msg


def control(text: str, allowed: str = "") -> str | None:
    """The first control character of `text` (ESC, a newline, C1 codes) not in `allowed`."""
    return next((c for c in text if unicodedata.category(c) == "Cc" and c not in allowed), None)

