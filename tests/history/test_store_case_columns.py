"""A store's case columns edited by hand (its checks, its params, its timelines), read back where the latest run is
shown: each is held to what a results file's same field is held to, and an edit is refused in one line naming the
table, row and column (exit 2), never shown. A new user's findings: a check's verdict set to "pwned" beside markup
was shown in the report's latest run as a verdict; params nested 70 levels deep were taken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import in_process
from tests.support.helpers import quick_numpy_results
from tests.support.stores import a_store, edited_refused, sql


@pytest.fixture(scope="module")
def recorded_store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("store")
    return a_store(folder, quick_numpy_results(folder / "r.json"))


def _set(column: str, value: object) -> str:
    text = json.dumps(value).replace("'", "''")
    return f"UPDATE asyncbench_cases SET {column} = '{text}' WHERE id = 1"


A_CHECK = {"expect": "done_s < 1 s", "verdict": "pass", "value": 0.08, "bounds": [0.04, 0.1]}
DEEP: object = "x"
for _ in range(70):
    DEEP = {"a": DEEP}

# each edit, and what the one line says of it (its column and why among it)
EDITS = {
    "a verdict no check ends with": (
        _set("checks", [{"expect": "<script>alert(9)</script>", "verdict": "pwned", "value": "x"}]),
        ("column checks", "[0].verdict", "'pwned' is not one of"),
    ),
    "a check's value that is text": (
        _set("checks", [{**A_CHECK, "value": "x"}]),
        ("column checks", "[0].value", "expected a number"),
    ),
    "a check's expectation that is no text": (
        _set("checks", [A_CHECK, {**A_CHECK, "expect": ["a"]}]),
        ("column checks", "[1].expect"),
    ),
    "checks that are no list": (
        _set("checks", {"verdict": "pass"}),
        ("column checks", "expected a list"),
    ),
    "checks that are not JSON": (
        "UPDATE asyncbench_cases SET checks = '[{' WHERE id = 1",
        ("column checks", "not JSON"),
    ),
    "params nested 70 levels deep": (
        _set("params", {"size": DEEP}),
        ("column params", "nested deeper than 32 levels"),
    ),
    "a timeline's path with an escape": (
        _set("traces", {"matmul": "/tmp/t\u001b]8;;http://evil\u0007.json"}),
        ("column traces", "matmul", "control character"),
    ),
}
READERS = {"report": ("report", "-o", "page.html")}


@pytest.mark.parametrize("command", READERS, ids=list(READERS))
@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_a_case_column_edited_by_hand_is_refused_in_one_line(edit, command, recorded_store, tmp_path):
    statement, said = EDITS[edit]
    edited_refused(recorded_store, tmp_path, [statement], READERS[command], "asyncbench_cases row 1", *said)


def test_checks_and_timelines_as_asyncbench_writes_them_are_shown(recorded_store, tmp_path):
    (tmp_path / "h.sqlite").write_bytes(recorded_store.read_bytes())
    sql(
        tmp_path / "h.sqlite",
        _set("checks", [A_CHECK, {**A_CHECK, "value": None, "bounds": None}]),
        _set("traces", {"matmul": "/tmp/t.json"}),
    )
    done = in_process("report", "-o", "page.html", "--history", "h.sqlite", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "done_s &lt; 1 s" in (tmp_path / "page.html").read_text()


@pytest.mark.parametrize("edit", [name for name, (_, said) in EDITS.items() if "column checks" in said])
def test_recording_the_same_file_again_holds_the_stored_checks_it_compares(edit, recorded_store, tmp_path):
    """`record` of a file already recorded compares it with what the store holds of its run (a file edited since is
    said to differ): the stored checks it reads are held as a report holds them, not parsed bare (a traceback)."""
    statement, said = EDITS[edit]
    record_again = ("record", str(recorded_store.parent / "r.json"))
    edited_refused(recorded_store, tmp_path, [statement], record_again, "asyncbench_cases row 1", *said)
