"""The report shows what the history's read models hold (history.model) and never reaches into the store: opening
it, recording and the SQL are the history's own jobs."""

from __future__ import annotations

import ast
from pathlib import Path

import asyncbench.report

REPORT = Path(asyncbench.report.__file__).parent
# The history's modules the report may import: its read models only.
READ_MODELS = ("asyncbench.history.model",)


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_report_imports_the_historys_read_models_and_nothing_else_of_it():
    reaching = {
        path.name: sorted(name for name in _imports(path) if name.startswith("asyncbench.history") and not name.startswith(READ_MODELS))
        for path in REPORT.glob("*.py")
    }
    assert {name: found for name, found in reaching.items() if found} == {}
    assert any("asyncbench.history.model" in _imports(path) for path in REPORT.glob("*.py"))  # the check sees imports
