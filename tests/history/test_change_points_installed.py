"""Change points need nothing the history extra does not install: `pip install 'asyncbench[history]'` is the whole
install of --record, history and report (no second `pip install --no-deps apache-otava`, whose numpy pin made
every later pip print an ERROR block)."""

from __future__ import annotations

import random
import sys

from asyncbench import extras
from asyncbench.history import changes
from asyncbench.history.model import Point


def _points(values: list[float]) -> list[Point]:
    return [Point(i + 1, f"2026-01-{i % 28 + 1:02d}", None, f"r{i + 1}", v, None, None) for i, v in enumerate(values)]


def test_a_step_is_found_where_the_otava_package_is_not_installed(monkeypatch):
    for name in [m for m in sys.modules if m == "otava" or m.startswith("otava.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "otava", None)  # `import otava` fails, as where it was never installed
    rng = random.Random(5)
    values = [10 + rng.gauss(0, 0.2) for _ in range(20)] + [13 + rng.gauss(0, 0.2) for _ in range(20)]
    (change,) = changes.change_points(_points(values))
    assert change.run == 21
    assert 1.25 < change.ratio < 1.35
    assert change.p_value < changes.MAX_P_VALUE


def test_no_command_asks_for_a_package_outside_the_extras():
    assert all(extra.install.startswith("pip install 'asyncbench[") for extra in extras.EXTRAS.values())
    assert "otava" not in " ".join(extras.EXTRAS).lower()


def test_a_series_too_short_or_too_quiet_to_search_imports_no_scipy():
    """`record` after each run reads every series it touched: scipy's import (2.4 s of a 5.3 s `record` on a loaded
    2-core machine) only where a series is searched."""
    import subprocess

    script = (
        "import sys\n"
        "from asyncbench.history import changes\n"
        "from asyncbench.history.model import Point\n"
        "short = [Point(i, '2026-01-01', None, None, 1.0 + i, None, None) for i in range(changes.MIN_RUNS - 1)]\n"
        "quiet = [Point(i, '2026-01-01', None, None, 1.0 + 1e-4 * (i % 2), None, None) for i in range(40)]\n"
        "assert changes.change_points(short) == () and changes.change_points(quiet) == ()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
