"""Where scenario text comes from: a file, or a scenario shipped with assay."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from assay.scenario.yamlsource import Issue, ScenarioInvalid, check_size


def builtin_scenarios() -> dict[str, str]:
    """Name → YAML text of the scenarios shipped with assay."""
    out = {}
    for entry in resources.files("assay.scenarios").iterdir():
        if entry.name.endswith(".yaml"):
            out[entry.name[:-5]] = entry.read_text(encoding="utf-8")
    return dict(sorted(out.items()))


def read_scenario(ref: str) -> tuple[str, str, Path | None]:
    """A built-in name or a file path → (text, display name, directory for relative paths)."""
    path = Path(ref)
    if path.is_file():
        try:
            check_size(path.stat().st_size, ref)  # before reading a 50 MB file into memory
            return path.read_text(encoding="utf-8"), str(path), path.parent
        except (OSError, UnicodeDecodeError) as e:
            raise ScenarioInvalid([Issue(ref, None, "", f"cannot read: {e}")]) from None
    builtins = builtin_scenarios()
    if ref in builtins:
        return builtins[ref], f"<built-in {ref}>", None
    hint = "" if ref.endswith((".yaml", ".yml")) else \
        f" (built-in scenarios: {', '.join(builtins)})"
    raise ScenarioInvalid([Issue(ref, None, "", f"no such scenario file or built-in{hint}")])
