"""`ab`'s imports of each side's user code in its own process, by the rule each side's worker imports it.

Before anything runs, `ab` plans each side here: it imports the side's step
files to read their steps, and a step file imports the user's package
(`from mypkg.model import ...`) and its neighbours (`import shapes`). Each
side's worker puts its tree first on sys.path (engine.side_process), so it
finds that side's revision of them without an install (the CI guide's layout:
`mypkg/` at the root, `bench/steps.py` beside the config). This process must
find them by the same rule, or a gate that would run is refused ("No module
named 'mypkg'") or, with the package installed, plans the base side with the
head's package. So a side's planning has its tree first on sys.path, and the
modules the sides planned before imported from their trees are put aside
meanwhile (a module is cached by name: the base's `mypkg` must not be the
head's), then put back: what the first side imported stays this process's (the
head's, whose workloads it reads afterwards). sys.path is restored after each
side, so a worker started later inherits neither side's folders.
"""

from __future__ import annotations

import contextlib
import os
import site
import sys
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Iterator

from asyncbench.engine import side_process

#: asyncbench's own package folder: the tool that plans, whatever tree holds it
PACKAGE = str(Path(__file__).resolve().parents[1])


def _under(real: str, root: str) -> bool:
    return real == root or real.startswith(root + os.sep)


def _installed() -> tuple[str, ...]:
    """Where this process's installed code lies: its environment (a `.venv` inside the clone, as the README's
    layout makes it, holds torch, not the user's code), the site folders, and asyncbench's own package. What is
    imported from there is no side's: putting it aside would import it a second time, and a second `torch._C` in
    one process raised SystemError, then a segmentation fault."""
    places = {sys.prefix, sys.exec_prefix, *site.getsitepackages(), PACKAGE}
    places.update(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    return tuple(os.path.realpath(place) for place in places)


def _inside(module: ModuleType, root: str, installed: tuple[str, ...]) -> bool:
    """Whether a module was loaded from under `root` (its file, or a namespace package's folders), and not from
    the installed places within it."""
    file = getattr(module, "__file__", None)
    places = [file] if file else list(getattr(module, "__path__", None) or [])
    for place in places:
        real = os.path.realpath(place)
        if _under(real, root) and not any(_under(real, where) for where in installed):
            return True
    return False


class SideImports:
    """What each side's planning imported from its tree (see the module's docstring)."""

    def __init__(self) -> None:
        self._imported: dict[str, dict[str, ModuleType]] = {}

    @contextlib.contextmanager
    def of(self, root: Path | None) -> Iterator[None]:
        """Imports made meanwhile resolve as the worker of the side whose tree is `root` resolves them (None: no tree
        of its own, as its worker has none: nothing changes)."""
        if root is None:
            yield
            return
        tree = os.path.realpath(root)
        aside = {
            name: sys.modules.pop(name)
            for modules in self._imported.values()
            for name, module in modules.items()
            if sys.modules.get(name) is module
        }
        before = dict(sys.modules)
        saved_path = list(sys.path)
        sys.path[:] = side_process.tree_first(sys.path, tree, os.getcwd())  # as its worker's: not the command's folder
        try:
            yield
        finally:
            sys.path[:] = saved_path
            new = {name: module for name, module in list(sys.modules.items()) if before.get(name) is not module}
            installed = _installed()
            self._imported.setdefault(tree, {}).update({name: m for name, m in new.items() if _inside(m, tree, installed)})
            sys.modules.update(aside)
