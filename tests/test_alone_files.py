"""`make test` runs the `alone` phase on the files whose text marks them (Makefile's ALONE_FILES): a test marked
`alone` from outside its own file would never run there, so collection refuses it (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.conftest import ALONE_MARK, _alone_elsewhere


def _item(path: Path, name: str, alone: bool) -> SimpleNamespace:
    return SimpleNamespace(fspath=path, nodeid=f"{path.name}::{name}", keywords={"alone": True} if alone else {})


def test_an_alone_test_marked_from_outside_its_file_is_named_and_one_marked_in_it_is_not(tmp_path):
    marked = tmp_path / "test_marked.py"
    marked.write_text(f"pytestmark = pytest.{ALONE_MARK}\n")
    unmarked = tmp_path / "test_unmarked.py"
    unmarked.write_text("def test_x(): pass\n")
    items = [_item(marked, "a", True), _item(unmarked, "b", True), _item(unmarked, "c", False)]
    assert _alone_elsewhere(items) == ["test_unmarked.py::b"]  # type: ignore[arg-type]


def test_the_makefile_selects_the_alone_files_by_the_same_mark():
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text(encoding="utf-8")
    assert "'" + ALONE_MARK.replace(".", "\\.") + "'" in makefile  # grep's pattern: the same mark, its dot escaped
    assert "-m alone --durations=10 $(ALONE_FILES)" in makefile
