"""Every guide in the site's navigation is linked from where a new user looks first: the README's table of pages and
docs/index.md; the pytest-and-notebooks guide also from getting-started (a new user read the README only and never
found the pytest fixture, `asyncbench.load` or `asyncbench.run`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _guides() -> list[str]:
    """The guides mkdocs.yml's navigation lists, as paths under docs/."""
    return re.findall(r"^\s+- [^:\n]+: (guides/[\w.-]+\.md)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)


def test_every_guide_is_linked_from_the_readme_s_table_and_the_docs_index():
    guides = _guides()
    assert "guides/pytest-and-notebooks.md" in guides
    (table,) = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if line.endswith("| the guides |")]
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert [g for g in guides if f"(docs/{g})" not in table] == []
    assert [g for g in guides if f"({g})" not in index] == []
    assert all((ROOT / "docs" / g).is_file() for g in guides)


def test_getting_started_links_the_pytest_and_notebooks_guide():
    assert "(guides/pytest-and-notebooks.md)" in (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
