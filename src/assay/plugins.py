"""Plug-in registries: workload kinds, timeline actions, platform drivers and exporters.

Each registry holds the built-ins, registered by name in their package's `__init__`, and the
third-party plug-ins that installed packages declare as Python entry points:

    [project.entry-points."assay.workloads"]
    randmix = "assay_randmix.randmix"

Entry points are loaded on the first access to a registry and checked like the built-ins; one
that cannot be imported or does not provide what its registry needs stops with a PluginError
that names it and its package (a user error: no traceback). docs/extending.md has examples.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Generic, TypeVar, cast

from assay.exitcodes import UserError

T = TypeVar("T")


class PluginError(UserError):
    """A plug-in that cannot be registered; the message names it and says why."""


class Registry(Generic[T]):
    """Name → plug-in of one type, checked when registered.

    `problem(name, obj)` says what `obj` lacks to be `name` (None: it conforms). The typed
    `register` functions of the packages let mypy check the built-ins; this check is for what
    mypy never sees (entry points).
    """

    def __init__(self, what: str, group: str, problem: Callable[[str, object], str | None]):
        self.what = what  # "workload kind", for messages
        self.group = group  # entry-point group
        self._problem = problem
        self._registered: dict[str, T] = {}
        self._plugins: dict[str, T] | None = None  # from entry points, loaded on first access

    def register(self, name: str, obj: object) -> None:
        """Add `obj` as `name`; PluginError if the name is taken or `obj` does not conform."""
        self._check(name, obj, describe(obj))
        self._registered[name] = cast(T, obj)

    def get(self, name: str) -> T:
        """The plug-in called `name`; KeyError if there is none."""
        plugins = self._entry_points()  # first, so a broken plug-in shows on any access
        return self._registered[name] if name in self._registered else plugins[name]

    def names(self) -> list[str]:
        """Built-ins in registration order, then plug-ins by name."""
        return [*self._registered, *sorted(self._entry_points())]

    def refresh(self) -> None:
        """Forget the loaded entry points (installed packages changed); reloaded on access."""
        self._plugins = None

    def _check(self, name: str, obj: object, origin: str) -> None:
        taken = self._registered.get(name) or (self._plugins or {}).get(name)
        if taken is not None:
            raise PluginError(f"{self.what} {name!r} ({origin}) clashes with "
                              f"{describe(taken)}, registered already")
        problem = self._problem(name, obj)
        if problem:
            raise PluginError(f"{self.what} {name!r} ({origin}) {problem}")

    def _entry_points(self) -> dict[str, T]:
        if self._plugins is None:
            loaded: dict[str, T] = {}
            errors = []
            for ep in entry_points(group=self.group):
                origin = f"entry point {ep.value!r} of package {package(ep)}"
                try:
                    if ep.name in loaded:
                        raise PluginError(f"{self.what} {ep.name!r} ({origin}) is declared by "
                                          f"two packages")
                    obj = ep.load()
                    self._check(ep.name, obj, origin)
                    loaded[ep.name] = cast(T, obj)
                except PluginError as e:
                    errors.append(str(e))
                except Exception as e:  # anything a broken package raises on import
                    errors.append(f"{self.what} {ep.name!r} ({origin}) cannot be loaded: "
                                  f"{type(e).__name__}: {e}")
            if errors:
                # nothing is kept, so the next access reports the same errors again
                raise PluginError("; ".join(errors) + " (fix or uninstall the plug-in)")
            self._plugins = loaded
        return self._plugins


def describe(obj: object) -> str:
    if isinstance(obj, ModuleType):
        return f"module {obj.__name__}"
    if isinstance(obj, type):
        return f"class {obj.__module__}.{obj.__qualname__}"
    return repr(obj)


def package(ep: EntryPoint) -> str:
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist else "(unknown)"


def lacks(obj: object, params_base: type, *functions: str) -> str | None:
    """What a module-style plug-in (`Params` model plus functions) is missing, if anything."""
    params = getattr(obj, "Params", None)
    if not (isinstance(params, type) and issubclass(params, params_base)):
        return (f"has no `Params` class subclassing {params_base.__module__}."
                f"{params_base.__qualname__}")
    absent = [f for f in functions if not callable(getattr(obj, f, None))]
    if absent:
        return "has no " + " or ".join(f"`{f}` function" for f in absent)
    return None
