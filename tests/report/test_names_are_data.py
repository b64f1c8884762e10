"""Names are data in every writer (issue 56): text from a results file, a store or a workload is shown as written,
never read as rich markup, passed to a terminal as an escape, rendered as markdown or HTML, or run as a formula.

One rule (asyncbench/report/escaping.py), tested once per writer with hostile strings in its view model: the
terminal (rich) report, comparison and `ab` table, the catalog, the progress line, the history's text and HTML
page, markdown (report, comparison, `ab` comment), CSV, and the CLI's own lines on stderr. Then through the real
CLI on a real results file (and a real store) whose free-text fields and names were edited to hostile values: the
exit code is the clean file's, and no control character reaches stdout or stderr.

The expected visible form of a control character is Python's (`repr`'s): ESC shows as `\\x1b`, a newline as `\\n`.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import sqlite3
import subprocess
from html import escape as html_escape
from pathlib import Path
from types import SimpleNamespace

import pytest
from markdown_it import MarkdownIt
from rich.console import Console
from rich.text import Text

from asyncbench.errors import InputError
from asyncbench.history.model import ChangePoint, LatestCase, LatestRun, Point, Series
from asyncbench.report import catalog, csv_file, html, markdown, paired, terminal, view
from asyncbench.report import history as history_text
from asyncbench.report.progress import ProgressDisplay
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.model import Result
from asyncbench.results.paired import PairedCase, Side
from asyncbench.results.schema import Report
from asyncbench.verdicts import compare, outcome
from tests.support import cli
from tests.support.ab_files import recorded_gate
from tests.support.golden import golden_report

#: one attack per entry: terminal escapes (C0 ESC, BEL, C1 CSI), rich markup, markdown and HTML that would render, a
#: spreadsheet formula, a bidirectional override
ATTACKS = {
    "screen clear": "a\x1b[2Jb",
    "window title": "\x1b]0;owned\x07t",
    "OSC 8 hyperlink": "\x1b]8;;file:///etc/passwd\x1b\\click\x1b]8;;\x1b\\",
    "OSC 52 clipboard": "\x1b]52;c;ZWNobyBvd25lZA==\x07c",
    "C1 CSI": "a\x9b2Jb",
    "rich link": "[link=file:///etc/passwd]x[/link]",
    "rich blink": "[blink]b[/blink]",
    "rich close tag": "x[/x]",
    "newline heading": "a\n# HEADING",
    "table pipe": "a|b",
    "remote image": "![x](http://evil.example/p.png)",
    "link": "[x](http://evil.example/)",
    "html": "<img src=x onerror=alert(1)>",
    "formula": '=HYPERLINK("http://evil.example","x")',
    "formula +": "+1+2",
    "formula @": "@SUM(A1)",
    "formula -": "-2+3",
    "tab formula": "\t=1",
    "bidi override": "a\u202eb",
    "fence": "```x",
    "emphasis and code": "`code` **bold** _it_ ~~gone~~ \\*x &amp; &#42;",
    "link reference": "[x]: http://evil.example/",
}
ALL = "".join(ATTACKS.values())
#: every attack a file's names rules may let through (no control character), a formula first so that a CSV cell
#: starts with it
PRINTABLE = "".join(text for text in ATTACKS.values() if not re.search("[\x00-\x1f\x7f-\x9f\u202e]", text) and text[0] != "=")
PRINTABLE = ATTACKS["formula"] + PRINTABLE
PARAMS = [*ATTACKS.values(), ALL]
IDS = [*ATTACKS, "all at once"]

#: a control character anywhere in output (a newline between lines is the writer's own)
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: rich's own styling on a terminal: Select Graphic Rendition, nothing else (no OSC 8 link, no cursor move)
SGR = re.compile(r"\x1b\[[0-9;]*m")
#: a number as a spreadsheet reads one (a cell that starts with - or + and is a number is no formula)
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def shown(text: str) -> str:
    """How a writer shows `text`: each control character as repr shows it (ESC as \\x1b), the rest as it is."""
    return "".join(repr(char)[1:-1] if CONTROL.match(char) or char == "\n" else char for char in text)


def assert_no_control(text: str, where: str) -> None:
    found = CONTROL.search(text)
    assert found is None, f"{where}: a raw {found.group()!r} reached the output: {text[max(0, found.start() - 60) : found.end() + 60]!r}"


def one_line(text: str) -> str:
    return " ".join(text.split())


# ---- the hostile view model -------------------------------------------------------------------------------------


def hostile_report(name: str) -> Report:
    """The golden report (one of each thing a writer lays out) with every string from data set to `name`."""
    report = golden_report()

    def result(index: int, r: Result) -> Result:
        syncs = {
            f"{name}{variant}": dataclasses.replace(
                census,
                variant=f"{name}{variant}",
                coverage=name,
                note=name,
                points=tuple(dataclasses.replace(p, file=f"/x/{name}.py", call=name) for p in census.points),
            )
            for variant, census in r.syncs.items()
        }
        return dataclasses.replace(
            r,
            id=f"{name}[{index}]",
            experiment=name,
            workload=f"{name} workload",
            device=name,
            params={name: f"{name}{index}", "n_iter": 3},  # a swept param: its name a column, its values cells
            variants={f"{name}{variant}": v for variant, v in r.variants.items()},
            reason=name if r.reason else None,
            note=name,
            reading=name if r.reading else None,
            warnings=(name,),
            checks=tuple(dataclasses.replace(c, expect=name, detail=name) for c in r.checks),
            syncs=syncs,
            machine=name,
            trace_detail=name,
        )

    environment = {"cpu": name, "cpu_affinity": 2, "python": name, "git_sha": name, "frameworks": {name: {"version": name}}}
    return dataclasses.replace(report, environment=environment, results=tuple(result(i, r) for i, r in enumerate(report.results)))


def hostile_view(name: str) -> view.ReportView:
    report = hostile_report(name)
    return view.build(report, compare.compare(report, report), outcome.judge(report))


def hostile_ab(name: str) -> paired.ABView:
    row = (name, name, "1 ms", "1 ms", "+0.0%", "[−1.0% … +1.0%]", Label.SAME)
    return paired.ABView(
        title=name,
        sides=(name, name),
        rows=(row, row),
        labels=(Label.SAME, Label.SLOWER),
        notes=(name,),
        budget=name,
        summary=name,
        reasons=(name,),
        code=1,
        new_syncs=((name, name, f"{name}.py:3", "conversion", name, "1", "1 ms"),),
    )


# ---- terminal (rich) ----------------------------------------------------------------------------------------------


def terminal_console(colour: bool) -> Console:
    """The CLI's console on a wide terminal (styles on) or a file (no styles: every ESC would be from data)."""
    return terminal.StdoutConsole(
        file=io.StringIO(), width=400, force_terminal=colour, color_system="truecolor" if colour else None, record=True
    )


def terminal_output(console: Console) -> str:
    raw = console.file.getvalue()  # type: ignore[attr-defined]
    return SGR.sub("", raw)


@pytest.mark.parametrize("colour", [False, True], ids=["file", "terminal"])
@pytest.mark.parametrize("plain", [False, True], ids=["rich tables", "plain columns"])
@pytest.mark.parametrize("name", PARAMS, ids=IDS)
def test_the_terminal_report_shows_names_as_text(name, plain, colour, monkeypatch):
    if plain:
        monkeypatch.setattr(terminal, "RICH_TABLE_MAX_ROWS", 0)
    console = terminal_console(colour)
    terminal.print_report(hostile_view(name), console)  # a name is never markup: `[/x]` raised MarkupError here
    out = terminal_output(console)
    assert_no_control(out, "terminal")
    assert "\x1b]8;" not in console.file.getvalue()  # type: ignore[attr-defined]  # no OSC 8 link from [link=...]
    if name != ALL:  # short enough to stay on one line in every column
        for line in (shown(name), f"⚠ {shown(name)}"):
            assert line in out, f"{line!r} not shown as written"


@pytest.mark.parametrize("name", PARAMS, ids=IDS)
def test_the_ab_table_shows_names_as_text(name):
    console = terminal_console(True)
    paired.print_view(hostile_ab(name), console)
    out = terminal_output(console)
    assert_no_control(out, "ab table")
    if name != ALL:
        assert shown(name) in out


def test_the_console_itself_never_passes_a_control_character():
    """The last guard: even text that no writer escaped reaches the terminal with its controls shown, not obeyed."""
    console = terminal_console(True)
    console.print(Text("a\x1b[2Jb\x9bc\x07"), "d\x1b]0;t\x07", ":warning:")
    out = terminal_output(console)
    assert_no_control(out, "console")
    assert "a\\x1b[2Jb\\x9bc" in out
    assert ":warning:" in out  # emoji codes from data are text, not ⚠


@pytest.mark.parametrize("name", [ATTACKS["rich close tag"], ATTACKS["screen clear"], ALL], ids=["close tag", "ESC", "all"])
def test_the_catalog_and_the_progress_line_show_names_as_text(name):
    console = terminal_console(True)
    statuses = [SimpleNamespace(backend=name, device=name, available=False, detail=name)]
    param = SimpleNamespace(name=name, default=name, quick=None, per_backend={})
    workload = SimpleNamespace(name=name, summary=name, params=[param], variants=[name], metrics=[SimpleNamespace(name=name)])
    console.print(catalog.devices_table(statuses))  # type: ignore[arg-type]
    console.print(catalog.workloads_table([workload], {name: name}))  # type: ignore[list-item]
    with ProgressDisplay(True, console) as progress:
        progress.start(0, 1, SimpleNamespace(id=name))  # type: ignore[arg-type]
    out = console.file.getvalue()  # type: ignore[attr-defined]
    # the progress line moves the cursor (rich's own CSI); what is left once those are gone is text
    bare = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out)
    assert_no_control(bare.replace("\r", ""), "catalog and progress")
    if name != ALL:
        assert shown(name) in bare


@pytest.mark.parametrize("name", PARAMS, ids=IDS)
def test_the_history_text_shows_a_store_s_names_as_text(name):
    change = ChangePoint(run=1, at=name, before=0.1, after=0.2, ratio=2.0, ratio_low=1.5, ratio_high=2.5, p_value=1e-6)
    series = Series(
        case=name,
        variant=name,
        quantity=name,
        unit="s",
        machine=name,
        machine_info={"cpu": name, "cores": 2, "gpus": [name], "framework": name},
        points=(Point(1, "2026-01-01T00:00:00", name, name, 0.1, None, None), Point(2, "2026-01-02T00:00:00", None, None, 0.2, None, None)),
        change_points=(change,),
        runs=2,
        discounted=((2, name),),
        machine_seen=True,
    )
    console = terminal_console(True)
    history_text.print_series([series], console)
    out = terminal_output(console)
    assert_no_control(out, "history")
    if name != ALL:
        assert shown(name) in out


# ---- markdown -------------------------------------------------------------------------------------------------------

PARSER = MarkdownIt("commonmark").enable("table")  # GitHub's: CommonMark with tables


def structure(text: str) -> dict[str, object]:
    """What a markdown text renders to: its headings, each table's rows, every inline's rendered text, and whether any
    image, link or raw HTML would render."""
    tokens = PARSER.parse(text)
    inlines = [t for t in tokens if t.type == "inline"]
    children = [c for t in inlines for c in t.children or []]
    texts = ["".join(c.content for c in t.children or [] if c.type in ("text", "code_inline")) for t in inlines]
    rows, table = [], 0
    for token in tokens:
        if token.type == "table_open":
            table += 1
            rows.append(0)
        elif token.type == "tr_open":
            rows[-1] += 1
    return {
        "headings": [t.tag for t in tokens if t.type == "heading_open"],
        "rows": rows,
        "blocks": [t.type for t in tokens if t.type.endswith("_open") and t.type not in ("paragraph_open",)],
        "rendered": [c.type for c in children + tokens if c.type in ("image", "link_open", "html_inline", "html_block")],
        "texts": texts,
    }


def assert_markdown_holds(text: str, clean: str, name: str | None, where: str) -> None:
    """The hostile markdown renders to the structure of the clean one (same headings, lists, tables and rows), with no
    image, link or HTML, and each hostile name whole, as written, in some cell or line."""
    assert_no_control(text, where)
    got, expected = structure(text), structure(clean)
    assert got["rendered"] == [], f"{where}: {got['rendered']} would render"
    for key in ("headings", "rows", "blocks"):
        assert got[key] == expected[key], f"{where}: the {key} changed: a name broke out of its cell or line"
    if name is not None and name != ALL:
        assert any(shown(name) in t for t in got["texts"]), f"{where}: {shown(name)!r} is not shown whole"  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", PARAMS, ids=IDS)
def test_markdown_cells_and_lines_cannot_break_out(name):
    clean = markdown.markdown(hostile_view("plain"))
    assert_markdown_holds(markdown.markdown(hostile_view(name)), clean, name, "report markdown")


@pytest.mark.parametrize("name", PARAMS, ids=IDS)
def test_the_ab_comment_cells_and_lines_cannot_break_out(name):
    assert_markdown_holds(paired.markdown(hostile_ab(name)), paired.markdown(hostile_ab("plain")), name, "ab markdown")


# ---- CSV ------------------------------------------------------------------------------------------------------------


def assert_csv_holds(text: str, where: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text)))
    for row in rows:
        for cell in row:
            assert_no_control(cell, where)
            if cell[:1] in ("=", "+", "-", "@"):
                assert NUMBER.fullmatch(cell), f"{where}: a formula cell {cell!r}"
    return rows


@pytest.mark.parametrize("name", PARAMS, ids=IDS)
def test_csv_cells_are_never_formulas(name):
    rows = assert_csv_holds(csv_file.csv_text(hostile_view(name)), "csv")
    cells = {cell for row in rows for cell in row}
    if name != ALL:
        expected = shown(name)
        assert (expected if expected[:1] not in "=+-@" else "'" + expected) in cells


def test_csv_numbers_keep_their_sign_and_text_that_looks_like_one_does_not():
    """A negative figure is a number, not a formula: only text is prefixed, even text that reads as a number."""
    report = golden_report()
    memory = dataclasses.replace(report.results[0].variants["matmul"].memory, host_rss_peak_delta_bytes=-4096)
    variant = dataclasses.replace(report.results[0].variants["matmul"], memory=memory)
    first = dataclasses.replace(report.results[0], variants={"matmul": variant}, params={"size": -1, "n_iter": 3, "dtype": "-1"})
    text = csv_file.csv_text(view.build(dataclasses.replace(report, results=(first, *report.results[1:]))))
    row = next(csv.DictReader(io.StringIO(text)))
    assert row["host_rss_peak_delta_bytes"] == "-4096"
    assert row["param_size"] == "-1"
    assert row["param_dtype"] == "'-1"


# ---- plot -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["$\\frac{$", "$\\x$$", ATTACKS["rich close tag"]], ids=["mathtext error", "unknown command", "markup"])
def test_the_plot_draws_names_as_text(name):
    """matplotlib reads `$...$` as mathtext: a name's `$\\frac{$` was a parse error (a traceback after the run)."""
    pytest.importorskip("matplotlib")
    from asyncbench.report import plot

    assert plot.draw(hostile_view(name), "sweep.png").startswith(b"\x89PNG")


# ---- HTML -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [ATTACKS["html"], ATTACKS["screen clear"], ALL], ids=["html", "ESC", "all"])
def test_the_history_page_escapes_every_name(name):
    pytest.importorskip("plotly")
    from plotly.offline import get_plotlyjs

    series = Series(
        case=name,
        variant=name,
        quantity=name,
        unit="s",
        machine=name,
        machine_info={"cpu": name, "cores": 2, "gpus": [name], "framework": name},
        points=(Point(1, "2026-01-01T00:00:00", name, name, 0.1, 0.09, 0.11),),
        runs=1,
    )
    latest = LatestRun(
        1,
        "2026-01-01T00:00:00",
        name,
        name,
        name,
        name,
        (LatestCase(name, name, name, name, ({"verdict": name, "expect": name},), {name: name}, [(name, name, "s", 0.1, 0.09, 0.11)]),),
    )
    recent = [
        SimpleNamespace(id=1, created=name, label=name, revision=name, branch=name, host=name, version=name, kind="ab", clock_ahead=True)
    ]
    page = html.render([series], latest, recent, name).replace(get_plotlyjs(), "")
    assert_no_control(page.replace("\n", ""), "html")
    assert "<img" not in page
    if name != ALL:
        assert shown(name).replace("<", "&lt;").replace(">", "&gt;") in page


# ---- the CLI's own lines ------------------------------------------------------------------------------------------


def test_the_cli_s_lines_on_stderr_show_control_characters(capsys):
    from asyncbench.cli.group import echo_err, report_input_error

    echo_err("written: a\x1b[2Jb")
    report_input_error(InputError("r.json: a\x1b]0;t\x07 bad"))
    err = capsys.readouterr().err
    assert_no_control(err.replace("\n", ""), "stderr")
    assert err == "written: a\\x1b[2Jb\nasyncbench: error: r.json: a\\x1b]0;t\\x07 bad\n"


# ---- through the real CLI, on a real results file -----------------------------------------------------------------

CONFIG = """\
name: tiny
defaults: {backends: [numpy], devices: [cpu], warmup: 1, min_samples: 5, max_time_s: 0.5}
experiments:
  - name: tinymm
    workload: matmul
    params: {size: 16, n_iter: 1}
    expect: ["illusion < 100"]
"""
TIMEOUT_S = 120


#: the variables that decide how a terminal is drawn: the caller's are dropped, so that only `asyncbench` below sets them
TERMINAL_VARIABLES = ("FORCE_COLOR", "NO_COLOR", "TERM", "COLUMNS")


def asyncbench(folder: Path, *args: str, colour: bool = False) -> subprocess.CompletedProcess[bytes]:
    """`asyncbench ARGS` in `folder`, the bytes a 300-column xterm gets: in colour (FORCE_COLOR) or without (NO_COLOR)."""
    terminal = {"COLUMNS": "300", "TERM": "xterm-256color", **({"FORCE_COLOR": "1"} if colour else {"NO_COLOR": "1"})}
    return cli.asyncbench(*args, cwd=folder, env=terminal, unset=TERMINAL_VARIABLES, timeout=TIMEOUT_S, text=False)


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """A real results file: a swept numpy matmul with a check and a census, as `run` wrote it."""
    folder = tmp_path_factory.mktemp("names")
    (folder / "tiny.yaml").write_text(CONFIG, encoding="utf-8")
    ran = asyncbench(folder, "run", "tiny.yaml", "--quick", "--set", "size=16,32", "--syncs", "--no-progress", "-o", "r.json")
    assert ran.returncode in (0, 1), ran.stderr.decode()  # 1: its check undecided on a loaded machine
    assert (folder / "r.json").is_file()
    return folder / "r.json"


def edit(data: dict, field: str, name: str) -> None:
    """Set one kind of field of a loaded results file to `name`."""
    results = data["results"]
    if field == "free text":  # the fields `load` reads as text: warnings, reading, checks, census, params, environment
        first = results[0]
        first["warnings"] = [name]
        first["reading"] = name
        first["checks"][0]["expect"] = name
        first["checks"][0]["detail"] = name
        for r in results:
            r["params"]["dtype"] = name
        first["syncs"] = {
            variant: {
                "rounds": 3,
                "steps_per_call": 1,
                "coverage": name,
                "note": name,
                "points": [
                    {
                        "file": f"/x/{name}.py",
                        "line": 3,
                        # any name the user's line called: what the frame fallback stores (a hook's kind is its
                        # call's, and a hook names a dotted entry point: results.syncs.kind_held)
                        "kind": "unattributed",
                        "call": name,
                        "calls_per_step": 1.0,
                        "wait_s_per_step": 0.001,
                        "wait_ci_s": [0.0005, 0.002],
                    }  # fmt: skip
                ],
            }
            for variant in first["variants"]
        }
        data["environment"]["cpu"] = name
    elif field == "experiment":
        for r in results:
            r["id"] = r["id"].replace(r["experiment"], name, 1)
            r["experiment"] = name
    elif field == "variant":
        for r in results:
            r["variants"] = {f"{name}{old}": v for old, v in r["variants"].items()}
            r["syncs"] = {f"{name}{old}": census for old, census in r["syncs"].items()}
    elif field == "case id":
        for index, r in enumerate(results):
            r["id"] = f"{name}{index}"


COMMANDS = {
    "show": ("show", "{file}"),
    "show markdown": ("show", "{file}", "--format", "markdown"),
    "show csv": ("show", "{file}", "--format", "csv"),
    "compare": ("compare", "{file}", "{file}"),
    "compare markdown": ("compare", "{file}", "{file}", "--format", "markdown"),
}


def assert_cli_holds(ran: subprocess.CompletedProcess[bytes], expected_code: int, where: str) -> str:
    """The clean file's exit code, or a refusal on load (exit 2, one line); no traceback, no control character."""
    out, err = ran.stdout.decode(), ran.stderr.decode()
    assert "Traceback" not in err, f"{where}: {err}"
    assert_no_control(out.replace("\n", ""), f"{where} stdout")
    assert_no_control(err.replace("\n", ""), f"{where} stderr")
    if ran.returncode == 2:  # a name the results file's own rules refuse: said in one line, nothing shown
        assert err.count("\n") == 1, f"{where}: {err}"
        assert err.startswith("asyncbench: error: "), f"{where}: {err}"
        assert out == ""
    else:
        assert ran.returncode == expected_code, f"{where}: exit {ran.returncode}, the clean file's {expected_code}: {err}"
    return out


def hostile_file(clean: Path, folder: Path, field: str, name: str, filename: str) -> str:
    data = json.loads(clean.read_text(encoding="utf-8"))
    edit(data, field, name)
    (folder / filename).write_text(json.dumps(data), encoding="utf-8")
    return filename


#: a name with control characters (which a file's names rules may refuse on load: then exit 2, one line), and one
#: with every other attack (markup, markdown, HTML, formulas), which they may let through to the writers
NAMES = {"control characters": ALL, "markup and formulas": PRINTABLE}


@pytest.fixture(scope="module")
def plain_runs(clean) -> dict[tuple[str, str], subprocess.CompletedProcess[bytes]]:
    """Each command on the clean file with one kind of field set to a plain name, run once and kept (by field and
    command): what a hostile file's run is held to."""
    return {}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", NAMES.values(), ids=NAMES)
@pytest.mark.parametrize("field", ["free text", "experiment", "variant", "case id"])
def test_show_and_compare_print_a_hostile_file_s_names_as_text(clean, plain_runs, field, name, command, tmp_path):
    """The same command on the same file with one kind of field set to a plain name and to a hostile one: the same
    exit code (or a refusal on load), the same markdown structure, no control character out, no formula cell."""
    if (field, command) not in plain_runs:
        plain = hostile_file(clean, clean.parent, field, "plain", f"plain-{field.replace(' ', '-')}.json")
        plain_runs[field, command] = asyncbench(clean.parent, *(arg.replace("{file}", plain) for arg in COMMANDS[command]))
    expected = plain_runs[field, command]
    hostile = hostile_file(clean, tmp_path, field, name, "h.json")
    ran = asyncbench(tmp_path, *(arg.replace("{file}", hostile) for arg in COMMANDS[command]))
    where = f"{field}: {command}"
    out = assert_cli_holds(ran, expected.returncode, where)
    if ran.returncode != 2 and command.endswith("markdown"):
        said = name if "HYPERLINK" in out else None  # a command that shows this field at all shows it whole
        assert_markdown_holds(out, expected.stdout.decode(), said, where)
    if ran.returncode != 2 and command.endswith("csv"):
        assert_csv_holds(out, where)


@pytest.mark.parametrize("name", NAMES.values(), ids=NAMES)
def test_show_on_a_colour_terminal_styles_but_never_obeys_a_name(clean, name, tmp_path):
    """FORCE_COLOR: rich styles the output (SGR sequences, its only escapes); every other escape would be a name's."""
    expected = asyncbench(tmp_path, "show", hostile_file(clean, tmp_path, "variant", "plain", "p.json"), colour=True)
    ran = asyncbench(tmp_path, "show", hostile_file(clean, tmp_path, "variant", name, "h.json"), colour=True)
    out, err = ran.stdout.decode(), ran.stderr.decode()
    assert "Traceback" not in err
    assert ran.returncode in (expected.returncode, 2), err
    assert_no_control(SGR.sub("", out).replace("\n", ""), "show (colour) stdout")
    assert_no_control(err.replace("\n", ""), "show (colour) stderr")
    assert "\x1b[" in expected.stdout.decode()  # rich did colour this output: the check above saw a terminal's


@pytest.mark.parametrize("name", [ALL, PRINTABLE], ids=["control characters", "markup and formulas"])
def test_a_hostile_name_in_the_store_is_refused_or_shown_as_text_never_obeyed(clean, tmp_path, name):
    """The store is data too: a name written into it by a hand is refused in one line where the results files' names
    rule refuses it (a control character: history.row_rules), the line showing it as text; one the rule lets through
    (markup, a formula) is shown as text. Neither is obeyed by the terminal or the page."""
    (tmp_path / "r.json").write_bytes(clean.read_bytes())
    assert asyncbench(tmp_path, "record", "r.json", "--history", "s.sqlite").returncode == 0
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        db.execute("UPDATE asyncbench_series SET case_id = ? || case_id", (name,))
        db.execute("UPDATE asyncbench_cases SET case_id = ? || case_id", (name,))
        db.execute("UPDATE asyncbench_runs SET label = ?, host = ?", (name, name))
    ran = asyncbench(tmp_path, "history", "--history", "s.sqlite")
    out = assert_cli_holds(ran, 0, "history")
    if name == ALL:
        assert ran.returncode == 2
        assert shown(ATTACKS["screen clear"]) in ran.stderr.decode()
    else:
        assert ran.returncode == 0
        assert ATTACKS["rich link"] in out  # rich markup shown as the text it is, not read as a link
    page = asyncbench(tmp_path, "report", "--history", "s.sqlite", "-o", "page.html")
    assert_cli_holds(page, 0, "report")
    if page.returncode == 0:
        text = (tmp_path / "page.html").read_text(encoding="utf-8")
        assert "<img src=x" not in text


def test_validate_names_a_hostile_file_as_text(tmp_path):
    """A config's file name is data too (a glob over a folder someone else filled)."""
    hostile = "t\x1b]0;owned\x07.yaml"
    (tmp_path / hostile).write_text(CONFIG, encoding="utf-8")
    ran = asyncbench(tmp_path, "validate", hostile)
    out = assert_cli_holds(ran, 0, "validate")
    assert out == f"{shown(hostile)}: ok (1 experiment(s))\n"


# ---- markdown that would render inline: shown as written, not merely kept in its cell ---------------------------

#: a name of a new user's trial, whose `code` and **bold** rendered in the pull-request comment
RENDERS_INLINE = ATTACKS["emphasis and code"]
#: what the name's characters would render to, were they not escaped: a code span, bold, italics, strikethrough
RENDERED_INLINE = ("<code>code</code>", "<strong>bold</strong>", "<em>it</em>", "<s>gone</s>")
GITHUB = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def assert_shown_as_written(text: str, where: str) -> None:
    """The markdown renders the name's every character as text: none of it a code span, emphasis or strikethrough,
    and its entities shown, not decoded."""
    rendered = GITHUB.render(text)
    for made in RENDERED_INLINE:
        assert made not in rendered, f"{where}: the name rendered as {made}"
    assert html_escape(RENDERS_INLINE, quote=False) in rendered, f"{where}: the name is not shown as written"


@pytest.mark.parametrize("field", ["experiment", "variant"])
def test_show_markdown_shows_a_name_s_code_and_emphasis_as_written(clean, field, tmp_path):
    """`show --format markdown` of a results file whose names hold `` `code` **bold** ``: the characters, not the
    styles (a new user's trial saw the name render as code and bold)."""
    ran = asyncbench(tmp_path, "show", hostile_file(clean, tmp_path, field, RENDERS_INLINE, "h.json"), "--format", "markdown")
    assert ran.returncode in (0, 1), ran.stderr.decode()
    assert_shown_as_written(ran.stdout.decode(), f"{field}: show markdown")


def test_the_ab_comment_shows_a_case_s_code_and_emphasis_as_written(tmp_path):
    """`ab --markdown` and `show ab.json --format markdown` (one writer, report.paired.markdown) of an `ab` file whose
    case and variant names hold `` `code` **bold** ``: shown as written."""
    gate = dataclasses.replace(recorded_gate(3, 1.3), name=f"v {RENDERS_INLINE}")
    side = Side("head", "a1b2c3d (HEAD)", "python3", "3.11")
    case = PairedCase(f"{RENDERS_INLINE}[numpy,cpu]", "ok", ratios=(gate,), rounds=5 * (n := len(gate.block_log_ratios)), blocks=n)
    ab = ABReport("2026-01-01T12:00:00+00:00", "0.1.0", dataclasses.replace(side, name="base"), side, 0.02, 0.01, False, "SIGSTOP", (case,))
    (tmp_path / "ab.json").write_text(ab.to_json(), encoding="utf-8")
    ran = asyncbench(tmp_path, "show", "ab.json", "--format", "markdown")
    assert ran.returncode == 0, ran.stderr.decode()
    assert_shown_as_written(ran.stdout.decode(), "show ab.json --format markdown")
