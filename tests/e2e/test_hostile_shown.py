"""Names that read as rich markup are data: `show` prints them as written (tests/hostile/cases/shown/).

A census point's call named `[link=file:///etc/passwd]...[/link]` is a valid name (brackets name cases:
`matmul[numpy,cpu]`), so the file is read; the terminal must show the brackets, never make a link of them, and
a lone closing tag (`[/x]`), which rich refuses as markup, must not end the command with exit 1 after it read.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.cli import asyncbench

ROOT = Path(__file__).resolve().parents[2]
SHOWN = ROOT / "tests" / "hostile" / "cases" / "shown"


@pytest.mark.parametrize(
    "name, written",
    [
        ("census-call-markup", "[link=file:///etc/passwd]jax.Array.item[/link]"),
        ("census-call-closing-tag", "jax.Array.item[/x]"),
    ],
)
@pytest.mark.parametrize("color", [False, True])
def test_a_name_that_reads_as_markup_is_shown_as_written(tmp_path, name, written, color):
    shutil.copyfile(SHOWN / f"{name}.json", tmp_path / "r.json")
    env = {"COLUMNS": "250", **({"FORCE_COLOR": "1"} if color else {})}
    shown = asyncbench("show", "r.json", cwd=tmp_path, env=env, unset=["NO_COLOR"], timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    assert written in shown.stdout
    assert "\x1b]8;" not in shown.stdout  # no OSC 8 hyperlink made of the name
