"""`history` and `report` say their exit codes (issue 53, item 12): `history PATTERN` exited 1 where PATTERN matched
nothing, and neither --help nor the guide said so (a CI gate with a mistyped PATTERN fails, by design, and a user
needs to know why). The codes are said in both commands' --help and in docs/guides/history.md, and hold."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from asyncbench import cli
from tests.support.cli import asyncbench
from tests.support.helpers import quick_numpy_results
from tests.support.stores import a_store

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "history.md"


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (
            "history",
            ["Exit 0: the series are shown", "Exit 1: no series matches PATTERN", "--fail-on-regression found a regression", "Exit 2"],
        ),
        ("report", ["Exit 0: the page is written", "Exit 1: no series matches PATTERN", "Exit 2", "Exit 3"]),
    ],
)
def test_help_says_each_exit_code(command, said):
    shown = " ".join(CliRunner().invoke(cli.main, [command, "--help"], terminal_width=200).output.split())
    for words in said:
        assert words in shown, (words, shown)


def test_the_guide_has_a_table_of_the_exit_codes():
    guide = GUIDE.read_text()
    table = guide.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |"):
        assert code in table
    assert "no series in the store matches PATTERN" in table


def test_a_pattern_that_matches_nothing_exits_1_and_says_so(tmp_path):
    a_store(tmp_path, quick_numpy_results(tmp_path / "r.json"))
    done = asyncbench("history", "no-such-case", "--history", "h.sqlite", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "no series matching 'no-such-case' in the history" in done.stderr
    assert asyncbench("history", "matmul", "--history", "h.sqlite", cwd=tmp_path).returncode == 0


def test_max_regression_without_fail_on_regression_is_refused_in_one_line_as_label_without_record_is(tmp_path):
    """It judged nothing and was taken in silence: a gate thought set that was not."""
    store = str(tmp_path / "none.sqlite")  # refused before the store is looked for
    refused = CliRunner().invoke(cli.main, ["history", "--history", store, "--max-regression", "5%"])
    assert refused.exit_code == 2
    assert refused.output.strip() == (
        "asyncbench: error: --max-regression without --fail-on-regression: nothing would be judged; "
        "add --fail-on-regression, or leave it out"
    )
    gating = CliRunner().invoke(cli.main, ["history", "--history", store, "--fail-on-regression", "--max-regression", "5%"])
    assert "--max-regression without" not in gating.output  # with the gate it is read as before
