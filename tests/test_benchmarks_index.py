"""benchmarks/README.md is the one index of the tool's benchmarks: every script in it, with its command and runtime.

docs/development.md points there instead of keeping a second list; this keeps the index from drifting as scripts
come and go.
"""

from __future__ import annotations

import re
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
#: benchmarks/ modules that are no benchmark: imported by the scripts
HELPERS = {"common.py"}
RUNTIMES = ("seconds", "minutes", "long")


def _rows() -> dict[str, str]:
    """script name -> its table row, for every row whose first cell is a `python benchmarks/NAME.py` command."""
    rows = {}
    for line in (BENCHMARKS / "README.md").read_text().splitlines():
        found = re.match(r"\| `python benchmarks/(\w+\.py)[^`]*`", line)
        if found:
            rows.setdefault(found.group(1), line)
    return rows


def test_every_benchmark_script_is_listed_with_its_command_and_runtime():
    scripts = {path.name for path in BENCHMARKS.glob("*.py")} - HELPERS
    rows = _rows()
    assert scripts - rows.keys() == set(), "scripts missing from benchmarks/README.md"
    assert rows.keys() - scripts == set(), "benchmarks/README.md lists scripts that do not exist"
    for name, row in rows.items():
        runtime = row.rstrip(" |").rsplit("|", 1)[-1]
        assert any(word in runtime for word in RUNTIMES), f"{name}: no runtime class in {runtime!r}"


def test_the_development_guide_points_to_the_index_instead_of_listing_scripts():
    guide = (BENCHMARKS.parent / "docs" / "development.md").read_text()
    assert "benchmarks/README.md" in guide
    listed = set(re.findall(r"python benchmarks/(\w+\.py)", guide))
    assert len(listed) <= 2, f"docs/development.md lists scripts again: {sorted(listed)}"
