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
