"""session.side_imports: `ab` imports each side's step files in this process by the rule the side's worker imports
them (its tree first), the head's modules put aside while the base plans and put back after. The whole layout, run
as the CI guide runs it, is tests/e2e/test_ab_layout.py."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from asyncbench.session.side_imports import SideImports


def test_each_sides_planning_imports_its_own_package_and_the_heads_stays(tmp_path: Path) -> None:
    """session.side_imports in this process: each tree first while it plans, the head's modules put aside while
    the base plans and put back after, sys.path as it was."""
    trees = {}
    for side in ("head", "base"):
        (tmp_path / side / "abpkg_layout").mkdir(parents=True)
        (tmp_path / side / "abpkg_layout" / "__init__.py").write_text(f"SIDE = {side!r}\n")
        trees[side] = tmp_path / side
    path_before = list(sys.path)
    imports = SideImports()
    try:
        with imports.of(trees["head"]):
            head = importlib.import_module("abpkg_layout")
        assert sys.path == path_before
        with imports.of(trees["base"]):
            base = importlib.import_module("abpkg_layout")
        assert (head.SIDE, base.SIDE) == ("head", "base")
        assert sys.modules["abpkg_layout"] is head  # the head's stays this process's
        assert sys.path == path_before
        with imports.of(None):  # a side with no tree of its own: nothing changes
            assert sys.path == path_before
    finally:
        sys.modules.pop("abpkg_layout", None)


def test_a_package_installed_in_an_environment_inside_the_tree_is_imported_once(tmp_path: Path, monkeypatch) -> None:
    """A trial's `ab` of a torch case from a clone whose `.venv` lies in the clone: the head's planning imported torch
    from under the head's tree, the base's put it aside and imported torch again (a second `torch._C` in one process:
    SystemError, then a segmentation fault). An environment's packages are no side's code, wherever it lies."""
    head = tmp_path / "head"
    installed = head / ".venv" / "lib" / "site-packages"
    (installed / "abext_installed").mkdir(parents=True)
    loads = tmp_path / "loads"
    (installed / "abext_installed" / "__init__.py").write_text(f"open({str(loads)!r}, 'a').write('loaded ')\n")
    (tmp_path / "base").mkdir()
    monkeypatch.setattr(sys, "prefix", str(head / ".venv"))
    monkeypatch.syspath_prepend(str(installed))
    imports = SideImports()
    try:
        with imports.of(head):
            first = importlib.import_module("abext_installed")
        with imports.of(tmp_path / "base"):
            again = importlib.import_module("abext_installed")
        assert again is first
        assert loads.read_text() == "loaded "  # its module ran once: the base's planning found it where it was
    finally:
        sys.modules.pop("abext_installed", None)
