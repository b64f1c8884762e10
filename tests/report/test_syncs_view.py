"""Where a case's step waited (`--syncs`): the census's view under the timings, and how the terminal and markdown
writers lay it out."""

from __future__ import annotations

import io
import json
import os

from rich.console import Console

from asyncbench.measure import census
from asyncbench.report import markdown, syncs, terminal, view
from asyncbench.results.model import OK, Result
from asyncbench.results.schema import Report
from asyncbench.results.syncs import Census, SyncKind, SyncPoint
from tests.support.helpers import ok_result

ROUNDS = 6
PRINTED = SyncPoint(
    "/src/proj/train.py", 42, SyncKind.PRINT, "jax.Array.__str__", 10.0, 0.0098, (0.0085, 0.018), None, (10,) * 6, (0.0098,) * 6
)
ITEM = SyncPoint("/src/proj/train.py", 57, SyncKind.CONVERSION, "jax.Array.item", 1.0, 5e-6, (-2e-6, 9e-6), 3.0, (1,) * 6, (5e-6,) * 6)
HALF = SyncPoint("/elsewhere/lib.py", 7, SyncKind.UNKNOWN, "time.sleep", 0.5, 2e-4, None, None, (0, 1) * 3, (0.0, 4e-4) * 3)


def _census(variant: str, *points: SyncPoint, rounds: int = ROUNDS, coverage: str = "jax's hooks and the frame fallback", note=None):
    return Census(variant, rounds, points, coverage, note)


def test_rows_follow_the_timings_variants_each_sorted_by_time_blocked():
    census = syncs.census_view(
        "jax cpu", {"print": _census("print", PRINTED, ITEM), "none": _census("none", HALF)}, order=["none", "print"], here="/src/proj"
    )
    assert census is not None
    assert census.title == "where the step waited (jax cpu)"
    assert [row[:3] for row in census.rows] == [
        ("none", "/elsewhere/lib.py:7", "unattributed"),  # outside the folder and any package: as stored
        ("print", "train.py:42", "print"),  # under the current folder: relative to it
        ("", "train.py:57", "conversion"),
    ]
    assert census.rows[1][4:] == ("10", "9.80 ms [8.50–18.0]", "–")
    assert census.rows[0][4] == "0.5"  # a point that waited every other round
    assert census.headers[-1] == "drained/step"  # one point knows what it drained
    assert census.rows[2][-1] == "3"


def test_an_interval_that_reaches_zero_is_never_shown_negative():
    census = syncs.census_view("jax cpu", {"print": _census("print", ITEM)}, here="/")
    assert census is not None
    blocked = census.rows[0][census.headers.index("blocked/step")]
    assert blocked == "~0 [≤ 9.00 µs]"
    assert "-" not in blocked
    assert "below" not in blocked


def test_without_drained_work_there_is_no_drained_column():
    census = syncs.census_view("jax cpu", {"print": _census("print", PRINTED)}, here="/")
    assert census is not None
    assert census.headers == syncs.HEADERS[1:]  # and, of one variant, no variant column: its name is under the table


def test_a_case_that_never_waited_is_one_line_with_what_could_see():
    numpy = "numpy runs synchronously: nothing waits for a device"
    census = syncs.census_view("numpy cpu", {"a": _census("a", rounds=0, coverage=numpy), "b": _census("b", rounds=0, coverage=numpy)})
    assert census is not None
    assert census.rows == ()
    assert census.summary == (f"no waits ({numpy})",)
    jax = syncs.census_view("jax cpu", {"a": _census("a")})
    assert jax is not None
    assert jax.summary == ("no waits in 6 census rounds (jax's hooks and the frame fallback)",)


def test_a_census_not_taken_says_why():
    why = "no census: the case measured itself in other processes (its ranks)"
    census = syncs.census_view("torch cpu", {"a": _census("a", rounds=0, coverage="", note=why)})
    assert census is not None
    assert census.summary == ("no census taken",)
    assert census.notes == (why,)


def test_each_variant_line_gives_the_whole_step_from_the_rounds_sums():
    census = syncs.census_view("jax cpu", {"print": _census("print", PRINTED, ITEM), "none": _census("none")}, here="/")
    assert census is not None
    assert census.summary == (
        "print: 11 waits, 9.80 ms ±0% blocked per step at 2 points (6 census rounds; jax's hooks and the frame fallback)",
        "none: no waits in 6 census rounds; jax's hooks and the frame fallback",
    )


def test_a_module_of_a_package_is_named_from_its_import_root(tmp_path):
    package = tmp_path / "pkg" / "sub"
    package.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    point = SyncPoint(str(package / "mod.py"), 3, SyncKind.PRINT, "print", 1.0, 1e-3)
    assert syncs.where(point, here="/nowhere/else") == os.path.join("pkg", "sub", "mod.py") + ":3"


def _report() -> Report:
    result = Result(
        "conversion[jax,cpu]", "conversion", "conversion", "jax", "cpu", {}, OK, syncs={"print": _census("print", PRINTED, ITEM)}
    )
    return _wrapped(result)


def _wrapped(result: Result) -> Report:
    return Report(9, "asyncbench", "0", "2026-11-26T00:00:00+00:00", {}, {}, (result,))


def test_the_terminal_and_markdown_show_the_table_under_the_case():
    built = view.build(_report())
    (case,) = built.experiments[0].cases
    assert case.syncs is not None
    out = io.StringIO()
    terminal.print_report(built, Console(file=out, width=200))
    text = out.getvalue()
    assert "where the step waited (jax cpu)" in text
    assert "jax.Array.__str__" in text
    assert "/src/proj/train.py:42" in text
    assert "print: 11 waits" in text
    written = markdown.markdown(built)
    assert "| `/src/proj/train.py:42` | print | `jax.Array.__str__` | 10 | 9.80 ms [8.50–18.0] | – |" in written


def test_a_run_without_a_census_shows_none():
    plain = _wrapped(Result("conversion[jax,cpu]", "conversion", "conversion", "jax", "cpu", {}, OK))
    built = view.build(plain)
    assert built.experiments[0].cases[0].syncs is None
    assert "where the step waited" not in markdown.markdown(built)


def test_a_long_report_prints_the_census_as_plain_columns():
    census = syncs.census_view("jax cpu", {"print": _census("print", PRINTED, ITEM)}, here="/src/proj")
    assert census is not None
    out = io.StringIO()
    terminal.print_census(Console(file=out, width=200), census, plain=True)
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines[0] == "    where the step waited (jax cpu)"
    assert "┃" not in out.getvalue()  # no rich table
    rows = [line.split() for line in lines]
    assert ["train.py:42", "print", "jax.Array.__str__", "10", "9.80", "ms", "[8.50–18.0]", "–"] in rows


def test_a_census_of_one_variant_leaves_out_the_variant_column_that_an_80_column_terminal_needs():
    """In 80 columns the table lost its file:line and its call to a variant column that named the one variant."""
    one = syncs.census_view("jax cpu", {"sync_every=0": _census("sync_every=0", PRINTED, ITEM)}, here="/src/proj")
    two = syncs.census_view("jax cpu", {"a": _census("a", PRINTED), "b": _census("b", ITEM)}, here="/src/proj")
    assert one is not None
    assert two is not None
    assert one.headers[0] == "file:line"
    assert two.headers[0] == "variant"
    assert one.summary[0].startswith("sync_every=0: ")
    out = io.StringIO()
    terminal.print_census(Console(file=out, width=80), one)
    assert "train.py:42" in out.getvalue()
    assert "jax.Array." in out.getvalue()  # folded where it must be, never to nothing


def test_a_wait_of_nanoseconds_reads_the_same_live_and_from_its_file():
    # the trial's numpy.asarray of a ready array printed '11 ns [6.6–39.3]' as it ran and '[7–39]' from its file (which
    # keeps a census's waits to the nanosecond): the census is summarized as the engine does, from its raw rounds
    key = ("/src/proj/train.py", 54, "numpy.asarray(jax.Array)", SyncKind.CONVERSION)
    waits = (1.12e-8, 6.63e-9, 3.93e-8, 1.04e-8, 1.21e-8, 9.1e-9, 1.05e-8, 2.2e-8)
    ready = census.summarize("none", [{key: [1, wait]} for wait in waits], "jax's hooks")
    timed = {"none": ok_result("c").variants["matmul"]}  # a result of status ok is of its variants (a file's reader checks)
    live = _wrapped(Result("conversion[jax,cpu]", "conversion", "conversion", "jax", "cpu", {}, OK, variants=timed, syncs={"none": ready}))
    stored = Report.from_dict(json.loads(live.to_json()), "r.json")
    shown = [view.build(report).experiments[0].cases[0].syncs for report in (live, stored)]
    assert shown[0] is not None
    assert shown[1] is not None
    assert (shown[0].rows, shown[0].summary) == (shown[1].rows, shown[1].summary)
    assert shown[0].rows[0][-1] == "10.0 ns [7.00–39.0]"  # 10.5 ns, the median of 8 rounds, kept as the file keeps it


def test_a_variant_whose_only_point_is_a_full_queue_says_so_in_its_line_not_zero_waits():
    """`run gate.yaml --syncs` printed a row `queue full │ 0.4 │ 496 µs ±32%` over the line `0 waits, 0 blocked per
    step at 1 point`: backpressure is no wait of the step's, and the line now says what the row is."""
    full = SyncPoint(
        "/src/proj/train.py",
        9,
        SyncKind.QUEUE_FULL,
        "jax.numpy.add",
        0.4,
        4.96e-4,
        (3.4e-4, 6.6e-4),
        None,
        (0, 1, 0, 1, 0, 1),
        (4.6e-4, 4.96e-4, 5.2e-4, 4.96e-4, 4.8e-4, 5.0e-4),
    )
    census = syncs.census_view("jax cpu", {"add": _census("add", full)}, here="/")
    assert census is not None
    (line,) = census.summary
    assert line.startswith("add: no waits; 1 point where the queue was full (not a wait: 496 µs")
    assert "a step) (6 census rounds" in line
    assert "0 waits" not in line
    assert "0 blocked" not in line
    both = syncs.census_view("jax cpu", {"print": _census("print", PRINTED, full)}, here="/")
    assert both is not None
    assert both.summary[0].startswith("print: 10 waits, 9.80 ms ±0% blocked per step at 1 point; 1 point where the queue was full")


def test_a_queue_full_rows_count_sits_under_a_header_that_does_not_call_it_a_wait():
    """A trial's census showed a `queue full` row's 0.7 under `waits/step`, over the line "no waits; 1 point where the
    queue was full (not a wait: ...)": the column counts times per step, a wait or a full queue, in every writer."""
    full = SyncPoint(
        "/src/proj/steps.py",
        13,
        SyncKind.QUEUE_FULL,
        "jax.numpy.matmul",
        0.7,
        2.51e-4,
        (2.1e-4, 3.13e-4),
        None,
        (1, 0, 1) * 2,
        (2.5e-4, 0.0, 2.5e-4) * 2,
    )
    result = Result("nosync[jax,cpu]", "nosync", "nosync", "jax", "cpu", {}, OK, syncs={"sync_every=0": _census("sync_every=0", full)})
    built = view.build(_wrapped(result))
    (case,) = built.experiments[0].cases
    assert case.syncs is not None
    assert not [header for header in case.syncs.headers if "wait" in header], case.syncs.headers
    out = io.StringIO()
    terminal.print_report(built, Console(file=out, width=200))
    for written in (out.getvalue(), markdown.markdown(built)):
        assert "queue full" in written
        assert "waits/step" not in written
        assert "times/step" in written
